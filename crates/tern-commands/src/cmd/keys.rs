//! Generic key commands: DEL, EXISTS, RENAME, COPY, MOVE, the EXPIRE and
//! TTL families, KEYS, SCAN, RANDOMKEY, OBJECT, and the whole-database ones
//! (DBSIZE, FLUSHDB, FLUSHALL, SWAPDB).
//!
//! Keys named in a command's key spec arrive located and locked. Commands
//! that reach into another database or walk a whole one are `MANUAL_LOCKS`:
//! they lock through `ctx.locks` (a no-op under EXEC, where every shard is
//! already held) and tell WATCHers themselves.
//!
//! A global SCAN cursor is `(in-shard cursor << shard_bits) | shard`: shards
//! are walked in order, each with the table's reverse-binary cursor, so the
//! guarantee "every key present for the whole scan is returned" holds across
//! shards and across each table's growth or shrinking between calls.

use crate::messaging::notify::ev;
use tern_resp::{parse_i64, Args};
use tern_store::{Access, Entry, EntryExt, Lfu, Loc, LAZYFREE_THRESHOLD};

use super::keyspec::{index, ks, range, ACCESS, DELETE, INSERT, OW, RM, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{blocking, Ctx};
use crate::{errors, glob};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("del", -2, WRITE | MANUAL_LOCKS, &[ks(RM | DELETE, index(1), range(-1, 1, 0))], del)
        .event(ev::DEL)
        .doc("generic", "Deletes one or more keys.", "1.0.0", "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).")
        .acl(&["keyspace", "write", "slow"])
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    CommandSpec::new("unlink", -2, WRITE | FAST | MANUAL_LOCKS, &[ks(RM | DELETE, index(1), range(-1, 1, 0))], unlink)
        .event(ev::DEL)
        .doc("generic", "Asynchronously deletes one or more keys.", "4.0.0", "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.")
        .acl(&["keyspace", "write", "fast"])
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    CommandSpec::new("exists", -2, READONLY | FAST, &[ks(RO, index(1), range(-1, 1, 0))], exists)
        .doc("generic", "Determines whether one or more keys exist.", "1.0.0", "O(N) where N is the number of keys to check.")
        .history(&[("3.0.3", "Accepts multiple `key` arguments.")])
        .acl(&["keyspace", "read", "fast"])
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    CommandSpec::new("touch", -2, READONLY | FAST, &[ks(RO, index(1), range(-1, 1, 0))], touch)
        .doc("generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", "3.2.1", "O(N) where N is the number of keys that will be touched.")
        .acl(&["keyspace", "read", "fast"])
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    CommandSpec::new("type", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], type_cmd)
        .doc("generic", "Determines the type of value stored at a key.", "1.0.0", "O(1)")
        .acl(&["keyspace", "read", "fast"]),
    CommandSpec::new("rename", 3, WRITE, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(OW | UPDATE, index(2), range(0, 1, 0))], rename)
        .event(ev::RENAME_TO)
        .doc("generic", "Renames a key and overwrites the destination.", "1.0.0", "O(1)")
        .acl(&["keyspace", "write", "slow"]),
    CommandSpec::new("renamenx", 3, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(OW | INSERT, index(2), range(0, 1, 0))], renamenx)
        .event(ev::RENAME_TO)
        .doc("generic", "Renames a key only when the target key name doesn't exist.", "1.0.0", "O(1)")
        .history(&[("3.2.0", "The command no longer returns an error when source and destination names are the same.")])
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("copy", -3, WRITE | DENYOOM | MANUAL_LOCKS, &[ks(RO | ACCESS, index(1), range(0, 1, 0)), ks(OW | UPDATE, index(2), range(0, 1, 0))], copy)
        .event(ev::COPY_TO)
        .doc("generic", "Copies the value of a key to a new key.", "6.2.0", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.")
        .acl(&["keyspace", "write", "slow"]),
    CommandSpec::new("move", 3, WRITE | FAST | MANUAL_LOCKS, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], move_cmd)
        .event(ev::MOVE_TO)
        .doc("generic", "Moves a key to another database.", "1.0.0", "O(1)")
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("expire", -3, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], expire)
        .event(ev::EXPIRE)
        .doc("generic", "Sets the expiration time of a key in seconds.", "1.0.0", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("pexpire", -3, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], pexpire)
        .event(ev::EXPIRE)
        .doc("generic", "Sets the expiration time of a key in milliseconds.", "2.6.0", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("expireat", -3, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], expireat)
        .event(ev::EXPIRE)
        .doc("generic", "Sets the expiration time of a key to a Unix timestamp.", "1.2.0", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("pexpireat", -3, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], pexpireat)
        .event(ev::EXPIRE)
        .doc("generic", "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("ttl", 2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], ttl)
        .doc("generic", "Returns the expiration time in seconds of a key.", "1.0.0", "O(1)")
        .history(&[("2.8.0", "Added the -2 reply.")])
        .acl(&["keyspace", "read", "fast"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("pttl", 2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], pttl)
        .doc("generic", "Returns the expiration time in milliseconds of a key.", "2.6.0", "O(1)")
        .history(&[("2.8.0", "Added the -2 reply.")])
        .acl(&["keyspace", "read", "fast"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("expiretime", 2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], expiretime)
        .doc("generic", "Returns the expiration time of a key as a Unix timestamp.", "7.0.0", "O(1)")
        .acl(&["keyspace", "read", "fast"]),
    CommandSpec::new("pexpiretime", 2, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], pexpiretime)
        .doc("generic", "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0", "O(1)")
        .acl(&["keyspace", "read", "fast"]),
    CommandSpec::new("persist", 2, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], persist)
        .event(ev::PERSIST)
        .doc("generic", "Removes the expiration time of a key.", "2.2.0", "O(1)")
        .acl(&["keyspace", "write", "fast"]),
    CommandSpec::new("keys", 2, READONLY | MANUAL_LOCKS, &[], keys)
        .doc("generic", "Returns all key names that match a pattern.", "1.0.0", "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.")
        .acl(&["keyspace", "read", "slow", "dangerous"])
        .tips(&["request_policy:all_shards", "nondeterministic_output_order"]),
    CommandSpec::new("scan", -2, READONLY | MANUAL_LOCKS, &[], scan)
        .doc("generic", "Iterates over the key names in the database.", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        .history(&[("6.0.0", "Added the `TYPE` subcommand.")])
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output", "request_policy:special", "response_policy:special"]),
    CommandSpec::new("randomkey", 1, READONLY | MANUAL_LOCKS, &[], randomkey)
        .doc("generic", "Returns a random key name from the database.", "1.0.0", "O(1)")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["request_policy:all_shards", "response_policy:special", "nondeterministic_output"]),
    CommandSpec::new("dbsize", 1, READONLY | FAST | MANUAL_LOCKS, &[], dbsize)
        .doc("server", "Returns the number of keys in the database.", "1.0.0", "O(1)")
        .acl(&["keyspace", "read", "fast"])
        .tips(&["request_policy:all_shards", "response_policy:agg_sum"]),
    CommandSpec::new("flushdb", -1, WRITE | MANUAL_LOCKS, &[], flushdb)
        .doc("server", "Remove all keys from the current database.", "1.0.0", "O(N) where N is the number of keys in the selected database")
        .history(&[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")])
        .acl(&["keyspace", "write", "slow", "dangerous"])
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    CommandSpec::new("flushall", -1, WRITE | MANUAL_LOCKS, &[], flushall)
        .doc("server", "Removes all keys from all databases.", "1.0.0", "O(N) where N is the total number of keys in all databases")
        .history(&[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")])
        .acl(&["keyspace", "write", "slow", "dangerous"])
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    CommandSpec::new("swapdb", 3, WRITE | FAST | MANUAL_LOCKS, &[], swapdb)
        .doc("server", "Swaps two Redis databases.", "4.0.0", "O(N) where N is the count of clients watching or blocking on keys from both databases.")
        .acl(&["keyspace", "write", "fast", "dangerous"]),
    CommandSpec::new("object", -2, 0, &[], super::unknown_subcommand)
        .doc("generic", "A container for object introspection commands.", "2.2.3", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(OBJECT_SUBCOMMANDS),
];

static OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("encoding", 3, READONLY, &[ks(RO, index(2), range(0, 1, 0))], object_encoding)
        .doc("generic", "Returns the internal encoding of a Redis object.", "2.2.3", "O(1)")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("freq", 3, READONLY, &[ks(RO, index(2), range(0, 1, 0))], object_freq)
        .doc("generic", "Returns the logarithmic access frequency counter of a Redis object.", "4.0.0", "O(1)")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], object_help)
        .doc("generic", "Returns helpful text about the different subcommands.", "6.2.0", "O(1)")
        .acl(&["keyspace", "slow"]),
    CommandSpec::new("idletime", 3, READONLY, &[ks(RO, index(2), range(0, 1, 0))], object_idletime)
        .doc("generic", "Returns the time since the last access to a Redis object.", "2.2.3", "O(1)")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("refcount", 3, READONLY, &[ks(RO, index(2), range(0, 1, 0))], object_refcount)
        .doc("generic", "Returns the reference count of a value of a key.", "2.2.3", "O(1)")
        .acl(&["keyspace", "read", "slow"])
        .tips(&["nondeterministic_output"]),
];

const OBJECT_HELP: &[&str] = &[
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
];


/// Integers Redis keeps as shared objects (`OBJ_SHARED_INTEGERS`), which
/// report a refcount of `OBJ_SHARED_REFCOUNT`.
const SHARED_INTEGERS: i64 = 10_000;
const SHARED_REFCOUNT: i64 = i32::MAX as i64;

/// The maxmemory-policy's family, which decides what OBJECT FREQ/IDLETIME
/// report.
fn lfu_policy(ctx: &Ctx<'_, '_>) -> Option<Lfu> {
    ctx.srv.settings.lfu()
}

/// Key commands record accesses like every other family ([`Ctx::access`]),
/// except TOUCH, which records one even under CLIENT NO-TOUCH (`always`).
fn access(ctx: &Ctx<'_, '_>, always: bool) -> Access {
    if always {
        Access::Touch(lfu_policy(ctx))
    } else {
        ctx.access()
    }
}


/// Parses a database index as `getIntFromObjectOrReply` does.
fn parse_db_index(b: &[u8]) -> Option<i64> {
    parse_i64(b).filter(|v| i32::try_from(*v).is_ok())
}

/// `getIntFromObjectOrReply` without a custom message: not an integer, or
/// an integer outside C's `int`, each with its own error.
fn db_index_or_reply(ctx: &mut Ctx<'_, '_>, b: &[u8]) -> Option<i64> {
    match parse_i64(b) {
        None => {
            ctx.reply.error(errors::NOT_INTEGER);
            None
        }
        Some(v) if i32::try_from(v).is_err() => {
            ctx.reply.error(errors::I32_OUT_OF_RANGE);
            None
        }
        Some(v) => Some(v),
    }
}

fn del(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    del_generic(ctx, args, false);
}

fn unlink(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    del_generic(ctx, args, true);
}

/// DEL and UNLINK: the same removal; values too big to free in a blink go
/// to the lazyfree thread when asked to (UNLINK, or DEL with
/// lazyfree-lazy-user-del).
///
/// They lock their keys themselves (`MANUAL_LOCKS`) only so that WATCHers
/// hear about the keys actually deleted and not about every key named, as
/// Redis signals: `DEL present absent` leaves a WATCH on `absent` intact.
fn del_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, lazy: bool) {
    let n = args.len() - 1;
    // `call` locates the spec'd keys even of MANUAL_LOCKS commands; the
    // fallback only guards against a caller that did not.
    let own: Vec<Loc>;
    let locs: &[Loc] = if ctx.locs.len() == n {
        ctx.locs
    } else {
        let db = ctx.client.db;
        own = (1..args.len()).map(|i| ctx.ks.locate(db, args.get(i))).collect();
        &own
    };
    ctx.locks.acquire(locs.iter().map(|l| l.gid));
    let mut removed = 0;
    let mut lazy = if lazy { Some(true) } else { None };
    let mut st = ctx.stager_of(n);
    for i in 0..n {
        st.before(ctx.locks, locs, args, i);
        let (loc, key) = (locs[i], args.get(1 + i));
        let sh = ctx.locks.shard(loc.gid);
        let Some(e) = sh.remove(key, loc.hash, ctx.now) else { continue };
        removed += 1;
        if e.free_effort() > LAZYFREE_THRESHOLD {
            let bg = *lazy.get_or_insert_with(|| ctx.srv.settings.lazyfree_lazy_user_del());
            if bg {
                ctx.ks.lazyfree.free(e);
            }
        }
    }
    ctx.locks.release();
    ctx.reply.int(removed);
}

fn exists(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut n = 0;
    let mut st = ctx.stager();
    for i in 0..ctx.locs.len() {
        ctx.stage(&mut st, args, i);
        let loc = ctx.locs[i];
        if ctx.locks.shard(loc.gid).get(args.get(1 + i), loc.hash, ctx.now).is_some() {
            ctx.stats.keyspace_hits.add(1);
            n += 1;
        } else {
            ctx.missed(loc, args.get(1 + i));
        }
    }
    ctx.reply.int(n);
}

fn touch(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = access(ctx, true);
    let mut n = 0;
    let mut st = ctx.stager();
    for i in 0..ctx.locs.len() {
        ctx.stage(&mut st, args, i);
        let loc = ctx.locs[i];
        let sh = ctx.locks.shard(loc.gid);
        if sh.lookup(args.get(1 + i), loc.hash, ctx.now, acc).is_some() {
            ctx.stats.keyspace_hits.add(1);
            n += 1;
        } else {
            ctx.stats.keyspace_misses.add(1);
        }
    }
    ctx.reply.int(n);
}

fn type_cmd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let loc = ctx.locs[0];
    let name = ctx.locks.shard(loc.gid).get(args.get(1), loc.hash, ctx.now).map(|e| e.value().type_name());
    match name {
        Some(t) => {
            ctx.stats.keyspace_hits.add(1);
            ctx.reply.simple(t);
        }
        None => {
            ctx.missed(loc, args.get(1));
            ctx.reply.simple("none");
        }
    }
}

