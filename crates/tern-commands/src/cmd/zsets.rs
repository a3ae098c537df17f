//! Sorted-set commands: ZADD and the rest of Redis's sorted-set family,
//! and the blocking pops (BZPOPMIN, BZPOPMAX, BZMPOP), which take the
//! non-blocking path here and wait through `cmd::blocking` when there is
//! nothing to take.
//!
//! The value lives in `tern_store::ZSet` (listpack or skiplist, with
//! Redis's conversions at `zset-max-listpack-entries` and
//! `zset-max-listpack-value`). Changes go through the shard's write path
//! ([`Shard::modify`]) and are recorded as the scores they set (`ZADD`
//! with the resulting scores, so ZINCRBY replays exactly) or the members
//! they removed (`ZREM`: the pops and the ZREMRANGEBY* commands too), so a
//! replay depends on neither the order nor the clock.
//!
//! Argument errors come before the key is looked up, and the order of
//! the checks is Redis's (`t_zset.c`), which is what clients see when a
//! command has several things wrong with it.

use crate::messaging::notify::{self, ev};
use rand::seq::SliceRandom;
use smallvec::SmallVec;
use rand::Rng;
use tern_resp::{parse_i64, string2d, Args};
use tern_store::{Edit, Effect, EntryExt, Shard, Value, ZSet, ZsetLimits};

