//! Set commands: SADD and the rest of Redis's set family.
//!
//! The value lives in `tern_store::Set` (intset, listpack or table, with
//! Redis's conversions at `set-max-intset-entries`,
//! `set-max-listpack-entries` and `set-max-listpack-value`). Changes go
//! through the shard's write path ([`Shard::modify`]) and are recorded as
//! the members they added or removed (`SADD` / `SREM`, as Redis
//! propagates them, SPOP included), so a replay does not depend on the
//! random picks.
//!
//! The set operations (SINTER, SUNION, SDIFF and their STORE and CARD
//! forms) follow Redis's algorithms, not just its results: the reply order
//! of a small result is the order Redis's algorithm produces it in, which
//! clients of an intset or a listpack can see.

use crate::messaging::notify::{self, ev};
use rand::seq::SliceRandom;
use tern_resp::{parse_i64, Args};
use tern_store::{Access, Edit, Effect, EntryExt, Loc, LockSet, Member, Set, SetLimits, Shard, Value};

use super::keyspec::{index, keynum, ks, range, ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, Reply};
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("sadd", -3, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], sadd)
        .event(ev::SADD)
        .member(2)
        .doc("set", "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .acl(&["write", "set", "fast"]),
    CommandSpec::new("srem", -3, WRITE | FAST, &[ks(RW | DELETE, index(1), range(0, 1, 0))], srem)
        .event(ev::SREM)
        .member(2)
        .doc("set", "Removes one or more members from a set. Deletes the set if the last member was removed.", "1.0.0", "O(N) where N is the number of members to be removed.")
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .acl(&["write", "set", "fast"]),
    CommandSpec::new("scard", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], scard)
        .doc("set", "Returns the number of members in a set.", "1.0.0", "O(1)")
        .acl(&["read", "set", "fast"]),
    CommandSpec::new("sismember", 3, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], sismember)
        .member(2)
        .doc("set", "Determines whether a member belongs to a set.", "1.0.0", "O(1)")
        .acl(&["read", "set", "fast"]),
    CommandSpec::new("smismember", -3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], smismember)
        .member(2)
        .doc("set", "Determines whether multiple members belong to a set.", "6.2.0", "O(N) where N is the number of elements being checked for membership")
        .acl(&["read", "set", "fast"]),
    CommandSpec::new("smembers", 2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], smembers)
        .doc("set", "Returns all members of a set.", "1.0.0", "O(N) where N is the set cardinality.")
        .acl(&["read", "set", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("srandmember", -2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], srandmember)
        .doc("set", "Get one or multiple random members from a set", "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.")
        .history(&[("2.6.0", "Added the optional `count` argument.")])
        .acl(&["read", "set", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("spop", -2, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], spop)
        .event(ev::SPOP)
        .doc("set", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.")
        .history(&[("3.2.0", "Added the `count` argument.")])
        .acl(&["write", "set", "fast"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("smove", 4, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(RW | INSERT, index(2), range(0, 1, 0))], smove)
        .event(ev::SREM)
        .doc("set", "Moves a member from one set to another.", "1.0.0", "O(1)")
        .acl(&["write", "set", "fast"]),
    CommandSpec::new("sinter", -2, READONLY, &[ks(RO | ACCESS, index(1), range(-1, 1, 0))], sinter)
        .doc("set", "Returns the intersect of multiple sets.", "1.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .acl(&["read", "set", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("sintercard", -3, READONLY, &[ks(RO | ACCESS, index(1), keynum(0, 1, 1))], sintercard)
        .doc("set", "Returns the number of members of the intersect of multiple sets.", "7.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .acl(&["read", "set", "slow"]),
    CommandSpec::new("sinterstore", -3, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(-1, 1, 0))], sinterstore)
        .event(ev::SINTERSTORE)
        .doc("set", "Stores the intersect of multiple sets in a key.", "1.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .acl(&["write", "set", "slow"]),
    CommandSpec::new("sunion", -2, READONLY, &[ks(RO | ACCESS, index(1), range(-1, 1, 0))], sunion)
        .doc("set", "Returns the union of multiple sets.", "1.0.0", "O(N) where N is the total number of elements in all given sets.")
        .acl(&["read", "set", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("sunionstore", -3, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(-1, 1, 0))], sunionstore)
        .event(ev::SUNIONSTORE)
        .doc("set", "Stores the union of multiple sets in a key.", "1.0.0", "O(N) where N is the total number of elements in all given sets.")
        .acl(&["write", "set", "slow"]),
    CommandSpec::new("sdiff", -2, READONLY, &[ks(RO | ACCESS, index(1), range(-1, 1, 0))], sdiff)
        .doc("set", "Returns the difference of multiple sets.", "1.0.0", "O(N) where N is the total number of elements in all given sets.")
        .acl(&["read", "set", "slow"])
        .tips(&["nondeterministic_output_order"]),
    CommandSpec::new("sdiffstore", -3, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(-1, 1, 0))], sdiffstore)
        .event(ev::SDIFFSTORE)
        .doc("set", "Stores the difference of multiple sets in a key.", "1.0.0", "O(N) where N is the total number of elements in all given sets.")
        .acl(&["write", "set", "slow"]),
    CommandSpec::new("sscan", -3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], sscan)
        .doc("set", "Iterates over members of a set.", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        .acl(&["read", "set", "slow"])
        .tips(&["nondeterministic_output"]),
];

fn limits(ctx: &Ctx<'_, '_>) -> SetLimits {
    let s = &ctx.srv.settings;
    SetLimits { max_intset: s.set_max_intset_entries(), max_entries: s.set_max_listpack_entries(), max_value: s.set_max_listpack_value() }
}

/// [`super::edit_typed`] on a set (`create`: the value to start from if
/// absent).
fn edit_set<R>(
    shard: &mut Shard,
    key: &[u8],
    hash: u64,
    now: u64,
    create: impl FnOnce() -> Option<Set>,
    acc: Access,
    f: impl FnOnce(&mut Set, &mut Edit) -> R,
) -> Result<Option<R>, &'static str> {
    super::edit_typed(shard, key, hash, now, || create().map(Value::Set), acc, |e| e.set_mut(), f)
}

/// [`read_typed`] for a set.
macro_rules! read_set {
    ($ctx:ident, $key:expr, $missing:expr) => {
        read_typed!($ctx, $key, set, $missing)
    };
}

fn bulk_member(reply: &mut Reply<'_>, m: Member<'_>) {
    match m {
        Member::Int(n) => reply.bulk_int(n),
        Member::Bytes(b) => reply.bulk(b),
    }
}

fn boxed(b: &[u8]) -> Box<[u8]> {
    b.into()
}

fn sadd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let n = args.len() - 2;
    let create = || Some(Set::new_for(args.get(2), n, lim));
    let shard = ctx.locks.shard(loc.gid);
    let r = edit_set(shard, key, loc.hash, now, create, acc, |s, edit| {
        s.prepare_write(n, lim);
        let mut added: Vec<Box<[u8]>> = Vec::new();
        let mut count = 0;
        for i in 2..args.len() {
            if s.add(args.get(i), lim) {
                count += 1;
                if edit.recording() {
                    added.push(boxed(args.get(i)));
                }
            }
        }
        if count > 0 {
            edit.emit(|| Effect::SAdd { key: boxed(key), members: added });
            edit.changes(count as usize);
        }
        count
    });
    super::reply_count(ctx, r);
}