fn rename(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    rename_generic(ctx, args, false);
}

fn renamenx(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    rename_generic(ctx, args, true);
}

fn rename_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, nx: bool) {
    let (src, dst) = (args.get(1), args.get(2));
    let (ls, ld) = (ctx.locs[0], ctx.locs[1]);
    let (now, acc) = (ctx.now, access(ctx, false));
    if ctx.locks.shard(ls.gid).lookup(src, ls.hash, now, acc).is_none() {
        ctx.reply.error(errors::NO_SUCH_KEY);
        return;
    }
    if src == dst {
        if nx {
            ctx.reply.int(0);
        } else {
            ctx.reply.ok();
        }
        return;
    }
    if nx && ctx.locks.shard(ld.gid).get(dst, ld.hash, now).is_some() {
        ctx.reply.int(0);
        return;
    }
    let Some(e) = ctx.locks.shard(ls.gid).remove_as(src, ls.hash, now, ev::RENAME_FROM) else {
        ctx.reply.error(errors::NO_SUCH_KEY);
        return;
    };
    // The entry keeps its TTL and access data, as Redis moves the object.
    ctx.locks.shard(ld.gid).insert_entry(dst, ld.hash, e, now);
    if nx {
        ctx.reply.int(1);
    } else {
        ctx.reply.ok();
    }
}

