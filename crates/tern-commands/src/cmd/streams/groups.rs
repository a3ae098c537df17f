//! Consumer groups: XGROUP's subcommands, XACK, XPENDING, XCLAIM and
//! XAUTOCLAIM. Their checks come in Redis's order (`t_stream.c`): the key
//! and its type, then the group, then the arguments that need them.

use tern_resp::{parse_i64, Args};
use tern_store::{ClaimCount, Effect, EntryExt, Group, Stream, StreamId};

use super::super::hashes::is;
use super::super::Ctx;
use super::{argv_of, boxed, edit_stream, entry_body, id_text, parse_bound, parse_id, record_as_given, xclaim_argv};
use crate::errors;
use crate::messaging::notify::ev;

/// The stream at the command's first key without touching it: Ok(None)
/// when absent, Err(WRONGTYPE) for another type.
fn peek<'c>(ctx: &'c mut Ctx<'_, '_>, key: &[u8]) -> Result<Option<&'c Stream>, &'static str> {
    let loc = ctx.locs[0];
    match ctx.locks.shard(loc.gid).get(key, loc.hash, ctx.now) {
        None => Ok(None),
        Some(e) => e.stream().map(Some).ok_or(errors::WRONGTYPE),
    }
}

// -------------------------------------------------------------- XGROUP --

/// XGROUP's checks common to its subcommands (`xgroupCommand`): CREATE's
/// and SETID's options, then the key (which must exist unless CREATE
/// makes it), then the group where the subcommand needs one. Returns
/// `(mkstream, entries_read)`, or the reply already given.
fn xgroup_checks(ctx: &mut Ctx<'_, '_>, args: Args<'_>, needs_group: bool) -> Option<(bool, i64)> {
    let sub = args.get(1);
    let (create, setid) = (is(sub, b"create"), is(sub, b"setid"));
    let (mut mkstream, mut entries_read) = (false, -1i64);
    let mut i = 5;
    while i < args.len() {
        let a = args.get(i);
        if create && is(a, b"mkstream") {
            mkstream = true;
            i += 1;
        } else if (create || setid) && is(a, b"entriesread") && i + 1 < args.len() {
            match parse_i64(args.get(i + 1)) {
                None => {
                    ctx.reply.error(errors::NOT_INTEGER);
                    return None;
                }
                Some(n) if n < 0 && n != -1 => {
                    ctx.reply.error(errors::XGROUP_ENTRIES_READ);
                    return None;
                }
                Some(n) => entries_read = n,
            }
            i += 2;
        } else {
            ctx.reply.error(errors::subcommand_syntax(sub, "xgroup"));
            return None;
        }
    }
    let (key, group) = (args.get(2), args.get(3));
    let found = match peek(ctx, key) {
        Err(e) => {
            ctx.reply.error(e);
            return None;
        }
        Ok(s) => s.map(|s| s.group(group).is_some()),
    };
    if !mkstream {
        match found {
            None => {
                ctx.reply.error(errors::XGROUP_NEEDS_KEY);
                return None;
            }
            Some(false) if needs_group => {
                ctx.reply.error(errors::nogroup_for_key(group, key));
                return None;
            }
            _ => {}
        }
    }
    Some((mkstream, entries_read))
}

/// The command as it is recorded, with an id argument (`$`) replaced by
/// the id it stood for.
fn argv_with_id(args: Args<'_>, at: usize, id: StreamId) -> Vec<Box<[u8]>> {
    let mut argv = argv_of(args);
    argv[at] = id_text(id).into();
    argv
}

