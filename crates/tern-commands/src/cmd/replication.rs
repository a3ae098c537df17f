//! The master's replication commands: REPLCONF (a replica's handshake),
//! SYNC and PSYNC (which hand the connection over to `tern_persist::repl::master`
//! once the reply buffer is empty), WAIT, WAITAOF and ROLE.

use std::sync::atomic::Ordering;

use tern_resp::{parse_i64, Args};

use super::blocking::{self, Timeout};
use super::table::{flags::*, CommandSpec};
use super::Ctx;
use crate::errors;
use crate::repl::{state, SyncRequest};

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("replconf", -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY, &[], replconf)
        .doc("server", "An internal command for configuring the replication stream.", "3.0.0", "O(1)")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("sync", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI, &[], sync)
        .doc("server", "An internal command used in replication.", "1.0.0", "")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("psync", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI, &[], sync)
        .doc("server", "An internal command used in replication.", "2.8.0", "")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("wait", 3, BLOCKING, &[], wait)
        .doc("generic", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", "3.0.0", "O(1)")
        .acl(&["slow", "connection", "blocking"])
        .tips(&["request_policy:all_shards", "response_policy:agg_min"]),
    CommandSpec::new("waitaof", 4, BLOCKING, &[], waitaof)
        .doc("generic", "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas.", "7.2.0", "O(1)")
        .acl(&["slow", "connection", "blocking"])
        .tips(&["request_policy:all_shards", "response_policy:agg_min"]),
    CommandSpec::new("replicaof", 3, ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING, &[], replicaof)
        .doc("server", "Configures a server as replica of another, or promotes it to a master.", "5.0.0", "O(1)")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("slaveof", 3, ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING, &[], replicaof)
        .doc("server", "Sets a Redis server as a replica of another, or promotes it to being a master.", "1.0.0", "O(1)")
        .deprecated("5.0.0", "`REPLICAOF`")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("failover", -1, ADMIN | NOSCRIPT | STALE, &[], failover)
        .doc("server", "Starts a coordinated failover from a server to one of its replicas.", "6.2.0", "O(1)")
        .acl(&["admin", "slow", "dangerous"]),
    CommandSpec::new("role", 1, NOSCRIPT | LOADING | STALE | FAST, &[], role)
        .doc("server", "Returns the replication role.", "2.8.12", "O(1)")
        .acl(&["admin", "fast", "dangerous"]),
];

/// Redis's NET_HOST_STR_LEN: an announced address is shorter.
const HOST_MAX: usize = 256;

fn replconf(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if args.len() % 2 == 0 {
        ctx.reply.error(errors::SYNTAX);
        return;
    }
    let mut hello = ctx.client.replica.as_deref().cloned().unwrap_or_default();
    let mut j = 1;
    while j < args.len() {
        let (opt, val) = (args.get(j), args.get(j + 1));
        let is = |name: &str| opt.eq_ignore_ascii_case(name.as_bytes());
        if is("listening-port") {
            // Redis keeps a `long`; a port out of range is its own business.
            let Some(port) = parse_i64(val) else {
                ctx.reply.error(errors::NOT_INTEGER);
                return;
            };
            hello.listening_port = port as u16;
        } else if is("ip-address") {
            if val.len() >= HOST_MAX {
                ctx.reply.error(errors::replconf_ip_too_long(val.len()));
                return;
            }
            hello.ip = Some(String::from_utf8_lossy(val).into_owned());
        } else if is("capa") {
            // Capabilities this master does not know are ignored.
            if val.eq_ignore_ascii_case(b"eof") {
                hello.eof = true;
            } else if val.eq_ignore_ascii_case(b"psync2") {
                hello.psync2 = true;
            }
        } else if is("ack") || is("getack") {
            // A replica's acknowledgements reach its link's reader, not
            // this; a client that is no replica gets no reply, as Redis's.
            return;
        } else if is("rdb-only") {
            match parse_i64(val) {
                Some(n @ 0..=1) => hello.rdb_only = n == 1,
                Some(_) => {
                    ctx.reply.error(errors::RANGE_0_1);
                    return;
                }
                None => {
                    ctx.reply.error(errors::NOT_INTEGER);
                    return;
                }
            }
        } else if is("rdb-filter-only") {
            // Everything is left out but what the filters name (only
            // `functions` exists).
            let words: Vec<&[u8]> = val.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).collect();
            hello.exclude_data = true;
            hello.exclude_functions = true;
            for w in words {
                if w.eq_ignore_ascii_case(b"functions") {
                    hello.exclude_functions = false;
                } else {
                    ctx.reply.error(errors::replconf_filter(w));
                    return;
                }
            }
        } else {
            ctx.reply.error(errors::replconf_option(opt));
            return;
        }
        j += 2;
    }
    ctx.client.replica = Some(Box::new(hello));
    ctx.reply.ok();
}