/// Removes `members` from the set at `loc` (SREM, SMOVE's source):
/// how many were there, recorded as one SREM.
fn remove_members<'m>(
    ctx: &mut Ctx<'_, '_>,
    loc: Loc,
    key: &[u8],
    members: impl Iterator<Item = &'m [u8]>,
) -> Result<Option<i64>, &'static str> {
    let acc = ctx.access();
    let now = ctx.now;
    let shard = ctx.locks.shard(loc.gid);
    edit_set(shard, key, loc.hash, now, || None, acc, |s, edit| {
        let mut gone: Vec<Box<[u8]>> = Vec::new();
        let mut count = 0;
        for m in members {
            if s.remove(m) {
                count += 1;
                if edit.recording() {
                    gone.push(boxed(m));
                }
            }
        }
        super::removed(edit, count, || Effect::SRem { key: boxed(key), members: gone })
    })
}

fn srem(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (loc, key) = (ctx.locs[0], args.get(1));
    let r = remove_members(ctx, loc, key, (2..args.len()).map(|i| args.get(i)));
    super::reply_count(ctx, r);
}

fn scard(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    ctx.reply.int(s.len() as i64);
}

fn sismember(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    ctx.reply.int(i64::from(s.contains(args.get(2))));
}

fn smismember(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let n = args.len() - 2;
    let group = ctx.prefetch;
    let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| {
        r.array(n);
        for _ in 0..n {
            r.int(0);
        }
    });
    let members: Vec<&[u8]> = args.tail(2).iter().collect();
    let mut found = Vec::with_capacity(n);
    s.contains_many(&members, &mut found, group);
    ctx.reply.array(n);
    for f in found {
        ctx.reply.int(i64::from(f));
    }
}

