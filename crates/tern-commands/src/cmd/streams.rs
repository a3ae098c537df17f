//! Stream commands: XADD and the rest of Redis's stream family.
//!
//! The value lives in `tern_store::Stream` (Redis's layout: listpack
//! nodes keyed by their first id, consumer groups with their pending
//! entries lists). Changes go through the shard's write path
//! ([`Shard::modify`]) and are recorded as the command Redis propagates
//! for them ([`Effect::Stream`]): XADD with the id it took and an
//! approximate trim made exact (`MAXLEN = <length left>`, `MINID = <first
//! id left>`), so that a replay depends on neither the clock nor the node
//! boundaries.
//!
//! Argument errors come before the key is looked up, in Redis's order
//! (`t_stream.c`), which is what clients see when a command has several
//! things wrong with it.

use smallvec::SmallVec;
use tern_resp::{parse_i64, Args, Encoder};
use tern_store::{Edit, Effect, EntryExt, RefPolicy, Shard, Stream, StreamId, StreamLimits, TrimTo, Value};

use super::hashes::is;
use super::keys::parse_cursor;
use super::blocking::{self, Timeout};
use super::keyspec::{index, keyword, ks, range, ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use super::table::{flags::*, CommandSpec};
use super::{Ctx, Reply};
use crate::errors;
use crate::messaging::notify::ev;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("xadd", -5, WRITE | DENYOOM | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0)).notes("UPDATE instead of INSERT because of the optional trimming feature")], xadd)
        .event(ev::XADD)
        .doc("stream", "Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0", "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.")
        .acl(&["write", "stream", "fast"])
        .tips(&["nondeterministic_output"])
        .history(&[("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."), ("7.0.0", "Added support for the `<ms>-*` explicit ID form.")]),
    CommandSpec::new("xlen", 2, READONLY | FAST, &[ks(RO, index(1), range(0, 1, 0))], xlen)
        .doc("stream", "Return the number of messages in a stream.", "5.0.0", "O(1)")
        .acl(&["read", "stream", "fast"]),
    CommandSpec::new("xrange", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], xrange)
        .doc("stream", "Returns the messages from a stream within a range of IDs.", "5.0.0", "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        .acl(&["read", "stream", "slow"])
        .history(&[("6.2.0", "Added exclusive ranges.")]),
    CommandSpec::new("xrevrange", -4, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], xrevrange)
        .doc("stream", "Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0", "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        .acl(&["read", "stream", "slow"])
        .history(&[("6.2.0", "Added exclusive ranges.")]),
    CommandSpec::new("xdel", -3, WRITE | FAST, &[ks(RW | DELETE, index(1), range(0, 1, 0))], xdel)
        .event(ev::XDEL)
        .doc("stream", "Returns the number of messages after removing them from a stream.", "5.0.0", "O(1) for each single item to delete in the stream, regardless of the stream size.")
        .acl(&["write", "stream", "fast"]),
    CommandSpec::new("xdelex", -5, WRITE | FAST, &[ks(RW | DELETE, index(1), range(0, 1, 0))], xdelex)
        .event(ev::XDEL)
        .doc("stream", "Deletes one or multiple entries from the stream.", "8.2.0", "O(1) for each single item to delete in the stream, regardless of the stream size.")
        .acl(&["write", "stream", "fast"]),
    CommandSpec::new("xackdel", -6, WRITE | FAST, &[ks(RW | UPDATE | DELETE, index(1), range(0, 1, 0))], xackdel)
        .event(ev::XDEL)
        .doc("stream", "Acknowledges and conditionally deletes one or multiple entries for a stream consumer group.", "8.2.0", "O(1) for each entry ID processed.")
        .acl(&["write", "stream", "fast"]),
    CommandSpec::new("xtrim", -4, WRITE, &[ks(RW | DELETE, index(1), range(0, 1, 0))], xtrim)
        .event(ev::XTRIM)
        .doc("stream", "Deletes messages from the beginning of a stream.", "5.0.0", "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.")
        .acl(&["write", "stream", "slow"])
        .tips(&["nondeterministic_output"])
        .history(&[("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option.")]),
    CommandSpec::new("xsetid", -3, WRITE | DENYOOM | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], xsetid)
        .event(ev::XSETID)
        .doc("stream", "An internal command for replicating stream values.", "5.0.0", "O(1)")
        .acl(&["write", "stream", "fast"])
        .history(&[("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments.")]),
    CommandSpec::new("xread", -4, READONLY | BLOCKING, &[ks(RO | ACCESS, keyword("STREAMS", 1), range(-1, 1, 2))], xread)
        .doc("stream", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", "5.0.0", "")
        .acl(&["read", "stream", "slow", "blocking"]),
    CommandSpec::new("xreadgroup", -7, WRITE | BLOCKING, &[ks(RO | ACCESS, keyword("STREAMS", 4), range(-1, 1, 2))], xreadgroup)
        .doc("stream", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", "5.0.0", "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.")
        .acl(&["write", "stream", "slow", "blocking"]),
    CommandSpec::new("xgroup", -2, 0, &[], super::unknown_subcommand)
        .doc("stream", "A container for consumer groups commands.", "5.0.0", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(XGROUP_SUBCOMMANDS),
    CommandSpec::new("xack", -4, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], xack)
        .doc("stream", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", "5.0.0", "O(1) for each message ID processed.")
        .acl(&["write", "stream", "fast"]),
    CommandSpec::new("xpending", -3, READONLY, &[ks(RO | ACCESS, index(1), range(0, 1, 0))], xpending)
        .doc("stream", "Returns the information and entries from a stream consumer group's pending entries list.", "5.0.0", "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.")
        .acl(&["read", "stream", "slow"])
        .tips(&["nondeterministic_output"])
        .history(&[("6.2.0", "Added the `IDLE` option and exclusive range intervals.")]),
    CommandSpec::new("xclaim", -6, WRITE | FAST, &[ks(RW | UPDATE, index(1), range(0, 1, 0))], xclaim)
        .doc("stream", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", "5.0.0", "O(log N) with N being the number of messages in the PEL of the consumer group.")
        .acl(&["write", "stream", "fast"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("xautoclaim", -6, WRITE | FAST, &[ks(RW | DELETE, index(1), range(0, 1, 0))], xautoclaim)
        .doc("stream", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", "6.2.0", "O(1) if COUNT is small.")
        .acl(&["write", "stream", "fast"])
        .tips(&["nondeterministic_output"])
        .history(&[("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL")]),
    CommandSpec::new("xinfo", -2, 0, &[], super::unknown_subcommand)
        .doc("stream", "A container for stream introspection commands.", "5.0.0", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(XINFO_SUBCOMMANDS),
];

static XGROUP_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("create", -5, WRITE | DENYOOM, &[ks(RW | INSERT, index(2), range(0, 1, 0))], xgroup_create)
        .event(ev::XGROUP_CREATE)
        .doc("stream", "Creates a consumer group.", "5.0.0", "O(1)")
        .acl(&["write", "stream", "slow"])
        .history(&[("7.0.0", "Added the `entries_read` named argument.")]),
    CommandSpec::new("createconsumer", 5, WRITE | DENYOOM, &[ks(RW | INSERT, index(2), range(0, 1, 0))], xgroup_createconsumer)
        .event(ev::XGROUP_CREATECONSUMER)
        .doc("stream", "Creates a consumer in a consumer group.", "6.2.0", "O(1)")
        .acl(&["write", "stream", "slow"]),
    CommandSpec::new("delconsumer", 5, WRITE, &[ks(RW | DELETE, index(2), range(0, 1, 0))], xgroup_delconsumer)
        .event(ev::XGROUP_DELCONSUMER)
        .doc("stream", "Deletes a consumer from a consumer group.", "5.0.0", "O(1)")
        .acl(&["write", "stream", "slow"]),
    CommandSpec::new("destroy", 4, WRITE, &[ks(RW | DELETE, index(2), range(0, 1, 0))], xgroup_destroy)
        .event(ev::XGROUP_DESTROY)
        .doc("stream", "Destroys a consumer group.", "5.0.0", "O(N) where N is the number of entries in the group's pending entries list (PEL).")
        .acl(&["write", "stream", "slow"]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], xgroup_help)
        .doc("stream", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
        .acl(&["stream", "slow"]),
    CommandSpec::new("setid", -5, WRITE, &[ks(RW | UPDATE, index(2), range(0, 1, 0))], xgroup_setid)
        .event(ev::XGROUP_SETID)
        .doc("stream", "Sets the last-delivered ID of a consumer group.", "5.0.0", "O(1)")
        .acl(&["write", "stream", "slow"])
        .history(&[("7.0.0", "Added the optional `entries_read` argument.")]),
];

static XINFO_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("consumers", 4, READONLY, &[ks(RO | ACCESS, index(2), range(0, 1, 0))], xinfo_consumers)
        .doc("stream", "Returns a list of the consumers in a consumer group.", "5.0.0", "O(1)")
        .acl(&["read", "stream", "slow"])
        .tips(&["nondeterministic_output"])
        .history(&[("7.2.0", "Added the `inactive` field, and changed the meaning of `idle`.")]),
    CommandSpec::new("groups", 3, READONLY, &[ks(RO | ACCESS, index(2), range(0, 1, 0))], xinfo_groups)
        .doc("stream", "Returns a list of the consumer groups of a stream.", "5.0.0", "O(1)")
        .acl(&["read", "stream", "slow"])
        .history(&[("7.0.0", "Added the `entries-read` and `lag` fields")]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], xinfo_help)
        .doc("stream", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
        .acl(&["stream", "slow"]),
    CommandSpec::new("stream", -3, READONLY, &[ks(RO | ACCESS, index(2), range(0, 1, 0))], xinfo_stream)
        .doc("stream", "Returns information about a stream.", "5.0.0", "O(1)")
        .acl(&["read", "stream", "slow"])
        .history(&[("6.0.0", "Added the `FULL` modifier."), ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"), ("7.2.0", "Added the `active-time` field, and changed the meaning of `seen-time`.")]),
];


// ------------------------------------------------------------------ ids --

/// Longest id argument Redis reads (its parse buffer is 128 bytes).
const ID_MAX_LEN: usize = 127;

/// An id argument as Redis's `streamGenericParseIDOrReply` reads it:
/// `-` and `+` (unless `strict`), `<ms>` (its sequence `missing_seq`),
/// `<ms>-<seq>`, and with `star_seq` `<ms>-*`, whose sequence is then
/// to be generated (the second value false). Each part as `string2ull`
/// reads it. Err: `ERR Invalid stream ID …`.
fn parse_id(arg: &[u8], missing_seq: u64, strict: bool, star_seq: bool) -> Result<(StreamId, bool), &'static str> {
    let bad = Err(errors::STREAM_ID_INVALID);
    if arg.len() > ID_MAX_LEN {
        return bad;
    }
    // Read as a C string, as Redis copies it.
    let arg = &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())];
    match arg {
        b"-" if !strict => return Ok((StreamId::MIN, true)),
        b"+" if !strict => return Ok((StreamId::MAX, true)),
        b"-" | b"+" => return bad,
        _ => {}
    }
    let (ms, seq) = match arg.iter().position(|&c| c == b'-') {
        Some(at) => (&arg[..at], Some(&arg[at + 1..])),
        None => (arg, None),
    };
    let Some(ms) = parse_cursor(ms) else { return bad };
    match seq {
        None => Ok((StreamId { ms, seq: missing_seq }, true)),
        Some(b"*") if star_seq => Ok((StreamId { ms, seq: 0 }, false)),
        Some(s) => match parse_cursor(s) {
            Some(seq) => Ok((StreamId { ms, seq }, true)),
            None => bad,
        },
    }
}

/// A range bound as `streamParseIntervalIDOrReply` reads it: `(` before
/// an id (not alone) makes it exclusive, and strict.
fn parse_bound(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), &'static str> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_id(&arg[1..], missing_seq, true, false)?.0, true))
    } else {
        Ok((parse_id(arg, missing_seq, false, false)?.0, false))
    }
}

fn id_text(id: StreamId) -> Vec<u8> {
    let mut v = Vec::with_capacity(24);
    id.write(&mut v);
    v
}

fn boxed(b: &[u8]) -> Box<[u8]> {
    b.into()
}

/// The node limits new entries are appended under.
fn limits(ctx: &Ctx<'_, '_>) -> StreamLimits {
    let s = &ctx.srv.settings;
    StreamLimits {
        node_max_bytes: usize::try_from(s.stream_node_max_bytes()).unwrap_or(usize::MAX),
        node_max_entries: usize::try_from(s.stream_node_max_entries()).unwrap_or(usize::MAX),
    }
}

/// [`super::edit_typed`] on a stream (`create`: whether an absent key
/// gets an empty stream first).
fn edit_stream<R>(
    ctx: &mut Ctx<'_, '_>,
    key: &[u8],
    create: bool,
    f: impl FnOnce(&mut Stream, &mut Edit) -> R,
) -> Result<Option<R>, &'static str> {
    let (loc, now, acc) = (ctx.locs[0], ctx.now, ctx.access());
    let shard: &mut Shard = ctx.locks.shard(loc.gid);
    super::edit_typed(shard, key, loc.hash, now, || create.then(|| Value::Stream(Box::new(Stream::new()))), acc, |e| e.stream_mut(), f)
}

/// [`read_typed`] for a stream.
macro_rules! read_stream {
    ($ctx:ident, $key:expr, $missing:expr) => {
        read_typed!($ctx, $key, stream, $missing)
    };
}

// Consumer groups and XINFO live in their own files; declared here,
// below `read_stream!`, so that they can use it.
mod groups;
mod info;

use groups::{xack, xautoclaim, xclaim, xgroup_create, xgroup_createconsumer, xgroup_delconsumer, xgroup_destroy, xgroup_help, xgroup_setid, xpending};
use info::{xinfo_consumers, xinfo_groups, xinfo_help, xinfo_stream};

// ------------------------------------------------------- XADD and XTRIM --

/// XADD's and XTRIM's options, as `streamParseAddOrTrimArgsOrReply`
/// leaves them.
#[derive(Default)]
struct AddTrim {
    trim: Option<TrimTo>,
    approx: bool,
    /// Most entries an approximate trim removes (0: no limit).
    limit: u64,
    /// The argument holding the trim threshold (rewritten for an
    /// approximate trim's record).
    trim_at: usize,
    nomkstream: bool,
    /// What deleting trimmed entries does to the groups' references
    /// (Redis 8.2's KEEPREF, DELREF, ACKED).
    refs: RefPolicy,
    /// XADD's id argument's position and value; the second value false
    /// when its sequence (or all of it, `*`) is to be generated.
    id_at: usize,
    id: Option<(StreamId, bool)>,
}

fn parse_add_trim(ctx: &Ctx<'_, '_>, args: Args<'_>, xadd: bool) -> Result<AddTrim, &'static str> {
    let mut a = AddTrim::default();
    let mut limit_given = false;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args.get(i);
        if xadd && opt == b"*" {
            break;
        } else if (is(opt, b"maxlen") || is(opt, b"minid")) && more > 0 {
            if a.trim.is_some() {
                return Err(errors::STREAM_MAXLEN_AND_MINID);
            }
            a.approx = false;
            let next = args.get(i + 1);
            if more >= 2 && next == b"~" {
                a.approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let v = args.get(i + 1);
            a.trim = Some(if is(opt, b"maxlen") {
                let n = parse_i64(v).ok_or(errors::NOT_INTEGER)?;
                if n < 0 {
                    return Err(errors::STREAM_MAXLEN_NEGATIVE);
                }
                TrimTo::MaxLen(n as u64)
            } else {
                TrimTo::MinId(parse_id(v, 0, true, false)?.0)
            });
            i += 1;
            a.trim_at = i;
        } else if is(opt, b"limit") && more > 0 {
            let n = parse_i64(args.get(i + 1)).ok_or(errors::NOT_INTEGER)?;
            if n < 0 {
                return Err(errors::STREAM_LIMIT_NEGATIVE);
            }
            a.limit = n as u64;
            limit_given = true;
            i += 1;
        } else if xadd && is(opt, b"nomkstream") {
            a.nomkstream = true;
        } else if is(opt, b"keepref") {
            a.refs = RefPolicy::KeepRef;
        } else if is(opt, b"delref") {
            a.refs = RefPolicy::DelRef;
        } else if is(opt, b"acked") {
            a.refs = RefPolicy::Acked;
        } else if xadd {
            // Either an id or a syntax error, which the id's own reads as.
            a.id = Some(parse_id(opt, 0, true, true)?);
            break;
        } else {
            return Err(errors::SYNTAX);
        }
        i += 1;
    }
    a.id_at = i;
    if a.limit > 0 && a.trim.is_none() {
        return Err(errors::STREAM_LIMIT_WITHOUT_TRIM);
    }
    if !xadd && a.trim.is_none() {
        return Err(errors::XTRIM_NEEDS_STRATEGY);
    }
    if ctx.client.obeys_always() {
        // The AOF's and a master's commands were made exact (see the
        // module docs): their LIMIT is not to cut them short.
        a.limit = 0;
    } else if limit_given {
        if !a.approx {
            return Err(errors::STREAM_LIMIT_WITHOUT_APPROX);
        }
    } else if a.approx {
        // At most 100 nodes' worth, bounded both ways (nodes of no entry
        // limit, or an absurd one, would bound nothing).
        a.limit = match ctx.srv.settings.stream_node_max_entries().saturating_mul(100) {
            n if n <= 0 => 10_000,
            n => n.min(1_000_000) as u64,
        };
    } else {
        a.limit = 0;
    }
    Ok(a)
}

/// The record of a command that trimmed approximately: `~` made `=` and
/// the threshold what the stream now has (its length, or its first id),
/// as Redis rewrites it for the AOF and replicas.
fn exact_trim_argv(a: &AddTrim, s: &Stream, mut argv: Vec<Box<[u8]>>) -> Vec<Box<[u8]>> {
    if a.approx {
        argv[a.trim_at - 1] = boxed(b"=");
        argv[a.trim_at] = match a.trim {
            Some(TrimTo::MaxLen(_)) => boxed(itoa::Buffer::new().format(s.len()).as_bytes()),
            _ => id_text(s.first_id()).into(),
        };
    }
    argv
}

fn argv_of(args: Args<'_>) -> Vec<Box<[u8]>> {
    args.iter().map(boxed).collect()
}

/// Records a change to stream `key` as the command that made it, as it
/// was given (what Redis propagates for XDEL, XACK, XGROUP …).
fn record_as_given(edit: &mut Edit, key: &[u8], args: Args<'_>) {
    edit.emit(|| Effect::Stream { key: boxed(key), argv: argv_of(args) });
}

fn xadd(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let a = match parse_add_trim(ctx, args, true) {
        Ok(a) => a,
        Err(e) => return ctx.reply.error(e),
    };
    let fields_at = a.id_at + 1;
    let nfields = args.len().saturating_sub(fields_at);
    if nfields < 2 || !nfields.is_multiple_of(2) {
        return ctx.arity_error();
    }
    // 0-0 is refused before the key is looked up, so that no empty
    // stream is left behind.
    if a.id == Some((StreamId::MIN, true)) {
        return ctx.reply.error(errors::XADD_ID_ZERO);
    }
    let total: usize = args.tail(fields_at).iter().map(<[u8]>::len).sum();
    let (lim, now, key) = (limits(ctx), ctx.now, args.get(1));
    let r = edit_stream(ctx, key, !a.nomkstream, |s, edit| {
        if s.last_id() == StreamId::MAX {
            return Err(errors::STREAM_EXHAUSTED);
        }
        let last = s.last_id();
        let id = match a.id {
            Some((id, true)) => id,
            // `<ms>-*`: the next sequence of the same millisecond.
            Some((id, false)) if id.ms == last.ms => {
                if last.seq == u64::MAX {
                    return Err(errors::XADD_ID_TOO_SMALL);
                }
                StreamId { ms: last.ms, seq: last.seq + 1 }
            }
            Some((id, false)) => id,
            None if now > last.ms => StreamId { ms: now, seq: 0 },
            None => last.incr().ok_or(errors::XADD_ID_TOO_SMALL)?,
        };
        if id <= last {
            return Err(errors::XADD_ID_TOO_SMALL);
        }
        if total > STREAM_LISTPACK_MAX_SIZE {
            return Err(errors::STREAM_ELEMENTS_TOO_LARGE);
        }
        // On the stack for up to eight field-value pairs: no allocation
        // per XADD of a usual entry.
        let fields: SmallVec<[&[u8]; 16]> = args.tail(fields_at).iter().collect();
        s.append(id, &fields, lim);
        let trimmed = match a.trim {
            Some(to) => s.trim(to, a.approx, a.limit, a.refs),
            None => 0,
        };
        if trimmed > 0 {
            edit.then_event(ev::XTRIM);
        }
        let idt = id_text(id);
        edit.emit(|| {
            let mut argv = exact_trim_argv(&a, s, argv_of(args));
            argv[a.id_at] = idt.clone().into();
            Effect::Stream { key: boxed(key), argv }
        });
        edit.changes(1);
        Ok(idt)
    });
    match r {
        Err(e) | Ok(Some(Err(e))) => ctx.reply.error(e),
        Ok(None) => ctx.reply.null(),
        Ok(Some(Ok(id))) => ctx.reply.bulk(&id),
    }
}

/// The most bytes an entry's fields and values may take (a listpack's
/// limit, as Redis's `STREAM_LISTPACK_MAX_SIZE`).
const STREAM_LISTPACK_MAX_SIZE: usize = 1 << 30;

fn xtrim(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let a = match parse_add_trim(ctx, args, false) {
        Ok(a) => a,
        Err(e) => return ctx.reply.error(e),
    };
    let key = args.get(1);
    let Some(to) = a.trim else { return };
    let r = edit_stream(ctx, key, false, |s, edit| {
        let n = s.trim(to, a.approx, a.limit, a.refs);
        if n > 0 {
            edit.emit(|| Effect::Stream { key: boxed(key), argv: exact_trim_argv(&a, s, argv_of(args)) });
            edit.changes(n as usize);
        }
        n as i64
    });
    super::reply_count(ctx, r);
}

// --------------------------------------------------------------- reads --

fn xlen(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let s = read_stream!(ctx, args.get(1), |r: &mut Reply<'_>| r.int(0));
    ctx.reply.int(s.len() as i64);
}

/// Entries `start..=end` (forward, or backward with `rev`), at most
/// `count` (0: all), as `streamReplyWithRange` writes them: [id, [field,
/// value, …]] each, into `body`. Returns how many.
fn range_body(enc: Encoder, body: &mut Vec<u8>, s: &Stream, start: StreamId, end: StreamId, rev: bool, count: usize) -> usize {
    range_body_with(enc, body, s, start, end, rev, count, |_| {})
}

/// [`range_body`], telling `seen` each id written.
#[allow(clippy::too_many_arguments)]
fn range_body_with(enc: Encoder, body: &mut Vec<u8>, s: &Stream, start: StreamId, end: StreamId, rev: bool, count: usize, mut seen: impl FnMut(StreamId)) -> usize {
    let mut n = 0;
    let mut id_buf = Vec::with_capacity(24);
    s.range(start, end, rev, |id, fields| {
        seen(id);
        enc.array(body, 2);
        id_buf.clear();
        id.write(&mut id_buf);
        enc.bulk(body, &id_buf);
        enc.array(body, 2 * fields.len());
        for (f, v) in fields.iter() {
            enc.bulk(body, &f);
            enc.bulk(body, &v);
        }
        n += 1;
        count == 0 || n < count
    });
    n
}

/// [`range_body`] as a whole reply: an array of the entries.
fn reply_range(reply: &mut Reply<'_>, s: &Stream, start: StreamId, end: StreamId, rev: bool, count: usize) {
    let mut body = Vec::new();
    let n = range_body(reply.enc, &mut body, s, start, end, rev, count);
    reply.array(n);
    reply.out.extend_from_slice(&body);
}

fn xrange_generic(ctx: &mut Ctx<'_, '_>, args: Args<'_>, rev: bool) {
    let (start_arg, end_arg) = if rev { (args.get(3), args.get(2)) } else { (args.get(2), args.get(3)) };
    let (mut start, start_ex) = match parse_bound(start_arg, 0) {
        Ok(b) => b,
        Err(e) => return ctx.reply.error(e),
    };
    if start_ex {
        match start.incr() {
            Some(s) => start = s,
            None => return ctx.reply.error(errors::STREAM_BAD_START),
        }
    }
    let (mut end, end_ex) = match parse_bound(end_arg, u64::MAX) {
        Ok(b) => b,
        Err(e) => return ctx.reply.error(e),
    };
    if end_ex {
        match end.decr() {
            Some(e) => end = e,
            None => return ctx.reply.error(errors::STREAM_BAD_END),
        }
    }
    let mut count: Option<i64> = None;
    let mut j = 4;
    while j < args.len() {
        if is(args.get(j), b"count") && j + 1 < args.len() {
            match parse_i64(args.get(j + 1)) {
                Some(n) => count = Some(n.max(0)),
                None => return ctx.reply.error(errors::NOT_INTEGER),
            }
            j += 2;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
    }
    let s = read_stream!(ctx, args.get(1), |r: &mut Reply<'_>| r.array(0));
    match count {
        Some(0) => ctx.reply.null_array(),
        Some(n) => reply_range(&mut ctx.reply, s, start, end, rev, usize::try_from(n).unwrap_or(usize::MAX)),
        None => reply_range(&mut ctx.reply, s, start, end, rev, 0),
    }
}

fn xrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    xrange_generic(ctx, args, false)
}

fn xrevrange(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    xrange_generic(ctx, args, true)
}

// ------------------------------------------------------ XDEL and XSETID --

fn xdel(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let key = args.get(1);
    // Every id is checked before any is deleted, so that a bad one
    // leaves the stream untouched.
    let mut ids = Vec::with_capacity(args.len() - 2);
    for a in args.tail(2).iter() {
        match parse_id(a, 0, true, false) {
            Ok((id, _)) => ids.push(id),
            Err(e) => {
                // Redis looks the key up first: a missing key or one of
                // another type answers before the ids are read.
                return match ctx.locks.shard(ctx.locs[0].gid).get(key, ctx.locs[0].hash, ctx.now).map(|e| e.stream().is_some()) {
                    None => ctx.reply.int(0),
                    Some(false) => ctx.reply.error(errors::WRONGTYPE),
                    Some(true) => ctx.reply.error(e),
                };
            }
        }
    }
    let r = edit_stream(ctx, key, false, |s, edit| {
        let mut deleted = 0;
        for &id in &ids {
            if s.delete(id) {
                deleted += 1;
            }
        }
        if deleted > 0 {
            record_as_given(edit, key, args);
            edit.changes(deleted);
        }
        deleted as i64
    });
    super::reply_count(ctx, r);
}

// ------------------------------------------------------ XDELEX, XACKDEL --

/// What XDELEX and XACKDEL answer for each id (Redis 8.2).
const GONE: i64 = 1;
const NOT_FOUND: i64 = -1;
const STILL_REFERENCED: i64 = 2;

/// XDELEX's and XACKDEL's arguments from `from` on: a reference policy
/// (KEEPREF, the default, DELREF or ACKED) and `IDS numids id…`, in
/// either order.
fn parse_refs_and_ids(args: Args<'_>, from: usize) -> Result<(RefPolicy, Vec<StreamId>), &'static str> {
    let (mut refs, mut ids) = (RefPolicy::KeepRef, None);
    let mut i = from;
    while i < args.len() {
        let a = args.get(i);
        if is(a, b"ids") && i + 1 < args.len() && ids.is_none() {
            let n = parse_i64(args.get(i + 1)).filter(|&n| n > 0).ok_or(errors::STREAM_NUMIDS)?;
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if n > args.len() - i - 2 {
                return Err(errors::STREAM_NUMIDS_MISMATCH);
            }
            let given = args.tail(i + 2).iter().take(n).map(|a| parse_id(a, 0, true, false).map(|(id, _)| id)).collect::<Result<Vec<_>, _>>()?;
            ids = Some(given);
            i += 2 + n;
            continue;
        } else if is(a, b"keepref") {
            refs = RefPolicy::KeepRef;
        } else if is(a, b"delref") {
            refs = RefPolicy::DelRef;
        } else if is(a, b"acked") {
            refs = RefPolicy::Acked;
        } else {
            return Err(errors::SYNTAX);
        }
        i += 1;
    }
    Ok((refs, ids.ok_or(errors::SYNTAX)?))
}

/// Deletes entry `id` as `refs` says (the caller knows the stream holds
/// it): under ACKED only if no group still needs it.
fn delete_with(s: &mut Stream, id: StreamId, refs: RefPolicy) -> i64 {
    match refs {
        RefPolicy::Acked if s.referenced(id) => STILL_REFERENCED,
        RefPolicy::DelRef => {
            s.unref(id);
            s.delete(id);
            GONE
        }
        _ => {
            s.delete(id);
            GONE
        }
    }
}

/// The per-id codes of XDELEX and XACKDEL.
fn reply_codes(ctx: &mut Ctx<'_, '_>, r: Result<Option<Vec<i64>>, &'static str>, n: usize) {
    match r {
        Err(e) => ctx.reply.error(e),
        Ok(codes) => {
            let codes = codes.unwrap_or_else(|| vec![NOT_FOUND; n]);
            ctx.reply.array(codes.len());
            for c in codes {
                ctx.reply.int(c);
            }
        }
    }
}

fn xdelex(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (refs, ids) = match parse_refs_and_ids(args, 2) {
        Ok(v) => v,
        Err(e) => return ctx.reply.error(e),
    };
    let key = args.get(1);
    let r = edit_stream(ctx, key, false, |s, edit| {
        let codes: Vec<i64> = ids
            .iter()
            .map(|&id| {
                if s.contains(id) {
                    delete_with(s, id, refs)
                } else {
                    // A reference to an entry gone already goes too.
                    if refs == RefPolicy::DelRef {
                        s.unref(id);
                    }
                    NOT_FOUND
                }
            })
            .collect();
        let gone = codes.iter().filter(|&&c| c == GONE).count();
        if gone > 0 {
            record_as_given(edit, key, args);
            edit.changes(gone);
        }
        codes
    });
    reply_codes(ctx, r, ids.len());
}

fn xackdel(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (refs, ids) = match parse_refs_and_ids(args, 3) {
        Ok(v) => v,
        Err(e) => return ctx.reply.error(e),
    };
    let (key, group) = (args.get(1), args.get(2));
    let r = edit_stream(ctx, key, false, |s, edit| {
        if s.group(group).is_none() {
            return vec![NOT_FOUND; ids.len()];
        }
        let (mut acked, mut gone) = (0, 0);
        let codes: Vec<i64> = ids
            .iter()
            .map(|&id| {
                // Only an entry the group has pending is acknowledged,
                // and only then deleted.
                if !s.group_mut(group).is_some_and(|g| g.ack(id)) {
                    return NOT_FOUND;
                }
                acked += 1;
                if !s.contains(id) {
                    if refs == RefPolicy::DelRef {
                        s.unref(id);
                    }
                    return GONE;
                }
                let c = delete_with(s, id, refs);
                gone += usize::from(c == GONE);
                c
            })
            .collect();
        if acked > 0 {
            if gone == 0 {
                // Acknowledgements alone are no event, as XACK's.
                tern_store::event::set_current(None);
            }
            record_as_given(edit, key, args);
            edit.changes(acked + gone);
        }
        codes
    });
    tern_store::event::set_current(None);
    reply_codes(ctx, r, ids.len());
}

/// The id of the stream's last entry, 0-0 when it has none (Redis's
/// `streamLastValidID`).
fn last_entry_id(s: &Stream) -> StreamId {
    s.last_entry_id().unwrap_or(StreamId::MIN)
}

fn xsetid(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (id, _) = match parse_id(args.get(2), 0, true, false) {
        Ok(v) => v,
        Err(e) => return ctx.reply.error(e),
    };
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args.get(i);
        if is(opt, b"entriesadded") && more > 0 {
            match parse_i64(args.get(i + 1)) {
                None => return ctx.reply.error(errors::NOT_INTEGER),
                Some(n) if n < 0 => return ctx.reply.error(errors::XSETID_ENTRIES_ADDED_NEGATIVE),
                Some(n) => entries_added = Some(n as u64),
            }
        } else if is(opt, b"maxdeletedid") && more > 0 {
            match parse_id(args.get(i + 1), 0, true, false) {
                Err(e) => return ctx.reply.error(e),
                Ok((m, _)) if id < m => return ctx.reply.error(errors::XSETID_BELOW_GIVEN_MAX_DELETED),
                Ok((m, _)) => max_deleted = m,
            }
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        i += 2;
    }
    let key = args.get(1);
    let r = edit_stream(ctx, key, false, |s, edit| {
        if id < s.max_deleted_id() {
            return Err(errors::XSETID_BELOW_MAX_DELETED);
        }
        if !s.is_empty() {
            if id < last_entry_id(s) {
                return Err(errors::XSETID_BELOW_TOP);
            }
            if entries_added.is_some_and(|n| s.len() > n) {
                return Err(errors::XSETID_ENTRIES_ADDED_BELOW_LENGTH);
            }
        }
        s.set_last_id(id);
        if let Some(n) = entries_added {
            s.set_entries_added(n);
        }
        if max_deleted != StreamId::MIN {
            s.set_max_deleted_id(max_deleted);
        }
        record_as_given(edit, key, args);
        Ok(())
    });
    match r {
        Err(e) | Ok(Some(Err(e))) => ctx.reply.error(e),
        Ok(None) => ctx.reply.error(errors::NO_SUCH_KEY),
        Ok(Some(Ok(()))) => ctx.reply.ok(),
    }
}

// --------------------------------------------------------------- XREAD --

/// XREAD's and XREADGROUP's options (`xreadCommand`'s parse), up to
/// STREAMS.
struct ReadArgs<'a> {
    timeout: Option<Timeout>,
    count: usize,
    /// Where the keys start, and how many there are (each has an id).
    keys_at: usize,
    nkeys: usize,
    /// XREADGROUP's group and consumer.
    group: Option<(&'a [u8], &'a [u8])>,
    noack: bool,
}

fn parse_read<'a>(ctx: &Ctx<'_, '_>, args: Args<'a>, group_form: bool) -> Result<ReadArgs<'a>, Vec<u8>> {
    let err = |e: &str| e.as_bytes().to_vec();
    let mut r = ReadArgs { timeout: None, count: 0, keys_at: 0, nkeys: 0, group: None, noack: false };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - i - 1;
        let o = args.get(i);
        if is(o, b"block") && more > 0 {
            i += 1;
            r.timeout = Some(Timeout::parse_ms(args.get(i), ctx.now).map_err(err)?);
        } else if is(o, b"count") && more > 0 {
            i += 1;
            let n = parse_i64(args.get(i)).ok_or_else(|| err(errors::NOT_INTEGER))?;
            r.count = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
        } else if is(o, b"streams") && more > 0 {
            r.keys_at = i + 1;
            let n = args.len() - r.keys_at;
            if !n.is_multiple_of(2) {
                let symbol = if group_form { "ID or '>'" } else { "ID, '+', or '$'" };
                return Err(errors::xread_unbalanced(&ctx.cmd.fullname, symbol).into_bytes());
            }
            r.nkeys = n / 2;
            break;
        } else if is(o, b"group") && more >= 2 {
            if !group_form {
                return Err(err(errors::XREAD_GROUP_OPTION));
            }
            r.group = Some((args.get(i + 1), args.get(i + 2)));
            i += 2;
        } else if is(o, b"noack") {
            if !group_form {
                return Err(err(errors::XREAD_NOACK_OPTION));
            }
            r.noack = true;
        } else {
            return Err(err(errors::SYNTAX));
        }
        i += 1;
    }
    if r.keys_at == 0 {
        return Err(err(errors::SYNTAX));
    }
    if group_form && r.group.is_none() {
        return Err(err(errors::XREADGROUP_NEEDS_GROUP));
    }
    Ok(r)
}

/// The end of a read that served nothing: with BLOCK, the client waits on
/// its keys (`on_nokey`: XREADGROUP's waiter is also woken, with an error,
/// when its key or group goes), its ids as `ids` says (a `$` made the id
/// it stood for); else the null array.
fn read_nothing(ctx: &mut Ctx<'_, '_>, args: Args<'_>, r: &ReadArgs<'_>, ids: &[Option<StreamId>], on_nokey: bool) {
    let Some(timeout) = r.timeout else { return ctx.reply.null_array() };
    let ids_at = r.keys_at + r.nkeys;
    if blocking::serving(ctx) || ids.iter().all(Option::is_none) {
        return blocking::wait_on(ctx, args, r.keys_at, r.nkeys, "stream", timeout, true, on_nokey);
    }
    // The waiter reads what comes after the ids of now, not after the
    // last ids when it runs again.
    let mut data = Vec::new();
    let mut ranges = Vec::with_capacity(args.len());
    for (j, a) in args.iter().enumerate() {
        let text;
        let a = match j.checked_sub(ids_at).and_then(|k| ids[k]) {
            Some(id) => {
                text = id_text(id);
                &text[..]
            }
            None => a,
        };
        ranges.push((data.len(), a.len()));
        data.extend_from_slice(a);
    }
    blocking::wait_on(ctx, Args::from_parts(&data, &ranges), r.keys_at, r.nkeys, "stream", timeout, true, on_nokey)
}

/// The reply of a read that served `served` streams (`body`: each one's
/// name and entries): a map in RESP3, an array of pairs in RESP2.
fn reply_served(ctx: &mut Ctx<'_, '_>, served: usize, body: &[u8]) {
    if ctx.reply.enc.resp3 {
        ctx.reply.map(served);
    } else {
        ctx.reply.array(served);
    }
    ctx.reply.out.extend_from_slice(body);
    blocking::served(ctx);
}

fn xread(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let r = match parse_read(ctx, args, false) {
        Ok(r) => r,
        Err(e) => return ctx.reply.error(e),
    };
    let (n, ids_at) = (r.nkeys, r.keys_at + r.nkeys);
    // Each key's type and id first, before anything is served; `$` is
    // the stream's last id now (and the waiter's, if it waits).
    let mut after = Vec::with_capacity(n);
    let mut dollars = vec![None; n];
    for (i, dollar) in dollars.iter_mut().enumerate() {
        let (loc, key, arg) = (ctx.locs[i], args.get(r.keys_at + i), args.get(ids_at + i));
        let serving = blocking::serving(ctx);
        let s = match ctx.locks.shard(loc.gid).get(key, loc.hash, ctx.now) {
            None => None,
            Some(e) => match e.stream() {
                Some(s) => Some(s),
                // A waiter is not served by a key of another type (Redis
                // does not wake it for one): it waits on.
                None if serving => None,
                None => return ctx.reply.error(errors::WRONGTYPE),
            },
        };
        let id = match arg {
            b"$" => {
                let id = s.map_or(StreamId::MIN, Stream::last_id);
                *dollar = Some(id);
                id
            }
            // The last entry is to be read: ids above the one before it.
            b"+" => match s.map(|s| s.last_id().decr()) {
                None => StreamId::MIN,
                Some(Some(id)) => id,
                Some(None) => return ctx.reply.error(errors::STREAM_LAST_ID_ZERO),
            },
            b">" => return ctx.reply.error(errors::XREAD_GT_ID),
            _ => match parse_id(arg, 0, true, false) {
                Ok((id, _)) => id,
                Err(e) => return ctx.reply.error(e),
            },
        };
        after.push(id);
    }
    let (acc, enc) = (ctx.access(), ctx.reply.enc);
    let mut body = Vec::new();
    let mut served = 0;
    for (i, &gt) in after.iter().enumerate() {
        let (loc, key) = (ctx.locs[i], args.get(r.keys_at + i));
        let Some(e) = ctx.locks.shard(loc.gid).lookup(key, loc.hash, ctx.now, acc) else { continue };
        let Some(s) = e.stream() else { continue };
        if s.is_empty() || last_entry_id(s) <= gt {
            continue;
        }
        served += 1;
        if !enc.resp3 {
            enc.array(&mut body, 2);
        }
        enc.bulk(&mut body, key);
        // The last entry is above `gt`, which has a successor.
        let start = gt.incr().unwrap_or(StreamId::MAX);
        let mut entries = Vec::new();
        let k = range_body(enc, &mut entries, s, start, StreamId::MAX, false, r.count);
        enc.array(&mut body, k);
        body.extend_from_slice(&entries);
    }
    if served > 0 {
        return reply_served(ctx, served, &body);
    }
    read_nothing(ctx, args, &r, &dollars, false)
}

// ---------------------------------------------------------- XREADGROUP --

/// An error that ends the command, and a waiter's wait with it (a key or
/// group gone while XREADGROUP waited).
fn fail(ctx: &mut Ctx<'_, '_>, e: impl AsRef<[u8]>) {
    ctx.reply.error(e);
    blocking::served(ctx);
}

/// One entry, `[id, [field, value, …]]`, into `body`; false (nothing
/// written) when the stream does not hold it.
fn entry_body(enc: Encoder, body: &mut Vec<u8>, s: &Stream, id: StreamId) -> bool {
    range_body(enc, body, s, id, id, false, 1) == 1
}

fn xreadgroup(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let r = match parse_read(ctx, args, true) {
        Ok(r) => r,
        Err(e) => return ctx.reply.error(e),
    };
    let Some((group, consumer)) = r.group else { return };
    let (n, ids_at) = (r.nkeys, r.keys_at + r.nkeys);
    // None: `>`, the group's new entries; Some(id): the consumer's own
    // pending entries after `id` (its history). The largest id is `>` too,
    // as Redis marks `>` with it.
    let mut after: Vec<Option<StreamId>> = Vec::with_capacity(n);
    for i in 0..n {
        let (loc, key, arg) = (ctx.locs[i], args.get(r.keys_at + i), args.get(ids_at + i));
        match ctx.locks.shard(loc.gid).get(key, loc.hash, ctx.now).map(|e| e.stream().map(|s| s.group(group).is_some())) {
            Some(None) => return fail(ctx, errors::WRONGTYPE),
            None | Some(Some(false)) => return fail(ctx, errors::nogroup(key, group, " in XREADGROUP with GROUP option")),
            Some(Some(true)) => {}
        }
        after.push(match arg {
            b"$" => return fail(ctx, errors::XREADGROUP_DOLLAR),
            b"+" => return fail(ctx, errors::XREADGROUP_PLUS),
            b">" => None,
            _ => match parse_id(arg, 0, true, false) {
                Ok((StreamId::MAX, _)) => None,
                Ok((id, _)) => Some(id),
                Err(e) => return fail(ctx, e),
            },
        });
    }
    let (now, enc, count, noack) = (ctx.now, ctx.reply.enc, r.count, r.noack);
    let mut body = Vec::new();
    let mut served = 0;
    for (i, &from) in after.iter().enumerate() {
        let key = args.get(r.keys_at + i);
        let new_consumer = {
            let loc = ctx.locs[i];
            let e = ctx.locks.shard(loc.gid).get(key, loc.hash, now);
            e.and_then(|e| e.stream()).and_then(|s| s.group(group)).is_some_and(|g| g.consumer(consumer).is_none())
        };
        tern_store::event::set_current(new_consumer.then_some(ev::XGROUP_CREATECONSUMER));
        let part = edit_stream(ctx, key, false, |s, edit| {
            let g = s.group_mut(group)?;
            if g.create_consumer(consumer, now) {
                edit.emit(|| Effect::Stream { key: boxed(key), argv: vec![boxed(b"XGROUP"), boxed(b"CREATECONSUMER"), boxed(key), boxed(group), boxed(consumer)] });
            } else if let Some(c) = g.consumer_mut(consumer) {
                c.seen_time = now;
            }
            let mut part = Vec::new();
            let served = match from {
                Some(after) => read_history(enc, &mut part, s, group, consumer, after, count, now),
                None => read_new(enc, &mut part, s, group, consumer, count, noack, now, key, edit),
            };
            served.map(|k| (k, part))
        });
        if let Ok(Some(Some((k, part)))) = part {
            served += 1;
            if !enc.resp3 {
                enc.array(&mut body, 2);
            }
            enc.bulk(&mut body, key);
            enc.array(&mut body, k);
            body.extend_from_slice(&part);
        }
    }
    tern_store::event::set_current(None);
    if served > 0 {
        return reply_served(ctx, served, &body);
    }
    read_nothing(ctx, args, &r, &[], true)
}

/// XREADGROUP with an id: the consumer's pending entries after `after`
/// (`streamReplyWithRangeFromConsumerPEL`), each delivered once more; an
/// entry deleted since comes as its id and a null. Always served (an
/// empty history too).
#[allow(clippy::too_many_arguments)]
fn read_history(enc: Encoder, body: &mut Vec<u8>, s: &mut Stream, group: &[u8], consumer: &[u8], after: StreamId, count: usize, now: u64) -> Option<usize> {
    let Some(start) = after.incr() else { return Some(0) };
    let ids: Vec<StreamId> = {
        let g = s.group(group)?;
        match g.consumer(consumer) {
            Some(c) => c.pending_from(start).take(if count == 0 { usize::MAX } else { count }).collect(),
            None => Vec::new(),
        }
    };
    for &id in &ids {
        if entry_body(enc, body, s, id) {
            if let Some(nack) = s.group_mut(group)?.nack_mut(id) {
                nack.delivery_time = now;
                nack.delivery_count += 1;
            }
        } else {
            enc.array(body, 2);
            enc.bulk(body, &id_text(id));
            enc.null_array(body);
        }
    }
    Some(ids.len())
}

/// XREADGROUP with `>`: the entries after the group's last delivered id
/// (`streamReplyWithRange` with a group), each made pending for the
/// consumer unless `noack`; the group's last id and read counter move
/// past them. None (not served) when there are none.
#[allow(clippy::too_many_arguments)]
fn read_new(
    enc: Encoder,
    body: &mut Vec<u8>,
    s: &mut Stream,
    group: &[u8],
    consumer: &[u8],
    count: usize,
    noack: bool,
    now: u64,
    key: &[u8],
    edit: &mut Edit,
) -> Option<usize> {
    let last = s.group(group)?.last_id;
    if s.is_empty() || last_entry_id(s) <= last {
        return None;
    }
    let start = last.incr()?;
    let mut ids = Vec::new();
    range_body_with(enc, body, s, start, StreamId::MAX, false, count, |id| ids.push(id));
    let mut moved = false;
    for &id in &ids {
        // The group's last id and read counter follow each entry.
        moved |= s.advance_group(group, id);
        if !noack {
            let g = s.group_mut(group)?;
            g.deliver(id, consumer, now);
            edit.emit(|| Effect::Stream { key: boxed(key), argv: xclaim_argv(key, group, consumer, id, now, 1, id) });
        }
    }
    if moved {
        let g = s.group(group)?;
        let (last, read) = (g.last_id, g.entries_read);
        edit.emit(|| Effect::Stream { key: boxed(key), argv: setid_argv(key, group, last, read) });
    }
    edit.changes(1);
    Some(ids.len())
}

/// The XCLAIM Redis propagates for a pending entry's new state
/// (`streamPropagateXCLAIM`): it creates the entry pending as it is now,
/// for `consumer`, and moves the group's last id up to `last_id`.
fn xclaim_argv(key: &[u8], group: &[u8], consumer: &[u8], id: StreamId, time: u64, count: u64, last_id: StreamId) -> Vec<Box<[u8]>> {
    let mut n = itoa::Buffer::new();
    vec![
        boxed(b"XCLAIM"),
        boxed(key),
        boxed(group),
        boxed(consumer),
        boxed(b"0"),
        id_text(id).into(),
        boxed(b"TIME"),
        boxed(n.format(time).as_bytes()),
        boxed(b"RETRYCOUNT"),
        boxed(n.format(count).as_bytes()),
        boxed(b"FORCE"),
        boxed(b"JUSTID"),
        boxed(b"LASTID"),
        id_text(last_id).into(),
    ]
}

/// The XGROUP SETID Redis propagates for a group's last id and read
/// counter (`streamPropagateGroupID`).
fn setid_argv(key: &[u8], group: &[u8], last: StreamId, read: i64) -> Vec<Box<[u8]>> {
    vec![
        boxed(b"XGROUP"),
        boxed(b"SETID"),
        boxed(key),
        boxed(group),
        id_text(last).into(),
        boxed(b"ENTRIESREAD"),
        boxed(itoa::Buffer::new().format(read).as_bytes()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    #[test]
    fn ids_parse_as_redis_reads_them() {
        assert_eq!(parse_id(b"5", 7, false, false), Ok((id(5, 7), true)));
        assert_eq!(parse_id(b"5-3", 7, false, false), Ok((id(5, 3), true)));
        assert_eq!(parse_id(b"-", 7, false, false), Ok((StreamId::MIN, true)));
        assert_eq!(parse_id(b"+", 7, false, false), Ok((StreamId::MAX, true)));
        assert!(parse_id(b"-", 0, true, false).is_err());
        assert!(parse_id(b"+", 0, true, false).is_err());
        assert_eq!(parse_id(b"5-*", 0, true, true), Ok((id(5, 0), false)));
        assert!(parse_id(b"5-*", 0, true, false).is_err());
        assert_eq!(parse_id(b"18446744073709551615-18446744073709551615", 0, true, false), Ok((StreamId::MAX, true)));
        assert!(parse_id(b"18446744073709551616", 0, true, false).is_err());
        assert!(parse_id(b"", 0, false, false).is_err());
        assert!(parse_id(b"1-", 0, false, false).is_err());
        assert!(parse_id(b"-1", 0, true, false).is_err());
        assert!(parse_id(b"1--1", 0, true, false).is_err());
        assert!(parse_id(b"abc", 0, true, false).is_err());
        // strtoull's leniency, which Redis inherits.
        assert_eq!(parse_id(b" 5-+3", 0, true, false), Ok((id(5, 3), true)));
        assert!(parse_id(&[b'1'; 128], 0, true, false).is_err());
    }

    #[test]
    fn bounds_read_the_exclusive_prefix_strictly() {
        assert_eq!(parse_bound(b"(5-1", 0), Ok((id(5, 1), true)));
        assert_eq!(parse_bound(b"(", 0).map(|b| b.1), Err(errors::STREAM_ID_INVALID));
        assert!(parse_bound(b"(+", 0).is_err());
        assert_eq!(parse_bound(b"+", 0), Ok((StreamId::MAX, false)));
    }
}
