//! Hash commands: HSET and the rest of Redis's hash family, with Redis
//! 7.4/8.0's per-field expiration (HEXPIRE, HTTL, HPERSIST, HGETEX, HSETEX,
//! HGETDEL).
//!
//! The value lives in `tern_store::Hash` (compact pack while small, table
//! when large, field TTLs beside the fields). Every access through the
//! shard has already removed the fields whose deadline passed, and a hash
//! whose fields have all expired is absent, so handlers here never see a
//! dead field. After changing a hash a handler tells the shard its new size
//! and, when it moved earlier, its next field deadline; a hash left empty
//! is deleted.
//!
//! Multi-field commands (HMGET, HDEL, HSET, HGETDEL, HGETEX, HSETEX, the
//! HEXPIRE and HTTL families) look their fields up in one pass.


use crate::messaging::notify::{self, ev};
use rand::seq::SliceRandom;
use rand::Rng;
use tern_resp::{parse_i64, Args};
use tern_store::{Edit, Effect, Access, EntryExt, Hash, HashLimits, HashPair, Shard, Value};

use super::strings::ldouble::LongDouble;
use super::keyspec::{index, ks, range, ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;


/// Latest field deadline Redis accepts, in ms (`HFE_MAX_ABS_TIME_MSEC`).
const MAX_FIELD_DEADLINE: i64 = (1 << 46) - 1;

// Per-field reply codes of the HEXPIRE / HTTL / HPERSIST families.
const NO_FIELD: i64 = -2;
const NO_TTL: i64 = -1;
const COND_FAILED: i64 = 0;
const SET_OK: i64 = 1;
const DELETED: i64 = 2;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("hset", -4, WRITE | DENYOOM | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hset)
        .event(ev::HSET)
        .member(2)
        .doc("hash", "Creates or modifies the value of a field in a hash.", "2.0.0", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.")
        .history(&[("4.0.0", "Accepts multiple `field` and `value` arguments.")])
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hmset", -4, WRITE | DENYOOM | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hmset)
        .event(ev::HSET)
        .doc("hash", "Sets the values of multiple fields.", "2.0.0", "O(N) where N is the number of fields being set.")
        .deprecated("4.0.0", "`HSET` with multiple field-value pairs")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hsetnx", 4, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], hsetnx)
        .event(ev::HSET)
        .member(2)
        .doc("hash", "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0", "O(1)")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hget", 3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hget)
        .member(2)
        .doc("hash", "Returns the value of a field in a hash.", "2.0.0", "O(1)")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hmget", -3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hmget)
        .member(2)
        .doc("hash", "Returns the values of all fields in a hash.", "2.0.0", "O(N) where N is the number of fields being requested.")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hgetall", 2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hgetall)
        .doc("hash", "Returns all fields and values in a hash.", "2.0.0", "O(N) where N is the size of the hash.")
        .acl(&["read", "hash", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("hdel", -3, WRITE | FAST, &[ks(RW | DELETE, index(1), range(0, 1, 0))], hdel)
        .event(ev::HDEL)
        .member(2)
        .doc("hash", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", "2.0.0", "O(N) where N is the number of fields to be removed.")
        .history(&[("2.4.0", "Accepts multiple `field` arguments.")])
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hlen", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], hlen)
        .doc("hash", "Returns the number of fields in a hash.", "2.0.0", "O(1)")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hexists", 3, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], hexists)
        .member(2)
        .doc("hash", "Determines whether a field exists in a hash.", "2.0.0", "O(1)")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hstrlen", 3, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], hstrlen)
        .member(2)
        .doc("hash", "Returns the length of the value of a field.", "3.2.0", "O(1)")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hincrby", 4, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], hincrby)
        .event(ev::HINCRBY)
        .member(2)
        .doc("hash", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", "2.0.0", "O(1)")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hincrbyfloat", 4, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], hincrbyfloat)
        .event(ev::HINCRBYFLOAT)
        .member(2)
        .doc("hash", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", "2.6.0", "O(1)")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hkeys", 2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hkeys)
        .doc("hash", "Returns all fields in a hash.", "2.0.0", "O(N) where N is the size of the hash.")
        .acl(&["read", "hash", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("hvals", 2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hvals)
        .doc("hash", "Returns all values in a hash.", "2.0.0", "O(N) where N is the size of the hash.")
        .acl(&["read", "hash", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("hrandfield", -2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hrandfield)
        .doc("hash", "Returns one or more random fields from a hash.", "6.2.0", "O(N) where N is the number of fields returned")
        .acl(&["read", "hash", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("hscan", -3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hscan)
        .doc("hash", "Iterates over fields and values of a hash.", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        .acl(&["read", "hash", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("hgetdel", -5, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], hgetdel)
        .event(ev::HDEL)
        .doc("hash", "Returns the value of a field and deletes it from the hash.", "8.0.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hgetex", -5, WRITE | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0)).notes("RW and UPDATE because it changes the TTL")], hgetex)
        .event(ev::HEXPIRE)
        .doc("hash", "Get the value of one or more fields of a given hash key, and optionally set their expiration.", "8.0.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hsetex", -6, WRITE | DENYOOM | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hsetex)
        .event(ev::HSET)
        .doc("hash", "Set the value of one or more fields of a given hash key, and optionally set their expiration.", "8.0.0", "O(N) where N is the number of fields being set.")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hexpire", -6, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hexpire)
        .event(ev::HEXPIRE)
        .doc("hash", "Set expiry for hash field using relative time to expire (seconds)", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hpexpire", -6, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hpexpire)
        .event(ev::HEXPIRE)
        .doc("hash", "Set expiry for hash field using relative time to expire (milliseconds)", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hexpireat", -6, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hexpireat)
        .event(ev::HEXPIRE)
        .doc("hash", "Set expiry for hash field using an absolute Unix timestamp (seconds)", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("hpexpireat", -6, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hpexpireat)
        .event(ev::HEXPIRE)
        .doc("hash", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
    CommandSpec::new("httl", -5, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], httl)
        .doc("hash", "Returns the TTL in seconds of a hash field.", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["read", "hash", "fast"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("hpttl", -5, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hpttl)
        .doc("hash", "Returns the TTL in milliseconds of a hash field.", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["read", "hash", "fast"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("hexpiretime", -5, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hexpiretime)
        .doc("hash", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hpexpiretime", -5, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], hpexpiretime)
        .doc("hash", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["read", "hash", "fast"]),
    CommandSpec::new("hpersist", -5, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], hpersist)
        .event(ev::HPERSIST)
        .doc("hash", "Removes the expiration time for each specified field", "7.4.0", "O(N) where N is the number of specified fields")
        .acl(&["write", "hash", "fast"]),
];

/// Hash fields removed because their TTL passed, and of those the ones
/// the active cycle removed, summed over the shards one lock at a time
/// (INFO `expired_subkeys`, `expired_subkeys_active`).
pub fn expired_fields(ctx: &mut Ctx<'_, '_>) -> (u64, u64) {
    let (mut all, mut active) = (0, 0);
    for gid in 0..ctx.ks.total_shards() as u32 {
        ctx.locks.acquire([gid]);
        let s = ctx.locks.shard(gid);
        all += s.expired_fields;
        active += s.expired_fields_active;
        ctx.locks.release();
    }
    (all, active)
}

fn limits(ctx: &Ctx<'_, '_>) -> HashLimits {
    let s = &ctx.srv.settings;
    HashLimits { max_entries: s.hash_max_listpack_entries(), max_value: s.hash_max_listpack_value() }
}

/// [`super::edit_typed`] on a hash (`create`: an empty one if absent).
fn edit_hash<R>(
    shard: &mut Shard,
    key: &[u8],
    hash: u64,
    now: u64,
    create: bool,
    acc: Access,
    f: impl FnOnce(&mut Hash, &mut Edit) -> R,
) -> Result<Option<R>, &'static str> {
    super::edit_typed(shard, key, hash, now, || create.then(|| Value::Hash(Hash::default())), acc, |e| e.hash_mut(), f)
}

fn boxed(b: &[u8]) -> Box<[u8]> {
    b.into()
}

/// The effect of writing `pairs` (HSET and friends).
fn hset_effect(key: &[u8], pairs: &[HashPair<'_>], keep_ttl: bool) -> Effect {
    Effect::HSet { key: boxed(key), pairs: pairs.iter().map(|(f, v)| (boxed(f), boxed(v))).collect(), keep_ttl }
}

/// The effect of removing `fields`.
fn hdel_effect(key: &[u8], fields: &[&[u8]]) -> Effect {
    Effect::HDel { key: boxed(key), fields: fields.iter().map(|f| boxed(f)).collect() }
}

/// [`read_typed`] for a hash.
macro_rules! read_hash {
    ($ctx:ident, $key:expr, $missing:expr) => {
        read_typed!($ctx, $key, hash, $missing)
    };
}

/// Like Redis's strcasecmp on an argument: the text ends at a NUL byte.
/// Whether `key` holds a live hash (false: absent). For a key of another
/// type, replies WRONGTYPE and returns None.
fn holds_hash(ctx: &mut Ctx<'_, '_>, loc: tern_store::Loc, key: &[u8]) -> Option<bool> {
    match ctx.locks.shard(loc.gid).get(key, loc.hash, ctx.now) {
        None => Some(false),
        Some(e) if e.hash().is_some() => Some(true),
        Some(_) => {
            ctx.reply.error(errors::WRONGTYPE);
            None
        }
    }
}

/// `arg` is `name`, in any case, as Redis's `strcasecmp` of the C
/// string (up to a NUL) sees it.
pub(super) fn is(arg: &[u8], name: &[u8]) -> bool {
    let arg = arg.iter().position(|&c| c == 0).map_or(arg, |p| &arg[..p]);
    arg.eq_ignore_ascii_case(name)
}

fn hset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    hset_generic(ctx, args, false);
}

fn hmset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    hset_generic(ctx, args, true);
}

fn hset_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, ok: bool) {
    let acc = ctx.access();
    if args.len() % 2 == 1 {
        return ctx.arity_error();
    }
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let pairs: Vec<HashPair<'_>> = (2..args.len()).step_by(2).map(|i| (args.get(i), args.get(i + 1))).collect();
    let shard = ctx.locks.shard(loc.gid);
    let added = edit_hash(shard, key, loc.hash, now, true, acc, |h, edit| {
        let added = h.set_many(&pairs, false, lim);
        edit.emit(|| hset_effect(key, &pairs, false));
        edit.changes(pairs.len());
        added
    });
    match added {
        Err(m) => ctx.reply.error(m),
        Ok(_) if ok => ctx.reply.ok(),
        Ok(added) => ctx.reply.int(added.unwrap_or(0) as i64),
    }
}

fn hsetnx(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let (field, value) = (args.get(2), args.get(3));
    let shard = ctx.locks.shard(loc.gid);
    let set = edit_hash(shard, key, loc.hash, now, true, acc, |h, edit| {
        if h.contains(field) {
            return false;
        }
        h.set(field, value, lim);
        edit.emit(|| hset_effect(key, &[(field, value)], false));
        true
    });
    match set {
        Err(m) => ctx.reply.error(m),
        Ok(set) => ctx.reply.int(i64::from(set == Some(true))),
    }
}

fn hget(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.null());
    match h.get(args.get(2)) {
        Some(v) => ctx.reply.bulk(v),
        None => ctx.reply.null(),
    }
}

fn hmget(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let n = args.len() - 2;
    let group = ctx.prefetch;
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| {
        r.array(n);
        for _ in 0..n {
            r.null();
        }
    });
    let fields: Vec<&[u8]> = args.tail(2).iter().collect();
    let mut out = Vec::with_capacity(n);
    h.get_many_staged(&fields, &mut out, group);
    ctx.reply.array(n);
    for v in out {
        match v {
            Some(v) => ctx.reply.bulk(v),
            None => ctx.reply.null(),
        }
    }
}

fn hgetall(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.map(0));
    ctx.reply.map(h.len());
    for (f, v) in h.iter() {
        ctx.reply.bulk(f);
        ctx.reply.bulk(v);
    }
}

fn hkeys(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.array(0));
    ctx.reply.array(h.len());
    for (f, _) in h.iter() {
        ctx.reply.bulk(f);
    }
}

fn hvals(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.array(0));
    ctx.reply.array(h.len());
    for (_, v) in h.iter() {
        ctx.reply.bulk(v);
    }
}

fn hlen(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.int(0));
    ctx.reply.int(h.len() as i64);
}

fn hexists(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.int(0));
    ctx.reply.int(i64::from(h.contains(args.get(2))));
}

fn hstrlen(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.int(0));
    ctx.reply.int(h.get(args.get(2)).map_or(0, |v| v.len() as i64));
}

fn hdel(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let shard = ctx.locks.shard(loc.gid);
    let fields: Vec<&[u8]> = args.tail(2).iter().collect();
    let n = edit_hash(shard, key, loc.hash, now, false, acc, |h, edit| {
        let n = h.remove_many(&fields);
        if n > 0 {
            edit.emit(|| hdel_effect(key, &fields));
        }
        n
    });
    match n {
        Err(m) => ctx.reply.error(m),
        Ok(n) => ctx.reply.int(n.unwrap_or(0) as i64),
    }
}

/// HINCRBY and HINCRBYFLOAT keep the field's TTL, as Redis does.
fn hincrby(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let Some(incr) = parse_i64(args.get(3)) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let lim = limits(ctx);
    let (loc, key, field, now) = (ctx.locs[0], args.get(1), args.get(2), ctx.now);
    let shard = ctx.locks.shard(loc.gid);
    let done = edit_hash(shard, key, loc.hash, now, true, acc, |h, edit| {
        let cur = match h.get(field) {
            None => 0,
            Some(v) => parse_i64(v).ok_or(errors::HASH_NOT_INTEGER)?,
        };
        let sum = cur.checked_add(incr).ok_or(errors::OVERFLOW)?;
        let text = itoa::Buffer::new().format(sum).as_bytes().to_vec();
        h.set_keep_ttl(field, &text, lim);
        // HSET where the field has no TTL to keep: the form every Redis
        // (and Valkey) replica and AOF loader knows.
        let keep = h.field_expire(field).is_some();
        edit.emit(|| hset_effect(key, &[(field, &text)], keep));
        Ok(sum)
    });
    match done.and_then(|r| r.transpose()) {
        Err(m) => ctx.reply.error(m),
        Ok(sum) => ctx.reply.int(sum.unwrap_or(0)),
    }
}

fn hincrbyfloat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let Some(incr) = LongDouble::parse(args.get(3)) else {
        return ctx.reply.error(errors::NOT_FLOAT);
    };
    if !incr.is_finite() {
        return ctx.reply.error(errors::HINCR_NAN_OR_INFINITY);
    }
    let lim = limits(ctx);
    let (loc, key, field, now) = (ctx.locs[0], args.get(1), args.get(2), ctx.now);
    let shard = ctx.locks.shard(loc.gid);
    let done = edit_hash(shard, key, loc.hash, now, true, acc, |h, edit| {
        let cur = match h.get(field) {
            None => LongDouble::from_i64(0),
            Some(v) => LongDouble::parse(v).ok_or(errors::HASH_NOT_FLOAT)?,
        };
        let sum = cur.checked_add(incr).ok_or(errors::INCR_NAN_OR_INFINITY)?;
        let mut text = Vec::new();
        sum.write_human(&mut text);
        h.set_keep_ttl(field, &text, lim);
        // Replayed as the value it produced, not as an increment (HSET
        // unless the field has a TTL to keep, as for HINCRBY).
        let keep = h.field_expire(field).is_some();
        edit.emit(|| hset_effect(key, &[(field, &text)], keep));
        Ok(text)
    });
    match done.and_then(|r| r.transpose()) {
        Err(m) => ctx.reply.error(m),
        Ok(text) => ctx.reply.bulk(&text.unwrap_or_default()),
    }
}

/// For replies of up to 2^63 - 1 random picks (HRANDFIELD, SRANDMEMBER
/// with a negative count): true when the `i`-th pick should not be
/// written. A client past its hard output limit is closed once the
/// command returns and never sees the rest of the reply, so the count is
/// not spent on it, where Redis would spin.
pub(super) fn output_cut(ctx: &Ctx<'_, '_>) -> impl Fn(&super::Reply<'_>, u64) -> bool {
    let hard = ctx.srv.settings.client_output_buffer_limit().normal.hard as usize;
    move |reply: &super::Reply<'_>, i: u64| hard > 0 && i & 0xff == 0 && reply.out.pending() >= hard
}

fn hrandfield(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() == 2 {
        let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.null());
        match h.random(&mut rand::thread_rng()) {
            Some((f, _)) => ctx.reply.bulk(f),
            None => ctx.reply.null(),
        }
        return;
    }
    let withvalues = args.len() == 4 && is(args.get(3), b"withvalues");
    if args.len() > 4 || (args.len() == 4 && !withvalues) {
        return ctx.reply.error(errors::SYNTAX);
    }
    let l = match parse_i64(args.get(2)) {
        None => return ctx.reply.error(errors::NOT_INTEGER),
        Some(i64::MIN) => return ctx.reply.error(errors::I64_SYMMETRIC_OUT_OF_RANGE),
        Some(l) => l,
    };
    let (count, unique) = (l.unsigned_abs(), l >= 0);
    // Redis refuses a count whose reply (two entries a field) could not
    // have its length in a long, of either sign and before the key is
    // looked up.
    if withvalues && count > (i64::MAX / 2) as u64 {
        return ctx.reply.error(errors::OUT_OF_RANGE);
    }
    let cut = output_cut(ctx);
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| r.array(0));
    let resp3 = ctx.reply.enc.resp3;
    let reply = &mut ctx.reply;
    let emit = |reply: &mut super::Reply<'_>, (f, v): HashPair<'_>| {
        if withvalues {
            if resp3 {
                reply.array(2);
            }
            reply.bulk(f);
            reply.bulk(v);
        } else {
            reply.bulk(f);
        }
    };
    let header = |reply: &mut super::Reply<'_>, n: usize| {
        reply.array(if withvalues && !resp3 { 2 * n } else { n });
    };
    let len = h.len() as u64;
    let mut rng = rand::thread_rng();
    if count == 0 || len == 0 {
        return reply.array(0);
    }
    if !unique {
        header(reply, count as usize);
        if h.is_compact() {
            let all: Vec<HashPair<'_>> = h.iter().collect();
            for i in 0..count {
                if cut(reply, i) {
                    break;
                }
                emit(reply, all[rng.gen_range(0..all.len())]);
            }
        } else {
            for i in 0..count {
                if cut(reply, i) {
                    break;
                }
                if let Some(p) = h.random(&mut rng) {
                    emit(reply, p);
                }
            }
        }
        return;
    }
    if count >= len {
        header(reply, len as usize);
        for p in h.iter() {
            emit(reply, p);
        }
        return;
    }
    let count = count as usize;
    header(reply, count);
    if h.is_compact() || count * 3 > len as usize {
        let mut all: Vec<HashPair<'_>> = h.iter().collect();
        let (picked, _) = all.partial_shuffle(&mut rng, count);
        for p in picked.iter() {
            emit(reply, *p);
        }
    } else {
        let mut seen: hashbrown::HashSet<&[u8]> = hashbrown::HashSet::with_capacity(count);
        while seen.len() < count {
            if let Some(p) = h.random(&mut rng) {
                if seen.insert(p.0) {
                    emit(reply, p);
                }
            }
        }
    }
}

