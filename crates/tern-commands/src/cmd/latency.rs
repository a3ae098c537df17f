//! LATENCY DOCTOR/GRAPH/LATEST/HISTORY/RESET/HISTOGRAM/HELP over
//! `crate::latency`, and [`note`], which [`super::call`] runs after every
//! command: a command that took `latency-monitor-threshold` ms or more is a
//! `command` event (a `fast-command` one if it is flagged fast). The timer
//! adds `expire-cycle` and `eviction-cycle` events.

use tern_resp::Args;

use super::table::{flags::*, Cmd, CommandSpec};
use super::Ctx;
use crate::errors;
use crate::latency::{Distribution, DoctorSettings};
use crate::sysinfo::anon_huge_pages_bytes;
use crate::server::Server;

const DIAG: u32 = ADMIN | NOSCRIPT | LOADING | STALE;
const DIAG_ACL: &[&str] = &["admin", "slow", "dangerous"];
const DIAG_TIPS: &[&str] = &["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"];

pub static COMMANDS: &[CommandSpec] = &[CommandSpec::new("latency", -2, 0, &[], super::unknown_subcommand)
    .doc("server", "A container for latency diagnostics commands.", "2.8.13", "Depends on subcommand.")
    .acl(&["slow"])
    .subs(&[
        CommandSpec::new("doctor", 2, DIAG, &[], doctor)
            .doc("server", "Returns a human-readable latency analysis report.", "2.8.13", "O(1)")
            .acl(DIAG_ACL)
            .tips(DIAG_TIPS),
        CommandSpec::new("graph", 3, DIAG, &[], graph)
            .doc("server", "Returns a latency graph for an event.", "2.8.13", "O(1)")
            .acl(DIAG_ACL)
            .tips(DIAG_TIPS),
        CommandSpec::new("help", 2, LOADING | STALE, &[], help)
            .doc("server", "Returns helpful text about the different subcommands.", "2.8.13", "O(1)")
            .acl(&["slow"]),
        CommandSpec::new("histogram", -2, DIAG, &[], histogram)
            .doc(
                "server",
                "Returns the cumulative distribution of latencies of a subset or all commands.",
                "7.0.0",
                "O(N) where N is the number of commands with latency information being retrieved.",
            )
            .acl(DIAG_ACL)
            .tips(DIAG_TIPS),
        CommandSpec::new("history", 3, DIAG, &[], history)
            .doc("server", "Returns timestamp-latency samples for an event.", "2.8.13", "O(1)")
            .acl(DIAG_ACL)
            .tips(DIAG_TIPS),
        CommandSpec::new("latest", 2, DIAG, &[], latest)
            .doc("server", "Returns the latest latency samples for all events.", "2.8.13", "O(1)")
            .acl(DIAG_ACL)
            .tips(DIAG_TIPS),
        CommandSpec::new("reset", -2, DIAG, &[], reset)
            .doc("server", "Resets the latency data for one or more events.", "2.8.13", "O(1)")
            .acl(DIAG_ACL)
            .tips(&["request_policy:all_nodes", "response_policy:agg_sum"]),
    ])];

/// Adds the command that just ran to the latency monitor if it took
/// `latency-monitor-threshold` ms or more.
#[inline]
pub fn note(srv: &Server, cmd: &Cmd, now_ms: u64, usec: u64) {
    let threshold = srv.settings.latency_monitor_threshold();
    if threshold > 0 {
        let event = if cmd.has(FAST) { "fast-command" } else { "command" };
        srv.latency_events.note(threshold, event, now_ms, usec / 1000);
    }
}

fn help(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::help_lines(
        ctx,
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    );
}

fn doctor(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let s = &ctx.srv.settings;
    let cfg = DoctorSettings {
        threshold: s.latency_monitor_threshold(),
        slowlog_slower_than: s.slowlog_log_slower_than(),
        hz: s.hz(),
        anon_huge_pages: anon_huge_pages_bytes() > 0,
    };
    let report = crate::latency::doctor(&ctx.srv.latency_events.events(), ctx.now / 1000, &cfg);
    ctx.reply.verbatim(report.as_bytes());
}

fn graph(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    match ctx.srv.latency_events.event(args.get(2)) {
        Some(e) => {
            let text = crate::latency::graph(&e, ctx.now / 1000);
            ctx.reply.verbatim(text.as_bytes());
        }
        None => ctx.reply.error(errors::no_latency_samples(args.get(2))),
    }
}

fn latest(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let all = ctx.srv.latency_events.latest();
    ctx.reply.array(all.len());
    for (event, last, max) in all {
        ctx.reply.array(4);
        ctx.reply.bulk(event.as_bytes());
        ctx.reply.int(last.time_s as i64);
        ctx.reply.int(last.ms as i64);
        ctx.reply.int(max as i64);
    }
}

fn history(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let samples = ctx.srv.latency_events.history(args.get(2));
    ctx.reply.array(samples.len());
    for s in samples {
        ctx.reply.array(2);
        ctx.reply.int(s.time_s as i64);
        ctx.reply.int(s.ms as i64);
    }
}

fn reset(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let events: Vec<&[u8]> = args.tail(2).iter().collect();
    let n = ctx.srv.latency_events.reset(&events);
    ctx.reply.int(n as i64);
}

/// The commands LATENCY HISTOGRAM names: each named one (`config|set`
/// form too) and, for a container, its subcommands; unknown names are
/// skipped, as in Redis.
fn named<'t>(ctx: &Ctx<'_, 't>, args: &Args<'_>) -> Vec<&'t Cmd> {
    let table = ctx.commands;
    let mut out = Vec::new();
    for name in args.tail(2).iter() {
        let cmd = match name.iter().position(|&c| c == b'|') {
            Some(bar) => table.lookup(&name[..bar]).and_then(|p| table.lookup_sub(p, &name[bar + 1..])),
            None => table.lookup(name),
        };
        let Some(cmd) = cmd else { continue };
        out.push(cmd);
        let mut subs: Vec<usize> = cmd.subs.values().collect();
        subs.sort_unstable();
        out.extend(subs.into_iter().map(|id| table.get(id)));
    }
    out
}

fn histogram(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let cmds: Vec<&Cmd> = if args.len() == 2 { ctx.commands.iter().collect() } else { named(ctx, &args) };
    let lat = &ctx.srv.latency;
    let found: Vec<(&Cmd, Distribution)> = cmds.into_iter().filter_map(|c| lat.distribution(c.id).map(|d| (c, d))).collect();
    let r = &mut ctx.reply;
    r.map(found.len());
    for (c, (calls, cdf)) in found {
        r.bulk(c.fullname.as_bytes());
        r.map(2);
        r.bulk(b"calls");
        r.int(calls as i64);
        r.bulk(b"histogram_usec");
        r.map(cdf.len());
        for (usec, count) in cdf {
            r.int(usec as i64);
            r.int(count as i64);
        }
    }
}