/// SYNC and PSYNC: the connection becomes a replica's link once this
/// request's turn ends (its worker hands it over, with nothing owed).
fn sync(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if ctx.client.sync.is_some() {
        return;
    }
    let psync = args.get(0).eq_ignore_ascii_case(b"psync");
    // A master's FAILOVER asks this replica, which follows the same
    // stream, to take over; then its PSYNC goes on as any.
    if psync && args.len() > 3 && args.get(3).eq_ignore_ascii_case(b"failover") {
        tern_config::log_notice!("Failover request received for replid {}.", String::from_utf8_lossy(args.get(1)));
        if !ctx.srv.repl.is_replica() {
            return ctx.reply.error(errors::PSYNC_FAILOVER_TO_MASTER);
        }
        if args.get(1) != ctx.srv.repl.replid().as_bytes() {
            return ctx.reply.error(errors::PSYNC_FAILOVER_REPLID);
        }
        ctx.srv.durability().promote(ctx.srv);
        tern_config::log_notice!("MASTER MODE enabled (failover request from 'id={} addr={}')", ctx.client.id, ctx.client.shared.addr);
    }
    if ctx.srv.repl.failing_over() {
        ctx.reply.error(errors::SYNC_DURING_FAILOVER);
        return;
    }
    if ctx.srv.repl.is_replica() && !ctx.srv.repl.link_up() {
        ctx.reply.error(errors::NOMASTERLINK);
        return;
    }
    if ctx.reply.out.pending() > 0 {
        ctx.reply.error(errors::SYNC_PENDING_OUTPUT);
        return;
    }
    let psync = if psync {
        let Some(off) = parse_i64(args.get(2)) else {
            ctx.reply.error(errors::NOT_INTEGER);
            return;
        };
        Some((args.get(1).to_vec(), off))
    } else {
        None
    };
    let hello = ctx.client.replica.as_deref().cloned().unwrap_or_default();
    if (hello.exclude_data || hello.exclude_functions) && !hello.eof {
        ctx.reply.error(errors::FILTERED_NEEDS_EOF);
        return;
    }
    ctx.client.replica = Some(Box::new(hello));
    ctx.client.sync = Some(SyncRequest { psync });
}

