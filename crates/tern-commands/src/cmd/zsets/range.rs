//! Sorted-set ranges: the rank, score and lex range arguments and
//! LIMIT, the ZRANGE family (ZRANGE, ZRANGESTORE and the older
//! ZRANGEBY*/ZREV* forms), the end every command storing a computed
//! sorted set shares, and ZREMRANGEBY*.

use tern_resp::{parse_i64, strtod, Args};
use tern_store::{Effect, EntryExt, LexBound, Loc, ScoreBound, Value, ZSet};

use super::super::hashes::is;
use super::super::{Ctx, Reply};
use super::{boxed, edit_zset, limits, pair, pairs_header};
use crate::errors;

// -------------------------------------------------------------- ranges --

/// `1.5` or `(1.5`, read as Redis's `zslParseRange` does (C's `strtod`
/// over the whole argument: leading space, hex and an empty number pass).
fn score_bound(arg: &[u8]) -> Option<ScoreBound> {
    let (text, exclusive) = match arg.first() {
        Some(b'(') => (&arg[1..], true),
        _ => (arg, false),
    };
    let (value, n, _) = strtod(text);
    // The C string ends at a NUL, where strtod must have stopped.
    let end = errors::c_str(text).len();
    (n == end && !value.is_nan()).then_some(ScoreBound { value, exclusive })
}

pub(super) fn score_range(min: &[u8], max: &[u8]) -> Result<(ScoreBound, ScoreBound), &'static str> {
    match (score_bound(min), score_bound(max)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(errors::ZSET_MIN_MAX_NOT_FLOAT),
    }
}

/// `[a`, `(a`, `-` or `+` (Redis's `zslParseLexRangeItem`).
fn lex_bound(arg: &[u8]) -> Option<LexBound<'_>> {
    let alone = arg.len() == 1 || arg.get(1) == Some(&0);
    match arg.first() {
        Some(b'+') if alone => Some(LexBound::Max),
        Some(b'-') if alone => Some(LexBound::Min),
        Some(b'(') => Some(LexBound::Excl(&arg[1..])),
        Some(b'[') => Some(LexBound::Incl(&arg[1..])),
        _ => None,
    }
}

pub(super) fn lex_range<'a>(
    min: &'a [u8],
    max: &'a [u8],
) -> Result<(LexBound<'a>, LexBound<'a>), &'static str> {
    match (lex_bound(min), lex_bound(max)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(errors::ZSET_MIN_MAX_NOT_STRING),
    }
}

/// Redis's rank range normalisation (`start`, `end` inclusive, negative
/// from the end): the positions `start..end` it covers, or None.
fn rank_window(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let llen = len as i64;
    let mut start = if start < 0 {
        start.saturating_add(llen)
    } else {
        start
    };
    let mut end = if end < 0 {
        end.saturating_add(llen)
    } else {
        end
    };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= llen {
        return None;
    }
    if end >= llen {
        end = llen - 1;
    }
    Some((start as usize, end as usize + 1))
}

/// A parsed range: by rank (inclusive ends), by score, or by lex.
#[derive(Clone, Copy)]
enum Range<'a> {
    Rank(i64, i64),
    Score(ScoreBound, ScoreBound),
    Lex(LexBound<'a>, LexBound<'a>),
}

impl Range<'_> {
    /// The positions `a..b` of the sorted set the range covers (before
    /// any LIMIT); for a reversed rank range, counted from the top.
    fn window(&self, z: &ZSet, rev: bool) -> (usize, usize) {
        let len = z.len();
        match *self {
            Range::Rank(s, e) => match rank_window(s, e, len) {
                None => (0, 0),
                Some((a, b)) if rev => (len - b, len - a),
                Some(w) => w,
            },
            Range::Score(min, max) => z.score_range(min, max),
            Range::Lex(min, max) => z.lex_range(min, max),
        }
    }

    /// [`Self::window`] with LIMIT applied. A score or lex range with a
    /// LIMIT searches only for its near end: its far end is the last
    /// wanted position whenever the member there is still inside the
    /// range (one lookup by position), and is searched for only when it
    /// is not, so `ZRANGEBYSCORE key min max LIMIT 0 10` costs one
    /// descent of a large set, as Redis's walk from the first match does.
    fn limited(&self, z: &ZSet, rev: bool, limit: Option<(i64, i64)>) -> (usize, usize) {
        if let (Some((offset @ 0.., count @ 1..)), false) = (limit, matches!(self, Range::Rank(..))) {
            let (offset, want) = (offset as usize, (offset as usize).saturating_add(count as usize));
            if !rev {
                let a = self.near(z, false);
                let last = a.saturating_add(want - 1);
                if last < z.len() && z.nth(last).is_some_and(|(m, s)| self.admits(m, s, true)) {
                    return (a + offset, last + 1);
                }
                return apply_limit(a, self.near(z, true).max(a), limit, rev);
            }
            let b = self.near(z, true);
            if want <= b && z.nth(b - want).is_some_and(|(m, s)| self.admits(m, s, false)) {
                return (b - want, b - offset);
            }
            return apply_limit(self.near(z, false).min(b), b, limit, rev);
        }
        let (a, b) = self.window(z, rev);
        apply_limit(a, b, limit, rev)
    }

    /// The range's first position (`upper` false) or the position after
    /// its last (`upper` true), for a score or lex range.
    fn near(&self, z: &ZSet, upper: bool) -> usize {
        match *self {
            Range::Score(_, max) if upper => z.score_end(max),
            Range::Score(min, _) => z.score_start(min),
            Range::Lex(_, max) if upper => z.lex_end(max),
            Range::Lex(min, _) => z.lex_start(min),
            Range::Rank(..) => unreachable!("rank ranges have no bounds to search"),
        }
    }

    /// Whether a member is within the range's upper bound (`upper`) or
    /// its lower one.
    fn admits(&self, m: &[u8], s: f64, upper: bool) -> bool {
        match *self {
            Range::Score(_, max) if upper => if max.exclusive { s < max.value } else { s <= max.value },
            Range::Score(min, _) => if min.exclusive { s > min.value } else { s >= min.value },
            Range::Lex(_, max) if upper => match max {
                LexBound::Min => false,
                LexBound::Max => true,
                LexBound::Incl(x) => m <= x,
                LexBound::Excl(x) => m < x,
            },
            Range::Lex(min, _) => match min {
                LexBound::Min => true,
                LexBound::Max => false,
                LexBound::Incl(x) => m >= x,
                LexBound::Excl(x) => m > x,
            },
            Range::Rank(..) => true,
        }
    }
}