pub(super) fn xgroup_create(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some((mkstream, entries_read)) = xgroup_checks(ctx, args, false) else { return };
    if args.len() > 8 {
        return ctx.reply.error(errors::subcommand_syntax(args.get(1), "xgroup"));
    }
    let (key, group) = (args.get(2), args.get(3));
    let id = match args.get(4) {
        b"$" => peek(ctx, key).ok().flatten().map_or(StreamId::MIN, Stream::last_id),
        a => match parse_id(a, 0, true, false) {
            Ok((id, _)) => id,
            Err(e) => return ctx.reply.error(e),
        },
    };
    let r = edit_stream(ctx, key, mkstream, |s, edit| {
        if !s.create_group(group, id, entries_read) {
            return false;
        }
        edit.emit(|| Effect::Stream { key: boxed(key), argv: argv_with_id(args, 4, id) });
        true
    });
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(Some(true)) => ctx.reply.ok(),
        Ok(_) => ctx.reply.error(errors::BUSYGROUP),
    }
}

pub(super) fn xgroup_setid(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some((_, entries_read)) = xgroup_checks(ctx, args, true) else { return };
    if args.len() != 5 && args.len() != 7 {
        return ctx.reply.error(errors::subcommand_syntax(args.get(1), "xgroup"));
    }
    let (key, group) = (args.get(2), args.get(3));
    let given = match args.get(4) {
        b"$" => None,
        a => match parse_id(a, 0, false, false) {
            Ok((id, _)) => Some(id),
            Err(e) => return ctx.reply.error(e),
        },
    };
    let r = edit_stream(ctx, key, false, |s, edit| {
        let id = given.unwrap_or(s.last_id());
        let Some(g) = s.group_mut(group) else { return };
        g.last_id = id;
        g.entries_read = entries_read;
        edit.emit(|| Effect::Stream { key: boxed(key), argv: argv_with_id(args, 4, id) });
    });
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(_) => ctx.reply.ok(),
    }
}

/// XGROUP DESTROY, CREATECONSUMER and DELCONSUMER: after XGROUP's checks,
/// `change` edits the stream and says whether it changed anything and the
/// count to reply; a change is recorded as the command given.
fn xgroup_change(ctx: &mut Ctx<'_, '_>, args: Args<'_>, needs_group: bool, change: impl FnOnce(&mut Stream) -> (bool, i64)) {
    if xgroup_checks(ctx, args, needs_group).is_none() {
        return;
    }
    let key = args.get(2);
    let r = edit_stream(ctx, key, false, |s, edit| {
        let (changed, n) = change(s);
        if changed {
            record_as_given(edit, key, args);
        }
        n
    });
    super::super::reply_count(ctx, r);
}

pub(super) fn xgroup_destroy(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let group = args.get(3);
    // The write wakes the group's readers, who then find it gone.
    xgroup_change(ctx, args, false, |s| {
        let gone = s.destroy_group(group);
        (gone, i64::from(gone))
    });
}

pub(super) fn xgroup_createconsumer(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (group, consumer, now) = (args.get(3), args.get(4), ctx.now);
    xgroup_change(ctx, args, true, |s| {
        let made = s.group_mut(group).is_some_and(|g| g.create_consumer(consumer, now));
        (made, i64::from(made))
    });
}

pub(super) fn xgroup_delconsumer(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (group, consumer) = (args.get(3), args.get(4));
    xgroup_change(ctx, args, true, |s| {
        let pending = s.group_mut(group).and_then(|g| g.delete_consumer(consumer));
        (pending.is_some(), pending.unwrap_or(0) as i64)
    });
}

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

pub(super) fn xgroup_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::super::help_lines(ctx, XGROUP_HELP);
}

// ---------------------------------------------------------------- XACK --

