//! List commands: LPUSH and the rest of Redis's list family, and the
//! blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP), which take the
//! non-blocking path here and wait through `cmd::blocking` when there is
//! nothing to take.
//!
//! The value lives in `tern_store::List` (one compact pack while small, a
//! quicklist of packs when large, converted both ways at
//! `list-max-listpack-size` as Redis does). Every change goes through the
//! shard's write path ([`Shard::modify`]), which measures the list's memory
//! before and after, removes a list left empty, tells WATCHers and notes the
//! key ready for clients blocked on it.
//!
//! Arguments are checked in Redis's order (some before the key is looked
//! up, some after), because that order decides which error or empty reply a
//! client gets.

use crate::messaging::notify::{self, ev};
use tern_resp::{parse_i64, Args};
use tern_store::{Access, Edit, Effect, End, EntryExt, List, ListEdit, ListLimits, ListMut, Loc, Shard, Value};

use super::blocking::{self, Timeout};
use super::keyspec::{index, keynum, ks, range, ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, Reply};
use crate::errors::{self, c_str};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("lpush", -3, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], lpush)
        .event(ev::LPUSH)
        .doc("list", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .acl(&["write", "list", "fast"]),
    CommandSpec::new("rpush", -3, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], rpush)
        .event(ev::RPUSH)
        .doc("list", "Appends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .acl(&["write", "list", "fast"]),
    CommandSpec::new("lpushx", -3, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], lpushx)
        .event(ev::LPUSH)
        .doc("list", "Prepends one or more elements to a list only when the list exists.", "2.2.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .acl(&["write", "list", "fast"]),
    CommandSpec::new("rpushx", -3, WRITE | DENYOOM | FAST, &[ks(RW | INSERT, index(1), range(0, 1, 0))], rpushx)
        .event(ev::RPUSH)
        .doc("list", "Appends an element to a list only when the list exists.", "2.2.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .acl(&["write", "list", "fast"]),
    CommandSpec::new("lpop", -2, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], lpop)
        .event(ev::LPOP)
        .doc("list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", "1.0.0", "O(N) where N is the number of elements returned")
        .history(&[("6.2.0", "Added the `count` argument.")])
        .acl(&["write", "list", "fast"]),
    CommandSpec::new("rpop", -2, WRITE | FAST, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0))], rpop)
        .event(ev::RPOP)
        .doc("list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", "1.0.0", "O(N) where N is the number of elements returned")
        .history(&[("6.2.0", "Added the `count` argument.")])
        .acl(&["write", "list", "fast"]),
    CommandSpec::new("llen", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], llen)
        .doc("list", "Returns the length of a list.", "1.0.0", "O(1)")
        .acl(&["read", "list", "fast"]),
    CommandSpec::new("lrange", 4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], lrange)
        .doc("list", "Returns a range of elements from a list.", "1.0.0", "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.")
        .acl(&["read", "list", "slow"]),
    CommandSpec::new("lindex", 3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], lindex)
        .doc("list", "Returns an element from a list by its index.", "1.0.0", "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).")
        .acl(&["read", "list", "slow"]),
    CommandSpec::new("lset", 4, WRITE | DENYOOM, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], lset)
        .event(ev::LSET)
        .doc("list", "Sets the value of an element in a list by its index.", "1.0.0", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("linsert", 5, WRITE | DENYOOM, &[ks(RW | INSERT, index(1), range(0, 1, 0))], linsert)
        .event(ev::LINSERT)
        .doc("list", "Inserts an element before or after another element in a list.", "2.2.0", "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("lrem", 4, WRITE, &[ks(RW | DELETE, index(1), range(0, 1, 0))], lrem)
        .event(ev::LREM)
        .doc("list", "Removes elements from a list. Deletes the list if the last element was removed.", "1.0.0", "O(N+M) where N is the length of the list and M is the number of elements removed.")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("ltrim", 4, WRITE, &[ks(RW | DELETE, index(1), range(0, 1, 0))], ltrim)
        .event(ev::LTRIM)
        .doc("list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", "1.0.0", "O(N) where N is the number of elements to be removed by the operation.")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("lpos", -3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], lpos)
        .doc("list", "Returns the index of matching elements in a list.", "6.0.6", "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.")
        .acl(&["read", "list", "slow"]),
    CommandSpec::new("lmove", 5, WRITE | DENYOOM, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(RW | INSERT, index(2), range(0, 1, 0))], lmove)
        .event(ev::LPOP)
        .doc("list", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", "6.2.0", "O(1)")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("rpoplpush", 3, WRITE | DENYOOM, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(RW | INSERT, index(2), range(0, 1, 0))], rpoplpush)
        .event(ev::RPOP)
        .doc("list", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", "1.2.0", "O(1)")
        .deprecated("6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("lmpop", -4, WRITE, &[ks(RW | ACCESS | DELETE, index(1), keynum(0, 1, 1))], lmpop)
        .event(ev::LPOP)
        .doc("list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", "7.0.0", "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        .acl(&["write", "list", "slow"]),
    CommandSpec::new("blpop", -3, WRITE | BLOCKING, &[ks(RW | ACCESS | DELETE, index(1), range(-2, 1, 0))], blpop)
        .event(ev::LPOP)
        .doc("list", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "2.0.0", "O(N) where N is the number of provided keys.")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .acl(&["write", "list", "slow", "blocking"]),
    CommandSpec::new("brpop", -3, WRITE | BLOCKING, &[ks(RW | ACCESS | DELETE, index(1), range(-2, 1, 0))], brpop)
        .event(ev::RPOP)
        .doc("list", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "2.0.0", "O(N) where N is the number of provided keys.")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .acl(&["write", "list", "slow", "blocking"]),
    CommandSpec::new("blmove", 6, WRITE | DENYOOM | BLOCKING, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(RW | INSERT, index(2), range(0, 1, 0))], blmove)
        .event(ev::LPOP)
        .doc("list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", "6.2.0", "O(1)")
        .acl(&["write", "list", "slow", "blocking"]),
    CommandSpec::new("brpoplpush", 4, WRITE | DENYOOM | BLOCKING, &[ks(RW | ACCESS | DELETE, index(1), range(0, 1, 0)), ks(RW | INSERT, index(2), range(0, 1, 0))], brpoplpush)
        .event(ev::RPOP)
        .doc("list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", "2.2.0", "O(1)")
        .deprecated("6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .acl(&["write", "list", "slow", "blocking"]),
    CommandSpec::new("blmpop", -5, WRITE | BLOCKING, &[ks(RW | ACCESS | DELETE, index(2), keynum(0, 1, 1))], blmpop)
        .event(ev::LPOP)
        .doc("list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "7.0.0", "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        .acl(&["write", "list", "slow", "blocking"]),
];

/// The node limits and compression depth a list changed now follows.
pub(super) fn limits(ctx: &Ctx<'_, '_>) -> ListLimits {
    let s = &ctx.srv.settings;
    ListLimits { fill: s.list_max_listpack_size(), depth: usize::try_from(s.list_compress_depth()).unwrap_or(0) }
}

/// [`super::edit_typed`] on a list (`create`: an empty one if absent),
/// wherever the key keeps it (see [`ListMut`]).
fn edit_list<R>(
    shard: &mut Shard,
    key: &[u8],
    hash: u64,
    now: u64,
    create: bool,
    acc: Access,
    f: impl FnOnce(&mut ListMut<'_>, &mut Edit) -> R,
) -> Result<Option<R>, &'static str> {
    let r = shard.modify_or_create(key, hash, now, acc, || create.then(|| Value::List(List::new())), |e, edit| {
        let mut l = e.list_mut().ok_or(errors::WRONGTYPE)?;
        let r = f(&mut l, edit);
        l.finish(edit);
        Ok(r)
    });
    r.transpose()
}

/// The record of an in-place edit of the list at `key`.
fn list_effect(key: &[u8], edit: ListEdit) -> Effect {
    Effect::List { key: key.into(), edit }
}

/// [`read_typed`] for a list.
macro_rules! read_list {
    ($ctx:ident, $key:expr, $missing:expr) => {
        read_typed!($ctx, $key, list, $missing)
    };
}

/// LEFT or RIGHT (Redis's `getListPositionFromObjectOrReply`).
fn end_arg(arg: &[u8]) -> Option<End> {
    let a = c_str(arg);
    if a.eq_ignore_ascii_case(b"left") {
        Some(End::Left)
    } else if a.eq_ignore_ascii_case(b"right") {
        Some(End::Right)
    } else {
        None
    }
}

fn push_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, end: End, create: bool) {
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let shard = ctx.locks.shard(loc.gid);
    let len = edit_list(shard, key, loc.hash, now, create, acc, |l, edit| {
        l.push_many(end, (2..args.len()).map(|i| args.get(i)), lim);
        edit.emit(|| list_effect(key, ListEdit::Push { end, elems: args.tail(2).iter().map(Into::into).collect() }));
        edit.changes(args.len() - 2);
        l.len()
    });
    match len {
        Err(m) => ctx.reply.error(m),
        Ok(n) => ctx.reply.int(n.unwrap_or(0) as i64),
    }
}

fn lpush(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    push_generic(ctx, args, End::Left, true)
}

fn rpush(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    push_generic(ctx, args, End::Right, true)
}

fn lpushx(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    push_generic(ctx, args, End::Left, false)
}

fn rpushx(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    push_generic(ctx, args, End::Right, false)
}

/// Pops up to `count` elements from the list at `loc`, writing each as a
/// bulk reply after `header(n)` (with n the number that will follow).
/// None if the key is absent or not a list (`Err` for the latter).
fn pop_into(
    ctx: &mut Ctx<'_, '_>,
    loc: Loc,
    key: &[u8],
    end: End,
    count: usize,
    header: impl FnOnce(&mut Reply<'_>, usize),
) -> Result<Option<usize>, &'static str> {
    let acc = ctx.access();
    let lim = limits(ctx);
    let now = ctx.now;
    notify::write_as(pop_event(end));
    let reply = &mut ctx.reply;
    let shard = ctx.locks.shard(loc.gid);
    edit_list(shard, key, loc.hash, now, false, acc, |l, edit| {
        let n = count.min(l.len());
        header(reply, n);
        l.pop_with(end, n, lim, |b| reply.bulk(b));
        if n > 0 {
            edit.emit(|| list_effect(key, ListEdit::Pop { end, count: n }));
            edit.changes(n);
        }
        n
    })
}

fn pop_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, end: End) {
    if args.len() > 3 {
        return ctx.arity_error();
    }
    let count = match args.len() {
        3 => match parse_i64(args.get(2)) {
            Some(n) if n >= 0 => Some(n as usize),
            _ => return ctx.reply.error(errors::MUST_BE_POSITIVE),
        },
        _ => None,
    };
    let (loc, key) = (ctx.locs[0], args.get(1));
    let r = pop_into(ctx, loc, key, end, count.unwrap_or(1), |r, n| {
        if count.is_some() {
            r.array(n)
        } else if n == 0 {
            r.null()
        }
    });
    match r {
        Err(m) => ctx.reply.error(m),
        Ok(Some(_)) => {}
        Ok(None) if count.is_some() => ctx.reply.null_array(),
        Ok(None) => ctx.reply.null(),
    }
}

fn lpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    pop_generic(ctx, args, End::Left)
}

fn rpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    pop_generic(ctx, args, End::Right)
}