fn hscan(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cursor) = super::keys::parse_cursor(args.get(2)) else {
        return ctx.reply.error(errors::INVALID_CURSOR);
    };
    let h = read_hash!(ctx, args.get(1), |r: &mut super::Reply<'_>| {
        r.array(2);
        r.bulk(b"0");
        r.array(0);
    });
    let ScanOpts { count, pattern, novalues } = match ScanOpts::parse(args, 3, true) {
        Ok(o) => o,
        Err(e) => return ctx.reply.error(e),
    };
    let mut items: Vec<HashPair<'_>> = Vec::new();
    let next = h.scan(cursor, count, |f, v| {
        if pattern.is_none_or(|p| crate::glob::matches(p, f, false)) {
            items.push((f, v));
        }
    });
    let reply = &mut ctx.reply;
    reply.array(2);
    reply.bulk(itoa::Buffer::new().format(next).as_bytes());
    reply.array(if novalues { items.len() } else { 2 * items.len() });
    for (f, v) in items {
        reply.bulk(f);
        if !novalues {
            reply.bulk(v);
        }
    }
}

/// HSCAN's, SSCAN's and ZSCAN's options (`MATCH`, `COUNT`, and for
/// HSCAN `NOVALUES`), parsed after the key is found, as Redis does.
pub(super) struct ScanOpts<'a> {
    pub count: usize,
    /// None for `*`, which matches everything.
    pub pattern: Option<&'a [u8]>,
    pub novalues: bool,
}