/// Ids given to a command, each read strictly; the first bad one's error.
fn strict_ids(args: Args<'_>, from: usize) -> Result<Vec<StreamId>, &'static str> {
    args.tail(from).iter().map(|a| parse_id(a, 0, true, false).map(|(id, _)| id)).collect()
}

pub(super) fn xack(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (key, group) = (args.get(1), args.get(2));
    // A missing key or group acknowledges nothing, whatever the ids.
    match peek(ctx, key) {
        Err(e) => return ctx.reply.error(e),
        Ok(None) => return ctx.reply.int(0),
        Ok(Some(s)) if s.group(group).is_none() => return ctx.reply.int(0),
        Ok(Some(_)) => {}
    }
    let ids = match strict_ids(args, 3) {
        Ok(ids) => ids,
        Err(e) => return ctx.reply.error(e),
    };
    let r = edit_stream(ctx, key, false, |s, edit| {
        let Some(g) = s.group_mut(group) else { return 0 };
        let acked = ids.iter().filter(|&&id| g.ack(id)).count();
        if acked > 0 {
            record_as_given(edit, key, args);
            edit.changes(acked);
        }
        acked as i64
    });
    super::super::reply_count(ctx, r);
}

// ------------------------------------------------------------ XPENDING --

pub(super) fn xpending(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return ctx.reply.error(errors::SYNTAX);
    }
    let (key, group) = (args.get(1), args.get(2));
    let mut range = None;
    let mut min_idle = 0i64;
    if argc >= 6 {
        let mut at = 3;
        if is(args.get(3), b"idle") {
            match parse_i64(args.get(4)) {
                Some(n) => min_idle = n,
                None => return ctx.reply.error(errors::NOT_INTEGER),
            }
            if argc < 8 {
                return ctx.reply.error(errors::SYNTAX);
            }
            at += 2;
        }
        let count = match parse_i64(args.get(at + 2)) {
            Some(n) => n.max(0) as u64,
            None => return ctx.reply.error(errors::NOT_INTEGER),
        };
        let (mut start, ex) = match parse_bound(args.get(at), 0) {
            Ok(b) => b,
            Err(e) => return ctx.reply.error(e),
        };
        if ex {
            match start.incr() {
                Some(s) => start = s,
                None => return ctx.reply.error(errors::STREAM_BAD_START),
            }
        }
        let (mut end, ex) = match parse_bound(args.get(at + 1), u64::MAX) {
            Ok(b) => b,
            Err(e) => return ctx.reply.error(e),
        };
        if ex {
            match end.decr() {
                Some(e) => end = e,
                None => return ctx.reply.error(errors::STREAM_BAD_END),
            }
        }
        let consumer = (at + 3 < argc).then(|| args.get(at + 3));
        range = Some((start, end, count, consumer));
    }
    let (now, loc) = (ctx.now, ctx.locs[0]);
    let s = match ctx.locks.shard(loc.gid).get(key, loc.hash, now).map(|e| e.stream()) {
        Some(None) => return ctx.reply.error(errors::WRONGTYPE),
        Some(Some(s)) => Some(s),
        None => None,
    };
    let Some(g) = s.and_then(|s| s.group(group)) else {
        return ctx.reply.error(errors::nogroup(key, group, ""));
    };
    let reply = &mut ctx.reply;
    let Some((start, end, count, consumer)) = range else {
        // The summary: how many, the first and last ids, and per
        // consumer with any, how many are its.
        reply.array(4);
        reply.int(g.pending_len() as i64);
        let mut all = g.pending_range(StreamId::MIN, StreamId::MAX);
        let Some(first) = all.next() else {
            reply.null();
            reply.null();
            return reply.null_array();
        };
        let last = g.last_pending().unwrap_or(first.0);
        reply.bulk(&id_text(first.0));
        reply.bulk(&id_text(last));
        let owners: Vec<(&[u8], usize)> = g.consumers().map(|(name, c)| (name, c.pending_len())).filter(|&(_, n)| n > 0).collect();
        reply.array(owners.len());
        for (name, n) in owners {
            reply.array(2);
            reply.bulk(name);
            reply.bulk_int(n as i64);
        }
        return;
    };
    // The entries: [id, consumer, ms since delivered, deliveries], those
    // of one consumer when named (none if it does not exist).
    let owner = match consumer {
        Some(name) => match g.consumer(name) {
            Some(_) => Some(name),
            None => return reply.array(0),
        },
        None => None,
    };
    let mut rows = Vec::new();
    for (id, nack) in g.pending_range(start, end) {
        if rows.len() as u64 >= count {
            break;
        }
        let name = nack.consumer();
        if owner.is_some_and(|o| o != name) {
            continue;
        }
        let idle = now as i64 - nack.delivery_time as i64;
        if min_idle != 0 && idle < min_idle {
            continue;
        }
        rows.push((id, name, idle.max(0), nack.delivery_count));
    }
    reply.array(rows.len());
    for (id, name, idle, deliveries) in rows {
        reply.array(4);
        reply.bulk(&id_text(id));
        reply.bulk(name);
        reply.int(idle);
        reply.int(deliveries as i64);
    }
}

