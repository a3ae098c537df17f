//! SORT and SORT_RO over lists, sets and sorted sets, as Redis's `sort.c`
//! does them:
//! parse, read the elements, weigh them (the element itself, or the
//! string or hash field a `BY` pattern names), sort, and reply or STORE
//! the elements or what `GET` patterns name.
//!
//! `BY` and `GET` patterns name keys that only the elements' contents
//! tell, anywhere in the database, so SORT locks for itself: the source
//! and destination shards when no pattern reads other keys, every shard
//! of the client's database when one does (taken in ascending order, so
//! no deadlock), for one atomic step as in Redis.
//!
//! Lists and sorted sets have an order of their own (a sorted set's is by
//! score), which `BY` a pattern without `*` keeps (reversed by DESC, then
//! cut by LIMIT); a set's is its table's, so a set is sorted anyway when
//! the result is stored.
//!
//! Non-goals: the locale's collation for ALPHA (Redis's `strcoll` under the C locale, which Redis runs in by
//! default, is a byte comparison, as here).

use crate::messaging::notify::ev;
use std::borrow::Cow;
use std::cmp::Ordering;

use tern_resp::{parse_i64, Args};
use tern_store::{End, EntryExt, List, Value, ValueRef};

use super::keyspec::{index, ks, range, Begin, Find, Key, ACCESS, OW, RO, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("sort", -2, WRITE | DENYOOM | MANUAL_LOCKS, SORT_KEYS, sort)
        .event(ev::SORTSTORE)
        .doc("generic", "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", "1.0.0", "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).")
        .acl(&["write", "set", "sortedset", "list", "slow", "dangerous"])
        .key_finder(sort_keys),
    CommandSpec::new("sort_ro", -2, READONLY | MANUAL_LOCKS, SORT_RO_KEYS, sort_ro)
        .doc("generic", "Returns the sorted elements of a list, a set, or a sorted set.", "7.0.0", "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).")
        .acl(&["read", "set", "sortedset", "list", "slow", "dangerous"])
        .key_finder(sort_ro_keys),
];

const BY_GET_NOTE: &str = "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort";
const STORE_NOTE: &str = "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array";

static SORT_KEYS: &[super::keyspec::KeySpec] = &[
    ks(RO | ACCESS, index(1), range(0, 1, 0)),
    ks(RO | ACCESS, Begin::Unknown, Find::Unknown).notes(BY_GET_NOTE),
    ks(OW | UPDATE, Begin::Unknown, Find::Unknown).notes(STORE_NOTE),
];

static SORT_RO_KEYS: &[super::keyspec::KeySpec] =
    &[ks(RO | ACCESS, index(1), range(0, 1, 0)), ks(RO | ACCESS, Begin::Unknown, Find::Unknown).notes(BY_GET_NOTE)];

/// Redis's `sortGetKeys`: the sorted key, and the last STORE's key,
/// skipping the arguments of LIMIT, GET and BY.
fn sort_keys(args: Args<'_>) -> Vec<Key> {
    let mut keys = vec![Key { pos: 1, flags: RO | ACCESS }];
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        let a = args.get(i);
        if a.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"get") || a.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"store") && i + 1 < args.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store.map(|pos| Key { pos, flags: OW | UPDATE }));
    keys
}

fn sort_ro_keys(_args: Args<'_>) -> Vec<Key> {
    vec![Key { pos: 1, flags: RO | ACCESS }]
}

/// What the arguments asked for.
struct Options<'a> {
    desc: bool,
    alpha: bool,
    limit: Option<(i64, i64)>,
    by: Option<&'a [u8]>,
    /// BY a pattern without `*`: keep the elements' own order.
    dontsort: bool,
    gets: Vec<&'a [u8]>,
    store: Option<&'a [u8]>,
}

fn parse(args: Args<'_>, ro: bool) -> Result<Options<'_>, &'static str> {
    let mut o = Options { desc: false, alpha: false, limit: None, by: None, dontsort: false, gets: Vec::new(), store: None };
    let mut j = 2;
    while j < args.len() {
        let a = args.get(j);
        let left = args.len() - j - 1;
        if a.eq_ignore_ascii_case(b"asc") {
            o.desc = false;
        } else if a.eq_ignore_ascii_case(b"desc") {
            o.desc = true;
        } else if a.eq_ignore_ascii_case(b"alpha") {
            o.alpha = true;
        } else if a.eq_ignore_ascii_case(b"limit") && left >= 2 {
            let (Some(start), Some(count)) = (parse_i64(args.get(j + 1)), parse_i64(args.get(j + 2))) else {
                return Err(errors::NOT_INTEGER);
            };
            o.limit = Some((start, count));
            j += 2;
        } else if !ro && a.eq_ignore_ascii_case(b"store") && left >= 1 {
            o.store = Some(args.get(j + 1));
            j += 1;
        } else if a.eq_ignore_ascii_case(b"by") && left >= 1 {
            let p = args.get(j + 1);
            o.by = Some(p);
            o.dontsort = !p.contains(&b'*');
            j += 1;
        } else if a.eq_ignore_ascii_case(b"get") && left >= 1 {
            o.gets.push(args.get(j + 1));
            j += 1;
        } else {
            return Err(errors::SYNTAX);
        }
        j += 1;
    }
    Ok(o)
}