impl<'a> ScanOpts<'a> {
    pub(super) fn parse(args: Args<'a>, from: usize, hash: bool) -> Result<Self, &'static str> {
        let mut o = ScanOpts { count: 10, pattern: None, novalues: false };
        let mut i = from;
        while i < args.len() {
            let opt = args.get(i);
            let more = args.len() - i >= 2;
            if is(opt, b"count") && more {
                match parse_i64(args.get(i + 1)) {
                    None => return Err(errors::NOT_INTEGER),
                    Some(c) if c < 1 => return Err(errors::SYNTAX),
                    Some(c) => o.count = c as usize,
                }
                i += 2;
            } else if is(opt, b"match") && more {
                let p = args.get(i + 1);
                o.pattern = if p == b"*" { None } else { Some(p) };
                i += 2;
            } else if is(opt, b"novalues") {
                if !hash {
                    return Err(errors::NOVALUES_NOT_HSCAN);
                }
                o.novalues = true;
                i += 1;
            } else {
                return Err(errors::SYNTAX);
            }
        }
        Ok(o)
    }
}

/// Parses `FIELDS numfields field...` starting at `at`: the index of the
/// first field, or None after replying the error.
fn fields_at(ctx: &mut Ctx<'_, '_>, args: Args<'_>, at: usize, numfields_err: &str) -> Option<usize> {
    if at >= args.len() || !is(args.get(at), b"fields") {
        ctx.reply.error(errors::FIELDS_MISSING);
        return None;
    }
    if at + 1 >= args.len() {
        ctx.arity_error();
        return None;
    }
    match parse_i64(args.get(at + 1)) {
        Some(n) if n >= 1 => {
            if n as u64 != (args.len() - at - 2) as u64 {
                ctx.reply.error(errors::NUMFIELDS_MISMATCH);
                return None;
            }
            Some(at + 2)
        }
        _ => {
            ctx.reply.error(numfields_err);
            None
        }
    }
}

fn reply_ints(ctx: &mut Ctx<'_, '_>, n: usize, v: i64) {
    ctx.reply.array(n);
    for _ in 0..n {
        ctx.reply.int(v);
    }
}

fn reply_nulls(ctx: &mut Ctx<'_, '_>, n: usize) {
    ctx.reply.array(n);
    for _ in 0..n {
        ctx.reply.null();
    }
}

/// A field deadline argument as Redis reads it for the HEXPIRE family,
/// HGETEX and HSETEX: an integer >= 0, in seconds or ms, relative to `base`
/// (now, or 0 for the *AT forms), at most `HFE_MAX_ABS_TIME_MSEC`.
fn field_deadline(ctx: &mut Ctx<'_, '_>, arg: &[u8], secs: bool, base: u64) -> Option<u64> {
    let Some(mut n) = parse_i64(arg) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return None;
    };
    if n < 0 {
        ctx.reply.error(errors::EXPIRE_NEGATIVE);
        return None;
    }
    if secs {
        if n > MAX_FIELD_DEADLINE / 1000 {
            let msg = errors::invalid_expire(&ctx.cmd.fullname);
            ctx.reply.error(&msg);
            return None;
        }
        n *= 1000;
    }
    if n > MAX_FIELD_DEADLINE - base as i64 {
        let msg = errors::invalid_expire(&ctx.cmd.fullname);
        ctx.reply.error(&msg);
        return None;
    }
    Some(n as u64 + base)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
}