// ------------------------------------------------- XCLAIM, XAUTOCLAIM --

/// XCLAIM's options after its ids (`xclaimCommand`).
struct ClaimOpts {
    force: bool,
    justid: bool,
    /// The delivery time the claimed entries get (IDLE, TIME; now if
    /// neither, or if the time is in the future or negative).
    time: u64,
    retrycount: Option<u64>,
    lastid: StreamId,
}

/// XCLAIM's and XAUTOCLAIM's claim of pending entry `id` (which the
/// stream holds) for `consumer`: the entry must be pending, or is made so
/// with `force`, and idle at least `min_idle` ms (0: any; an entry FORCE
/// just made counts as idle enough). Returns its new delivery time and
/// count, or None when it is not claimed.
#[allow(clippy::too_many_arguments)]
fn claim_one(g: &mut Group, id: StreamId, consumer: &[u8], force: bool, min_idle: i64, now: u64, time: u64, count: ClaimCount) -> Option<(u64, u64)> {
    match g.nack(id) {
        None if !force => return None,
        Some(n) if min_idle > 0 && (now as i64 - n.delivery_time as i64) < min_idle => return None,
        _ => {}
    }
    g.claim(id, consumer, now, time, count);
    g.nack(id).map(|n| (n.delivery_time, n.delivery_count))
}

/// A pending entry the stream no longer holds leaves the group's list:
/// the XCLAIM that does it elsewhere, or None if it was not pending.
fn drop_deleted(g: &mut Group, key: &[u8], group: &[u8], id: StreamId) -> Option<Vec<Box<[u8]>>> {
    let n = g.nack(id)?;
    let argv = xclaim_argv(key, group, n.consumer(), id, n.delivery_time, n.delivery_count, g.last_id);
    g.ack(id);
    Some(argv)
}