/// Positions `a..b` after LIMIT `offset count` (count < 0: all; offset
/// < 0: nothing, as Redis's skipping loop does), from the top if `rev`.
fn apply_limit(a: usize, b: usize, limit: Option<(i64, i64)>, rev: bool) -> (usize, usize) {
    let Some((offset, count)) = limit else {
        return (a, b);
    };
    let n = b - a;
    if offset < 0 {
        return (a, a);
    }
    let skip = (offset as u64).min(n as u64) as usize;
    let take = if count < 0 {
        n - skip
    } else {
        (count as u64).min((n - skip) as u64) as usize
    };
    if rev {
        (b - skip - take, b - skip)
    } else {
        (a + skip, a + skip + take)
    }
}

// --------------------------------------------------------------- ZRANGE --

#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    Rank,
    Score,
    Lex,
}

/// Redis's `zrangeGenericCommand`: ZRANGE, ZRANGESTORE and the older
/// forms, which fix the range type (`by`) or the direction (`rev`) that
/// ZRANGE takes from its options. `first` is the source key's index;
/// `store` says whether argument 1 is a destination.
fn zrange_generic(
    ctx: &mut Ctx<'_, '_>,
    args: Args<'_>,
    first: usize,
    store: bool,
    mut by: Option<By>,
    mut rev: Option<bool>,
) {
    let (mut minidx, mut maxidx) = (first + 1, first + 2);
    let mut withscores = false;
    let mut limit: Option<(i64, i64)> = None;
    let mut j = first + 3;
    while j < args.len() {
        let a = args.get(j);
        let left = args.len() - j - 1;
        if !store && is(a, b"withscores") {
            withscores = true;
        } else if is(a, b"limit") && left >= 2 {
            match (parse_i64(args.get(j + 1)), parse_i64(args.get(j + 2))) {
                (Some(o), Some(c)) => limit = Some((o, c)),
                _ => return ctx.reply.error(errors::NOT_INTEGER),
            }
            j += 2;
        } else if rev.is_none() && is(a, b"rev") {
            rev = Some(true);
        } else if by.is_none() && is(a, b"bylex") {
            by = Some(By::Lex);
        } else if by.is_none() && is(a, b"byscore") {
            by = Some(By::Score);
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    let rev = rev.unwrap_or(false);
    let by = by.unwrap_or(By::Rank);
    if limit.is_some() && by == By::Rank {
        return ctx.reply.error(errors::ZRANGE_LIMIT_NEEDS_BY);
    }
    if withscores && by == By::Lex {
        return ctx.reply.error(errors::ZRANGE_BYLEX_WITHSCORES);
    }
    if rev && by != By::Rank {
        std::mem::swap(&mut minidx, &mut maxidx);
    }
    let range = match by {
        By::Rank => match (parse_i64(args.get(minidx)), parse_i64(args.get(maxidx))) {
            (Some(a), Some(b)) => Range::Rank(a, b),
            _ => return ctx.reply.error(errors::NOT_INTEGER),
        },
        By::Score => match score_range(args.get(minidx), args.get(maxidx)) {
            Ok((a, b)) => Range::Score(a, b),
            Err(e) => return ctx.reply.error(e),
        },
        By::Lex => match lex_range(args.get(minidx), args.get(maxidx)) {
            Ok((a, b)) => Range::Lex(a, b),
            Err(e) => return ctx.reply.error(e),
        },
    };
    if store {
        return range_store(ctx, args, range, rev, limit);
    }
    let z = read_zset!(ctx, args.get(first), |r: &mut Reply<'_>| r.array(0));
    let (a, b) = range.limited(z, rev, limit);
    let reply = &mut ctx.reply;
    let nested = reply.enc.resp3;
    if withscores {
        pairs_header(reply, b - a, nested);
        z.for_range(a, b, rev, |m, s| pair(reply, m, s, nested));
    } else {
        reply.array(b - a);
        z.for_range(a, b, rev, |m, _| reply.bulk(m));
    }
}

/// ZRANGESTORE's end: the range stored at the destination (its old value
/// and TTL gone), or the destination deleted when the range is empty.
fn range_store(
    ctx: &mut Ctx<'_, '_>,
    args: Args<'_>,
    range: Range<'_>,
    rev: bool,
    limit: Option<(i64, i64)>,
) {
    let lim = limits(ctx);
    let (now, acc) = (ctx.now, ctx.access());
    let (ld, ls) = (ctx.locs[0], ctx.locs[1]);
    let (dst, src) = (args.get(1), args.get(2));
    let result = match ctx.locks.shard(ls.gid).lookup_source(src, ls.hash, now, acc) {
        None => {
            ctx.stats.keyspace_misses.add(1);
            None
        }
        Some(e) => {
            ctx.stats.keyspace_hits.add(1);
            let Some(z) = e.zset() else {
                return ctx.reply.error(errors::WRONGTYPE);
            };
            let (a, b) = range.window(z, rev);
            let (a, b) = apply_limit(a, b, limit, rev);
            // As Redis's store handler: sized for the result, each member
            // added (so the encoding follows the limits).
            let mut out = ZSet::new_for(b - a, 0, lim);
            z.for_range(a, b, rev, |m, s| {
                out.insert(m, s, lim);
            });
            Some(out)
        }
    };
    store_result(ctx, dst, ld, result);
}

/// The end of every command that stores a sorted set it computed
/// (ZRANGESTORE, GEOSEARCHSTORE, GEORADIUS's STORE): `z` replaces the
/// destination (its old value and TTL gone), or the destination is
/// deleted when `z` is empty or absent; the reply is its length.
pub(crate) fn store_result(ctx: &mut Ctx<'_, '_>, dst: &[u8], ld: Loc, z: Option<ZSet>) {
    let now = ctx.now;
    let shard = ctx.locks.shard(ld.gid);
    let len = z.as_ref().map_or(0, ZSet::len);
    let old = match z {
        Some(z) if len > 0 => shard.set(dst, ld.hash, Value::ZSet(z), None, now),
        _ => shard.remove(dst, ld.hash, now),
    };
    ctx.reply.int(len as i64);
    drop(old);
}

pub(super) fn zrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 1, false, None, None)
}

pub(super) fn zrangestore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 2, true, None, None)
}