fn hexpire(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    hexpire_generic(ctx, args, true, false);
}

fn hpexpire(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    hexpire_generic(ctx, args, false, false);
}

fn hexpireat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    hexpire_generic(ctx, args, true, true);
}

fn hpexpireat(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    hexpire_generic(ctx, args, false, true);
}

/// The HEXPIRE family, in Redis's order of checks: type, expire time,
/// condition, FIELDS, numfields.
fn hexpire_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, secs: bool, absolute: bool) {
    let acc = ctx.access();
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let Some(exists) = holds_hash(ctx, loc, key) else { return };
    let Some(when) = field_deadline(ctx, args.get(2), secs, if absolute { 0 } else { now }) else { return };
    let opt = args.get(3);
    let cond = if is(opt, b"nx") {
        Cond::Nx
    } else if is(opt, b"xx") {
        Cond::Xx
    } else if is(opt, b"gt") {
        Cond::Gt
    } else if is(opt, b"lt") {
        Cond::Lt
    } else {
        Cond::Always
    };
    let at = if cond == Cond::Always { 3 } else { 4 };
    let Some(first) = fields_at(ctx, args, at, errors::NUMFIELDS_WRITE) else { return };
    let n = args.len() - first;
    if !exists {
        return reply_ints(ctx, n, NO_FIELD);
    }
    let shard = ctx.locks.shard(loc.gid);
    let reply = &mut ctx.reply;
    let done = edit_hash(shard, key, loc.hash, now, false, acc, |h, edit| {
        let fields: Vec<&[u8]> = args.tail(first).iter().collect();
        let mut present = Vec::with_capacity(n);
        h.get_many(&fields, &mut present);
        let present: Vec<bool> = present.iter().map(Option::is_some).collect();
        reply.array(n);
        for (f, here) in fields.iter().zip(present) {
            // An earlier repeat of the field may have deleted it.
            if !here || (when <= now && !h.contains(f)) {
                reply.int(NO_FIELD);
                continue;
            }
            let prev = h.field_expire(f);
            let refused = match prev {
                None => matches!(cond, Cond::Xx | Cond::Gt),
                Some(p) => match cond {
                    Cond::Always => false,
                    Cond::Nx => true,
                    Cond::Xx => false,
                    Cond::Gt => p >= when,
                    Cond::Lt => p <= when,
                },
            };
            if refused {
                reply.int(COND_FAILED);
            } else if when <= now {
                h.remove(f);
                edit.emit(|| hdel_effect(key, &[f]));
                // Any field a past deadline removed makes it an `hdel`.
                notify::write_as(ev::HDEL);
                reply.int(DELETED);
            } else {
                h.set_field_expire(f, when);
                edit.emit(|| Effect::HExpire { key: boxed(key), at: Some(when), fields: vec![boxed(f)] });
                reply.int(SET_OK);
            }
        }
    });
    if !matches!(done, Ok(Some(()))) {
        reply_ints(ctx, n, NO_FIELD);
    }
}