/// A pattern's key and hash field for `element` (Redis's
/// `lookupKeyByPattern`): the first `*` replaced by the element, and what
/// follows a `->` after it, if anything does, as the field. None when
/// the pattern has no `*`.
fn substitute(pattern: &[u8], element: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let star = pattern.iter().position(|&c| c == b'*')?;
    let after = &pattern[star + 1..];
    let arrow = after.windows(2).position(|w| w == b"->").filter(|&i| i + 2 < after.len());
    let (post, field) = match arrow {
        Some(i) => (&after[..i], Some(after[i + 2..].to_vec())),
        None => (after, None),
    };
    let mut key = Vec::with_capacity(star + element.len() + post.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(post);
    Some((key, field))
}

/// A weight as Redis's `getDoubleFromObject` takes it: `strtod` over the
/// whole string, not empty, no leading space, not NaN, and not out of a
/// double's range (an overflow, or an underflow to zero).
fn weight(b: &[u8]) -> Option<f64> {
    if b.is_empty() || matches!(b[0], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        return None;
    }
    let t = b;
    let s = std::str::from_utf8(t).ok()?;
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let v = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if let Some(hex) = lower.strip_prefix("0x") {
        // strtod reads hexadecimal too; integers are what clients store.
        if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        hex.bytes().fold(0.0f64, |acc, c| acc * 16.0 + f64::from((c as char).to_digit(16).unwrap_or(0)))
    } else {
        if body.is_empty() || body.starts_with(['+', '-']) || !body.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+')) {
            return None;
        }
        let v: f64 = body.parse().ok()?;
        let nonzero = body.split(['e', 'E']).next().is_some_and(|m| m.bytes().any(|c| matches!(c, b'1'..=b'9')));
        if v.is_infinite() || (nonzero && v == 0.0) {
            return None;
        }
        v
    };
    Some(if neg { -v } else { v })
}

fn sort(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    sort_generic(ctx, args, false)
}

fn sort_ro(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    sort_generic(ctx, args, true)
}

/// What a pattern names for one element: bytes, or nothing.
fn lookup(ctx: &mut Ctx<'_, '_>, pattern: &[u8], element: &[u8]) -> Option<Vec<u8>> {
    if pattern == b"#" {
        return Some(element.to_vec());
    }
    let (key, field) = substitute(pattern, element)?;
    let loc = ctx.ks.locate(ctx.client.db, &key);
    let e = ctx.locks.shard(loc.gid).get(&key, loc.hash, ctx.now)?;
    match (e.value(), field) {
        (ValueRef::Str(s), None) => Some(s.to_vec()),
        (ValueRef::Hash(h), Some(f)) => h.get(&f).map(<[u8]>::to_vec),
        _ => None,
    }
}