pub(super) fn xclaim(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (key, group, consumer, now) = (args.get(1), args.get(2), args.get(3), ctx.now);
    match peek(ctx, key) {
        Err(e) => return ctx.reply.error(e),
        Ok(s) if s.and_then(|s| s.group(group)).is_none() => return ctx.reply.error(errors::nogroup(key, group, "")),
        Ok(_) => {}
    }
    let min_idle = match parse_i64(args.get(4)) {
        Some(n) => n.max(0),
        None => return ctx.reply.error(errors::XCLAIM_MIN_IDLE),
    };
    // The ids run up to the first argument that is none: the options.
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match parse_id(args.get(j), 0, true, false) {
            Ok((id, _)) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let mut o = ClaimOpts { force: false, justid: false, time: u64::MAX, retrycount: None, lastid: StreamId::MIN };
    let mut time: Option<i64> = None;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = args.get(j);
        let num = |j: usize, e: &'static str| parse_i64(args.get(j)).ok_or(e);
        let r = if is(opt, b"force") {
            o.force = true;
            Ok(())
        } else if is(opt, b"justid") {
            o.justid = true;
            Ok(())
        } else if is(opt, b"idle") && more > 0 {
            j += 1;
            num(j, errors::XCLAIM_IDLE).map(|n| time = Some((now as i64).wrapping_sub(n)))
        } else if is(opt, b"time") && more > 0 {
            j += 1;
            num(j, errors::XCLAIM_TIME).map(|n| time = Some(n))
        } else if is(opt, b"retrycount") && more > 0 {
            j += 1;
            // A negative count is as none given.
            num(j, errors::XCLAIM_RETRYCOUNT).map(|n| o.retrycount = u64::try_from(n).ok())
        } else if is(opt, b"lastid") && more > 0 {
            j += 1;
            parse_id(args.get(j), 0, true, false).map(|(id, _)| o.lastid = id)
        } else {
            return ctx.reply.error(errors::xclaim_option(opt));
        };
        if let Err(e) = r {
            return ctx.reply.error(e);
        }
        j += 1;
    }
    o.time = match time {
        Some(t) if t >= 0 && t <= now as i64 => t as u64,
        _ => now,
    };
    let enc = ctx.reply.enc;
    let new_consumer = peek(ctx, key).ok().flatten().and_then(|s| s.group(group)).is_some_and(|g| g.consumer(consumer).is_none());
    tern_store::event::set_current(new_consumer.then_some(ev::XGROUP_CREATECONSUMER));
    let r = edit_stream(ctx, key, false, |s, edit| {
        let mut body = Vec::new();
        let mut n = 0;
        let mut moved_last = false;
        {
            let Some(g) = s.group_mut(group) else { return (0, body) };
            if o.lastid > g.last_id {
                g.last_id = o.lastid;
                moved_last = true;
            }
            if !g.create_consumer(consumer, now) {
                if let Some(c) = g.consumer_mut(consumer) {
                    c.seen_time = now;
                }
            }
        }
        let mut changes = 0;
        let count = match o.retrycount {
            Some(n) => ClaimCount::Set(n),
            None if o.justid => ClaimCount::Keep,
            None => ClaimCount::Incr,
        };
        for &id in &ids {
            let exists = s.contains(id);
            let Some(g) = s.group_mut(group) else { break };
            if !exists {
                // An entry deleted since leaves the pending list here.
                if let Some(argv) = drop_deleted(g, key, group, id) {
                    edit.emit(|| Effect::Stream { key: boxed(key), argv });
                    changes += 1;
                    moved_last = false;
                }
                continue;
            }
            let Some((time, deliveries)) = claim_one(g, id, consumer, o.force, min_idle, now, o.time, count) else { continue };
            let last = g.last_id;
            if o.justid {
                enc.bulk(&mut body, &id_text(id));
            } else {
                entry_body(enc, &mut body, s, id);
            }
            n += 1;
            edit.emit(|| Effect::Stream { key: boxed(key), argv: xclaim_argv(key, group, consumer, id, time, deliveries, last) });
            changes += 1;
            moved_last = false;
        }
        if moved_last {
            let g = s.group(group).expect("held above");
            let (last, read) = (g.last_id, g.entries_read);
            edit.emit(|| Effect::Stream { key: boxed(key), argv: super::setid_argv(key, group, last, read) });
            changes += 1;
        }
        if changes > 0 {
            edit.changes(changes);
        }
        (n, body)
    });
    tern_store::event::set_current(None);
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(None) => ctx.reply.array(0),
        Ok(Some((n, body))) => {
            ctx.reply.array(n);
            ctx.reply.out.extend_from_slice(&body);
        }
    }
}

/// XAUTOCLAIM scans at most this many pending entries per entry it may
/// claim (Redis's `attempts_factor`).
const AUTOCLAIM_ATTEMPTS: u64 = 10;