fn httl(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    httl_generic(ctx, args, true, false);
}

fn hpttl(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    httl_generic(ctx, args, false, false);
}

fn hexpiretime(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    httl_generic(ctx, args, true, true);
}

fn hpexpiretime(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    httl_generic(ctx, args, false, true);
}

/// HTTL family: -2 for a missing field, -1 for one without TTL, else the
/// TTL (or deadline), seconds rounded up as Redis does.
fn httl_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, secs: bool, absolute: bool) {
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let Some(found) = holds_hash(ctx, loc, key) else { return };
    let Some(first) = fields_at(ctx, args, 2, errors::NUMFIELDS_READ) else { return };
    let n = args.len() - first;
    let h = match ctx.locks.shard(loc.gid).peek(key, loc.hash, now) {
        Some(e) if found => match e.hash() {
            Some(h) => h,
            None => return reply_ints(ctx, n, NO_FIELD),
        },
        _ => {
            ctx.stats.keyspace_misses.add(1);
            return reply_ints(ctx, n, NO_FIELD);
        }
    };
    ctx.stats.keyspace_hits.add(1);
    let fields: Vec<&[u8]> = args.tail(first).iter().collect();
    let mut present = Vec::with_capacity(n);
    h.get_many(&fields, &mut present);
    let base = if absolute { 0 } else { now };
    ctx.reply.array(n);
    for (f, v) in fields.iter().zip(present) {
        let r = match (v, h.field_expire(f)) {
            (None, _) => NO_FIELD,
            (Some(_), None) => NO_TTL,
            (Some(_), Some(w)) if w < now => NO_FIELD,
            (Some(_), Some(w)) if secs => ((w + 999 - base) / 1000) as i64,
            (Some(_), Some(w)) => (w - base) as i64,
        };
        ctx.reply.int(r);
    }
}

