//! MONITOR, and [`feed`], which [`super::call`] runs after a command while
//! any client monitors (the lines and their delivery are `crate::monitor`).
//! A monitor may still run commands that touch no key (PING, INFO, ...);
//! dispatch refuses the others; RESET ends monitoring, QUIT the connection.

use std::sync::Arc;

use tern_resp::Args;

use super::table::{flags::*, Cmd, CommandSpec};
use super::Ctx;
use crate::client::{flags as cflags, Client};
use crate::cmdlog::is_secret;
use crate::errors;
use crate::monitor::{line, Feed};
use crate::server::Server;

pub static COMMANDS: &[CommandSpec] = &[CommandSpec::new("monitor", 1, ADMIN | NOSCRIPT | LOADING | STALE, &[], monitor)
    .doc("server", "Listens for all requests received by the server in real-time.", "1.0.0", "")
    .acl(&["admin", "slow", "dangerous"])];

fn monitor(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    // Queued by MULTI, it would block the transaction's client for good.
    if ctx.locks.is_pinned() {
        ctx.reply.error(errors::MONITOR_DENY_BLOCKING);
        return;
    }
    // Already monitoring: nothing, not even a reply (as Redis).
    if ctx.client.monitor.is_some() {
        return;
    }
    let f = Feed::new(ctx.client.id, ctx.worker);
    ctx.srv.monitors.add(Arc::clone(&f));
    ctx.client.monitor = Some(f);
    ctx.client.shared.set_flag(cflags::MONITOR, true);
    ctx.reply.ok();
}

/// Sends the command that just ran to every monitor. Only called while
/// some client monitors, so reading the clock again costs nothing otherwise.
#[cold]
pub fn feed(srv: &Server, client: &Client, cmd: &Cmd, args: Args<'_>) {
    let us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0);
    let all: Vec<&[u8]> = args.iter().collect();
    let l = line(us, client.db, &client.shared.addr, all.iter().copied(), |i| is_secret(&cmd.fullname, &all, i));
    let limit = srv.settings.client_output_buffer_limit().replica.hard as usize;
    srv.monitors.broadcast(&l, limit, |w| srv.wake(w));
}