fn copy(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let src_db = ctx.client.db;
    let mut dst_db = src_db;
    let mut replace = false;
    let mut j = 3;
    while j < args.len() {
        let opt = args.get(j);
        if opt.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if opt.eq_ignore_ascii_case(b"db") && j + 1 < args.len() {
            let Some(id) = db_index_or_reply(ctx, args.get(j + 1)) else { return };
            if id < 0 || id as usize >= ctx.ks.db_count() {
                ctx.reply.error(errors::DB_INDEX_OUT_OF_RANGE);
                return;
            }
            dst_db = id as usize;
            j += 1;
        } else {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
        j += 1;
    }
    if (src_db != 0 || dst_db != 0) && ctx.srv.cluster.get().is_some() {
        ctx.reply.error(errors::CLUSTER_COPY_DB);
        return;
    }
    let (key, newkey) = (args.get(1), args.get(2));
    if src_db == dst_db && key == newkey {
        ctx.reply.error(errors::SAME_OBJECT);
        return;
    }
    let ls = ctx.ks.locate(src_db, key);
    let ld = ctx.ks.locate(dst_db, newkey);
    let (now, acc) = (ctx.now, access(ctx, false));
    ctx.locks.acquire([ls.gid, ld.gid]);
    let found = ctx.locks.shard(ls.gid).lookup_source(key, ls.hash, now, acc).map(|e| (e.to_value(), e.expire()));
    let Some((value, expire)) = found else {
        ctx.locks.release();
        ctx.stats.keyspace_misses.add(1);
        ctx.reply.int(0);
        return;
    };
    ctx.stats.keyspace_hits.add(1);
    let dst = ctx.locks.shard(ld.gid);
    if !replace && dst.get(newkey, ld.hash, now).is_some() {
        ctx.locks.release();
        ctx.reply.int(0);
        return;
    }
    // A copy is a new object: fresh access time and counter.
    let old = dst.set(newkey, ld.hash, value, expire, now);
    ctx.locks.release();
    drop(old);
    ctx.reply.int(1);
}

fn move_cmd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if ctx.srv.cluster.get().is_some() {
        ctx.reply.error(errors::CLUSTER_MOVE);
        return;
    }
    let Some(id) = db_index_or_reply(ctx, args.get(2)) else { return };
    if id < 0 || id as usize >= ctx.ks.db_count() {
        ctx.reply.error(errors::DB_INDEX_OUT_OF_RANGE);
        return;
    }
    let (src_db, dst_db) = (ctx.client.db, id as usize);
    if src_db == dst_db {
        ctx.reply.error(errors::SAME_OBJECT);
        return;
    }
    let key = args.get(1);
    let (ls, ld) = (ctx.ks.locate(src_db, key), ctx.ks.locate(dst_db, key));
    let (now, acc) = (ctx.now, access(ctx, false));
    ctx.locks.acquire([ls.gid, ld.gid]);
    let moved = 'm: {
        if ctx.locks.shard(ls.gid).lookup(key, ls.hash, now, acc).is_none() {
            break 'm false;
        }
        if ctx.locks.shard(ld.gid).get(key, ld.hash, now).is_some() {
            break 'm false;
        }
        let Some(e) = ctx.locks.shard(ls.gid).remove_as(key, ls.hash, now, ev::MOVE_FROM) else { break 'm false };
        ctx.locks.shard(ld.gid).insert_entry(key, ld.hash, e, now);
        true
    };
    ctx.locks.release();
    ctx.reply.int(i64::from(moved));
}