fn smembers(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| r.set(0));
    ctx.reply.set(s.len());
    for m in s.iter() {
        bulk_member(&mut ctx.reply, m);
    }
}

fn srandmember(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() == 2 {
        let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| r.null());
        match s.random(&mut rand::thread_rng()) {
            Some(m) => bulk_member(&mut ctx.reply, m),
            None => ctx.reply.null(),
        }
        return;
    }
    if args.len() > 3 {
        return ctx.reply.error(errors::SYNTAX);
    }
    let l = match parse_i64(args.get(2)) {
        None => return ctx.reply.error(errors::NOT_INTEGER),
        Some(i64::MIN) => return ctx.reply.error(errors::I64_SYMMETRIC_OUT_OF_RANGE),
        Some(l) => l,
    };
    let cut = super::hashes::output_cut(ctx);
    let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| r.array(0));
    let reply = &mut ctx.reply;
    let (count, unique) = (l.unsigned_abs(), l >= 0);
    let len = s.len() as u64;
    let mut rng = rand::thread_rng();
    if count == 0 || len == 0 {
        return reply.array(0);
    }
    if !unique {
        reply.array(count as usize);
        let all: Vec<Member<'_>> = if s.is_compact() { s.iter().collect() } else { Vec::new() };
        for i in 0..count {
            if cut(reply, i) {
                break;
            }
            let m = if all.is_empty() { s.random(&mut rng) } else { all.choose(&mut rng).copied() };
            if let Some(m) = m {
                bulk_member(reply, m);
            }
        }
        return;
    }
    if count >= len {
        reply.array(len as usize);
        for m in s.iter() {
            bulk_member(reply, m);
        }
        return;
    }
    let count = count as usize;
    reply.array(count);
    // Few picks from a large table: draw until distinct; else shuffle.
    if s.is_compact() || count * 3 > len as usize {
        let mut all: Vec<Member<'_>> = s.iter().collect();
        let (picked, _) = all.partial_shuffle(&mut rng, count);
        for m in picked.iter() {
            bulk_member(reply, *m);
        }
    } else {
        let mut seen: hashbrown::HashSet<Member<'_>> = hashbrown::HashSet::with_capacity(count);
        while seen.len() < count {
            if let Some(m) = s.random(&mut rng) {
                if seen.insert(m) {
                    bulk_member(reply, m);
                }
            }
        }
    }
}

/// SPOP takes members one by one while it leaves more than 1/5 of what
/// it takes (Redis's `SPOP_MOVE_STRATEGY_MUL`).
const SPOP_MOVE_STRATEGY_MUL: usize = 5;