fn llen(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let l = read_list!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    ctx.reply.int(l.len() as i64);
}

/// Redis's index arithmetic: a negative index counts from the end.
fn from_end(i: i64, len: usize) -> i64 {
    if i < 0 {
        i.saturating_add(len as i64)
    } else {
        i
    }
}

fn lrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (Some(start), Some(stop)) = (parse_i64(args.get(2)), parse_i64(args.get(3))) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let l = read_list!(ctx, args.get(1), |r: &mut Reply<'_>| r.array(0));
    let len = l.len();
    let start = from_end(start, len).max(0);
    let stop = from_end(stop, len);
    if start > stop || start >= len as i64 {
        return ctx.reply.array(0);
    }
    let stop = stop.min(len as i64 - 1);
    let (start, n) = (start as usize, (stop - start + 1) as usize);
    ctx.reply.array(n);
    // From the nearer end, as Redis's quicklist iterator does.
    if start > len - 1 - (start + n - 1) {
        let mut tail: Vec<_> = l.iter_rev_from(start + n - 1).take(n).collect();
        tail.reverse();
        for b in tail {
            ctx.reply.bulk(&b);
        }
    } else {
        for b in l.iter_from(start).take(n) {
            ctx.reply.bulk(&b);
        }
    }
}

fn lindex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let l = read_list!(ctx, args.get(1), |r: &mut Reply<'_>| r.null());
    let Some(i) = parse_i64(args.get(2)) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let i = from_end(i, l.len());
    match usize::try_from(i).ok().and_then(|i| l.get(i)) {
        Some(b) => ctx.reply.bulk(&b),
        None => ctx.reply.null(),
    }
}