fn expire(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let now = ctx.now as i64;
    expire_generic(ctx, args, now, true);
}

fn pexpire(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let now = ctx.now as i64;
    expire_generic(ctx, args, now, false);
}

fn expireat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    expire_generic(ctx, args, 0, true);
}

fn pexpireat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    expire_generic(ctx, args, 0, false);
}

/// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT: `basetime` is now (relative forms)
/// or 0 (absolute), in ms; `secs` says the argument is in seconds.
fn expire_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, basetime: i64, secs: bool) {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for i in 3..args.len() {
        let opt = args.get(i);
        if opt.eq_ignore_ascii_case(b"nx") {
            nx = true;
        } else if opt.eq_ignore_ascii_case(b"xx") {
            xx = true;
        } else if opt.eq_ignore_ascii_case(b"gt") {
            gt = true;
        } else if opt.eq_ignore_ascii_case(b"lt") {
            lt = true;
        } else {
            ctx.reply.error(errors::unsupported_option(opt));
            return;
        }
    }
    if nx && (xx || gt || lt) {
        ctx.reply.error(errors::NX_AND_OTHERS);
        return;
    }
    if gt && lt {
        ctx.reply.error(errors::GT_AND_LT);
        return;
    }
    let Some(mut when) = parse_i64(args.get(2)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    if secs {
        match when.checked_mul(1000) {
            Some(ms) => when = ms,
            None => {
                ctx.reply.error(&errors::invalid_expire(&ctx.cmd.fullname));
                return;
            }
        }
    }
    let Some(when) = when.checked_add(basetime) else {
        ctx.reply.error(&errors::invalid_expire(&ctx.cmd.fullname));
        return;
    };
    let loc = ctx.locs[0];
    let key = args.get(1);
    let (now, acc) = (ctx.now, access(ctx, false));
    let sh = ctx.locks.shard(loc.gid);
    let Some(e) = sh.lookup(key, loc.hash, now, acc) else {
        ctx.reply.int(0);
        return;
    };
    // A missing TTL is an infinite one: GT never beats it, LT always does.
    let current = e.expire().map(|c| c as i64);
    let refused = (nx && current.is_some())
        || (xx && current.is_none())
        || (gt && current.is_none_or(|c| when <= c))
        || (lt && current.is_some_and(|c| when >= c));
    if refused {
        ctx.reply.int(0);
        return;
    }
    if when <= now as i64 {
        sh.remove(key, loc.hash, now);
    } else {
        sh.set_expire(key, loc.hash, Some(when as u64));
    }
    ctx.reply.int(1);
}

fn ttl(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ttl_generic(ctx, args, false, false);
}

fn pttl(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ttl_generic(ctx, args, true, false);
}

fn expiretime(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ttl_generic(ctx, args, false, true);
}

fn pexpiretime(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ttl_generic(ctx, args, true, true);
}

/// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 for no key, -1 for no TTL.
fn ttl_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, ms: bool, abs: bool) {
    let loc = ctx.locs[0];
    let now = ctx.now;
    let found = ctx.locks.shard(loc.gid).get(args.get(1), loc.hash, now).map(|e| e.expire());
    let Some(expire) = found else {
        ctx.missed(loc, args.get(1));
        ctx.reply.int(-2);
        return;
    };
    ctx.stats.keyspace_hits.add(1);
    let Some(when) = expire else {
        ctx.reply.int(-1);
        return;
    };
    let t = if abs { when as i64 } else { (when as i64).saturating_sub(now as i64) }.max(0);
    // Rounded to the nearest second; i128 so a deadline near i64::MAX
    // rounds instead of wrapping.
    let v = if ms { t } else { ((i128::from(t) + 500) / 1000) as i64 };
    ctx.reply.int(v);
}