fn spop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        return ctx.reply.error(errors::SYNTAX);
    }
    let count = match args.len() {
        3 => match parse_i64(args.get(2)) {
            Some(n) if n >= 0 => Some(n as u64),
            _ => return ctx.reply.error(errors::MUST_BE_POSITIVE),
        },
        _ => None,
    };
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let reply = &mut ctx.reply;
    let shard = ctx.locks.shard(loc.gid);
    let r = edit_set(shard, key, loc.hash, now, || None, acc, |s, edit| {
        let mut rng = rand::thread_rng();
        let n = match count {
            None => 1,
            Some(c) => c.min(s.len() as u64) as usize,
        };
        match count {
            Some(_) => reply.set(n),
            None if n == 0 => reply.null(),
            None => {}
        }
        if n == 0 {
            return;
        }
        let mut gone: Vec<Box<[u8]>> = Vec::with_capacity(n);
        if n == s.len() {
            // All of it: in the set's own order, as Redis replies then.
            for m in s.iter() {
                bulk_member(reply, m);
                gone.push(m.to_vec().into());
            }
            for m in &gone {
                s.remove(m);
            }
        } else if s.is_compact() || (s.len() - n) * SPOP_MOVE_STRATEGY_MUL > n {
            for _ in 0..n {
                if let Some(m) = s.pop_random(&mut rng) {
                    reply.bulk(&m);
                    gone.push(m.into());
                }
            }
        } else {
            // Most of a table goes: draw the few that stay instead, into a
            // new set sized for them (a listpack if they fit), as Redis's
            // SPOP does; its encoding is what OBJECT ENCODING then shows.
            let stay = s.len() - n;
            let mut kept = Set::new_sized(stay, lim);
            while kept.len() < stay {
                if let Some(m) = s.random(&mut rng) {
                    m.with_bytes(|b| kept.add(b, lim));
                }
            }
            for m in s.iter() {
                if !m.with_bytes(|b| kept.contains(b)) {
                    bulk_member(reply, m);
                    gone.push(m.to_vec().into());
                }
            }
            *s = kept;
        }
        edit.emit(|| Effect::SRem { key: boxed(key), members: gone });
        edit.changes(n);
    });
    match r {
        Err(m) => ctx.reply.error(m),
        Ok(Some(())) => {}
        Ok(None) if count.is_some() => ctx.reply.set(0),
        Ok(None) => ctx.reply.null(),
    }
}

fn smove(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let lim = limits(ctx);
    let acc = ctx.access();
    let now = ctx.now;
    let (ls, ld) = (ctx.locs[0], ctx.locs[1]);
    let (src, dst, member) = (args.get(1), args.get(2), args.get(3));
    let src_is_set = match ctx.locks.shard(ls.gid).lookup(src, ls.hash, now, acc) {
        None => return ctx.reply.int(0),
        Some(e) => e.set().is_some(),
    };
    let dst_ok = ctx.locks.shard(ld.gid).get(dst, ld.hash, now).is_none_or(|e| e.set().is_some());
    if !src_is_set || !dst_ok {
        return ctx.reply.error(errors::WRONGTYPE);
    }
    if src == dst {
        let s = ctx.locks.shard(ls.gid).get(src, ls.hash, now).and_then(|e| e.set());
        let there = s.is_some_and(|s| s.contains(member));
        return ctx.reply.int(i64::from(there));
    }
    match remove_members(ctx, ls, src, std::iter::once(member)) {
        Err(m) => return ctx.reply.error(m),
        Ok(None | Some(0)) => return ctx.reply.int(0),
        Ok(Some(_)) => {}
    }
    notify::write_as(ev::SADD);
    let shard = ctx.locks.shard(ld.gid);
    let create = || Some(Set::new_for(member, 1, lim));
    let r = edit_set(shard, dst, ld.hash, now, create, acc, |s, edit| {
        if s.add(member, lim) {
            edit.emit(|| Effect::SAdd { key: boxed(dst), members: vec![boxed(member)] });
        }
    });
    match r {
        Err(m) => ctx.reply.error(m),
        Ok(_) => ctx.reply.int(1),
    }
}

// ------------------------------------------------------------ set algebra --

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
}

/// Looks up the sets named by arguments `first..first + n` (their
/// locations `locs[loc0..]`), counting hits and misses: WRONGTYPE at the
/// first that holds another type, before anything else, as Redis does.
fn check_sets(ctx: &mut Ctx<'_, '_>, args: Args<'_>, first: usize, n: usize, loc0: usize) -> Result<(), &'static str> {
    let (now, acc) = (ctx.now, ctx.access());
    for i in 0..n {
        let loc = ctx.locs[loc0 + i];
        match ctx.locks.shard(loc.gid).lookup_source(args.get(first + i), loc.hash, now, acc) {
            None => ctx.stats.keyspace_misses.add(1),
            Some(e) => {
                ctx.stats.keyspace_hits.add(1);
                // Redis stops at the first key of another type: the keys
                // after it are not read (no hit, miss or `keymiss`).
                if e.set().is_none() {
                    return Err(errors::WRONGTYPE);
                }
            }
        }
    }
    Ok(())
}

/// The sets [`check_sets`] found, read together (None: absent), each with
/// its key. Borrows the locks, not the whole context, so that the reply
/// can be written while the sets are held.
fn sets_of<'c>(locks: &'c LockSet<'_>, locs: &[Loc], args: Args<'c>, first: usize, now: u64) -> Vec<(&'c [u8], Option<&'c Set>)> {
    locs.iter()
        .enumerate()
        .map(|(i, loc)| {
            let key = args.get(first + i);
            let set = locks.shard_ref(loc.gid).and_then(|sh| sh.peek(key, loc.hash, now)).and_then(|e| e.set());
            (key, set)
        })
        .collect()
}

