//! CLIENT and its subcommands: the connection's own settings (ID, SETNAME,
//! GETNAME, SETINFO, REPLY, NO-EVICT, NO-TOUCH) and the registry of every
//! connection (INFO, LIST, KILL).
//!
//! Other connections are seen only through their [`ClientShared`], which
//! their worker keeps current; the connection running the command is
//! described from its own [`crate::client::Client`], so its line shows the
//! command being run, as Redis's does. A killed connection is closed by its
//! worker a moment later, but it drops out of LIST and KILL at once.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tern_resp::Args;

use super::connection::{c_str, set_client_name, valid_client_attr};
use super::table::{flags::*, CommandSpec, CommandTable};
use super::Ctx;
use crate::client::{flags as cflags, Client, ClientShared, ReplyMode};
use crate::errors;
use crate::server::{PauseMode, PausePurpose};

pub static COMMANDS: &[CommandSpec] = &[CommandSpec::new("client", -2, 0, &[], super::unknown_subcommand)
    .doc("connection", "A container for client connection commands.", "2.4.0", "Depends on subcommand.")
    .acl(&["slow"])
    .subs(SUBCOMMANDS)];

const CONN: u32 = NOSCRIPT | LOADING | STALE;

static SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("caching", 3, CONN, &[], super::tracking::caching)
        .doc("connection", "Instructs the server whether to track the keys in the next request.", "6.0.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("getredir", 2, CONN, &[], super::tracking::getredir)
        .doc("connection", "Returns the client ID to which the connection's tracking notifications are redirected.", "6.0.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("tracking", -3, CONN, &[], super::tracking::tracking)
        .doc("connection", "Controls server-assisted client-side caching for the connection.", "6.0.0", "O(1). Some options may introduce additional complexity.")
        .acl(&["slow", "connection"]),
    CommandSpec::new("trackinginfo", 2, CONN, &[], super::tracking::trackinginfo)
        .doc("connection", "Returns information about server-assisted client-side caching for the connection.", "6.2.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("getname", 2, CONN, &[], getname)
        .doc("connection", "Returns the name of the connection.", "2.6.9", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("help", 2, LOADING | STALE, &[], help)
        .doc("connection", "Returns helpful text about the different subcommands.", "5.0.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("id", 2, CONN, &[], id)
        .doc("connection", "Returns the unique client ID of the connection.", "5.0.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("info", 2, CONN, &[], info)
        .doc("connection", "Returns information about the connection.", "6.2.0", "O(1)")
        .acl(&["slow", "connection"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("kill", -3, ADMIN | CONN, &[], kill)
        .doc("connection", "Terminates open connections.", "2.4.0", "O(N) where N is the number of client connections")
        .history(&[("2.8.12", "Added new filter format."), ("2.8.12", "`ID` option."), ("3.2.0", "Added `master` type in for `TYPE` option."), ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."), ("6.2.0", "`LADDR` option."), ("7.4.0", "`MAXAGE` option.")])
        .acl(&["admin", "slow", "dangerous", "connection"]),
    CommandSpec::new("list", -2, ADMIN | CONN, &[], list)
        .doc("connection", "Lists open connections.", "2.4.0", "O(N) where N is the number of client connections")
        .history(&[("2.8.12", "Added unique client `id` field."), ("5.0.0", "Added optional `TYPE` filter."), ("6.0.0", "Added `user` field."), ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."), ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."), ("7.0.3", "Added `ssub` field."), ("7.2.0", "Added `lib-name` and `lib-ver` fields."), ("7.4.0", "Added `watch` field."), ("8.0.0", "Added `io-thread` field.")])
        .acl(&["admin", "slow", "dangerous", "connection"])
        .tips(&["nondeterministic_output"]),
    CommandSpec::new("no-evict", 3, ADMIN | CONN, &[], no_evict)
        .doc("connection", "Sets the client eviction mode of the connection.", "7.0.0", "O(1)")
        .acl(&["admin", "slow", "dangerous", "connection"]),
    CommandSpec::new("no-touch", 3, CONN, &[], no_touch)
        .doc("connection", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("pause", -3, ADMIN | CONN, &[], pause)
        .doc("connection", "Suspends commands processing.", "3.0.0", "O(1)")
        .history(&[("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option.")])
        .acl(&["admin", "slow", "dangerous", "connection"]),
    CommandSpec::new("unpause", 2, ADMIN | CONN, &[], unpause)
        .doc("connection", "Resumes processing commands from paused clients.", "6.2.0", "O(N) Where N is the number of paused clients")
        .acl(&["admin", "slow", "dangerous", "connection"]),
    CommandSpec::new("reply", 3, CONN, &[], reply)
        .doc("connection", "Instructs the server whether to reply to commands.", "3.2.0", "O(1)")
        .acl(&["slow", "connection"]),
    CommandSpec::new("setinfo", 4, CONN, &[], setinfo)
        .doc("connection", "Sets information specific to the client or connection.", "7.2.0", "O(1)")
        .acl(&["slow", "connection"])
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    CommandSpec::new("unblock", -3, ADMIN | CONN, &[], unblock)
        .doc("connection", "Unblocks a client blocked by a blocking command from a different connection.", "5.0.0", "O(log N) where N is the number of client connections")
        .acl(&["admin", "slow", "dangerous", "connection"]),
    CommandSpec::new("setname", 3, CONN, &[], setname)
        .doc("connection", "Sets the connection name.", "2.6.9", "O(1)")
        .acl(&["slow", "connection"])
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
];

/// Redis's CLIENT HELP.
const HELP: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
];

/// The size a connection's read buffer starts at (the worker's read chunk).
const READ_BUF: usize = 16 * 1024;

fn help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(ctx, HELP);
}

fn id(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.reply.int(ctx.client.id as i64);
}

fn getname(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let name = ctx.client.shared.name.lock().clone();
    if name.is_empty() {
        ctx.reply.null();
    } else {
        ctx.reply.bulk(&name);
    }
}

/// CLIENT UNBLOCK: the client's worker ends its wait (it may be served
/// first); 1 if it was waiting when asked.
fn unblock(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 4 {
        return ctx.reply.error(errors::subcommand_syntax(args.get(1), "client"));
    }
    let Some(id) = tern_resp::parse_i64(args.get(2)) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let error = match args.len() {
        4 => match c_str(args.get(3)) {
            r if r.eq_ignore_ascii_case(b"timeout") => false,
            r if r.eq_ignore_ascii_case(b"error") => true,
            _ => return ctx.reply.error(errors::UNBLOCK_REASON),
        },
        _ => false,
    };
    let target = u64::try_from(id).ok().and_then(|id| ctx.srv.clients.lock().get(&id).cloned());
    match target {
        Some(sh) if sh.has_flag(cflags::BLOCKED) => {
            ctx.srv.post(sh.worker, crate::server::Wake::Unblock { client: sh.id, error });
            ctx.reply.int(1);
        }
        _ => ctx.reply.int(0),
    }
}

/// CLIENT PAUSE <ms> [WRITE|ALL]: the mode is checked before the timeout,
/// as Redis does; every worker is woken to look at its postponed clients
/// (a weaker mode may let some go).
fn pause(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 4 {
        return ctx.reply.error(errors::subcommand_syntax(args.get(1), "client"));
    }
    let mode = match args.try_get(3) {
        None => PauseMode::All,
        Some(m) if m.eq_ignore_ascii_case(b"all") => PauseMode::All,
        Some(m) if m.eq_ignore_ascii_case(b"write") => PauseMode::Write,
        Some(_) => return ctx.reply.error(errors::PAUSE_MODE),
    };
    let Some(ms) = tern_resp::parse_i64(args.get(2)) else {
        return ctx.reply.error(errors::TIMEOUT_NOT_INTEGER);
    };
    if ms < 0 {
        return ctx.reply.error(errors::TIMEOUT_NEGATIVE);
    }
    let until = match u64::try_from(ms).ok().and_then(|ms| ms.checked_add(ctx.now)).filter(|&u| u <= i64::MAX as u64) {
        Some(u) => u,
        None => return ctx.reply.error(errors::TIMEOUT_OUT_OF_RANGE),
    };
    ctx.srv.pause.set(PausePurpose::Client, until, mode, ctx.now);
    ctx.srv.wake_all();
    ctx.reply.ok();
}

fn unpause(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.srv.pause.clear(PausePurpose::Client, ctx.now);
    ctx.srv.wake_all();
    ctx.reply.ok();
}

fn setname(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let name = args.get(2);
    if !valid_client_attr(name) {
        ctx.reply.error(errors::BAD_CLIENT_NAME);
        return;
    }
    set_client_name(ctx, name);
    ctx.reply.ok();
}

fn setinfo(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let (attr, val) = (args.get(2), args.get(3));
    let slot = if attr.eq_ignore_ascii_case(b"lib-name") {
        &ctx.client.shared.lib_name
    } else if attr.eq_ignore_ascii_case(b"lib-ver") {
        &ctx.client.shared.lib_ver
    } else {
        ctx.reply.error(errors::setinfo_unrecognized(attr));
        return;
    };
    if !valid_client_attr(val) {
        ctx.reply.error(errors::setinfo_bad_value(attr));
        return;
    }
    let mut v = slot.lock();
    v.clear();
    v.extend_from_slice(val);
    drop(v);
    ctx.reply.ok();
}

fn reply(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mode = args.get(2);
    if mode.eq_ignore_ascii_case(b"on") {
        ctx.client.reply_mode = ReplyMode::On;
        ctx.reply.ok();
    } else if mode.eq_ignore_ascii_case(b"off") {
        ctx.client.reply_mode = ReplyMode::Off;
    } else if mode.eq_ignore_ascii_case(b"skip") {
        if ctx.client.reply_mode != ReplyMode::Off {
            ctx.client.reply_mode = ReplyMode::Skip;
        }
    } else {
        ctx.reply.error(errors::SYNTAX);
    }
}

/// Parses ON|OFF for NO-EVICT and NO-TOUCH.
fn on_off(ctx: &mut Ctx<'_, '_>, arg: &[u8]) -> Option<bool> {
    if arg.eq_ignore_ascii_case(b"on") {
        Some(true)
    } else if arg.eq_ignore_ascii_case(b"off") {
        Some(false)
    } else {
        ctx.reply.error(errors::SYNTAX);
        None
    }
}

fn no_evict(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(on) = on_off(ctx, args.get(2)) else { return };
    ctx.client.no_evict = on;
    ctx.client.shared.set_flag(cflags::NO_EVICT, on);
    ctx.reply.ok();
}

fn no_touch(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(on) = on_off(ctx, args.get(2)) else { return };
    ctx.client.no_touch = on;
    ctx.client.shared.set_flag(cflags::NO_TOUCH, on);
    ctx.reply.ok();
}

/// Client types of `CLIENT LIST TYPE` / `CLIENT KILL TYPE`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Normal,
    Replica,
    Master,
    PubSub,
}

fn parse_kind(ctx: &mut Ctx<'_, '_>, name: &[u8]) -> Option<Kind> {
    let k = match name.to_ascii_lowercase().as_slice() {
        b"normal" => Kind::Normal,
        b"slave" | b"replica" => Kind::Replica,
        b"master" => Kind::Master,
        b"pubsub" => Kind::PubSub,
        _ => {
            ctx.reply.error(errors::unknown_client_type(name));
            return None;
        }
    };
    Some(k)
}

fn kind_of(sh: &ClientShared) -> Kind {
    if sh.has_flag(cflags::REPLICA) {
        Kind::Replica
    } else if sh.has_flag(cflags::MASTER) {
        Kind::Master
    } else if sh.has_flag(cflags::PUBSUB) {
        Kind::PubSub
    } else {
        Kind::Normal
    }
}

/// The live connections (not yet killed), oldest first, as Redis lists them.
fn registry(ctx: &Ctx<'_, '_>) -> Vec<Arc<ClientShared>> {
    let mut all: Vec<Arc<ClientShared>> = ctx.srv.clients.lock().values().filter(|c| !c.kill.load(Ordering::Relaxed)).cloned().collect();
    all.sort_unstable_by_key(|c| c.id);
    all
}

/// The numbers of one CLIENT LIST line that differ between the calling
/// connection (known exactly) and the others (read from the registry).
struct Live {
    db: usize,
    multi: i64,
    watch: usize,
    qbuf: usize,
    qbuf_free: usize,
    argv_mem: usize,
    multi_mem: usize,
    rbs: usize,
    obl: usize,
    oll: usize,
    omem: usize,
    idle: u64,
    flags: String,
    events: &'static str,
    cmd: String,
    resp: u8,
}

/// Flag letters in Redis's order (`cflags` bits); `N` when there are none.
fn flag_letters(f: u32) -> String {
    const LETTERS: &[(u32, char)] = &[
        (cflags::MONITOR, 'O'),
        (cflags::REPLICA, 'S'),
        (cflags::MASTER, 'M'),
        (cflags::PUBSUB, 'P'),
        (cflags::MULTI, 'x'),
        (cflags::BLOCKED | cflags::PAUSED, 'b'),
        (cflags::TRACKING, 't'),
        (cflags::TRACKING_BROKEN, 'R'),
        (cflags::TRACKING_BCAST, 'B'),
        (cflags::DIRTY_CAS, 'd'),
        (cflags::CLOSE_ASAP, 'A'),
        (cflags::READONLY, 'r'),
        (cflags::NO_EVICT, 'e'),
        (cflags::NO_TOUCH, 'T'),
    ];
    let mut out: String = LETTERS.iter().filter(|(bit, _)| f & bit != 0).map(|&(_, c)| c).collect();
    if out.is_empty() {
        out.push('N');
    }
    out
}

/// The line of the connection running this command.
fn live_self(ctx: &Ctx<'_, '_>, args: &Args<'_>) -> Live {
    let c: &Client = ctx.client;
    // What the request occupied in the read buffer, as a multibulk.
    let mut qbuf = 3 + itoa::Buffer::new().format(args.len()).len();
    let mut argv_mem = 0;
    for a in args.iter() {
        qbuf += 3 + itoa::Buffer::new().format(a.len()).len() + a.len() + 2;
        argv_mem += a.len();
    }
    let (multi, multi_mem) = match &c.multi {
        Some(m) => (m.cmds.len() as i64, m.mem()),
        None => (-1, 0),
    };
    Live {
        db: c.db,
        multi,
        watch: c.watched.len(),
        qbuf,
        qbuf_free: READ_BUF.saturating_sub(qbuf),
        argv_mem,
        multi_mem,
        rbs: ctx.reply.out.capacity(),
        obl: ctx.reply.out.owned_pending(),
        oll: ctx.reply.out.shared_count(),
        omem: ctx.reply.out.pending(),
        idle: 0,
        flags: flag_letters({
            let mut f = c.shared.flags.load(Ordering::Relaxed) as u32 & (cflags::PUBSUB | cflags::TRACKING | cflags::TRACKING_BCAST);
            for (on, bit) in [
                (c.monitor.is_some(), cflags::MONITOR),
                (c.multi.is_some(), cflags::MULTI),
                (!c.watched.is_empty() && c.watch_flag.is_set(), cflags::DIRTY_CAS),
                (c.no_evict, cflags::NO_EVICT),
                (c.no_touch, cflags::NO_TOUCH),
                (c.tracking.as_ref().is_some_and(|t| t.tracker.broken()), cflags::TRACKING_BROKEN),
            ] {
                if on {
                    f |= bit;
                }
            }
            f
        }),
        events: "r",
        cmd: ctx.cmd.fullname.clone(),
        resp: if c.resp3 { 3 } else { 2 },
    }
}

/// The line of another connection, from what its worker published.
fn live_other(commands: &CommandTable, now: u64, sh: &ClientShared) -> Live {
    let r = Ordering::Relaxed;
    let multi = sh.has_flag(cflags::MULTI);
    let g = &sh.buffers;
    let omem = g.omem.load(r);
    let last = sh.last_cmd.load(r);
    let cmd = if last < commands.len() { commands.get(last).fullname.clone() } else { "NULL".to_string() };
    Live {
        db: sh.db.load(r),
        multi: if multi { sh.multi_len.load(r) as i64 } else { -1 },
        watch: sh.watch_count.load(r),
        qbuf: g.qbuf.load(r),
        qbuf_free: g.qbuf_free.load(r),
        // Arguments are slices of the read buffer, held by no one between
        // commands.
        argv_mem: 0,
        multi_mem: if multi { g.multi_mem.load(r) } else { 0 },
        rbs: g.rbs.load(r),
        obl: g.obl.load(r),
        oll: g.oll.load(r),
        omem,
        idle: (now / 1000).saturating_sub(sh.last_interaction_ms.load(r) / 1000),
        flags: flag_letters(sh.flags.load(r) as u32 | if multi { cflags::MULTI } else { 0 }),
        events: if omem > 0 { "rw" } else { "r" },
        cmd,
        resp: sh.resp.load(r),
    }
}

/// Appends one CLIENT LIST line (with its newline), fields in Redis 7.4's
/// order.
fn push_line(out: &mut Vec<u8>, now_ms: u64, sh: &ClientShared, l: &Live) {
    let r = Ordering::Relaxed;
    let tot_mem = std::mem::size_of::<Client>()
        + std::mem::size_of::<ClientShared>()
        + l.qbuf
        + l.qbuf_free
        + l.argv_mem
        + l.multi_mem
        + l.rbs
        // Owned unsent bytes are in the reply buffer already.
        + l.omem.saturating_sub(l.obl);
    let mut s = String::with_capacity(320);
    let _ = write!(s, "id={} addr={} laddr={} fd={} name=", sh.id, sh.addr, sh.laddr, sh.fd);
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(c_str(&sh.name.lock()));
    s.clear();
    let _ = write!(
        s,
        " age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} watch={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl={} oll={} omem={} tot-mem={} events={} cmd={} user={} redir={} resp={} lib-name=",
        (now_ms / 1000).saturating_sub(sh.created_ms / 1000),
        l.idle,
        l.flags,
        l.db,
        sh.sub_count.load(r),
        sh.psub_count.load(r),
        sh.ssub_count.load(r),
        l.multi,
        l.watch,
        l.qbuf,
        l.qbuf_free,
        l.argv_mem,
        l.multi_mem,
        l.rbs,
        l.rbs,
        l.obl,
        l.oll,
        l.omem,
        tot_mem,
        l.events,
        l.cmd,
        String::from_utf8_lossy(c_str(&sh.user.lock())),
        sh.redirect.load(r),
        l.resp,
    );
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(c_str(&sh.lib_name.lock()));
    out.extend_from_slice(b" lib-ver=");
    out.extend_from_slice(c_str(&sh.lib_ver.lock()));
    // Redis 8's field: the worker that owns the connection.
    out.extend_from_slice(format!(" io-thread={}", sh.worker).as_bytes());
    // Redis 8.2's: bytes read and written, and the commands run.
    out.extend_from_slice(format!(" tot-net-in={} tot-net-out={} tot-cmds={}", sh.net_in.load(r), sh.net_out.load(r), sh.cmds.load(r)).as_bytes());
    out.push(b'\n');
}

/// Appends the line of `sh`, which may be the caller itself.
fn push_client(ctx: &Ctx<'_, '_>, args: &Args<'_>, out: &mut Vec<u8>, sh: &ClientShared) {
    let live = if sh.id == ctx.client.id { live_self(ctx, args) } else { live_other(ctx.commands, ctx.now, sh) };
    push_line(out, ctx.now, sh, &live);
}

/// A connection's CLIENT INFO line without its newline, as its running
/// command `cmd` sees it (ACL LOG's `client-info`); `exec_of`: EXEC is
/// running that many queued commands (the connection is still in MULTI).
pub(super) fn client_info(commands: &CommandTable, now: u64, sh: &ClientShared, cmd: &str, exec_of: Option<usize>) -> Vec<u8> {
    let mut live = live_other(commands, now, sh);
    live.cmd = cmd.to_string();
    live.idle = 0;
    if let Some(n) = exec_of {
        live.multi = n as i64;
        if !live.flags.contains('x') {
            live.flags = live.flags.replace('N', "");
            let at = live.flags.find(|c| !matches!(c, 'O' | 'P')).unwrap_or(live.flags.len());
            live.flags.insert(at, 'x');
        }
    }
    let mut out = Vec::with_capacity(400);
    push_line(&mut out, now, sh, &live);
    if out.last() == Some(&b'\n') {
        out.pop();
    }
    out
}

fn info(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut out = Vec::with_capacity(400);
    let sh = ctx.client.shared.clone();
    push_client(ctx, &args, &mut out, &sh);
    ctx.reply.verbatim(&out);
}

fn list(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut out = Vec::new();
    if args.len() == 4 && args.get(2).eq_ignore_ascii_case(b"type") {
        let Some(kind) = parse_kind(ctx, args.get(3)) else { return };
        for sh in registry(ctx) {
            if kind_of(&sh) == kind {
                push_client(ctx, &args, &mut out, &sh);
            }
        }
    } else if args.len() > 3 && args.get(2).eq_ignore_ascii_case(b"id") {
        let mut ids = Vec::with_capacity(args.len() - 3);
        for a in args.tail(3).iter() {
            let Some(id) = tern_resp::parse_i64(a) else {
                ctx.reply.error(errors::INVALID_CLIENT_ID);
                return;
            };
            ids.push(id);
        }
        // In argument order, repeats included, as Redis does.
        let all = registry(ctx);
        for id in ids {
            if let Some(sh) = all.iter().find(|c| c.id as i64 == id) {
                push_client(ctx, &args, &mut out, sh);
            }
        }
    } else if args.len() != 2 {
        ctx.reply.error(errors::SYNTAX);
        return;
    } else {
        for sh in registry(ctx) {
            push_client(ctx, &args, &mut out, &sh);
        }
    }
    ctx.reply.verbatim(&out);
}

/// The filters of `CLIENT KILL`; all given ones must match.
#[derive(Default)]
struct KillFilter<'a> {
    addr: Option<&'a [u8]>,
    laddr: Option<&'a [u8]>,
    kind: Option<Kind>,
    user: Option<&'a [u8]>,
    id: Option<u64>,
    max_age: Option<u64>,
    skip_me: bool,
}

/// Parses the `<option> <value>` pairs of the new CLIENT KILL form, or
/// replies with the error and returns None.
fn parse_kill_filter<'a>(ctx: &mut Ctx<'_, '_>, args: &Args<'a>) -> Option<KillFilter<'a>> {
    let mut f = KillFilter { skip_me: true, ..Default::default() };
    let mut i = 2;
    while i < args.len() {
        let opt = args.get(i);
        let Some(val) = args.try_get(i + 1) else {
            ctx.reply.error(errors::SYNTAX);
            return None;
        };
        if opt.eq_ignore_ascii_case(b"id") {
            match tern_resp::parse_i64(val) {
                Some(n) if n >= 1 => f.id = Some(n as u64),
                _ => {
                    ctx.reply.error(errors::CLIENT_ID_NOT_POSITIVE);
                    return None;
                }
            }
        } else if opt.eq_ignore_ascii_case(b"maxage") {
            let Some(n) = tern_resp::parse_i64(val) else {
                ctx.reply.error(errors::MAXAGE_NOT_INTEGER);
                return None;
            };
            if n <= 0 {
                ctx.reply.error(errors::MAXAGE_NOT_POSITIVE);
                return None;
            }
            f.max_age = Some(n as u64);
        } else if opt.eq_ignore_ascii_case(b"type") {
            f.kind = Some(parse_kind(ctx, val)?);
        } else if opt.eq_ignore_ascii_case(b"addr") {
            f.addr = Some(val);
        } else if opt.eq_ignore_ascii_case(b"laddr") {
            f.laddr = Some(val);
        } else if opt.eq_ignore_ascii_case(b"user") {
            if ctx.srv.acl.get(val).is_none() {
                ctx.reply.error(errors::no_such_user(val));
                return None;
            }
            f.user = Some(val);
        } else if opt.eq_ignore_ascii_case(b"skipme") {
            if val.eq_ignore_ascii_case(b"yes") {
                f.skip_me = true;
            } else if val.eq_ignore_ascii_case(b"no") {
                f.skip_me = false;
            } else {
                ctx.reply.error(errors::SYNTAX);
                return None;
            }
        } else {
            ctx.reply.error(errors::SYNTAX);
            return None;
        }
        i += 2;
    }
    Some(f)
}

fn kill(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let old_form = args.len() == 3;
    let f = if old_form {
        // CLIENT KILL <ip:port>, which may name the caller itself.
        KillFilter { addr: Some(args.get(2)), skip_me: false, ..Default::default() }
    } else {
        let Some(f) = parse_kill_filter(ctx, &args) else { return };
        f
    };
    let now_s = ctx.now / 1000;
    let me = ctx.client.id;
    let mut killed = 0i64;
    let mut kill_self = false;
    for sh in registry(ctx) {
        let matches = f.addr.is_none_or(|a| a == sh.addr.as_bytes())
            && f.laddr.is_none_or(|a| a == sh.laddr.as_bytes())
            && f.kind.is_none_or(|k| k == kind_of(&sh))
            && f.user.is_none_or(|u| u == sh.user.lock().as_slice())
            && f.id.is_none_or(|id| id == sh.id)
            && !(f.skip_me && sh.id == me)
            && f.max_age.is_none_or(|m| now_s.saturating_sub(sh.created_ms / 1000) >= m);
        if !matches {
            continue;
        }
        if sh.id == me {
            kill_self = true;
        } else if sh.has_flag(cflags::REPLICA) {
            // Its own threads serve it.
            ctx.srv.repl.close_replica(sh.id);
        } else if sh.has_flag(cflags::MASTER) {
            // The link is cut; it reconnects, as Redis's replica does.
            ctx.srv.repl.cut_link();
        } else {
            sh.kill.store(true, Ordering::Relaxed);
            ctx.srv.wake(sh.worker);
        }
        killed += 1;
    }
    if old_form {
        if killed == 0 {
            ctx.reply.error(errors::NO_SUCH_CLIENT);
        } else {
            ctx.reply.ok();
        }
    } else {
        ctx.reply.int(killed);
    }
    // The reply is queued first, so the caller still gets it.
    if kill_self {
        ctx.client.close_after_reply = true;
    }
}