fn persist(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let loc = ctx.locs[0];
    let key = args.get(1);
    let (now, acc) = (ctx.now, access(ctx, false));
    let sh = ctx.locks.shard(loc.gid);
    let had = match sh.lookup(key, loc.hash, now, acc) {
        Some(e) => e.expire().is_some(),
        None => false,
    };
    if had {
        sh.set_expire(key, loc.hash, None);
    }
    ctx.reply.int(i64::from(had));
}

fn keys(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let pattern = args.get(1);
    let all = pattern == b"*";
    let gids = ctx.ks.db_gids(ctx.client.db);
    let enc = ctx.reply.enc;
    let mut body = Vec::new();
    let mut n = 0;
    // The whole database at once, so the reply is one consistent snapshot
    // (a RENAME across shards cannot be seen twice or not at all).
    ctx.locks.acquire(gids.clone());
    for g in gids {
        for e in ctx.locks.shard(g).iter(ctx.now) {
            if all || glob::matches(pattern, e.key(), false) {
                enc.bulk(&mut body, e.key());
                n += 1;
            }
        }
    }
    ctx.locks.release();
    ctx.reply.array(n);
    ctx.reply.out.extend_from_slice(&body);
}

/// Parses a SCAN cursor as Redis 7.4's `string2ull`: a canonical integer
/// (negative ones refused), else what `strtoull` accepts whole (leading
/// space, a sign, leading zeros; `-n` wraps), read as a C string.
pub(crate) fn parse_cursor(s: &[u8]) -> Option<u64> {
    let s = &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())];
    if let Some(v) = parse_i64(s) {
        return u64::try_from(v).ok();
    }
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: Option<u64> = Some(0);
    while i < s.len() && s[i].is_ascii_digit() {
        v = v.and_then(|v| v.checked_mul(10)).and_then(|v| v.checked_add(u64::from(s[i] - b'0')));
        i += 1;
    }
    if i == start || i != s.len() {
        return None;
    }
    v.map(|v| if neg { v.wrapping_neg() } else { v })
}