fn hpersist(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let Some(exists) = holds_hash(ctx, loc, key) else { return };
    let Some(first) = fields_at(ctx, args, 2, errors::NUMFIELDS_READ) else { return };
    let n = args.len() - first;
    if !exists {
        return reply_ints(ctx, n, NO_FIELD);
    }
    let shard = ctx.locks.shard(loc.gid);
    let reply = &mut ctx.reply;
    let done = edit_hash(shard, key, loc.hash, now, false, acc, |h, edit| {
        reply.array(n);
        for f in args.tail(first).iter() {
            let r = if !h.contains(f) {
                NO_FIELD
            } else if h.persist_field(f) {
                edit.emit(|| Effect::HExpire { key: boxed(key), at: None, fields: vec![boxed(f)] });
                SET_OK
            } else {
                NO_TTL
            };
            reply.int(r);
        }
    });
    if !matches!(done, Ok(Some(()))) {
        reply_ints(ctx, n, NO_FIELD);
    }
}

fn hgetdel(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let Some(exists) = holds_hash(ctx, loc, key) else { return };
    let Some(first) = fields_at(ctx, args, 2, errors::NUMFIELDS_READ) else { return };
    let n = args.len() - first;
    if !exists {
        return reply_nulls(ctx, n);
    }
    let shard = ctx.locks.shard(loc.gid);
    let reply = &mut ctx.reply;
    let done = edit_hash(shard, key, loc.hash, now, false, acc, |h, edit| {
        let fields: Vec<&[u8]> = args.tail(first).iter().collect();
        let mut values = Vec::with_capacity(n);
        h.get_many(&fields, &mut values);
        reply.array(n);
        for (i, v) in values.iter().enumerate() {
            // A repeated field was deleted by its first occurrence.
            match v {
                Some(v) if !fields[..i].contains(&fields[i]) => reply.bulk(v),
                _ => reply.null(),
            }
        }
        drop(values);
        if h.remove_many(&fields) > 0 {
            edit.emit(|| hdel_effect(key, &fields));
        }
    });
    if !matches!(done, Ok(Some(()))) {
        reply_nulls(ctx, n);
    }
}

