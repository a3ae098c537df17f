//! DUMP and RESTORE: one value in Redis's RDB encoding with the version
//! and CRC64 footer (`tern_store::rdb`), byte for byte what Redis 8.4's
//! DUMP gives for the same value in the same encoding.

use crate::messaging::notify::ev;
use tern_resp::{parse_i64, Args};
use tern_store::rdb;
use tern_store::{EntryExt, NewValue};

use super::keyspec::{index, ks, range, ACCESS, OW, RO, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("dump", 2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], dump)
        .doc("generic", "Returns a serialized representation of the value stored at a key.", "2.6.0", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("restore", -4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0))], restore)
        .event(ev::RESTORE)
        .doc("generic", "Creates a key from the serialized representation of a value.", "2.6.0", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
        .acl(&["keyspace", "write", "slow", "dangerous"])
        .history(&[
            ("3.0.0", "Added the `REPLACE` modifier."),
            ("5.0.0", "Added the `ABSTTL` modifier."),
            ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
        ]),
];

fn dump(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let loc = ctx.locs[0];
    let (now, acc) = (ctx.now, ctx.access());
    let compress = ctx.srv.config.read().rdbcompression;
    let payload = ctx.locks.shard(loc.gid).lookup(args.get(1), loc.hash, now, acc).map(|e| rdb::dump(e.value(), compress));
    match payload {
        Some(p) => {
            ctx.stats.keyspace_hits.add(1);
            ctx.reply.bulk(&p);
        }
        None => {
            ctx.stats.keyspace_misses.add(1);
            ctx.reply.null();
        }
    }
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f], with
/// Redis's checks in Redis's order: options, TTL, an existing key, the
/// payload's footer, then its body.
fn restore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut j = 4;
    while j < args.len() {
        let a = args.get(j);
        let more = j + 1 < args.len();
        if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"absttl") {
            absttl = true;
        } else if a.eq_ignore_ascii_case(b"idletime") && more && freq.is_none() {
            let Some(v) = parse_i64(args.get(j + 1)) else { return ctx.reply.error(errors::NOT_INTEGER) };
            if v < 0 {
                return ctx.reply.error(errors::INVALID_IDLETIME);
            }
            idle = Some(v);
            j += 1;
        } else if a.eq_ignore_ascii_case(b"freq") && more && idle.is_none() {
            let Some(v) = parse_i64(args.get(j + 1)) else { return ctx.reply.error(errors::NOT_INTEGER) };
            if !(0..=255).contains(&v) {
                return ctx.reply.error(errors::INVALID_FREQ);
            }
            freq = Some(v);
            j += 1;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    let Some(ttl) = parse_i64(args.get(2)) else { return ctx.reply.error(errors::NOT_INTEGER) };
    if ttl < 0 {
        return ctx.reply.error(errors::INVALID_TTL);
    }
    let (key, loc, now) = (args.get(1), ctx.locs[0], ctx.now);
    let exists = ctx.locks.shard(loc.gid).get(key, loc.hash, now).is_some();
    if exists && !replace {
        return ctx.reply.error(errors::BUSYKEY);
    }
    let lim = crate::persist::limits(ctx.srv);
    let value = match rdb::restore(args.get(3), &lim) {
        Ok(v) => v,
        Err(rdb::RdbError::Version(_) | rdb::RdbError::Checksum { .. }) => return ctx.reply.error(errors::DUMP_PAYLOAD),
        Err(_) => return ctx.reply.error(errors::BAD_DATA_FORMAT),
    };
    let expire = match ttl {
        0 => None,
        t if absttl => Some(t as u64),
        t => Some(now.saturating_add(t as u64)),
    };
    let shard = ctx.locks.shard(loc.gid);
    // Already expired: the key is gone (an old one replaced), as in Redis.
    if expire.is_some_and(|t| t <= now) {
        if exists {
            shard.remove(key, loc.hash, now);
        }
        return ctx.reply.ok();
    }
    let lfu = ctx.srv.settings.lfu().is_some();
    let (idle, freq) = (idle.map(|v| v as u64), freq.map(|v| v as u8));
    let entry = tern_store::build_restored(key, NewValue::Value(value), expire, now, lfu, idle, freq);
    shard.insert_entry(key, loc.hash, entry, now);
    ctx.reply.ok();
}