fn scan(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cursor) = parse_cursor(args.get(1)) else {
        ctx.reply.error(errors::INVALID_CURSOR);
        return;
    };
    let mut count: i64 = 10;
    let mut pattern: Option<&[u8]> = None;
    let mut type_name: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        let opt = args.get(i);
        let more = args.len() - i >= 2;
        if opt.eq_ignore_ascii_case(b"count") && more {
            let Some(c) = parse_i64(args.get(i + 1)) else {
                ctx.reply.error(errors::NOT_INTEGER);
                return;
            };
            if c < 1 {
                ctx.reply.error(errors::SYNTAX);
                return;
            }
            count = c;
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"match") && more {
            let p = args.get(i + 1);
            pattern = if p == b"*" { None } else { Some(p) };
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"type") && more {
            // An unknown type name matches nothing (7.4 does not reject it).
            type_name = Some(args.get(i + 1));
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"novalues") {
            ctx.reply.error(errors::NOVALUES_NOT_HSCAN);
            return;
        } else {
            ctx.reply.error(errors::SYNTAX);
            return;
        }
    }

    let bits = ctx.ks.shard_bits();
    let shards = ctx.ks.shards_per_db() as u64;
    let base = ctx.ks.db_gids(ctx.client.db).start;
    let mut shard = cursor & (shards - 1);
    let mut inner = cursor >> bits;
    let enc = ctx.reply.enc;
    let mut body = Vec::new();
    let mut n = 0usize;
    let mut sampled = 0usize;
    // Like Redis: stop after COUNT entries seen or 10*COUNT buckets, so a
    // sparse table cannot make one call long.
    let mut budget = count.saturating_mul(10);
    let now = ctx.now;
    let next = loop {
        let gid = base + shard as u32;
        ctx.locks.acquire([gid]);
        let sh = ctx.locks.shard(gid);
        // An empty shard has nothing to return now, and keys added later
        // need not be: skip its buckets.
        let after = if sh.is_empty() {
            0
        } else {
            let (after, seen) = sh.scan_live(inner, now, |e| {
                if type_name.is_some_and(|t| !e.value().type_name().as_bytes().eq_ignore_ascii_case(t)) {
                    return;
                }
                if pattern.is_some_and(|p| !glob::matches(p, e.key(), false)) {
                    return;
                }
                enc.bulk(&mut body, e.key());
                n += 1;
            });
            sampled += seen;
            budget -= 1;
            after
        };
        if after == 0 {
            ctx.locks.release();
            shard += 1;
            inner = 0;
            if shard == shards {
                break 0;
            }
        } else {
            inner = after;
        }
        if budget <= 0 || sampled >= count as usize {
            break (inner << bits) | shard;
        }
    };
    ctx.locks.release();
    ctx.reply.array(2);
    ctx.reply.bulk(itoa::Buffer::new().format(next).as_bytes());
    ctx.reply.array(n);
    ctx.reply.out.extend_from_slice(&body);
}

