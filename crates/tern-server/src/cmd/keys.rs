//! Generic key commands: DEL, EXISTS, EXPIRE, SCAN, ...

use tern_protocol::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("del", -2, WRITE, (1, -1, 1), del)
        .doc("generic", "Deletes one or more keys.", "1.0.0", "O(N) where N is the number of keys that will be removed.")
        .acl(&["keyspace", "write", "slow"]),
    CommandSpec::new("exists", -2, READONLY | FAST, (1, -1, 1), exists)
        .doc("generic", "Determines whether one or more keys exist.", "1.0.0", "O(N) where N is the number of keys to check.")
        .acl(&["keyspace", "read", "fast"]),
];

fn del(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut n = 0;
    for (i, loc) in ctx.locs.iter().enumerate() {
        if ctx.locks.shard(loc.gid).remove(args.get(1 + i), loc.hash, ctx.now).is_some() {
            n += 1;
        }
    }
    ctx.dirty += n as u64;
    ctx.reply.int(n);
}

fn exists(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut n = 0;
    for (i, loc) in ctx.locs.iter().enumerate() {
        if ctx.locks.shard(loc.gid).get(args.get(1 + i), loc.hash, ctx.now).is_some() {
            n += 1;
        }
    }
    ctx.reply.int(n);
}