fn lset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let (index, value) = (parse_i64(args.get(2)), args.get(3));
    let shard = ctx.locks.shard(loc.gid);
    let r = edit_list(shard, key, loc.hash, now, false, acc, |l, edit| {
        let i = from_end(index.ok_or(errors::NOT_INTEGER)?, l.len());
        match usize::try_from(i) {
            Ok(i) if i < l.len() => {
                l.set(i, value, lim);
                edit.emit(|| list_effect(key, ListEdit::Set { index: i, elem: value.into() }));
                Ok(())
            }
            _ => Err(errors::INDEX_OUT_OF_RANGE),
        }
    });
    match r {
        Err(m) | Ok(Some(Err(m))) => ctx.reply.error(m),
        Ok(None) => ctx.reply.error(errors::NO_SUCH_KEY),
        Ok(Some(Ok(()))) => ctx.reply.ok(),
    }
}

fn linsert(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let after = match c_str(args.get(2)) {
        w if w.eq_ignore_ascii_case(b"after") => true,
        w if w.eq_ignore_ascii_case(b"before") => false,
        _ => return ctx.reply.error(errors::SYNTAX),
    };
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let (pivot, value) = (args.get(3), args.get(4));
    let shard = ctx.locks.shard(loc.gid);
    let r = edit_list(shard, key, loc.hash, now, false, acc, |l, edit| {
        let Some(at) = l.iter().position(|e| *e == *pivot) else { return -1 };
        l.insert(at + usize::from(after), value, lim);
        edit.emit(|| list_effect(key, ListEdit::Insert { after, pivot: pivot.into(), elem: value.into() }));
        l.len() as i64
    });
    super::reply_count(ctx, r);
}

