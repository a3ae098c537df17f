//! Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms and
//! ZINTERCARD, over sorted sets and plain sets (members scoring 1).

use tern_resp::{parse_i64, string2d, Args};
use tern_store::{EntryExt, Set, Value, ZSet};

use super::super::hashes::is;
use super::super::Ctx;
use super::{limits, pair, pairs_header};
use crate::errors;

// ------------------------------------------------------------- algebra --

#[derive(Clone, Copy, PartialEq, Eq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

/// How the scores of a member found in several inputs combine
/// (`AGGREGATE`); COUNT sums the weights of the inputs holding it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
    Count,
}

/// Redis's `zunionInterAggregate`: a sum of +inf and -inf is 0.
fn aggregate(target: &mut f64, val: f64, agg: Aggregate) {
    match agg {
        Aggregate::Sum | Aggregate::Count => {
            *target += val;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Aggregate::Min => *target = if val < *target { val } else { *target },
        Aggregate::Max => *target = if val > *target { val } else { *target },
    }
}

/// One input of the algebra: a sorted set, a set (every member scoring
/// 1), or nothing (an absent key).
#[derive(Clone, Copy)]
enum Src<'a> {
    Z(&'a ZSet),
    S(&'a Set),
    Absent,
}

impl<'a> Src<'a> {
    fn len(&self) -> usize {
        match self {
            Src::Z(z) => z.len(),
            Src::S(s) => s.len(),
            Src::Absent => 0,
        }
    }

    fn score(&self, m: &[u8]) -> Option<f64> {
        match self {
            Src::Z(z) => z.score(m),
            Src::S(s) => s.contains(m).then_some(1.0),
            Src::Absent => None,
        }
    }

    /// Every member with its score, in the input's own order.
    fn each(&self, mut f: impl FnMut(&[u8], f64)) {
        match self {
            Src::Z(z) => z.for_range(0, z.len(), false, f),
            Src::S(s) => s.iter().for_each(|m| m.with_bytes(|b| f(b, 1.0))),
            Src::Absent => {}
        }
    }
}

/// Redis's `zunionInterDiffGenericCommand`: ZUNION, ZINTER, ZDIFF, their
/// STORE forms and ZINTERCARD. `at` is the numkeys index; `store`: the
/// destination is argument 1; `card`: ZINTERCARD (a count, LIMIT).
fn algebra(ctx: &mut Ctx<'_, '_>, args: Args<'_>, at: usize, store: bool, op: SetOp, card: bool) {
    let n = match parse_i64(args.get(at)) {
        None => return ctx.reply.error(errors::NOT_INTEGER),
        Some(n) if n < 1 => return ctx.reply.error(errors::zset_need_keys(&ctx.cmd.fullname)),
        Some(n) if n > (args.len() - at - 1) as i64 => return ctx.reply.error(errors::SYNTAX),
        Some(n) => n as usize,
    };
    let loc0 = usize::from(store);
    if ctx.locs.len() < loc0 + n {
        return ctx.reply.error(errors::SYNTAX);
    }
    // Every input is looked up (and its type checked) before the options
    // are read, as Redis does.
    let (now, acc) = (ctx.now, ctx.access());
    for i in 0..n {
        let loc = ctx.locs[loc0 + i];
        match ctx.locks.shard(loc.gid).lookup_source(args.get(at + 1 + i), loc.hash, now, acc) {
            None => ctx.stats.keyspace_misses.add(1),
            Some(e) => {
                ctx.stats.keyspace_hits.add(1);
                if e.zset().is_none() && e.set().is_none() {
                    return ctx.reply.error(errors::WRONGTYPE);
                }
            }
        }
    }
    let mut weights = vec![1.0f64; n];
    let mut agg = Aggregate::Sum;
    let mut withscores = false;
    let mut limit = 0usize;
    let mut j = at + 1 + n;
    while j < args.len() {
        let a = args.get(j);
        let remaining = args.len() - j;
        if op != SetOp::Diff && !card && remaining > n && is(a, b"weights") {
            for (i, w) in weights.iter_mut().enumerate() {
                match string2d(args.get(j + 1 + i)) {
                    Some(v) => *w = v,
                    None => return ctx.reply.error(errors::ZSET_WEIGHT_NOT_FLOAT),
                }
            }
            j += 1 + n;
        } else if op != SetOp::Diff && !card && remaining >= 2 && is(a, b"aggregate") {
            let v = args.get(j + 1);
            agg = if is(v, b"sum") {
                Aggregate::Sum
            } else if is(v, b"min") {
                Aggregate::Min
            } else if is(v, b"max") {
                Aggregate::Max
            } else if is(v, b"count") {
                Aggregate::Count
            } else {
                return ctx.reply.error(errors::SYNTAX);
            };
            j += 2;
        } else if !store && !card && is(a, b"withscores") {
            withscores = true;
            j += 1;
        } else if card && remaining >= 2 && is(a, b"limit") {
            match parse_i64(args.get(j + 1)) {
                Some(l) if l >= 0 => limit = usize::try_from(l).unwrap_or(usize::MAX),
                _ => return ctx.reply.error(errors::LIMIT_NEGATIVE),
            }
            j += 2;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
    }
    let lim = limits(ctx);
    let locks = &*ctx.locks;
    let mut srcs: Vec<(Src<'_>, f64)> = (0..n)
        .map(|i| {
            let (loc, key) = (ctx.locs[loc0 + i], args.get(at + 1 + i));
            let e = locks.shard_ref(loc.gid).and_then(|sh| sh.peek(key, loc.hash, now));
            let src = match e {
                Some(e) => match (e.zset(), e.set()) {
                    (Some(z), _) => Src::Z(z),
                    (None, Some(s)) => Src::S(s),
                    _ => Src::Absent,
                },
                None => Src::Absent,
            };
            (src, weights[i])
        })
        .collect();
    // The smallest input first (a stable sort, as glibc's qsort is): the
    // order the scores of a member are combined in.
    if op != SetOp::Diff {
        srcs.sort_by_key(|(s, _)| s.len());
    }
    let first = |s: f64, w: f64| {
        if agg == Aggregate::Count {
            w
        } else {
            let v = w * s;
            if v.is_nan() {
                0.0
            } else {
                v
            }
        }
    };
    let mut out: Vec<(Vec<u8>, f64)> = Vec::new();
    let mut count = 0usize;
    match op {
        SetOp::Inter => {
            let (base, w0) = srcs[0];
            if base.len() > 0 {
                let mut done = false;
                base.each(|m, s| {
                    if done {
                        return;
                    }
                    let mut score = first(s, w0);
                    for (src, w) in &srcs[1..] {
                        match src.score(m) {
                            Some(v) => aggregate(&mut score, first(v, *w), agg),
                            None => return,
                        }
                    }
                    if card {
                        count += 1;
                        done = limit > 0 && count >= limit;
                    } else {
                        out.push((m.to_vec(), score));
                    }
                });
            }
        }
        SetOp::Union => {
            let mut acc: hashbrown::HashMap<Vec<u8>, f64> = hashbrown::HashMap::new();
            for (src, w) in &srcs {
                src.each(|m, s| {
                    let v = first(s, *w);
                    match acc.get_mut(m) {
                        Some(t) => aggregate(t, v, agg),
                        None => {
                            acc.insert(m.to_vec(), v);
                        }
                    }
                });
            }
            out.extend(acc);
        }
        SetOp::Diff => {
            let (base, _) = srcs[0];
            base.each(|m, s| {
                if srcs[1..].iter().all(|(src, _)| src.score(m).is_none()) {
                    out.push((m.to_vec(), s));
                }
            });
        }
    }
    drop(srcs);
    if card {
        return ctx.reply.int(count as i64);
    }
    let longest = out.iter().map(|x| x.0.len()).max().unwrap_or(0);
    // Built as Redis converts its result (`zsetConvertToListpackIfNeeded`).
    let mut result = ZSet::new_for(out.len(), longest, lim);
    for (m, s) in &out {
        result.insert(m, *s, lim);
    }
    drop(out);
    if store {
        let (loc, dst) = (ctx.locs[0], args.get(1));
        let len = result.len();
        let shard = ctx.locks.shard(loc.gid);
        let old = if len == 0 { shard.remove(dst, loc.hash, now) } else { shard.set(dst, loc.hash, Value::ZSet(result), None, now) };
        ctx.reply.int(len as i64);
        drop(old);
        return;
    }
    let reply = &mut ctx.reply;
    let nested = reply.enc.resp3;
    let len = result.len();
    if withscores {
        pairs_header(reply, len, nested);
        result.for_range(0, len, false, |m, s| pair(reply, m, s, nested));
    } else {
        reply.array(len);
        result.for_range(0, len, false, |m, _| reply.bulk(m));
    }
}

pub(super) fn zunion(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 1, false, SetOp::Union, false)
}

pub(super) fn zinter(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 1, false, SetOp::Inter, false)
}

pub(super) fn zdiff(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 1, false, SetOp::Diff, false)
}

pub(super) fn zunionstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 2, true, SetOp::Union, false)
}

pub(super) fn zinterstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 2, true, SetOp::Inter, false)
}

pub(super) fn zdiffstore(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 2, true, SetOp::Diff, false)
}

pub(super) fn zintercard(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    algebra(ctx, args, 1, false, SetOp::Inter, true)
}