/// The intersection, in the order of the smallest set (Redis's
/// `sinterGenericCommand`), stopping after `limit` members (0: all).
fn intersect<'s>(sets: &[(&[u8], Option<&'s Set>)], limit: usize) -> Vec<Member<'s>> {
    let Some(mut all) = sets.iter().map(|(k, s)| s.map(|s| (*k, s))).collect::<Option<Vec<_>>>() else {
        return Vec::new();
    };
    all.sort_by_key(|(_, s)| s.len());
    let (k0, first) = all[0];
    let mut out = Vec::new();
    for m in first.iter() {
        let everywhere = all[1..].iter().all(|(k, s)| *k == k0 || m.with_bytes(|b| s.contains(b)));
        if everywhere {
            out.push(m);
            if out.len() == limit {
                break;
            }
        }
    }
    out
}

/// The union or difference as Redis builds it (`sunionDiffGenericCommand`):
/// members added one by one to a set that starts as an intset, so that its
/// encoding and order are Redis's.
fn union_or_diff(sets: &[(&[u8], Option<&Set>)], op: Op, lim: SetLimits) -> Set {
    let mut out = Set::new();
    let add = |out: &mut Set, m: Member<'_>| {
        m.with_bytes(|b| out.add(b, lim));
    };
    if op == Op::Union {
        for s in sets.iter().filter_map(|x| x.1) {
            for m in s.iter() {
                add(&mut out, m);
            }
        }
        return out;
    }
    let Some((k0, Some(first))) = sets.first().copied() else { return out };
    if first.is_empty() {
        return out;
    }
    // Redis's choice between its two algorithms: what each would touch.
    let mut one = 0usize;
    let mut two = 0usize;
    for s in sets.iter().filter_map(|x| x.1) {
        one += first.len();
        two += s.len();
    }
    if one / 2 <= two {
        // Each member of the first set, looked up in the others, largest
        // first so that a member found is dropped early.
        let mut rest: Vec<(&[u8], &Set)> = sets[1..].iter().filter_map(|(k, s)| s.map(|s| (*k, s))).collect();
        rest.sort_by_key(|(_, s)| std::cmp::Reverse(s.len()));
        for m in first.iter() {
            let gone = rest.iter().any(|(k, s)| *k == k0 || m.with_bytes(|b| s.contains(b)));
            if !gone {
                add(&mut out, m);
            }
        }
    } else {
        for m in first.iter() {
            add(&mut out, m);
        }
        for s in sets[1..].iter().filter_map(|x| x.1) {
            for m in s.iter() {
                m.with_bytes(|b| out.remove(b));
            }
            if out.is_empty() {
                break;
            }
        }
    }
    out
}

/// SINTER, SUNION, SDIFF: the result as a set reply.
fn set_op(ctx: &mut Ctx<'_, '_>, args: Args<'_>, op: Op) {
    let n = args.len() - 1;
    if let Err(e) = check_sets(ctx, args, 1, n, 0) {
        return ctx.reply.error(e);
    }
    let lim = limits(ctx);
    let sets = sets_of(ctx.locks, &ctx.locs[..n], args, 1, ctx.now);
    let reply = &mut ctx.reply;
    match op {
        Op::Inter => {
            let r = intersect(&sets, 0);
            reply.set(r.len());
            for m in r {
                bulk_member(reply, m);
            }
        }
        Op::Union | Op::Diff => {
            let r = union_or_diff(&sets, op, lim);
            reply.set(r.len());
            for m in r.iter() {
                bulk_member(reply, m);
            }
        }
    }
}