fn lrem(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(count) = parse_i64(args.get(2)) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now, value) = (ctx.locs[0], args.get(1), ctx.now, args.get(3));
    let shard = ctx.locks.shard(loc.gid);
    let r = edit_list(shard, key, loc.hash, now, false, acc, |l, edit| {
        let limit = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        let n = l.remove_eq(value, limit, count < 0, lim);
        if n > 0 {
            edit.emit(|| list_effect(key, ListEdit::Rem { count, elem: value.into() }));
        }
        n
    });
    match r {
        Err(m) => ctx.reply.error(m),
        Ok(n) => ctx.reply.int(n.unwrap_or(0) as i64),
    }
}

fn ltrim(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (Some(start), Some(stop)) = (parse_i64(args.get(2)), parse_i64(args.get(3))) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let acc = ctx.access();
    let lim = limits(ctx);
    let (loc, key, now) = (ctx.locs[0], args.get(1), ctx.now);
    let shard = ctx.locks.shard(loc.gid);
    let r = edit_list(shard, key, loc.hash, now, false, acc, |l, edit| {
        let len = l.len();
        let start = from_end(start, len).max(0);
        let stop = from_end(stop, len);
        let (left, right) = if start > stop || start >= len as i64 {
            (len, 0)
        } else {
            let stop = stop.min(len as i64 - 1);
            (start as usize, len - 1 - stop as usize)
        };
        if left + right == 0 {
            return false;
        }
        l.remove_range(len - right, right, lim);
        l.remove_range(0, left, lim);
        edit.emit(|| list_effect(key, ListEdit::Trim { left, right }));
        true
    });
    match r {
        Err(m) => ctx.reply.error(m),
        Ok(trimmed) => {
            // Redis tells of an LTRIM that removed nothing too.
            if trimmed == Some(false) {
                ctx.locks.shard(loc.gid).note_event(key, ev::LTRIM);
            }
            ctx.reply.ok()
        }
    }
}