/// How HGETEX changes the TTL of the fields it reads.
enum TtlChange {
    Keep,
    Persist,
    At(u64),
}

fn expire_unit(opt: &[u8]) -> Option<(bool, bool)> {
    // (seconds, absolute)
    if is(opt, b"ex") {
        Some((true, false))
    } else if is(opt, b"px") {
        Some((false, false))
    } else if is(opt, b"exat") {
        Some((true, true))
    } else if is(opt, b"pxat") {
        Some((false, true))
    } else {
        None
    }
}

fn hgetex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let opt = args.get(2);
    let (change, at) = if let Some((secs, absolute)) = expire_unit(opt) {
        let Some(w) = field_deadline(ctx, args.get(3), secs, if absolute { 0 } else { now }) else { return };
        (TtlChange::At(w), 4)
    } else if is(opt, b"persist") {
        (TtlChange::Persist, 3)
    } else {
        (TtlChange::Keep, 2)
    };
    let Some(first) = fields_at(ctx, args, at, errors::NUMFIELDS_READ) else { return };
    let n = args.len() - first;
    let shard = ctx.locks.shard(loc.gid);
    let reply = &mut ctx.reply;
    let stats = ctx.stats;
    let done = edit_hash(shard, key, loc.hash, now, false, acc, |h, edit| {
        stats.keyspace_hits.add(1);
        let fields: Vec<&[u8]> = args.tail(first).iter().collect();
        let mut values = Vec::with_capacity(n);
        h.get_many(&fields, &mut values);
        reply.array(n);
        for v in &values {
            match v {
                Some(v) => reply.bulk(v),
                None => reply.null(),
            }
        }
        let present: Vec<bool> = values.iter().map(Option::is_some).collect();
        drop(values);
        for (f, here) in fields.iter().zip(present) {
            if !here {
                continue;
            }
            let f: &[u8] = f;
            match change {
                TtlChange::Keep => {}
                TtlChange::Persist => {
                    if h.persist_field(f) {
                        edit.emit(|| Effect::HExpire { key: boxed(key), at: None, fields: vec![boxed(f)] });
                        notify::write_as(ev::HPERSIST);
                    }
                }
                TtlChange::At(w) if w <= now => {
                    if h.remove(f) {
                        edit.emit(|| hdel_effect(key, &[f]));
                        notify::write_as(ev::HDEL);
                    }
                }
                TtlChange::At(w) => {
                    h.set_field_expire(f, w);
                    edit.emit(|| Effect::HExpire { key: boxed(key), at: Some(w), fields: vec![boxed(f)] });
                }
            }
        }
    });
    match done {
        Ok(Some(())) => {}
        Ok(None) => {
            ctx.stats.keyspace_misses.add(1);
            reply_nulls(ctx, n)
        }
        Err(m) => ctx.reply.error(m),
    }
}

