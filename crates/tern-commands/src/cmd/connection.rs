//! Connection commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH, RESET.
//! CLIENT lives in `client.rs`.
//!
//! Authentication is Redis's ACL model (`crate::acl`): AUTH and HELLO AUTH
//! log the connection in as a user whose password matches (any password
//! for a `nopass` user, never for one that is off); the one-argument AUTH
//! is for `default` and refused while it needs no password. A failure is
//! an ACL LOG entry.

use std::sync::atomic::Ordering;

use tern_resp::Args;

use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::client::{flags as cflags, ReplyMode};
use crate::errors;
use crate::server::DEFAULT_USER;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("ping", -1, FAST, &[], ping)
        .doc("connection", "Returns the server's liveliness response.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"])
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    CommandSpec::new("echo", 2, LOADING | STALE | FAST, &[], echo)
        .doc("connection", "Returns the given string.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("quit", -1, ALLOW_BUSY | NO_AUTH | NOSCRIPT | LOADING | STALE | FAST | TX_CONTROL, &[], quit)
        .doc("connection", "Closes the connection.", "1.0.0", "O(1)")
        .deprecated("7.2.0", "just closing the connection")
        .acl(&["fast", "connection"]),
    CommandSpec::new("select", 2, LOADING | STALE | FAST, &[], select)
        .doc("connection", "Changes the selected database.", "1.0.0", "O(1)")
        .acl(&["fast", "connection"]),
    CommandSpec::new("hello", -1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, &[], hello)
        .doc("connection", "Handshakes with the Redis server.", "6.0.0", "O(1)")
        .history(&[("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context.")])
        .acl(&["fast", "connection"]),
    CommandSpec::new("auth", -2, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, &[], auth)
        .doc("connection", "Authenticates the connection.", "1.0.0", "O(N) where N is the number of passwords defined for the user")
        .history(&[("6.0.0", "Added ACL style (username and password).")])
        .acl(&["fast", "connection"]),
    // Not queued inside MULTI (it discards the transaction), and it walks
    // the watched keys' shards itself.
    CommandSpec::new("reset", 1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | TX_CONTROL | MANUAL_LOCKS, &[], reset)
        .doc("connection", "Resets the connection.", "6.2.0", "O(1)")
        .acl(&["fast", "connection"]),
];

fn ping(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 2 {
        ctx.arity_error();
        return;
    }
    if ctx.client.obeys_always() {
        if let Some(h) = tern_store::effect::mc_header(&[args.get(0), args.try_get(1).unwrap_or_default()]) {
            ctx.client.mc_item = Some(h);
        }
    }
    // A RESP2 subscriber can only receive arrays, so PING answers in the
    // shape of a message.
    if !ctx.client.resp3 && ctx.client.shared.has_flag(cflags::PUBSUB) {
        ctx.reply.array(2);
        ctx.reply.bulk(b"pong");
        ctx.reply.bulk(args.try_get(1).unwrap_or(b""));
        return;
    }
    match args.try_get(1) {
        None => ctx.reply.simple("PONG"),
        Some(msg) => ctx.reply.bulk(msg),
    }
}

fn echo(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    ctx.reply.bulk(args.get(1));
}

fn quit(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    ctx.reply.ok();
    ctx.client.close_after_reply = true;
}

fn select(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(db) = tern_resp::parse_i64(args.get(1)) else {
        ctx.reply.error(errors::NOT_INTEGER);
        return;
    };
    // Redis reads the index as a C int before looking at the range.
    if db < i64::from(i32::MIN) || db > i64::from(i32::MAX) {
        ctx.reply.error(errors::I32_OUT_OF_RANGE);
        return;
    }
    if db != 0 && ctx.srv.cluster.get().is_some() {
        ctx.reply.error(errors::CLUSTER_SELECT);
        return;
    }
    if db < 0 || db as usize >= ctx.ks.db_count() {
        ctx.reply.error(errors::DB_INDEX_OUT_OF_RANGE);
        return;
    }
    ctx.client.db = db as usize;
    ctx.client.shared.db.store(db as usize, Ordering::Relaxed);
    ctx.reply.ok();
}

/// The bytes of an argument as Redis's `%s` prints them: up to the first NUL.
pub(super) use crate::errors::c_str;

/// Can `v` be shown in a CLIENT LIST line? Printable ASCII without spaces,
/// checked (as Redis does) up to the first NUL.
pub(super) fn valid_client_attr(v: &[u8]) -> bool {
    c_str(v).iter().all(|&c| (b'!'..=b'~').contains(&c))
}

/// Sets (or with an empty name, clears) the connection's name; the name
/// must already be valid.
pub(super) fn set_client_name(ctx: &mut Ctx<'_, '_>, name: &[u8]) {
    let mut n = ctx.client.shared.name.lock();
    n.clear();
    n.extend_from_slice(name);
}

fn auth(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() > 3 {
        ctx.reply.error(errors::SYNTAX);
        return;
    }
    let (user, pass) = if args.len() == 2 {
        if ctx.srv.acl.default_user().nopass {
            ctx.reply.error(errors::AUTH_NO_PASSWORD);
            return;
        }
        (DEFAULT_USER, args.get(1))
    } else {
        (args.get(1), args.get(2))
    };
    if log_in(ctx, args.get(0), user, pass) {
        ctx.reply.ok();
    } else {
        ctx.reply.error(errors::WRONGPASS);
    }
}

