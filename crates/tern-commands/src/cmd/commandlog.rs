//! SLOWLOG (Redis) and COMMANDLOG (Valkey) over the logs of `cmdlog`, and
//! [`note`], which [`super::call`] runs after every command to log it if
//! it crossed a threshold. SLOWLOG's entries are COMMANDLOG's `slow` ones.

use tern_resp::Args;

use super::table::{flags::*, Cmd, CommandSpec};
use super::Ctx;
use crate::client::Client;
use crate::cmdlog::{is_secret, kept_args, Entry, Kind};
use crate::errors;
use crate::server::Server;

const ADMIN_SUB: u32 = ADMIN | LOADING | STALE;
const ADMIN_ACL: &[&str] = &["admin", "slow", "dangerous"];

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("slowlog", -2, 0, &[], super::unknown_subcommand)
        .doc("server", "A container for slow log commands.", "2.2.12", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(&[
            CommandSpec::new("get", -2, ADMIN_SUB, &[], slowlog_get)
                .doc("server", "Returns the slow log's entries.", "2.2.12", "O(N) where N is the number of entries returned")
        .history(&[("4.0.0", "Added client IP address, port and name to the reply.")])
                .acl(ADMIN_ACL)
                .tips(&["request_policy:all_nodes", "nondeterministic_output"]),
            CommandSpec::new("help", 2, LOADING | STALE, &[], slowlog_help)
                .doc("server", "Show helpful text about the different subcommands", "6.2.0", "O(1)")
                .acl(&["slow"]),
            CommandSpec::new("len", 2, ADMIN_SUB, &[], slowlog_len)
                .doc("server", "Returns the number of entries in the slow log.", "2.2.12", "O(1)")
                .acl(ADMIN_ACL)
                .tips(&["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"]),
            CommandSpec::new("reset", 2, ADMIN_SUB, &[], slowlog_reset)
                .doc("server", "Clears all entries from the slow log.", "2.2.12", "O(N) where N is the number of entries in the slowlog")
                .acl(ADMIN_ACL)
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
        ]),
    CommandSpec::new("commandlog", -2, 0, &[], super::unknown_subcommand)
        .doc("server", "A container for command log commands.", "8.1.0", "Depends on subcommand.")
        .acl(&["slow"])
        .subs(&[
            CommandSpec::new("get", 4, ADMIN_SUB, &[], commandlog_get)
                .doc("server", "Returns the specified command log's entries.", "8.1.0", "O(N) where N is the number of entries returned")
                .acl(ADMIN_ACL)
                .tips(&["request_policy:all_nodes", "nondeterministic_output"]),
            CommandSpec::new("help", 2, LOADING | STALE, &[], commandlog_help)
                .doc("server", "Show helpful text about the different subcommands", "8.1.0", "O(1)")
                .acl(&["slow"]),
            CommandSpec::new("len", 3, ADMIN_SUB, &[], commandlog_len)
                .doc("server", "Returns the number of entries in the specified type of command log.", "8.1.0", "O(1)")
                .acl(ADMIN_ACL)
                .tips(&["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"]),
            CommandSpec::new("reset", 3, ADMIN_SUB, &[], commandlog_reset)
                .doc("server", "Clears all entries from the specified type of command log.", "8.1.0", "O(N) where N is the number of entries in the commandlog")
                .acl(ADMIN_ACL)
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
        ]),
];

/// What [`super::call`] measured of a command, from what it had anyway:
/// its duration (µs), its request's bytes on the wire, its reply's bytes
/// (references to stored values by their length).
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub usec: u64,
    pub request: usize,
    pub reply: usize,
}

/// Logs the command that just ran in each log whose threshold it reached.
/// The common case is three comparisons; building an entry is [`record`]'s.
#[inline]
pub fn note(srv: &Server, client: &Client, worker: usize, cmd: &Cmd, args: Args<'_>, now_ms: u64, m: Measured) {
    let s = &srv.settings;
    let reached = |threshold: i64, v: u64| threshold >= 0 && v >= threshold as u64;
    let slow = reached(s.slowlog_log_slower_than(), m.usec);
    let request = reached(s.commandlog_request_larger_than(), m.request as u64);
    let reply = reached(s.commandlog_reply_larger_than(), m.reply as u64);
    if (slow || request || reply) && !cmd.has(SKIP_SLOWLOG) {
        record(srv, client, worker, cmd, args, now_ms, [(slow, m.usec), (request, m.request as u64), (reply, m.reply as u64)]);
    }
}