use super::blocking::{self, Timeout};
use super::hashes::is;
use super::keyspec::{index, keynum, ks, range, ACCESS, DELETE, OW, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, MembersAhead, Reply};
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("zadd", -4, WRITE | DENYOOM | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], zadd)
        .event(ev::ZADD)
        .member(-1)
        .doc("sorted-set", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", "1.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        .acl(&["write", "sortedset", "fast"])
        .history(&[("2.4.0", "Accepts multiple elements."), ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."), ("6.2.0", "Added the `GT` and `LT` options.")]),
    CommandSpec::new("zincrby", 4, WRITE | DENYOOM | FAST, &[ks(RW | ACCESS | UPDATE, index(1), range(0, 1, 0))], zincrby)
        .event(ev::ZINCR)
        .member(3)
        .doc("sorted-set", "Increments the score of a member in a sorted set.", "1.2.0", "O(log(N)) where N is the number of elements in the sorted set.")
        .acl(&["write", "sortedset", "fast"]),
    CommandSpec::new("zrem", -3, WRITE | FAST, &[ks(RW | DELETE, index(1), range(0, 1, 0))], zrem)
        .event(ev::ZREM)
        .member(2)
        .doc("sorted-set", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", "1.2.0", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.")
        .acl(&["write", "sortedset", "fast"])
        .history(&[("2.4.0", "Accepts multiple elements.")]),
    CommandSpec::new("zcard", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], zcard)
        .doc("sorted-set", "Returns the number of members in a sorted set.", "1.2.0", "O(1)")
        .acl(&["read", "sortedset", "fast"]),
    CommandSpec::new("zscore", 3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zscore)
        .member(2)
        .doc("sorted-set", "Returns the score of a member in a sorted set.", "1.2.0", "O(1)")
        .acl(&["read", "sortedset", "fast"]),
    CommandSpec::new("zmscore", -3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zmscore)
        .doc("sorted-set", "Returns the score of one or more members in a sorted set.", "6.2.0", "O(N) where N is the number of members being requested.")
        .acl(&["read", "sortedset", "fast"]),
    CommandSpec::new("zrank", -3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrank)
        .member(2)
        .doc("sorted-set", "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0", "O(log(N))")
        .acl(&["read", "sortedset", "fast"])
        .history(&[("7.2.0", "Added the optional `WITHSCORE` argument.")]),
    CommandSpec::new("zrevrank", -3, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrevrank)
        .member(2)
        .doc("sorted-set", "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0", "O(log(N))")
        .acl(&["read", "sortedset", "fast"])
        .history(&[("7.2.0", "Added the optional `WITHSCORE` argument.")]),
    CommandSpec::new("zcount", 4, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zcount)
        .doc("sorted-set", "Returns the count of members in a sorted set that have scores within a range.", "2.0.0", "O(log(N)) with N being the number of elements in the sorted set.")
        .acl(&["read", "sortedset", "fast"]),
    CommandSpec::new("zlexcount", 4, READONLY | FAST, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zlexcount)
        .doc("sorted-set", "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9", "O(log(N)) with N being the number of elements in the sorted set.")
        .acl(&["read", "sortedset", "fast"]),
    CommandSpec::new("zrange", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrange)
        .doc("sorted-set", "Returns members in a sorted set within a range of indexes.", "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
        .acl(&["read", "sortedset", "slow"])
        .history(&[("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options.")]),
    CommandSpec::new("zrangestore", -5, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), range(0, 1, 0))], zrangestore)
        .event(ev::ZRANGESTORE)
        .doc("sorted-set", "Stores a range of members from sorted set in a key.", "6.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.")
        .acl(&["write", "sortedset", "slow"]),
    CommandSpec::new("zrevrange", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrevrange)
        .doc("sorted-set", "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
        .acl(&["read", "sortedset", "slow"])
        .deprecated("6.2.0", "`ZRANGE` with the `REV` argument"),
    CommandSpec::new("zrangebyscore", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrangebyscore)
        .doc("sorted-set", "Returns members in a sorted set within a range of scores.", "1.0.5", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .acl(&["read", "sortedset", "slow"])
        .history(&[("2.0.0", "Added the `WITHSCORES` modifier.")])
        .deprecated("6.2.0", "`ZRANGE` with the `BYSCORE` argument"),
    CommandSpec::new("zrevrangebyscore", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrevrangebyscore)
        .doc("sorted-set", "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .acl(&["read", "sortedset", "slow"])
        .history(&[("2.1.6", "`min` and `max` can be exclusive.")])
        .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments"),
    CommandSpec::new("zrangebylex", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrangebylex)
        .doc("sorted-set", "Returns members in a sorted set within a lexicographical range.", "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .acl(&["read", "sortedset", "slow"])
        .deprecated("6.2.0", "`ZRANGE` with the `BYLEX` argument"),
    CommandSpec::new("zrevrangebylex", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrevrangebylex)
        .doc("sorted-set", "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .acl(&["read", "sortedset", "slow"])
        .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments"),
    CommandSpec::new("zremrangebyrank", 4, WRITE, &[ks(RW | DELETE, index(1), range(0, 1, 0))], zremrangebyrank)
        .event(ev::ZREMRANGEBYRANK)
        .doc("sorted-set", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", "2.0.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .acl(&["write", "sortedset", "slow"]),
    CommandSpec::new("zremrangebyscore", 4, WRITE, &[ks(RW | DELETE, index(1), range(0, 1, 0))], zremrangebyscore)
        .event(ev::ZREMRANGEBYSCORE)
        .doc("sorted-set", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .acl(&["write", "sortedset", "slow"]),
    CommandSpec::new("zremrangebylex", 4, WRITE, &[ks(RW | DELETE, index(1), range(0, 1, 0))], zremrangebylex)
        .event(ev::ZREMRANGEBYLEX)
        .doc("sorted-set", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .acl(&["write", "sortedset", "slow"]),
    CommandSpec::new("zpopmin", -2, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], zpopmin)
        .event(ev::ZPOPMIN)
        .doc("sorted-set", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        .acl(&["write", "sortedset", "fast"]),
    CommandSpec::new("zpopmax", -2, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], zpopmax)
        .event(ev::ZPOPMAX)
        .doc("sorted-set", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        .acl(&["write", "sortedset", "fast"]),
    CommandSpec::new("zmpop", -4, WRITE, &[ks(RW | ACCESS | DELETE, index(1), keynum(0, 1, 1))], zmpop)
        .event(ev::ZPOPMIN)
        .doc("sorted-set", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", "7.0.0", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        .acl(&["write", "sortedset", "slow"]),
    CommandSpec::new("bzpopmin", -3, WRITE | FAST | BLOCKING, &[ks(RW | ACCESS | DELETE, index(1), range(-2, 1, 0))], bzpopmin)
        .event(ev::ZPOPMIN)
        .doc("sorted-set", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "5.0.0", "O(log(N)) with N being the number of elements in the sorted set.")
        .acl(&["write", "sortedset", "fast", "blocking"])
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")]),
    CommandSpec::new("bzpopmax", -3, WRITE | FAST | BLOCKING, &[ks(RW | ACCESS | DELETE, index(1), range(-2, 1, 0))], bzpopmax)
        .event(ev::ZPOPMAX)
        .doc("sorted-set", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", "5.0.0", "O(log(N)) with N being the number of elements in the sorted set.")
        .acl(&["write", "sortedset", "fast", "blocking"])
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")]),
    CommandSpec::new("bzmpop", -5, WRITE | BLOCKING, &[ks(RW | ACCESS | DELETE, index(2), keynum(0, 1, 1))], bzmpop)
        .event(ev::ZPOPMIN)
        .doc("sorted-set", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "7.0.0", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        .acl(&["write", "sortedset", "slow", "blocking"]),
    CommandSpec::new("zrandmember", -2, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zrandmember)
        .doc("sorted-set", "Returns one or more random members from a sorted set.", "6.2.0", "O(N) where N is the number of members returned")
        .acl(&["read", "sortedset", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("zscan", -3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], zscan)
        .doc("sorted-set", "Iterates over members and scores of a sorted set.", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        .acl(&["read", "sortedset", "slow"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("zunion", -3, READONLY, &[ks(RO | ACCESS, index(1), keynum(0, 1, 1))], zunion)
        .doc("sorted-set", "Returns the union of multiple sorted sets.", "6.2.0", "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
        .acl(&["read", "sortedset", "slow"])
        .history(&[("8.8.0", "Added `COUNT` aggregate option.")]),
    CommandSpec::new("zinter", -3, READONLY, &[ks(RO | ACCESS, index(1), keynum(0, 1, 1))], zinter)
        .doc("sorted-set", "Returns the intersect of multiple sorted sets.", "6.2.0", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
        .acl(&["read", "sortedset", "slow"])
        .history(&[("8.8.0", "Added `COUNT` aggregate option.")]),
    CommandSpec::new("zdiff", -3, READONLY, &[ks(RO | ACCESS, index(1), keynum(0, 1, 1))], zdiff)
        .doc("sorted-set", "Returns the difference between multiple sorted sets.", "6.2.0", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
        .acl(&["read", "sortedset", "slow"]),
    CommandSpec::new("zunionstore", -4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), keynum(0, 1, 1))], zunionstore)
        .event(ev::ZUNIONSTORE)
        .doc("sorted-set", "Stores the union of multiple sorted sets in a key.", "2.0.0", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
        .acl(&["write", "sortedset", "slow"])
        .history(&[("8.8.0", "Added `COUNT` aggregate option.")]),
    CommandSpec::new("zinterstore", -4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), keynum(0, 1, 1))], zinterstore)
        .event(ev::ZINTERSTORE)
        .doc("sorted-set", "Stores the intersect of multiple sorted sets in a key.", "2.0.0", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
        .acl(&["write", "sortedset", "slow"])
        .history(&[("8.8.0", "Added `COUNT` aggregate option.")]),
    CommandSpec::new("zdiffstore", -4, WRITE | DENYOOM, &[ks(OW | UPDATE, index(1), range(0, 1, 0)), ks(RO | ACCESS, index(2), keynum(0, 1, 1))], zdiffstore)
        .event(ev::ZDIFFSTORE)
        .doc("sorted-set", "Stores the difference of multiple sorted sets in a key.", "6.2.0", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
        .acl(&["write", "sortedset", "slow"]),
    CommandSpec::new("zintercard", -3, READONLY, &[ks(RO | ACCESS, index(1), keynum(0, 1, 1))], zintercard)
        .doc("sorted-set", "Returns the number of members of the intersect of multiple sorted sets.", "7.0.0", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.")
        .acl(&["read", "sortedset", "slow"]),
];

pub(super) fn limits(ctx: &Ctx<'_, '_>) -> ZsetLimits {
    let s = &ctx.srv.settings;
    ZsetLimits {
        max_entries: s.zset_max_listpack_entries(),
        max_value: s.zset_max_listpack_value(),
    }
}

/// [`super::edit_typed`] on a sorted set (`create`: makes the value to
/// start from, run only if the key is absent).
fn edit_zset<R>(
    ctx: &mut Ctx<'_, '_>,
    i: usize,
    key: &[u8],
    create: impl FnOnce() -> Option<ZSet>,
    f: impl FnOnce(&mut ZSet, &mut Edit, &mut Reply<'_>) -> R,
) -> Result<Option<R>, &'static str> {
    let (loc, now, acc) = (ctx.locs[i], ctx.now, ctx.access());
    let reply = &mut ctx.reply;
    let shard: &mut Shard = ctx.locks.shard(loc.gid);
    super::edit_typed(
        shard,
        key,
        loc.hash,
        now,
        || create().map(Value::ZSet),
        acc,
        |e| e.zset_mut(),
        |z, edit| f(z, edit, reply),
    )
}

/// Asks for the lines of the members that the next commands of the
/// pipeline look up in this same sorted set (the one whose key hashed to
/// `key_hash`; see [`MembersAhead`]): the far one's index line, the near
/// one's slab slot.
#[inline]
fn prefetch_ahead(ahead: MembersAhead, key_hash: u64, z: &ZSet) {
    if let Some((k, m)) = ahead.near {
        if k == key_hash {
            z.prefetch_member(m, true);
        }
    }
    if let Some((k, m)) = ahead.far {
        if k == key_hash {
            z.prefetch_member(m, false);
        }
    }
}

/// [`read_typed`] for a sorted set.
macro_rules! read_zset {
    ($ctx:ident, $key:expr, $missing:expr) => {
        read_typed!($ctx, $key, zset, $missing)
    };
}

fn boxed(b: &[u8]) -> Box<[u8]> {
    b.into()
}

/// A score as Redis replies with one: a RESP3 double, or a RESP2 bulk
/// string of the same text.
fn score(reply: &mut Reply<'_>, s: f64) {
    reply.double(s)
}

/// The header of `n` members with their scores: a flat array of 2n in
/// RESP2, an array of n [member, score] pairs in RESP3 (nested: always).
fn pairs_header(reply: &mut Reply<'_>, n: usize, nested: bool) {
    if nested {
        reply.array(n);
    } else {
        reply.array(2 * n);
    }
}

fn pair(reply: &mut Reply<'_>, m: &[u8], s: f64, nested: bool) {
    if nested {
        reply.array(2);
    }
    reply.bulk(m);
    score(reply, s);
}

// The range commands (ZRANGE*, ZRANGESTORE, ZREMRANGEBY*) and the
// algebra (ZUNION, ZINTER, ZDIFF, ...) live in their own files; declared
// here, below `read_zset!`, so that they can use it.
mod algebra;
mod range;

use algebra::{zdiff, zdiffstore, zinter, zintercard, zinterstore, zunion, zunionstore};
use range::{lex_range, score_range, zrange, zrangebylex, zrangebyscore, zrangestore, zremrangebylex, zremrangebyrank, zremrangebyscore, zrevrange, zrevrangebylex, zrevrangebyscore};
pub(super) use range::store_result;

// ---------------------------------------------------------------- ZADD --

#[derive(Clone, Copy, Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// ZADD and ZINCRBY (Redis's `zaddGenericCommand`): `scoreidx` is where
/// the score/member pairs start.
fn zadd_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, mut f: AddFlags, mut scoreidx: usize) {
    if !f.incr {
        while scoreidx < args.len() {
            let a = args.get(scoreidx);
            if is(a, b"nx") {
                f.nx = true;
            } else if is(a, b"xx") {
                f.xx = true;
            } else if is(a, b"ch") {
                f.ch = true;
            } else if is(a, b"incr") {
                f.incr = true;
            } else if is(a, b"gt") {
                f.gt = true;
            } else if is(a, b"lt") {
                f.lt = true;
            } else {
                break;
            }
            scoreidx += 1;
        }
    }
    let elements = args.len() - scoreidx;
    if !elements.is_multiple_of(2) || elements == 0 {
        return ctx.reply.error(errors::SYNTAX);
    }
    let elements = elements / 2;
    if f.nx && f.xx {
        return ctx.reply.error(errors::ZADD_XX_AND_NX);
    }
    if (f.gt || f.lt) && (f.nx || (f.gt && f.lt)) {
        return ctx.reply.error(errors::ZADD_GT_LT_NX);
    }
    if f.incr && elements > 1 {
        return ctx.reply.error(errors::ZADD_INCR_PAIR);
    }
    if f.incr {
        notify::write_as(ev::ZINCR);
    }
    let mut scores: SmallVec<[f64; 4]> = SmallVec::with_capacity(elements);
    let mut longest = 0;
    for j in 0..elements {
        match string2d(args.get(scoreidx + 2 * j)) {
            Some(s) => scores.push(s),
            None => return ctx.reply.error(errors::NOT_FLOAT),
        }
        longest = longest.max(args.get(scoreidx + 2 * j + 1).len());
    }
    let lim = limits(ctx);
    let key = args.get(1);
    let create = || (!f.xx).then(|| ZSet::new_for(elements, longest, lim));
    let (ahead, at) = (ctx.ahead, ctx.locs[0].hash);
    let r = edit_zset(ctx, 0, key, create, |z, edit, _| {
        prefetch_ahead(ahead, at, z);
        // An existing sorted set converts ahead for the member count only
        // (a long member converts it when it is added).
        z.prepare_write(elements, 0, lim);
        let (mut added, mut updated, mut processed) = (0i64, 0i64, 0);
        let mut last = 0.0;
        // The record of what changed, gathered only while one is read
        // (the AOF, a replica): no allocation per write otherwise.
        let recording = edit.recording();
        let mut set: Vec<(f64, Box<[u8]>)> = Vec::new();
        let mut note = |s: f64, m: &[u8]| {
            if recording {
                set.push((s, boxed(m)));
            }
        };
        for (j, &s) in scores.iter().enumerate() {
            let m = args.get(scoreidx + 2 * j + 1);
            let mut s = s;
            let at = z.locate(m);
            match at.score {
                Some(cur) => {
                    if f.nx {
                        continue;
                    }
                    if f.incr {
                        s += cur;
                        if s.is_nan() {
                            return Err(errors::ZSET_NAN_SCORE);
                        }
                    }
                    if (f.lt && s >= cur) || (f.gt && s <= cur) {
                        continue;
                    }
                    last = s;
                    processed += 1;
                    if s != cur {
                        z.set_located(at, m, s, lim);
                        updated += 1;
                        note(s, m);
                    }
                }
                None if f.xx => continue,
                None => {
                    z.set_located(at, m, s, lim);
                    added += 1;
                    processed += 1;
                    last = s;
                    note(s, m);
                }
            }
        }
        if added + updated > 0 {
            edit.emit(|| Effect::ZAdd {
                key: boxed(key),
                pairs: set,
            });
            edit.changes((added + updated) as usize);
        }
        Ok((added, updated, processed, last))
    });
    let reply = &mut ctx.reply;
    match r {
        Err(e) | Ok(Some(Err(e))) => reply.error(e),
        Ok(None) if f.incr => reply.null(),
        Ok(None) => reply.int(0),
        Ok(Some(Ok((added, updated, processed, last)))) => {
            if f.incr {
                if processed > 0 {
                    score(reply, last);
                } else {
                    reply.null();
                }
            } else {
                reply.int(if f.ch { added + updated } else { added });
            }
        }
    }
}

pub(super) fn zadd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zadd_generic(ctx, args, AddFlags::default(), 2)
}

fn zincrby(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zadd_generic(
        ctx,
        args,
        AddFlags {
            incr: true,
            ..AddFlags::default()
        },
        2,
    )
}

fn zrem(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let key = args.get(1);
    let (ahead, at) = (ctx.ahead, ctx.locs[0].hash);
    let r = edit_zset(ctx, 0, key, || None, |z, edit, _| {
        prefetch_ahead(ahead, at, z);
        let mut gone: Vec<Box<[u8]>> = Vec::new();
        let mut count = 0;
        for m in args.tail(2).iter() {
            if z.remove(m).is_some() {
                count += 1;
                if edit.recording() {
                    gone.push(boxed(m));
                }
            }
        }
        super::removed(edit, count, || Effect::ZRem { key: boxed(key), members: gone })
    });
    super::reply_count(ctx, r);
}

// --------------------------------------------------------------- reads --

fn zcard(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    ctx.reply.int(z.len() as i64);
}

fn zscore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| r.null());
    prefetch_ahead(ctx.ahead, ctx.locs[0].hash, z);
    match z.score(args.get(2)) {
        Some(s) => score(&mut ctx.reply, s),
        None => ctx.reply.null(),
    }
}

fn zmscore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let n = args.len() - 2;
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| {
        r.array(n);
        for _ in 0..n {
            r.null();
        }
    });
    let members: Vec<&[u8]> = args.tail(2).iter().collect();
    let mut scores = Vec::with_capacity(n);
    z.scores_many(&members, &mut scores, ctx.prefetch);
    ctx.reply.array(n);
    for s in scores {
        match s {
            Some(s) => score(&mut ctx.reply, s),
            None => ctx.reply.null(),
        }
    }
}

fn zrank_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, rev: bool) {
    if args.len() > 4 {
        return ctx.arity_error();
    }
    let withscore = args.len() == 4;
    if withscore && !is(args.get(3), b"withscore") {
        return ctx.reply.error(errors::SYNTAX);
    }
    let missing = |r: &mut Reply<'_>| if withscore { r.null_array() } else { r.null() };
    let z = read_zset!(ctx, args.get(1), missing);
    prefetch_ahead(ctx.ahead, ctx.locs[0].hash, z);
    let reply = &mut ctx.reply;
    match z.rank(args.get(2)) {
        None => missing(reply),
        Some((rank, s)) => {
            let rank = if rev { z.len() - 1 - rank } else { rank };
            if withscore {
                reply.array(2);
            }
            reply.int(rank as i64);
            if withscore {
                score(reply, s);
            }
        }
    }
}

fn zrank(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrank_generic(ctx, args, false)
}

fn zrevrank(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrank_generic(ctx, args, true)
}

fn zcount(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (min, max) = match score_range(args.get(2), args.get(3)) {
        Ok(r) => r,
        Err(e) => return ctx.reply.error(e),
    };
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    let (a, b) = z.score_range(min, max);
    ctx.reply.int((b - a) as i64);
}

fn zlexcount(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (min, max) = match lex_range(args.get(2), args.get(3)) {
        Ok(r) => r,
        Err(e) => return ctx.reply.error(e),
    };
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    let (a, b) = z.lex_range(min, max);
    ctx.reply.int((b - a) as i64);
}


// ---------------------------------------------------------------- pops --

/// Which end a pop takes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Side {
    Min,
    Max,
}

fn side_arg(a: &[u8]) -> Option<Side> {
    if is(a, b"min") {
        Some(Side::Min)
    } else if is(a, b"max") {
        Some(Side::Max)
    } else {
        None
    }
}

/// Pops up to `count` members from `side` of the sorted set `key` (key
/// `i` of the command), writing them as `header(reply, n)` then the pairs
/// (`nested`: as [member, score] arrays). Ok(None) when the key is absent;
/// a sorted set left empty is deleted.
pub(super) fn pop_into(
    ctx: &mut Ctx<'_, '_>,
    i: usize,
    key: &[u8],
    side: Side,
    count: usize,
    nested: bool,
    header: impl FnOnce(&mut Reply<'_>, usize),
) -> Result<Option<usize>, &'static str> {
    notify::write_as(if side == Side::Min { ev::ZPOPMIN } else { ev::ZPOPMAX });
    edit_zset(ctx, i, key, || None, |z, edit, reply| {
        let n = count.min(z.len());
        header(reply, n);
        let len = z.len();
        let (a, b) = if side == Side::Min {
            (0, n)
        } else {
            (len - n, len)
        };
        let mut gone: Vec<(Box<[u8]>, f64)> = Vec::with_capacity(n);
        z.remove_range(a, b, |m, s| gone.push((boxed(m), s)));
        if side == Side::Max {
            gone.reverse();
        }
        for (m, s) in &gone {
            pair(reply, m, *s, nested);
        }
        if n > 0 {
            edit.emit(|| Effect::ZRem {
                key: boxed(key),
                members: gone.into_iter().map(|x| x.0).collect(),
            });
            edit.changes(n);
        }
        n
    })
}

/// ZPOPMIN / ZPOPMAX: a flat [member, score] without a count; with one,
/// pairs (nested in RESP3).
fn zpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>, side: Side) {
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
    let nested = count.is_some() && ctx.reply.enc.resp3;
    let key = args.get(1);
    let n = count.map_or(1, |c| usize::try_from(c).unwrap_or(usize::MAX));
    let r = pop_into(ctx, 0, key, side, n, nested, |reply, k| {
        pairs_header(reply, k, nested)
    });
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(Some(_)) => {}
        Ok(None) => ctx.reply.array(0),
    }
}

fn zpopmin(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zpop(ctx, args, Side::Min)
}

fn zpopmax(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zpop(ctx, args, Side::Max)
}

fn zmpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let m = match super::lists::parse_mpop(args, 1, side_arg) {
        Ok(m) if ctx.locs.len() >= m.numkeys => m,
        Ok(_) => return ctx.reply.error(errors::SYNTAX),
        Err(e) => return ctx.reply.error(e),
    };
    for i in 0..m.numkeys {
        let key = args.get(2 + i);
        let r = pop_into(ctx, i, key, m.end, m.count, true, |reply, n| {
            reply.array(2);
            reply.bulk(key);
            reply.array(n);
        });
        match r {
            Err(e) => return ctx.reply.error(e),
            Ok(Some(_)) => return,
            Ok(None) => {}
        }
    }
    ctx.reply.null_array();
}

// ------------------------------------------------------------ blocking --

/// The blocking pops: pops from the first of `nkeys` keys (arguments
/// `first..`) that holds a sorted set, or waits on them all (see
/// `cmd::blocking`). `count` None is BZPOPMIN / BZPOPMAX's
/// `[key, member, score]`; Some is BZMPOP's `[key, [[member, score], ...]]`.
fn bzpop_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, first: usize, nkeys: usize, side: Side, count: Option<usize>, timeout: Timeout) {
    let is_zset = |e: &tern_store::Entry| e.zset().is_some();
    let took = |ctx: &mut Ctx<'_, '_>, i, _, key: &[u8]| {
        let r = pop_into(ctx, i, key, side, count.unwrap_or(1), count.is_some(), |reply, n| match count {
            None => {
                reply.array(3);
                reply.bulk(key);
            }
            Some(_) => {
                reply.array(2);
                reply.bulk(key);
                reply.array(n);
            }
        });
        matches!(r, Ok(Some(_)))
    };
    if blocking::take_first(ctx, args, first, nkeys, is_zset, took) {
        return;
    }
    blocking::wait(ctx, args, first, nkeys, "zset", timeout, true);
}

/// BZPOPMIN / BZPOPMAX: the timeout is read first, as Redis does.
fn bzpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>, side: Side) {
    let timeout = match Timeout::parse(args.get(args.len() - 1), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    bzpop_generic(ctx, args, 1, args.len() - 2, side, None, timeout)
}

fn bzpopmin(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bzpop(ctx, args, Side::Min)
}

fn bzpopmax(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bzpop(ctx, args, Side::Max)
}

/// BZMPOP: numkeys, MIN|MAX and COUNT are checked before the timeout
/// (Redis's `zmpopGenericCommand` reads the timeout last).
fn bzmpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let m = match super::lists::parse_mpop(args, 2, side_arg) {
        Ok(m) if ctx.locs.len() >= m.numkeys => m,
        Ok(_) => return ctx.reply.error(errors::SYNTAX),
        Err(e) => return ctx.reply.error(e),
    };
    let timeout = match Timeout::parse(args.get(1), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    bzpop_generic(ctx, args, 3, m.numkeys, m.end, Some(m.count), timeout)
}

// ----------------------------------------------------------- ZRANDMEMBER --

fn zrandmember(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() == 2 {
        let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| r.null());
        let i = rand::thread_rng().gen_range(0..z.len().max(1));
        match z.nth(i) {
            Some((m, _)) => ctx.reply.bulk(m),
            None => ctx.reply.null(),
        }
        return;
    }
    let l = match parse_i64(args.get(2)) {
        None => return ctx.reply.error(errors::NOT_INTEGER),
        Some(i64::MIN) => return ctx.reply.error(errors::I64_SYMMETRIC_OUT_OF_RANGE),
        Some(l) => l,
    };
    let withscores = args.len() == 4 && is(args.get(3), b"withscores");
    if args.len() > 4 || (args.len() == 4 && !withscores) {
        return ctx.reply.error(errors::SYNTAX);
    }
    let (count, unique) = (l.unsigned_abs(), l >= 0);
    // Redis refuses a count whose reply (two entries a member) could not
    // have its length in a long, before the key is looked up.
    if withscores && count > (i64::MAX / 2) as u64 {
        return ctx.reply.error(errors::OUT_OF_RANGE);
    }
    let cut = super::hashes::output_cut(ctx);
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| r.array(0));
    let reply = &mut ctx.reply;
    let nested = reply.enc.resp3;
    let len = z.len() as u64;
    if count == 0 || len == 0 {
        return reply.array(0);
    }
    let emit = |reply: &mut Reply<'_>, (m, s): (&[u8], f64)| {
        if withscores {
            pair(reply, m, s, nested);
        } else {
            reply.bulk(m);
        }
    };
    let header = |reply: &mut Reply<'_>, n: usize| {
        if withscores {
            pairs_header(reply, n, nested);
        } else {
            reply.array(n);
        }
    };
    let mut rng = rand::thread_rng();
    if !unique {
        header(reply, count as usize);
        for i in 0..count {
            if cut(reply, i) {
                break;
            }
            if let Some(p) = z.nth(rng.gen_range(0..len as usize)) {
                emit(reply, p);
            }
        }
        return;
    }
    // The whole set, from the end, as Redis walks a listpack for it.
    if count >= len {
        header(reply, len as usize);
        z.for_range(0, len as usize, true, |m, s| emit(reply, (m, s)));
        return;
    }
    let count = count as usize;
    header(reply, count);
    // Few picks from a large set: draw distinct ranks; else shuffle ranks.
    if z.is_compact() || count * 3 > len as usize {
        let mut ranks: Vec<usize> = (0..len as usize).collect();
        let (picked, _) = ranks.partial_shuffle(&mut rng, count);
        for &r in picked.iter() {
            if let Some(p) = z.nth(r) {
                emit(reply, p);
            }
        }
    } else {
        let mut seen: hashbrown::HashSet<usize> = hashbrown::HashSet::with_capacity(count);
        while seen.len() < count {
            let r = rng.gen_range(0..len as usize);
            if seen.insert(r) {
                if let Some(p) = z.nth(r) {
                    emit(reply, p);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- ZSCAN --

fn zscan(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(cursor) = super::keys::parse_cursor(args.get(2)) else {
        return ctx.reply.error(errors::INVALID_CURSOR);
    };
    let z = read_zset!(ctx, args.get(1), |r: &mut Reply<'_>| {
        r.array(2);
        r.bulk(b"0");
        r.array(0);
    });
    let super::hashes::ScanOpts { count, pattern, .. } =
        match super::hashes::ScanOpts::parse(args, 3, false) {
            Ok(o) => o,
            Err(e) => return ctx.reply.error(e),
        };
    let mut items: Vec<(&[u8], f64)> = Vec::new();
    let next = z.scan(cursor, count, |m, s| {
        if pattern.is_none_or(|p| crate::glob::matches(p, m, false)) {
            items.push((m, s));
        }
    });
    let reply = &mut ctx.reply;
    reply.array(2);
    reply.bulk(itoa::Buffer::new().format(next).as_bytes());
    reply.array(items.len() * 2);
    // Scores as bulk strings in both protocols, as Redis's scan replies
    // them: a listpack's as it stores them, a skiplist's as `%.17g`.
    let format = if z.is_compact() { tern_resp::format_double } else { tern_resp::format_g17 };
    let mut text = String::new();
    for (m, s) in items {
        reply.bulk(m);
        format(s, &mut text);
        reply.bulk(text.as_bytes());
    }
}