fn sinter(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_op(ctx, args, Op::Inter)
}

fn sunion(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_op(ctx, args, Op::Union)
}

fn sdiff(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_op(ctx, args, Op::Diff)
}

/// SINTERSTORE, SUNIONSTORE, SDIFFSTORE: the result stored at the first
/// key (its old value and TTL gone), or the key deleted when it is empty.
fn set_op_store(ctx: &mut Ctx<'_, '_>, args: Args<'_>, op: Op) {
    let n = args.len() - 2;
    if let Err(e) = check_sets(ctx, args, 2, n, 1) {
        return ctx.reply.error(e);
    }
    let lim = limits(ctx);
    let sets = sets_of(ctx.locks, &ctx.locs[1..=n], args, 2, ctx.now);
    let result = match op {
        Op::Inter => {
            let mut out = Set::new();
            for m in intersect(&sets, 0) {
                m.with_bytes(|b| out.add(b, lim));
            }
            out
        }
        Op::Union | Op::Diff => union_or_diff(&sets, op, lim),
    };
    drop(sets);
    let (loc, dst, now) = (ctx.locs[0], args.get(1), ctx.now);
    let len = result.len();
    let shard = ctx.locks.shard(loc.gid);
    let old = if len == 0 { shard.remove(dst, loc.hash, now) } else { shard.set(dst, loc.hash, Value::Set(result), None, now) };
    ctx.reply.int(len as i64);
    drop(old);
}

fn sinterstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_op_store(ctx, args, Op::Inter)
}

fn sunionstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_op_store(ctx, args, Op::Union)
}

fn sdiffstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    set_op_store(ctx, args, Op::Diff)
}

/// Parses `numkeys key... [LIMIT limit]` from argument `at` (SINTERCARD,
/// and ZINTERCARD's same form): the key count and the limit (0: none).
pub(super) fn parse_intercard(args: Args<'_>, at: usize) -> Result<(usize, usize), &'static str> {
    let numkeys = match parse_i64(args.get(at)) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(errors::NUMKEYS_NOT_POSITIVE),
    };
    if numkeys > (args.len() - at - 1) as u64 {
        return Err(errors::NUMKEYS_OVER_ARGS);
    }
    let mut limit = 0;
    let mut j = at + 1 + numkeys as usize;
    while j < args.len() {
        if args.get(j).eq_ignore_ascii_case(b"limit") && j + 1 < args.len() {
            match parse_i64(args.get(j + 1)) {
                Some(l) if l >= 0 => limit = l as usize,
                _ => return Err(errors::LIMIT_NEGATIVE),
            }
            j += 2;
        } else {
            return Err(errors::SYNTAX);
        }
    }
    Ok((numkeys as usize, limit))
}

fn sintercard(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (n, limit) = match parse_intercard(args, 1) {
        Ok(x) => x,
        Err(e) => return ctx.reply.error(e),
    };
    if let Err(e) = check_sets(ctx, args, 2, n, 0) {
        return ctx.reply.error(e);
    }
    let sets = sets_of(ctx.locks, &ctx.locs[..n], args, 2, ctx.now);
    let count = intersect(&sets, limit).len();
    ctx.reply.int(count as i64);
}

fn sscan(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cursor) = super::keys::parse_cursor(args.get(2)) else {
        return ctx.reply.error(errors::INVALID_CURSOR);
    };
    let s = read_set!(ctx, args.get(1), |r: &mut Reply<'_>| {
        r.array(2);
        r.bulk(b"0");
        r.array(0);
    });
    let super::hashes::ScanOpts { count, pattern, .. } = match super::hashes::ScanOpts::parse(args, 3, false) {
        Ok(o) => o,
        Err(e) => return ctx.reply.error(e),
    };
    let mut items: Vec<Member<'_>> = Vec::new();
    let next = s.scan(cursor, count, |m| {
        if pattern.is_none_or(|p| m.with_bytes(|b| crate::glob::matches(p, b, false))) {
            items.push(m);
        }
    });
    let reply = &mut ctx.reply;
    reply.array(2);
    reply.bulk(itoa::Buffer::new().format(next).as_bytes());
    reply.array(items.len());
    for m in items {
        bulk_member(reply, m);
    }
}