fn lpos(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (mut rank, mut count, mut maxlen) = (1i64, None::<i64>, 0i64);
    let mut i = 3;
    while i < args.len() {
        let opt = c_str(args.get(i));
        if i + 1 >= args.len() {
            return ctx.reply.error(errors::SYNTAX);
        }
        let Some(v) = parse_i64(args.get(i + 1)) else {
            return ctx.reply.error(errors::NOT_INTEGER);
        };
        if opt.eq_ignore_ascii_case(b"rank") {
            if v == i64::MIN {
                return ctx.reply.error(errors::I64_SYMMETRIC_OUT_OF_RANGE);
            }
            if v == 0 {
                return ctx.reply.error(errors::LPOS_RANK_ZERO);
            }
            rank = v;
        } else if opt.eq_ignore_ascii_case(b"count") {
            if v < 0 {
                return ctx.reply.error(errors::LPOS_COUNT_NEGATIVE);
            }
            count = Some(v);
        } else if opt.eq_ignore_ascii_case(b"maxlen") {
            if v < 0 {
                return ctx.reply.error(errors::LPOS_MAXLEN_NEGATIVE);
            }
            maxlen = v;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        i += 2;
    }
    let l = read_list!(ctx, args.get(1), |r: &mut Reply<'_>| if count.is_some() { r.array(0) } else { r.null() });
    let elem = args.get(2);
    let len = l.len();
    let scan = if maxlen == 0 { len } else { (maxlen as usize).min(len) };
    let want = match count {
        Some(0) => usize::MAX,
        Some(n) => n as usize,
        None => 1,
    };
    let mut skip = rank.unsigned_abs() - 1;
    let mut found: Vec<usize> = Vec::new();
    let mut take = |i: usize, e: &[u8]| {
        if e == elem {
            if skip > 0 {
                skip -= 1;
            } else {
                found.push(i);
            }
        }
        found.len() < want
    };
    if rank > 0 {
        for (i, e) in l.iter().take(scan).enumerate() {
            if !take(i, &e) {
                break;
            }
        }
    } else {
        for (i, e) in l.iter().rev().take(scan).enumerate() {
            if !take(len - 1 - i, &e) {
                break;
            }
        }
    }
    match count {
        Some(_) => {
            ctx.reply.array(found.len());
            for i in found {
                ctx.reply.int(i as i64);
            }
        }
        None => match found.first() {
            Some(&i) => ctx.reply.int(i as i64),
            None => ctx.reply.null(),
        },
    }
}

/// What a move found: the element moved, or nothing to move.
enum Moved {
    Value(Vec<u8>),
    Empty,
}

/// Pops from `src` at `from` and pushes at `to` of `dst` (LMOVE and its
/// kin, blocking or not), replying the element or `empty`'s reply.
/// `dst` is checked to be a list (or absent) before anything is popped.
fn move_element(ctx: &mut Ctx<'_, '_>, args: Args<'_>, from: End, to: End) -> Result<Moved, &'static str> {
    let acc = ctx.access();
    let lim = limits(ctx);
    let now = ctx.now;
    let (ls, ld) = (ctx.locs[0], ctx.locs[1]);
    let (src, dst) = (args.get(1), args.get(2));
    // Redis tells of the push before the pop (and the source's `del`).
    let (push_ev, pop_ev) = (push_event(to), pop_event(from));
    if src == dst {
        // A rotation: the list never stops existing, so its TTL stays.
        let shard = ctx.locks.shard(ls.gid);
        notify::write_as(push_ev);
        let r = edit_list(shard, src, ls.hash, now, false, acc, |l, edit| {
            let v = l.pop(from, lim)?;
            l.push(to, &v, lim);
            edit.emit(|| list_effect(src, ListEdit::Rotate { from, to }));
            edit.then_event(pop_ev);
            Some(v)
        })?;
        return Ok(r.flatten().map_or(Moved::Empty, Moved::Value));
    }
    // The element is read first and pushed, then popped: the writes in
    // the order of Redis's events.
    let v = match ctx.locks.shard(ls.gid).lookup(src, ls.hash, now, acc) {
        None => return Ok(Moved::Empty),
        Some(e) => match e.list() {
            None => return Err(errors::WRONGTYPE),
            Some(l) => match from {
                End::Left => l.get(0),
                End::Right => l.len().checked_sub(1).and_then(|i| l.get(i)),
            }
            .map(|c| c.into_owned()),
        },
    };
    let Some(v) = v else { return Ok(Moved::Empty) };
    if ctx.locks.shard(ld.gid).get(dst, ld.hash, now).is_some_and(|e| e.list().is_none()) {
        return Err(errors::WRONGTYPE);
    }
    let shard = ctx.locks.shard(ld.gid);
    notify::write_as(push_ev);
    edit_list(shard, dst, ld.hash, now, true, acc, |l, edit| {
        l.push(to, &v, lim);
        edit.emit(|| list_effect(dst, ListEdit::Push { end: to, elems: vec![v.as_slice().into()] }));
    })?;
    let shard = ctx.locks.shard(ls.gid);
    notify::write_as(pop_ev);
    edit_list(shard, src, ls.hash, now, false, acc, |l, edit| {
        l.pop(from, lim);
        edit.emit(|| list_effect(src, ListEdit::Pop { end: from, count: 1 }));
        // The move counts once, as Redis counts it: at the push.
        edit.changes(0);
    })?;
    Ok(Moved::Value(v))
}

/// The events of a push at `end` and of a pop from it.
pub(super) fn push_event(end: End) -> tern_store::event::Event {
    match end {
        End::Left => ev::LPUSH,
        End::Right => ev::RPUSH,
    }
}

pub(super) fn pop_event(end: End) -> tern_store::event::Event {
    match end {
        End::Left => ev::LPOP,
        End::Right => ev::RPOP,
    }
}

fn lmove_reply(ctx: &mut Ctx<'_, '_>, r: Result<Moved, &'static str>) {
    match r {
        Err(m) => ctx.reply.error(m),
        Ok(Moved::Value(v)) => ctx.reply.bulk(&v),
        Ok(Moved::Empty) => ctx.reply.null(),
    }
}

fn lmove(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (Some(from), Some(to)) = (end_arg(args.get(3)), end_arg(args.get(4))) else {
        return ctx.reply.error(errors::SYNTAX);
    };
    let r = move_element(ctx, args, from, to);
    lmove_reply(ctx, r)
}

fn rpoplpush(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let r = move_element(ctx, args, End::Right, End::Left);
    lmove_reply(ctx, r)
}

/// LMPOP's, BLMPOP's, ZMPOP's (and BZMPOP's) arguments after the numkeys
/// index `at`: `end` is the LEFT|RIGHT or MIN|MAX word as `end_of` reads it.
pub(super) struct Mpop<E> {
    pub numkeys: usize,
    pub end: E,
    pub count: usize,
}

pub(super) fn parse_mpop<E>(
    args: Args<'_>,
    at: usize,
    end_of: impl Fn(&[u8]) -> Option<E>,
) -> Result<Mpop<E>, &'static str> {
    let numkeys = match parse_i64(args.get(at)) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(errors::NUMKEYS_NOT_POSITIVE),
    };
    let where_at = (at as u64 + 1).saturating_add(numkeys);
    if where_at >= args.len() as u64 {
        return Err(errors::SYNTAX);
    }
    let where_at = where_at as usize;
    let end = end_of(args.get(where_at)).ok_or(errors::SYNTAX)?;
    let mut count = None;
    let mut j = where_at + 1;
    while j < args.len() {
        if count.is_none() && c_str(args.get(j)).eq_ignore_ascii_case(b"count") && j + 1 < args.len() {
            match parse_i64(args.get(j + 1)) {
                Some(n) if n >= 1 => count = Some(n as usize),
                _ => return Err(errors::COUNT_NOT_POSITIVE),
            }
            j += 2;
        } else {
            return Err(errors::SYNTAX);
        }
    }
    Ok(Mpop { numkeys: numkeys as usize, end, count: count.unwrap_or(1) })
}

/// Pops from the first non-empty list of `keys` (arguments `first..`):
/// `[key, [elements]]`. Ok(false) when every key is absent.
fn mpop_first(ctx: &mut Ctx<'_, '_>, args: Args<'_>, first: usize, m: &Mpop<End>) -> Result<bool, &'static str> {
    for i in 0..m.numkeys {
        let (loc, key) = (ctx.locs[i], args.get(first + i));
        let served = pop_into(ctx, loc, key, m.end, m.count, |r, n| {
            r.array(2);
            r.bulk(key);
            r.array(n);
        })?;
        if served.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lmpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let m = match parse_mpop(args, 1, end_arg) {
        Ok(m) if ctx.locs.len() >= m.numkeys => m,
        Ok(_) => return ctx.reply.error(errors::SYNTAX),
        Err(e) => return ctx.reply.error(e),
    };
    match mpop_first(ctx, args, 2, &m) {
        Err(e) => ctx.reply.error(e),
        Ok(true) => {}
        Ok(false) => ctx.reply.null_array(),
    }
}

// ------------------------------------------------------------ blocking --

/// BLPOP / BRPOP: `[key, element]` from the first non-empty key.
fn bpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>, end: End) {
    let timeout = match Timeout::parse(args.get(args.len() - 1), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    let nkeys = args.len() - 2;
    let is_list = |e: &tern_store::Entry| e.list().is_some();
    let took = |ctx: &mut Ctx<'_, '_>, _, loc, key: &[u8]| {
        let r = pop_into(ctx, loc, key, end, 1, |r, n| {
            if n > 0 {
                r.array(2);
                r.bulk(key);
            }
        });
        matches!(r, Ok(Some(_)))
    };
    if blocking::take_first(ctx, args, 1, nkeys, is_list, took) {
        return;
    }
    blocking::wait(ctx, args, 1, nkeys, "list", timeout, true);
}

fn blpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bpop(ctx, args, End::Left)
}

fn brpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bpop(ctx, args, End::Right)
}

fn bmove(ctx: &mut Ctx<'_, '_>, args: Args<'_>, from: End, to: End, timeout_at: usize) {
    let timeout = match Timeout::parse(args.get(timeout_at), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    let (ls, src) = (ctx.locs[0], args.get(1));
    match ctx.locks.shard(ls.gid).get(src, ls.hash, ctx.now).map(|e| e.list().is_some()) {
        // A waiter is served only by a list; it waits on.
        Some(false) if blocking::serving(ctx) => return,
        Some(false) => return ctx.reply.error(errors::WRONGTYPE),
        _ => {}
    }
    if blocking::may_take(ctx, ls, src) {
        match move_element(ctx, args, from, to) {
            Ok(Moved::Value(v)) => {
                ctx.reply.bulk(&v);
                return blocking::served(ctx);
            }
            Ok(Moved::Empty) => {}
            // The destination is of another type: the command ends with
            // the error, waiting or not (Redis re-runs it and replies so).
            Err(e) => {
                ctx.reply.error(e);
                return blocking::served(ctx);
            }
        }
    }
    blocking::wait(ctx, args, 1, 1, "list", timeout, false);
}

fn blmove(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (Some(from), Some(to)) = (end_arg(args.get(3)), end_arg(args.get(4))) else {
        return ctx.reply.error(errors::SYNTAX);
    };
    bmove(ctx, args, from, to, 5)
}

fn brpoplpush(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    bmove(ctx, args, End::Right, End::Left, 3)
}

/// BLMPOP: numkeys, LEFT|RIGHT and COUNT are checked before the timeout
/// (Redis's `lmpopGenericCommand` reads the timeout last).
fn blmpop(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let m = match parse_mpop(args, 2, end_arg) {
        Ok(m) if ctx.locs.len() >= m.numkeys => m,
        Ok(_) => return ctx.reply.error(errors::SYNTAX),
        Err(e) => return ctx.reply.error(e),
    };
    let timeout = match Timeout::parse(args.get(1), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    let is_list = |e: &tern_store::Entry| e.list().is_some();
    let took = |ctx: &mut Ctx<'_, '_>, _, loc, key: &[u8]| {
        let r = pop_into(ctx, loc, key, m.end, m.count, |r, n| {
            if n > 0 {
                r.array(2);
                r.bulk(key);
                r.array(n);
            }
        });
        matches!(r, Ok(Some(n)) if n > 0)
    };
    if blocking::take_first(ctx, args, 3, m.numkeys, is_list, took) {
        return;
    }
    blocking::wait(ctx, args, 3, m.numkeys, "list", timeout, true);
}