fn sort_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, ro: bool) {
    let mut o = match parse(args, ro) {
        Ok(o) => o,
        Err(e) => return ctx.reply.error(e),
    };
    let db = ctx.client.db;
    let key = args.get(1);
    let src = ctx.ks.locate(db, key);
    let dst = o.store.map(|k| ctx.ks.locate(db, k));
    // Patterns other than `#` read other keys: the whole database then.
    let reads_others = (o.by.is_some() && !o.dontsort) || o.gets.iter().any(|g| *g != b"#");
    if reads_others {
        ctx.locks.acquire(ctx.ks.db_gids(db));
    } else {
        ctx.locks.acquire([src.gid].into_iter().chain(dst.map(|d| d.gid)));
    }
    let (now, acc) = (ctx.now, ctx.access());
    let found = ctx.locks.shard(src.gid).lookup_source(key, src.hash, now, acc).map(|e| match e.value() {
        ValueRef::List(l) => Ok((true, l.iter().map(Cow::into_owned).collect::<Vec<_>>())),
        ValueRef::Set(s) => Ok((false, s.iter().map(|m| m.to_vec()).collect())),
        ValueRef::ZSet(z) => Ok((true, z.iter().map(|(m, _)| m.to_vec()).collect())),
        _ => Err(errors::WRONGTYPE),
    });
    // Whether the elements come in an order of their own (a list's, or a
    // sorted set's by score).
    let (ordered, mut elems) = match found {
        None => {
            ctx.stats.keyspace_misses.add(1);
            (true, Vec::new())
        }
        Some(Err(e)) => {
            ctx.locks.release();
            return ctx.reply.error(e);
        }
        Some(Ok(x)) => {
            ctx.stats.keyspace_hits.add(1);
            x
        }
    };
    // A set's order is its table's: stored or replicated results must not
    // depend on it, so they are sorted (Redis does the same).
    if o.dontsort && !ordered && o.store.is_some() {
        o.dontsort = false;
        o.alpha = true;
        o.by = None;
    }
    let len = elems.len() as i64;
    let (lstart, lcount) = o.limit.unwrap_or((0, -1));
    let mut start = lstart.max(0);
    let mut end = if lcount < 0 { len - 1 } else { start.saturating_add(lcount) - 1 };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    if o.dontsort && ordered && o.desc {
        elems.reverse();
    }
    if !o.dontsort {
        let by = o.by;
        let mut keyed: Vec<(Vec<u8>, Option<Vec<u8>>, f64)> = Vec::with_capacity(elems.len());
        let mut bad = false;
        for e in elems.drain(..) {
            let byval = match by {
                Some(p) => lookup(ctx, p, &e),
                None => None,
            };
            let score = if o.alpha {
                0.0
            } else {
                match (by, &byval) {
                    (Some(_), None) => 0.0,
                    (Some(_), Some(v)) => weight(v).unwrap_or_else(|| {
                        bad = true;
                        0.0
                    }),
                    (None, _) => weight(&e).unwrap_or_else(|| {
                        bad = true;
                        0.0
                    }),
                }
            };
            keyed.push((e, byval, score));
        }
        if bad {
            ctx.locks.release();
            return ctx.reply.error(errors::SORT_NOT_DOUBLE);
        }
        let cmp = |a: &(Vec<u8>, Option<Vec<u8>>, f64), b: &(Vec<u8>, Option<Vec<u8>>, f64)| -> Ordering {
            let c = if !o.alpha {
                // Equal weights fall back to the elements, so the result
                // is deterministic.
                a.2.partial_cmp(&b.2).unwrap_or(Ordering::Equal).then_with(|| a.0.cmp(&b.0))
            } else if by.is_some() {
                // A missing weight sorts first.
                a.1.cmp(&b.1)
            } else {
                a.0.cmp(&b.0)
            };
            if o.desc {
                c.reverse()
            } else {
                c
            }
        };
        keyed.sort_by(cmp);
        elems = keyed.into_iter().map(|k| k.0).collect();
    }
    let picked: &[Vec<u8>] = if end >= start && start >= 0 { &elems[start as usize..=end as usize] } else { &[] };
    let per = o.gets.len().max(1);
    let outputlen = picked.len() * per;
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(outputlen);
    for e in picked {
        if o.gets.is_empty() {
            out.push(Some(e.clone()));
        }
        for g in &o.gets {
            out.push(lookup(ctx, g, e));
        }
    }
    match (o.store, dst) {
        (Some(dkey), Some(d)) => {
            let lim = super::lists::limits(ctx);
            let shard = ctx.locks.shard(d.gid);
            let old = if out.is_empty() {
                shard.remove(dkey, d.hash, now)
            } else {
                let mut l = List::new();
                l.push_many(End::Right, out.iter().map(|v| v.as_deref().unwrap_or(b"")), lim);
                shard.set(dkey, d.hash, Value::List(l), None, now)
            };
            ctx.locks.release();
            drop(old);
            ctx.reply.int(outputlen as i64);
        }
        _ => {
            ctx.locks.release();
            ctx.reply.array(outputlen);
            for v in out {
                match v {
                    Some(b) => ctx.reply.bulk(&b),
                    None => ctx.reply.null(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_substitute_the_first_star_and_split_the_field() {
        assert_eq!(substitute(b"w_*", b"3"), Some((b"w_3".to_vec(), None)));
        assert_eq!(substitute(b"h_*->f", b"3"), Some((b"h_3".to_vec(), Some(b"f".to_vec()))));
        assert_eq!(substitute(b"h_*->", b"3"), Some((b"h_3->".to_vec(), None)));
        assert_eq!(substitute(b"a->b*c", b"x"), Some((b"a->bxc".to_vec(), None)));
        assert_eq!(substitute(b"*_*", b"x"), Some((b"x_*".to_vec(), None)));
        assert_eq!(substitute(b"nosort", b"x"), None);
    }

    #[test]
    fn weights_read_as_strtod_does() {
        assert_eq!(weight(b"1.5"), Some(1.5));
        assert_eq!(weight(b"1e-310"), Some(1e-310));
        assert_eq!(weight(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(weight(b"0x10"), Some(16.0));
        assert_eq!(weight(b"1e3"), Some(1000.0));
        for bad in [&b"1 "[..], b"", b" 1", b"abc", b"nan", b"1e400", b"1e-400", b" ", b"0x", b"--1"] {
            assert_eq!(weight(bad), None, "{bad:?}");
        }
    }
}