fn randomkey(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    use rand::Rng;
    let gids = ctx.ks.db_gids(ctx.client.db);
    let now = ctx.now;
    ctx.locks.acquire(gids.clone());
    let mut lens: Vec<usize> = gids.clone().map(|g| ctx.locks.shard(g).len()).collect();
    let mut total: usize = lens.iter().sum();
    let mut rng = rand::thread_rng();
    // Draw a shard in proportion to its size, then an entry in it. An
    // expired entry is removed and the draw repeated, as Redis's
    // dbRandomKey does: each miss shrinks the database, so this ends.
    let found = loop {
        if total == 0 {
            break None;
        }
        let mut r = rng.gen_range(0..total);
        let mut at = 0;
        while r >= lens[at] {
            r -= lens[at];
            at += 1;
        }
        let sh = ctx.locks.shard(gids.start + at as u32);
        let Some(e) = sh.random_any(&mut rng) else { break None };
        if e.expire().is_none_or(|w| w > now) {
            break Some(e.key().to_vec());
        }
        let key = e.key().to_vec();
        let hash = ctx.ks.hash(&key);
        sh.get(&key, hash, now);
        lens[at] = sh.len();
        total = lens.iter().sum();
    };
    ctx.locks.release();
    match found {
        Some(k) => ctx.reply.bulk(&k),
        None => ctx.reply.null(),
    }
}

fn dbsize(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let gids = ctx.ks.db_gids(ctx.client.db);
    ctx.locks.acquire(gids.clone());
    let n: usize = gids.map(|g| ctx.locks.shard(g).len()).sum();
    ctx.locks.release();
    ctx.reply.int(n as i64);
}

/// FLUSHDB/FLUSHALL's optional argument: Some(true) to free in the
/// background, None after replying with the syntax error.
fn flush_mode(ctx: &mut Ctx<'_, '_>, args: Args<'_>) -> Option<bool> {
    match args.len() {
        1 => Some(ctx.srv.settings.lazyfree_lazy_user_flush()),
        2 if args.get(1).eq_ignore_ascii_case(b"sync") => Some(false),
        2 if args.get(1).eq_ignore_ascii_case(b"async") => Some(true),
        _ => {
            ctx.reply.error(errors::SYNTAX);
            None
        }
    }
}

fn flushdb(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if flush_done(ctx) {
        return;
    }
    let Some(lazy) = flush_mode(ctx, args) else { return };
    let gids = ctx.ks.db_gids(ctx.client.db);
    let waits = empty_shards(ctx, gids, lazy);
    flush_reply(ctx, args, waits);
}

fn flushall(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if flush_done(ctx) {
        return;
    }
    let Some(lazy) = flush_mode(ctx, args) else { return };
    let gids = 0..ctx.ks.total_shards() as u32;
    let waits = empty_shards(ctx, gids, lazy);
    crate::persist::after_flushall(ctx.srv, ctx.locks);
    flush_reply(ctx, args, waits);
}

/// A SYNC flush run again once its background free ended: its `+OK`.
fn flush_done(ctx: &mut Ctx<'_, '_>) -> bool {
    if !blocking::serving(ctx) {
        return false;
    }
    blocking::served(ctx);
    ctx.reply.ok();
    true
}

/// `+OK` now, or (`waits`: a SYNC flush freeing in the background) once
/// the free has ended.
fn flush_reply(ctx: &mut Ctx<'_, '_>, args: Args<'_>, waits: bool) {
    if waits {
        blocking::wait_for_job(ctx, args);
    } else {
        ctx.reply.ok();
    }
}

/// Empties the given shards under one lock acquisition (the flush is atomic
/// to other clients) through the store's flush, which tells WATCHers of
/// keys that existed and records the flush. The detached data is dropped
/// after the locks are released: on the lazyfree thread if `lazy`; for a
/// SYNC flush, there too while the client waits for it, as Redis 8 runs
/// it (the worker's other clients go on meanwhile), or right here inside
/// MULTI or a script. True when the client is to wait.
fn empty_shards(ctx: &mut Ctx<'_, '_>, gids: std::ops::Range<u32>, lazy: bool) -> bool {
    let now = ctx.now;
    ctx.locks.acquire(gids.clone());
    let mut detached = Vec::with_capacity(gids.len());
    for g in gids {
        let d = ctx.locks.shard(g).flush(now);
        if !d.is_empty() {
            detached.push(d);
        }
    }
    ctx.locks.release();
    ctx.srv.tracking_flushed(ctx.worker, !ctx.locks.is_pinned());
    if lazy {
        if !detached.is_empty() {
            ctx.ks.lazyfree.free(detached);
        }
        false
    } else if blocking::may_wait(ctx) && ctx.ks.lazyfree.tells() {
        // Even with nothing detached: the reply waits for the frees
        // handed before, as Redis's completion job does.
        ctx.ks.lazyfree.free_then(detached, (ctx.worker, ctx.client.id));
        true
    } else {
        drop(detached);
        false
    }
}