/// Authenticates the connection as `user` if `pass` opens it; a failure
/// is logged (ACL LOG `auth`, its object the command's name as sent).
fn log_in(ctx: &mut Ctx<'_, '_>, cmd_name: &[u8], user: &[u8], pass: &[u8]) -> bool {
    match ctx.srv.acl.authenticate(user, pass) {
        Some(u) => {
            let epoch = ctx.srv.acl.epoch();
            ctx.client.log_in(u, epoch);
            true
        }
        None => {
            let multi = ctx.client.multi.is_some();
            let context = if multi { crate::acl::log::Context::Multi } else { crate::acl::log::Context::Toplevel };
            let fullname = ctx.cmd.fullname.clone();
            super::access::log_auth(ctx.srv, ctx.commands, ctx.client, context, cmd_name, user, &fullname, ctx.now);
            false
        }
    }
}

fn hello(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut proto = 0;
    let mut next = 1;
    if args.len() >= 2 {
        let Some(v) = tern_resp::parse_i64(args.get(1)) else {
            ctx.reply.error(errors::HELLO_BAD_PROTO);
            return;
        };
        if !(2..=3).contains(&v) {
            ctx.reply.error(errors::NOPROTO);
            return;
        }
        proto = v;
        next = 2;
    }
    let mut creds = None;
    let mut name = None;
    let mut j = next;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = args.get(j);
        if opt.eq_ignore_ascii_case(b"auth") && more >= 2 {
            creds = Some((args.get(j + 1), args.get(j + 2)));
            j += 3;
        } else if opt.eq_ignore_ascii_case(b"setname") && more >= 1 {
            let n = args.get(j + 1);
            // Checked before authenticating, so a bad name changes nothing.
            if !valid_client_attr(n) {
                ctx.reply.error(errors::BAD_CLIENT_NAME);
                return;
            }
            name = Some(n);
            j += 2;
        } else {
            ctx.reply.error(errors::hello_syntax(opt));
            return;
        }
    }
    if let Some((user, pass)) = creds {
        if !log_in(ctx, args.get(0), user, pass) {
            ctx.reply.error(errors::WRONGPASS);
            return;
        }
    }
    if !ctx.client.authenticated && ctx.srv.acl.auth_required() {
        ctx.reply.error(errors::HELLO_NOAUTH);
        return;
    }
    if let Some(n) = name {
        set_client_name(ctx, n);
    }
    if proto != 0 {
        let resp3 = proto == 3;
        ctx.client.resp3 = resp3;
        if let Some(t) = &ctx.client.tracking {
            t.tracker.set_resp3(resp3);
        }
        // The reply to HELLO itself is already in the new protocol.
        ctx.reply.enc.resp3 = resp3;
        ctx.client.shared.resp.store(proto as u8, Ordering::Relaxed);
    }
    let r = &mut ctx.reply;
    r.map(7);
    r.bulk(b"server");
    r.bulk(b"redis");
    r.bulk(b"version");
    r.bulk(crate::REDIS_VERSION.as_bytes());
    r.bulk(b"proto");
    r.int(if ctx.client.resp3 { 3 } else { 2 });
    r.bulk(b"id");
    r.int(ctx.client.id as i64);
    r.bulk(b"mode");
    r.bulk(b"standalone");
    r.bulk(b"role");
    r.bulk(b"master");
    r.bulk(b"modules");
    r.array(0);
}

/// Puts the connection back in the state of a new one, except that the
/// library name and version stay: they still describe the client behind it.
fn reset(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    super::transactions::discard_transaction(ctx.srv, ctx.client, ctx.locks);
    let c = &mut *ctx.client;
    c.shared.set_flag(cflags::DIRTY_CAS, false);
    c.db = 0;
    c.shared.db.store(0, Ordering::Relaxed);
    c.resp3 = false;
    c.shared.resp.store(2, Ordering::Relaxed);
    let (user, epoch) = ctx.srv.acl.default_session();
    c.authenticated = user.nopass && user.enabled;
    *c.shared.user.lock() = user.name.clone();
    c.user = user;
    c.acl_epoch = epoch;
    c.shared.name.lock().clear();
    // SKIP was turned into "drop this reply" before RESET ran, and Redis
    // does not clear that state either: only OFF and a pending SKIP go.
    if c.reply_mode != ReplyMode::SkipThis {
        c.reply_mode = ReplyMode::On;
    }
    c.no_evict = false;
    c.no_touch = false;
    c.asking = false;
    c.cluster_readonly = false;
    c.shared.set_flag(cflags::READONLY, false);
    if let Some(f) = c.monitor.take() {
        ctx.srv.monitors.remove(f.client_id);
        c.shared.set_flag(cflags::MONITOR, false);
    }
    if c.leave_pubsub(&ctx.srv.messaging.pubsub) {
        ctx.srv.refresh_notify();
    }
    super::tracking::stop(ctx.srv, c);
    c.shared.set_flag(cflags::NO_EVICT, false);
    c.shared.set_flag(cflags::NO_TOUCH, false);
    ctx.reply.enc.resp3 = false;
    ctx.reply.simple("RESET");
}
