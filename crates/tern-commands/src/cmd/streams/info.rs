//! XINFO: a stream's figures, its groups and their consumers, as Redis
//! writes them (`xinfoCommand`): maps in RESP3, flat arrays in RESP2.

use tern_resp::{parse_i64, Args};
use tern_store::{EntryExt, Stream, StreamId};

use super::super::hashes::is;
use super::super::{Ctx, Reply};
use super::{id_text, range_body};
use crate::errors;

/// The stream at `key` (XINFO's second argument), or the reply given
/// (`ERR no such key`, WRONGTYPE) and a return.
macro_rules! xinfo_stream {
    ($ctx:ident, $key:expr) => {
        read_stream!($ctx, $key, |r: &mut Reply<'_>| r.error(errors::NO_SUCH_KEY))
    };
}

fn kv_id(r: &mut Reply<'_>, name: &str, id: StreamId) {
    r.bulk(name.as_bytes());
    r.bulk(&id_text(id));
}

fn kv_int(r: &mut Reply<'_>, name: &str, n: i64) {
    r.bulk(name.as_bytes());
    r.int(n);
}

/// A group's read counter: null while it is unknown.
fn entries_read(r: &mut Reply<'_>, read: i64) {
    r.bulk(b"entries-read");
    if read == -1 {
        r.null();
    } else {
        r.int(read);
    }
}

fn lag(r: &mut Reply<'_>, s: &Stream, g: &tern_store::Group) {
    r.bulk(b"lag");
    match s.lag(g) {
        Some(n) => r.int(n),
        None => r.null(),
    }
}

/// The nodes of the radix tree Redis would index the stream's nodes with
/// (XINFO's `radix-tree-nodes`): its keys are the nodes' first ids, 16
/// bytes big-endian, and for keys of one length the tree's shape follows
/// from the keys alone: a compressed node for each run of bytes all the
/// keys below it share, a branching node where they part, and an empty
/// node at the end of each key; an empty tree is its head node.
fn rax_nodes(s: &Stream) -> usize {
    let keys: Vec<[u8; 16]> = s.node_ids().map(|id| id.to_be_bytes()).collect();
    if keys.is_empty() {
        return 1;
    }
    rax_count(&keys, 0)
}

/// The nodes below depth `d` of the tree of `keys` (sorted, distinct,
/// all sharing their first `d` bytes).
fn rax_count(keys: &[[u8; 16]], d: usize) -> usize {
    if d == 16 {
        return 1;
    }
    let (first, last) = (&keys[0], &keys[keys.len() - 1]);
    // Sorted keys share what the first and the last share.
    let common = (d..16).take_while(|&i| first[i] == last[i]).count();
    if common > 0 {
        return 1 + rax_count(keys, d + common);
    }
    let mut n = 1;
    let mut at = 0;
    while at < keys.len() {
        let b = keys[at][d];
        let end = at + keys[at..].iter().take_while(|k| k[d] == b).count();
        n += rax_count(&keys[at..end], d + 1);
        at = end;
    }
    n
}

pub(super) fn xinfo_stream(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    // [FULL [COUNT n]]: COUNT 0 is every entry, a negative one the default.
    let opts = args.len() - 3;
    let full = match opts {
        0 => None,
        1 | 3 if is(args.get(3), b"full") => {
            if opts == 3 && !is(args.get(4), b"count") {
                return ctx.reply.error(errors::subcommand_syntax(args.get(1), "xinfo"));
            }
            match opts {
                3 => match parse_i64(args.get(5)) {
                    Some(n) if n < 0 => Some(10),
                    Some(n) => Some(n as u64),
                    None => return ctx.reply.error(errors::NOT_INTEGER),
                },
                _ => Some(10),
            }
        }
        _ => return ctx.reply.error(errors::subcommand_syntax(args.get(1), "xinfo")),
    };
    let enc = ctx.reply.enc;
    let s: &Stream = xinfo_stream!(ctx, args.get(2));
    let mut body = Vec::new();
    let reply = &mut ctx.reply;
    reply.map(if full.is_some() { 9 } else { 10 });
    kv_int(reply, "length", s.len() as i64);
    kv_int(reply, "radix-tree-keys", s.node_count() as i64);
    kv_int(reply, "radix-tree-nodes", rax_nodes(s) as i64);
    kv_id(reply, "last-generated-id", s.last_id());
    kv_id(reply, "max-deleted-entry-id", s.max_deleted_id());
    kv_int(reply, "entries-added", s.entries_added() as i64);
    kv_id(reply, "recorded-first-entry-id", s.first_id());
    let Some(count) = full else {
        kv_int(reply, "groups", s.group_count() as i64);
        for (name, rev) in [(&b"first-entry"[..], false), (&b"last-entry"[..], true)] {
            reply.bulk(name);
            body.clear();
            if range_body(enc, &mut body, s, StreamId::MIN, StreamId::MAX, rev, 1) == 1 {
                // The entry itself, not an array of one.
                reply.out.extend_from_slice(&body);
            } else {
                reply.null();
            }
        }
        return;
    };
    let limit = if count == 0 { usize::MAX } else { count as usize };
    reply.bulk(b"entries");
    let n = range_body(enc, &mut body, s, StreamId::MIN, StreamId::MAX, false, if count == 0 { 0 } else { limit });
    reply.array(n);
    reply.out.extend_from_slice(&body);
    reply.bulk(b"groups");
    reply.array(s.group_count());
    for (name, g) in s.groups() {
        reply.map(7);
        reply.bulk(b"name");
        reply.bulk(name);
        kv_id(reply, "last-delivered-id", g.last_id);
        entries_read(reply, g.entries_read);
        lag(reply, s, g);
        kv_int(reply, "pel-count", g.pending_len() as i64);
        reply.bulk(b"pending");
        let pel: Vec<_> = g.pending_range(StreamId::MIN, StreamId::MAX).take(limit).collect();
        reply.array(pel.len());
        for (id, nack) in pel {
            reply.array(4);
            reply.bulk(&id_text(id));
            reply.bulk(nack.consumer());
            reply.int(nack.delivery_time as i64);
            reply.int(nack.delivery_count as i64);
        }
        reply.bulk(b"consumers");
        reply.array(g.consumer_count());
        for (cname, c) in g.consumers() {
            reply.map(5);
            reply.bulk(b"name");
            reply.bulk(cname);
            kv_int(reply, "seen-time", c.seen_time as i64);
            kv_int(reply, "active-time", c.active_time);
            kv_int(reply, "pel-count", c.pending_len() as i64);
            reply.bulk(b"pending");
            let ids: Vec<StreamId> = c.pending_from(StreamId::MIN).take(limit).collect();
            reply.array(ids.len());
            for id in ids {
                let nack = g.nack(id).map(|n| (n.delivery_time, n.delivery_count)).unwrap_or_default();
                reply.array(3);
                reply.bulk(&id_text(id));
                reply.int(nack.0 as i64);
                reply.int(nack.1 as i64);
            }
        }
    }
}

pub(super) fn xinfo_groups(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let s: &Stream = xinfo_stream!(ctx, args.get(2));
    let reply = &mut ctx.reply;
    reply.array(s.group_count());
    for (name, g) in s.groups() {
        reply.map(6);
        reply.bulk(b"name");
        reply.bulk(name);
        kv_int(reply, "consumers", g.consumer_count() as i64);
        kv_int(reply, "pending", g.pending_len() as i64);
        kv_id(reply, "last-delivered-id", g.last_id);
        entries_read(reply, g.entries_read);
        lag(reply, s, g);
    }
}

pub(super) fn xinfo_consumers(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (key, group, now) = (args.get(2), args.get(3), ctx.now as i64);
    let s: &Stream = xinfo_stream!(ctx, key);
    let Some(g) = s.group(group) else {
        return ctx.reply.error(errors::nogroup_for_key(group, key));
    };
    let rows: Vec<(&[u8], usize, i64, i64)> = g
        .consumers()
        .map(|(name, c)| {
            let inactive = if c.active_time == -1 { -1 } else { now - c.active_time };
            (name, c.pending_len(), (now - c.seen_time as i64).max(0), inactive)
        })
        .collect();
    let reply = &mut ctx.reply;
    reply.array(rows.len());
    for (name, pending, idle, inactive) in rows {
        reply.map(4);
        reply.bulk(b"name");
        reply.bulk(name);
        kv_int(reply, "pending", pending as i64);
        kv_int(reply, "idle", idle);
        kv_int(reply, "inactive", inactive);
    }
}

const XINFO_HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

pub(super) fn xinfo_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::super::help_lines(ctx, XINFO_HELP);
}