fn swapdb(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if ctx.srv.cluster.get().is_some() {
        ctx.reply.error(errors::CLUSTER_SWAPDB);
        return;
    }
    let Some(a) = parse_db_index(args.get(1)) else {
        ctx.reply.error(errors::INVALID_FIRST_DB);
        return;
    };
    let Some(b) = parse_db_index(args.get(2)) else {
        ctx.reply.error(errors::INVALID_SECOND_DB);
        return;
    };
    let dbs = ctx.ks.db_count() as i64;
    if a < 0 || a >= dbs || b < 0 || b >= dbs {
        ctx.reply.error(errors::DB_INDEX_OUT_OF_RANGE);
        return;
    }
    if a != b {
        let (ga, gb) = (ctx.ks.db_gids(a as usize), ctx.ks.db_gids(b as usize));
        let now = ctx.now;
        ctx.locks.acquire(ga.clone().chain(gb.clone()));
        // A key hashes to the same shard index in every database, so
        // swapping shard i with shard i swaps the databases; the watches
        // stay where they are, on the database index the client watched.
        for (x, y) in ga.zip(gb) {
            let (sx, sy) = ctx.locks.shard_pair(x, y);
            sx.swap_with(sy, now);
        }
        ctx.locks.release();
    }
    ctx.reply.ok();
}

fn object_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(ctx, OBJECT_HELP);
}

/// The entry OBJECT <sub> <key> inspects, without touching it; replies null
/// and returns None if the key does not exist.
fn object_entry<'s>(ctx: &'s mut Ctx<'_, '_>, args: Args<'_>) -> Option<&'s Entry> {
    let loc = ctx.locs[0];
    let e = ctx.locks.shard(loc.gid).get(args.get(2), loc.hash, ctx.now);
    if e.is_some() {
        ctx.stats.keyspace_hits.add(1);
    } else {
        ctx.stats.keyspace_misses.add(1);
        ctx.reply.null();
    }
    e
}

fn object_encoding(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(enc) = object_entry(ctx, args).map(|e| e.encoding()) else { return };
    ctx.reply.bulk(enc.as_bytes());
}

fn object_refcount(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let srv = ctx.srv;
    let Some(n) = object_entry(ctx, args).map(|e| refcount(srv, e)) else { return };
    ctx.reply.int(n);
}

/// OBJECT REFCOUNT's figure for `e` (DEBUG OBJECT's too): Redis shares
/// small integers unless an LRU/LFU policy with a memory limit needs
/// per-object access data.
pub(super) fn refcount(srv: &crate::server::Server, e: &Entry) -> i64 {
    let small_int = e.str().and_then(|s| s.int()).is_some_and(|n| (0..SHARED_INTEGERS).contains(&n));
    let shared = small_int && {
        let cfg = srv.config.read();
        cfg.maxmemory == 0 || !(cfg.maxmemory_policy.is_lru() || cfg.maxmemory_policy.is_lfu())
    };
    if shared {
        SHARED_REFCOUNT
    } else {
        1
    }
}

fn object_idletime(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let now = ctx.now;
    let Some((idle, fifo)) = object_entry(ctx, args).map(|e| (e.idle_secs(now), e.fifo_tracked())) else { return };
    if lfu_policy(ctx).is_some() {
        ctx.reply.error(errors::IDLE_NOT_TRACKED);
        return;
    }
    // S3-FIFO and SIEVE keep an access counter and the insertion order
    // in the place of the access time.
    if fifo {
        ctx.reply.error(errors::IDLE_NOT_TRACKED_FIFO);
        return;
    }
    ctx.reply.int(idle as i64);
}

fn object_freq(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let now = ctx.now;
    let lfu = lfu_policy(ctx);
    let decay = lfu.map_or(0, |l| l.decay_minutes);
    let Some(freq) = object_entry(ctx, args).map(|e| e.lfu_count(now, decay)) else { return };
    if lfu.is_none() {
        ctx.reply.error(errors::FREQ_NOT_TRACKED);
        return;
    }
    ctx.reply.int(i64::from(freq));
}

#[cfg(test)]
mod tests {
    use super::parse_cursor;

    #[test]
    fn cursor_parsing_follows_string2ull() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b"123"), Some(123));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b"-1"), None);
        assert_eq!(parse_cursor(b""), None);
        assert_eq!(parse_cursor(b"x"), None);
        assert_eq!(parse_cursor(b"1x"), None);
        assert_eq!(parse_cursor(b" 5"), Some(5));
        assert_eq!(parse_cursor(b"+5"), Some(5));
        assert_eq!(parse_cursor(b"007"), Some(7));
        assert_eq!(parse_cursor(b"-0"), Some(0));
        assert_eq!(parse_cursor(b"-18446744073709551615"), Some(1));
        assert_eq!(parse_cursor(b"5 "), None);
        assert_eq!(parse_cursor(b"- 5"), None);
        assert_eq!(parse_cursor(b"5\0junk"), Some(5));
    }
}