#[cold]
fn record(srv: &Server, client: &Client, worker: usize, cmd: &Cmd, args: Args<'_>, now_ms: u64, hits: [(bool, u64); 3]) {
    let all: Vec<&[u8]> = args.iter().collect();
    let kept = kept_args(all.iter().copied(), |i| is_secret(&cmd.fullname, &all, i));
    let name = client.shared.name.lock().clone();
    let s = &srv.settings;
    let max_lens = [s.slowlog_max_len(), s.commandlog_large_request_max_len(), s.commandlog_large_reply_max_len()];
    for ((kind, (hit, value)), max_len) in [Kind::Slow, Kind::LargeRequest, Kind::LargeReply].into_iter().zip(hits).zip(max_lens) {
        if !hit {
            continue;
        }
        srv.cmdlog.push(worker, kind, max_len.max(0) as usize, |id| Entry {
            id,
            time_s: now_ms / 1000,
            value,
            args: kept.clone(),
            addr: client.shared.addr.clone(),
            name: name.clone(),
        });
    }
}

/// `<count>`: -1 for all, else at least 0; anything else is refused with
/// the reference's one message.
fn parse_count(ctx: &mut Ctx<'_, '_>, arg: &[u8]) -> Option<usize> {
    match tern_resp::parse_i64(arg) {
        Some(-1) => Some(usize::MAX),
        Some(n) if n >= 0 => Some(n as usize),
        _ => {
            ctx.reply.error(errors::COUNT_AT_LEAST_MINUS_ONE);
            None
        }
    }
}

fn parse_kind(ctx: &mut Ctx<'_, '_>, arg: &[u8]) -> Option<Kind> {
    let k = Kind::parse(arg);
    if k.is_none() {
        ctx.reply.error(errors::COMMANDLOG_TYPE);
    }
    k
}

fn max_len(ctx: &Ctx<'_, '_>, kind: Kind) -> usize {
    let s = &ctx.srv.settings;
    let n = match kind {
        Kind::Slow => s.slowlog_max_len(),
        Kind::LargeRequest => s.commandlog_large_request_max_len(),
        Kind::LargeReply => s.commandlog_large_reply_max_len(),
    };
    n.max(0) as usize
}

/// Entries as SLOWLOG GET and COMMANDLOG GET send them: id, time, value,
/// arguments, address, name.
fn reply_entries(ctx: &mut Ctx<'_, '_>, kind: Kind, count: usize) {
    let entries = ctx.srv.cmdlog.newest(kind, count, max_len(ctx, kind));
    let r = &mut ctx.reply;
    r.array(entries.len());
    for e in &entries {
        r.array(6);
        r.int(e.id as i64);
        r.int(e.time_s as i64);
        r.int(e.value as i64);
        r.array(e.args.len());
        for a in &e.args {
            r.bulk(a);
        }
        r.bulk(e.addr.as_bytes());
        r.bulk(&e.name);
    }
}

fn slowlog_get(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        let msg = errors::subcommand_syntax(args.get(1), "slowlog");
        ctx.reply.error(&msg);
        return;
    }
    let count = match args.try_get(2) {
        None => 10,
        Some(a) => match parse_count(ctx, a) {
            Some(n) => n,
            None => return,
        },
    };
    reply_entries(ctx, Kind::Slow, count);
}

fn slowlog_len(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let n = ctx.srv.cmdlog.len(Kind::Slow, max_len(ctx, Kind::Slow));
    ctx.reply.int(n as i64);
}

fn slowlog_reset(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.srv.cmdlog.reset(Kind::Slow);
    ctx.reply.ok();
}

fn slowlog_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(
        ctx,
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
}

fn commandlog_get(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(count) = parse_count(ctx, args.get(2)) else { return };
    let Some(kind) = parse_kind(ctx, args.get(3)) else { return };
    reply_entries(ctx, kind, count);
}

fn commandlog_len(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(kind) = parse_kind(ctx, args.get(2)) else { return };
    let n = ctx.srv.cmdlog.len(kind, max_len(ctx, kind));
    ctx.reply.int(n as i64);
}

fn commandlog_reset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(kind) = parse_kind(ctx, args.get(2)) else { return };
    ctx.srv.cmdlog.reset(kind);
    ctx.reply.ok();
}

fn commandlog_help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(
        ctx,
        &[
            "GET <count> <type>",
            "    Return top <count> entries of the specified <type> from the commandlog (-1 mean all).",
            "    Entries are made of:",
            "    id, timestamp,",
            "        time in microseconds for type of slow,",
            "        or size in bytes for type of large-request,",
            "        or size in bytes for type of large-reply",
            "    arguments array, client IP and port,",
            "    client name",
            "LEN <type>",
            "    Return the length of the specified type of commandlog.",
            "RESET <type>",
            "    Reset the specified type of commandlog.",
        ],
    );
}
