//! String commands: GET, SET and the rest of Redis's string family.

use tern_protocol::{parse_i64, Args};
use tern_store::{StrValue, Value};

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("get", 2, READONLY | FAST, (1, 1, 1), get)
        .doc("string", "Returns the string value of a key.", "1.0.0", "O(1)")
        .acl(&["read", "string", "fast"]),
    CommandSpec::new("set", -3, WRITE | DENYOOM, (1, 1, 1), set)
        .doc("string", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "1.0.0", "O(1)")
        .acl(&["write", "string", "slow"]),
];

/// Builds a string value as Redis stores it: canonical integers as `int`.
pub fn string_value(b: &[u8]) -> Value {
    if b.len() <= 20 {
        if let Some(n) = parse_i64(b) {
            return Value::Str(StrValue::Int(n));
        }
    }
    Value::Str(StrValue::from_slice(b))
}

fn get(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let loc = ctx.locs[0];
    let key = args.get(1);
    match ctx.locks.shard(loc.gid).get(key, loc.hash, ctx.now) {
        Some(e) => match &e.value {
            Value::Str(s) => {
                ctx.stats.keyspace_hits.add(1);
                s.with_bytes(|b| ctx.reply.bulk(b));
            }
        },
        None => {
            ctx.stats.keyspace_misses.add(1);
            ctx.reply.null();
        }
    }
}

fn set(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() != 3 {
        ctx.reply.error(errors::SYNTAX);
        return;
    }
    let loc = ctx.locs[0];
    let (key, val) = (args.get(1), args.get(2));
    ctx.locks.shard(loc.gid).set(key, loc.hash, string_value(val), None, ctx.now);
    ctx.dirty += 1;
    ctx.reply.ok();
}