pub(super) fn zrevrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 1, false, Some(By::Rank), Some(true))
}

pub(super) fn zrangebyscore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 1, false, Some(By::Score), Some(false))
}

pub(super) fn zrevrangebyscore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 1, false, Some(By::Score), Some(true))
}

pub(super) fn zrangebylex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 1, false, Some(By::Lex), Some(false))
}

pub(super) fn zrevrangebylex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zrange_generic(ctx, args, 1, false, Some(By::Lex), Some(true))
}

// ----------------------------------------------------------- ZREMRANGE --

/// ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX: the range parsed
/// first, then the members removed (recorded as a ZREM of them).
fn zremrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>, by: By) {
    let (min, max) = (args.get(2), args.get(3));
    let range = match by {
        By::Rank => match (parse_i64(min), parse_i64(max)) {
            (Some(a), Some(b)) => Range::Rank(a, b),
            _ => return ctx.reply.error(errors::NOT_INTEGER),
        },
        By::Score => match score_range(min, max) {
            Ok((a, b)) => Range::Score(a, b),
            Err(e) => return ctx.reply.error(e),
        },
        By::Lex => match lex_range(min, max) {
            Ok((a, b)) => Range::Lex(a, b),
            Err(e) => return ctx.reply.error(e),
        },
    };
    let key = args.get(1);
    let r = edit_zset(ctx, 0, key, || None, |z, edit, _| {
        let (a, b) = range.window(z, false);
        let mut gone: Vec<Box<[u8]>> = Vec::with_capacity(b - a);
        z.remove_range(a, b, |m, _| gone.push(boxed(m)));
        super::super::removed(edit, gone.len(), || Effect::ZRem { key: boxed(key), members: gone })
    });
    super::super::reply_count(ctx, r);
}

pub(super) fn zremrangebyrank(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zremrange(ctx, args, By::Rank)
}

pub(super) fn zremrangebyscore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zremrange(ctx, args, By::Score)
}

pub(super) fn zremrangebylex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    zremrange(ctx, args, By::Lex)
}