pub(super) fn xautoclaim(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (key, group, consumer, now) = (args.get(1), args.get(2), args.get(3), ctx.now);
    let min_idle = match parse_i64(args.get(4)) {
        Some(n) => n.max(0),
        None => return ctx.reply.error(errors::XAUTOCLAIM_MIN_IDLE),
    };
    let (mut start, ex) = match parse_bound(args.get(5), 0) {
        Ok(b) => b,
        Err(e) => return ctx.reply.error(e),
    };
    if ex {
        match start.incr() {
            Some(s) => start = s,
            None => return ctx.reply.error(errors::STREAM_BAD_START),
        }
    }
    let (mut count, mut justid) = (100u64, false);
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = args.get(j);
        if is(opt, b"count") && more > 0 {
            // Up to LONG_MAX / 16, as Redis bounds it.
            match parse_i64(args.get(j + 1)) {
                Some(n) if (1..=i64::MAX / 16).contains(&n) => count = n as u64,
                // Not a number either: the same error, as Redis's
                // getRangeLongFromObjectOrReply gives its message to both.
                _ => return ctx.reply.error(errors::XAUTOCLAIM_COUNT),
            }
            j += 1;
        } else if is(opt, b"justid") {
            justid = true;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    match peek(ctx, key) {
        Err(e) => return ctx.reply.error(e),
        Ok(s) if s.and_then(|s| s.group(group)).is_none() => return ctx.reply.error(errors::nogroup(key, group, "")),
        Ok(_) => {}
    }
    let enc = ctx.reply.enc;
    let new_consumer = peek(ctx, key).ok().flatten().and_then(|s| s.group(group)).is_some_and(|g| g.consumer(consumer).is_none());
    tern_store::event::set_current(new_consumer.then_some(ev::XGROUP_CREATECONSUMER));
    let r = edit_stream(ctx, key, false, |s, edit| {
        let mut body = Vec::new();
        let (mut claimed, mut deleted) = (0usize, Vec::new());
        let mut attempts = count.saturating_mul(AUTOCLAIM_ATTEMPTS);
        let mut left = count;
        let mut changes = 0;
        {
            let Some(g) = s.group_mut(group) else { return (body, 0, StreamId::MIN, deleted) };
            if !g.create_consumer(consumer, now) {
                if let Some(c) = g.consumer_mut(consumer) {
                    c.seen_time = now;
                }
            }
        }
        // The pending entries from `start` on, in order, while attempts
        // and the count last; the one after the last looked at is the
        // cursor of the next call (0-0 when none is left).
        let mut cursor = start;
        let mut next = StreamId::MIN;
        while let Some(g) = s.group(group) {
            let Some((id, _)) = g.pending_range(cursor, StreamId::MAX).next() else {
                next = StreamId::MIN;
                break;
            };
            if attempts == 0 || left == 0 {
                next = id;
                break;
            }
            attempts -= 1;
            cursor = match id.incr() {
                Some(c) => c,
                None => StreamId::MAX,
            };
            let exists = s.contains(id);
            let g = s.group_mut(group).expect("held above");
            if !exists {
                if let Some(argv) = drop_deleted(g, key, group, id) {
                    edit.emit(|| Effect::Stream { key: boxed(key), argv });
                    changes += 1;
                }
                deleted.push(id);
                left -= 1;
            } else if let Some((time, n)) = claim_one(g, id, consumer, false, min_idle, now, now, if justid { ClaimCount::Keep } else { ClaimCount::Incr }) {
                let last = g.last_id;
                if justid {
                    enc.bulk(&mut body, &id_text(id));
                } else {
                    entry_body(enc, &mut body, s, id);
                }
                claimed += 1;
                left -= 1;
                edit.emit(|| Effect::Stream { key: boxed(key), argv: xclaim_argv(key, group, consumer, id, time, n, last) });
                changes += 1;
            }
            if cursor == StreamId::MAX && id == StreamId::MAX {
                break;
            }
        }
        if changes > 0 {
            edit.changes(changes);
        }
        (body, claimed, next, deleted)
    });
    tern_store::event::set_current(None);
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(None) => ctx.reply.array(0),
        Ok(Some((body, claimed, next, deleted))) => {
            let reply = &mut ctx.reply;
            reply.array(3);
            reply.bulk(&id_text(next));
            reply.array(claimed);
            reply.out.extend_from_slice(&body);
            reply.array(deleted.len());
            for id in deleted {
                reply.bulk(&id_text(id));
            }
        }
    }
}