/// REPLICAOF host port / NO ONE (and SLAVEOF): the link thread
/// (`tern_persist::repl::replica`) follows the change.
fn replicaof(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    // A cluster node's master is CLUSTER REPLICATE's (or a failover's).
    if ctx.srv.cluster.get().is_some() {
        return ctx.reply.error(errors::CLUSTER_REPLICAOF);
    }
    let repl = &ctx.srv.repl;
    if repl.failing_over() {
        return ctx.reply.error(errors::REPLICAOF_DURING_FAILOVER);
    }
    if args.get(1).eq_ignore_ascii_case(b"no") && args.get(2).eq_ignore_ascii_case(b"one") {
        if repl.is_replica() {
            ctx.srv.durability().promote(ctx.srv);
            tern_config::log_notice!("MASTER MODE enabled (user request from 'id={} addr={}')", ctx.client.id, ctx.client.shared.addr);
        }
        return ctx.reply.ok();
    }
    let port = match parse_i64(args.get(2)) {
        Some(p @ 0..=65535) => p as u16,
        _ => return ctx.reply.error(errors::INVALID_MASTER_PORT),
    };
    let host = String::from_utf8_lossy(args.get(1)).into_owned();
    ctx.srv.ks.set_replica(true);
    if !repl.set_master(&host, port) {
        tern_config::log_notice!("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
        return ctx.reply.simple("OK Already connected to specified master");
    }
    tern_config::log_notice!("REPLICAOF {}:{} enabled (user request from 'id={} addr={}')", host, port, ctx.client.id, ctx.client.shared.addr);
    ctx.reply.ok();
}

/// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | ABORT: checks and
/// replies as Redis's failoverCommand; the cron (`tern_persist::repl::master`) carries
/// it out with writes paused.
fn failover(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let srv = ctx.srv;
    if srv.cluster.get().is_some() {
        return ctx.reply.error(errors::CLUSTER_FAILOVER_CMD);
    }
    if args.len() == 2 && args.get(1).eq_ignore_ascii_case(b"abort") {
        if !srv.repl.failing_over() {
            return ctx.reply.error(errors::NO_FAILOVER);
        }
        srv.durability().abort_failover(srv, "Failover manually aborted");
        return ctx.reply.ok();
    }
    let (mut timeout, mut force, mut target) = (0i64, false, None);
    let mut j = 1;
    while j < args.len() {
        let a = args.get(j);
        if a.eq_ignore_ascii_case(b"timeout") && j + 1 < args.len() && timeout == 0 {
            let Some(t) = parse_i64(args.get(j + 1)) else { return ctx.reply.error(errors::NOT_INTEGER) };
            if t <= 0 {
                return ctx.reply.error(errors::FAILOVER_TIMEOUT);
            }
            timeout = t;
            j += 1;
        } else if a.eq_ignore_ascii_case(b"to") && j + 2 < args.len() && target.is_none() {
            let Some(port) = parse_i64(args.get(j + 2)) else { return ctx.reply.error(errors::NOT_INTEGER) };
            target = Some((String::from_utf8_lossy(args.get(j + 1)).into_owned(), port));
            j += 2;
        } else if a.eq_ignore_ascii_case(b"force") && !force {
            force = true;
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    if srv.repl.failing_over() {
        return ctx.reply.error(errors::FAILOVER_IN_PROGRESS);
    }
    if srv.repl.is_replica() {
        return ctx.reply.error(errors::FAILOVER_ON_REPLICA);
    }
    if srv.repl.replicas().is_empty() {
        return ctx.reply.error(errors::FAILOVER_NO_REPLICAS);
    }
    if force && (timeout == 0 || target.is_none()) {
        return ctx.reply.error(errors::FAILOVER_FORCE);
    }
    let target = match target {
        Some((host, port)) => {
            let found = u16::try_from(port).ok().and_then(|p| srv.repl.find_replica(&host, p).map(|f| (p, f)));
            let Some((port, (online, _))) = found else { return ctx.reply.error(errors::FAILOVER_NOT_A_REPLICA) };
            if !online {
                return ctx.reply.error(errors::FAILOVER_NOT_ONLINE);
            }
            tern_config::log_notice!("FAILOVER requested to {}:{}.", host, port);
            Some((host, port))
        }
        None => {
            tern_config::log_notice!("FAILOVER requested to any replica.");
            None
        }
    };
    let end_ms = (timeout > 0).then(|| ctx.now.saturating_add(timeout as u64));
    *srv.repl.failover.lock() = Some(crate::repl::Failover { target, force, end_ms, in_progress: false });
    // Writes wait until it is over, as Redis pauses them.
    srv.pause.set(crate::server::PausePurpose::Failover, u64::MAX >> 3, crate::server::PauseMode::Write, ctx.now);
    srv.wake_all();
    ctx.reply.ok();
}

fn role(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let repl = &ctx.srv.repl;
    if let Some((host, port, state, offset)) = repl.upstream_view() {
        let r = &mut ctx.reply;
        r.array(5);
        r.bulk(b"slave");
        r.bulk(host.as_bytes());
        r.int(i64::from(port));
        r.bulk(state.as_bytes());
        return r.int(offset);
    }
    let online: Vec<_> = repl.replicas().into_iter().filter(|r| r.state.load(Ordering::Relaxed) == state::ONLINE).collect();
    let r = &mut ctx.reply;
    r.array(3);
    r.bulk(b"master");
    r.int(repl.offset() as i64);
    r.array(online.len());
    for rep in online {
        r.array(3);
        r.bulk(rep.ip.as_bytes());
        r.bulk_int(i64::from(rep.port));
        r.bulk_int(rep.ack.load(Ordering::Relaxed) as i64);
    }
}

/// Ends the client's WAIT or WAITAOF, keeping where its writes were found
/// to end for the next one.
fn forget(ctx: &mut Ctx<'_, '_>, fsynced: Option<u64>) {
    if let Some(k) = ctx.srv.repl.forget_waiter(ctx.client.id, fsynced).known {
        ctx.client.repl_known = Some(k);
    }
}

/// WAIT numreplicas timeout: the client waits (keyless, as a blocked
/// client) until that many replicas have acknowledged the stream up to
/// the end of its last write, or the timeout; the reply is how many have.
/// The stream's writer sets where its writes end and asks the replicas to
/// acknowledge; each acknowledgement that satisfies it posts a wake, and
/// the command runs again (`blocking::retry`).
fn wait(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(need) = parse_i64(args.get(1)) else {
        return ctx.reply.error(errors::NOT_INTEGER);
    };
    let timeout = match Timeout::parse_ms(args.get(2), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    let repl = &ctx.srv.repl;
    if repl.is_replica() {
        return ctx.reply.error(errors::WAIT_ON_REPLICA);
    }
    let (id, waiting) = (ctx.client.id, blocking::serving(ctx));
    let acked = repl.wait_status(id, ctx.worker, ctx.client.repl_seq, ctx.client.repl_known, need, None, None).replicas;
    if acked as i64 >= need || !blocking::may_wait(ctx) {
        forget(ctx, None);
        if waiting {
            blocking::served(ctx);
        }
        return ctx.reply.int(acked as i64);
    }
    if !waiting {
        blocking::wait_keyless(ctx, args, timeout.0, true);
        // The writer sets where this client's writes end at its next
        // round, and asks the replicas to acknowledge.
        repl.want_acks();
        ctx.srv.aof.feed.nudge();
    }
}

/// WAITAOF numlocal numreplicas timeout: as WAIT, until the local AOF (if
/// `numlocal` is 1) has fsynced the client's writes and that many replicas
/// said (REPLCONF ACK's FACK) theirs have; the reply is both counts.
/// Checked in Redis's order: the arguments, then the role, then the AOF.
fn waitaof(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let numlocal = match parse_i64(args.get(1)) {
        Some(n @ 0..=1) => n,
        Some(_) => return ctx.reply.error(errors::RANGE_0_1),
        None => return ctx.reply.error(errors::NOT_INTEGER),
    };
    let need = match parse_i64(args.get(2)) {
        Some(n) if n >= 0 => n,
        Some(_) => return ctx.reply.error(errors::MUST_BE_POSITIVE),
        None => return ctx.reply.error(errors::NOT_INTEGER),
    };
    let timeout = match Timeout::parse_ms(args.get(3), ctx.now) {
        Ok(t) => t,
        Err(e) => return ctx.reply.error(e),
    };
    let (srv, id, waiting) = (ctx.srv, ctx.client.id, blocking::serving(ctx));
    let repl = &srv.repl;
    let fsynced = srv.aof.fsynced();
    let refused = if repl.is_replica() {
        Some(errors::WAITAOF_ON_REPLICA)
    } else if numlocal > 0 && fsynced.is_none() {
        Some(errors::WAITAOF_NO_AOF)
    } else {
        None
    };
    if let Some(e) = refused {
        // A client already waiting ends with it (the AOF was turned off).
        if waiting {
            forget(ctx, fsynced);
            blocking::served(ctx);
        }
        return ctx.reply.error(e);
    }
    let acked = repl.wait_status(id, ctx.worker, ctx.client.repl_seq, ctx.client.repl_known, need, Some(numlocal), fsynced);
    let local = i64::from(acked.local.unwrap_or(false));
    if (acked.replicas as i64 >= need && local >= numlocal) || !blocking::may_wait(ctx) {
        forget(ctx, fsynced);
        if waiting {
            blocking::served(ctx);
        }
        let r = &mut ctx.reply;
        r.array(2);
        r.int(local);
        return r.int(acked.replicas as i64);
    }
    if !waiting {
        blocking::wait_keyless(ctx, args, timeout.0, true);
        repl.want_acks();
        srv.aof.feed.nudge();
    }
}