/// HSETEX: options in any order before FIELDS; FNX/FXX decide for all
/// fields at once; the reply is 1 if the fields were set, 0 if not.
fn hsetex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let (mut fnx, mut fxx, mut keepttl) = (false, false, false);
    let mut when: Option<u64> = None;
    let mut first = None;
    let mut i = 2;
    while i < args.len() {
        let opt = args.get(i);
        if is(opt, b"fields") {
            if i + 1 >= args.len() {
                return ctx.arity_error();
            }
            let Some(n) = parse_i64(args.get(i + 1)).filter(|&n| n >= 1) else {
                return ctx.reply.error(errors::NUMFIELDS_HSETEX);
            };
            let rest = (args.len() - i - 2) as u64;
            if n as u64 > rest / 2 || n as u64 * 2 != rest {
                return ctx.arity_error();
            }
            first = Some(i + 2);
            break;
        } else if let Some((secs, absolute)) = expire_unit(opt) {
            if when.is_some() || keepttl {
                return ctx.reply.error(errors::ONLY_ONE_EXPIRE);
            }
            if i + 1 >= args.len() {
                return ctx.arity_error();
            }
            let Some(w) = field_deadline(ctx, args.get(i + 1), secs, if absolute { 0 } else { now }) else { return };
            when = Some(w);
            i += 2;
        } else if is(opt, b"keepttl") {
            if when.is_some() || keepttl {
                return ctx.reply.error(errors::ONLY_ONE_EXPIRE);
            }
            keepttl = true;
            i += 1;
        } else if is(opt, b"fnx") || is(opt, b"fxx") {
            if fnx || fxx {
                return ctx.reply.error(errors::ONLY_ONE_FXX_FNX);
            }
            if is(opt, b"fnx") {
                fnx = true;
            } else {
                fxx = true;
            }
            i += 1;
        } else {
            return ctx.reply.error(errors::UNKNOWN_ARGUMENT);
        }
    }
    let Some(first) = first else {
        return ctx.reply.error(errors::FIELDS_MISSING);
    };
    let lim = limits(ctx);
    let pairs: Vec<HashPair<'_>> = (first..args.len()).step_by(2).map(|i| (args.get(i), args.get(i + 1))).collect();
    let Some(exists) = holds_hash(ctx, loc, key) else { return };
    let shard = ctx.locks.shard(loc.gid);
    if !exists && fxx {
        return ctx.reply.int(0);
    }
    let done = edit_hash(shard, key, loc.hash, now, true, acc, |h, edit| {
        if fnx || fxx {
            let fields: Vec<&[u8]> = pairs.iter().map(|p| p.0).collect();
            let mut present = Vec::with_capacity(fields.len());
            h.get_many(&fields, &mut present);
            let ok = if fnx { present.iter().all(Option::is_none) } else { present.iter().all(Option::is_some) };
            if !ok {
                return false;
            }
        }
        h.set_many(&pairs, keepttl, lim);
        edit.emit(|| hset_effect(key, &pairs, keepttl));
        if let Some(w) = when {
            let fields: Vec<&[u8]> = pairs.iter().map(|p| p.0).collect();
            if w <= now {
                for f in &fields {
                    h.remove(f);
                }
                edit.emit(|| hdel_effect(key, &fields));
                edit.then_event(ev::HDEL);
            } else {
                for f in &fields {
                    h.set_field_expire(f, w);
                }
                edit.emit(|| Effect::HExpire { key: boxed(key), at: Some(w), fields: fields.iter().map(|f| boxed(f)).collect() });
                edit.then_event(ev::HEXPIRE);
            }
        }
        true
    });
    match done {
        Err(m) => ctx.reply.error(m),
        Ok(set) => ctx.reply.int(i64::from(set == Some(true))),
    }
}
