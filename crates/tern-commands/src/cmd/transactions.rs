//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! Queueing happens in [`super::dispatch`]: between MULTI and EXEC every
//! command without `TX_CONTROL` is checked (lookup, arity, auth) and its
//! arguments copied into [`MultiState`]. A command that fails those checks
//! marks the transaction failed, and EXEC then answers `EXECABORT`.
//!
//! EXEC pins every shard of every database ([`tern_store::LockSet::lock_all`])
//! before it looks at anything, so the queued commands run with no other
//! client in between, and the handlers' own acquire/release calls become
//! no-ops. Holding every shard costs one lock per shard per EXEC; that buys
//! atomicity for any mix of keys, databases and whole-database commands
//! without planning the transaction's keys up front.
//!
//! WATCH registers a flag on each key's shard; any write to the key (or its
//! expiry, or FLUSHDB) sets it, and EXEC with the flag set replies with a
//! null array. As in Redis 7, a key that expires between WATCH and EXEC
//! aborts the transaction too: WATCH deletes an already expired key first
//! (so a registered key was live when watched), and EXEC looks every
//! watched key up, which deletes it if it expired since and so sets the
//! client's own flag.

use std::sync::atomic::Ordering;

use tern_resp::Args;
use tern_store::{LockSet, WatchFlag};

use super::keyspec::{index, ks, range, RO};
use super::table::{flags::*, CommandSpec};
use super::{call, Ctx, Reply, Scratch};
use crate::client::{flags as cflags, Client, Watched};
use crate::errors;
use crate::server::Server;

pub static COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("multi", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | TX_CONTROL, &[], multi)
        .doc("transactions", "Starts a transaction.", "1.2.0", "O(1)")
        .acl(&["fast", "transaction"]),
    CommandSpec::new("exec", 1, NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG | TX_CONTROL, &[], exec)
        .doc("transactions", "Executes all commands in a transaction.", "1.2.0", "Depends on commands in the transaction")
        .acl(&["slow", "transaction"]),
    CommandSpec::new("discard", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | TX_CONTROL, &[], discard)
        .doc("transactions", "Discards a transaction.", "2.0.0", "O(N), when N is the number of queued commands")
        .acl(&["fast", "transaction"]),
    CommandSpec::new("watch", -2, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | TX_CONTROL, &[ks(RO, index(1), range(-1, 1, 0))], watch)
        .doc("transactions", "Monitors changes to keys to determine the execution of a transaction.", "2.2.0", "O(1) for every key.")
        .acl(&["fast", "transaction"]),
    // Not TX_CONTROL: inside MULTI, Redis queues UNWATCH like any command.
    CommandSpec::new("unwatch", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, &[], unwatch)
        .doc("transactions", "Forgets about watched keys of a transaction.", "2.2.0", "O(1)")
        .acl(&["fast", "transaction"]),
];


/// Unregisters every WATCH of `client` and clears its flag. Works with the
/// set pinned (inside EXEC) or empty (anywhere else): the watched shards
/// are acquired together, in order.
pub fn unwatch_all(srv: &Server, client: &mut Client, locks: &mut LockSet<'_>) {
    if !client.watched.is_empty() {
        locks.acquire(client.watched.iter().map(|w| w.loc.gid));
        for w in client.watched.drain(..) {
            let last = locks.shard(w.loc.gid).unwatch(&w.key, w.loc.hash, &client.watch_flag);
            srv.count_watched_key(last, false);
        }
        locks.release();
        client.shared.watch_count.store(0, Ordering::Relaxed);
    }
    // Every registration of the old flag is gone, so nothing can set it
    // again; a fresh flag is the cheapest way to clear it.
    if client.watch_flag.is_set() {
        client.watch_flag = WatchFlag::new();
    }
}

/// Leaves MULTI state and forgets the watches (EXEC, DISCARD, RESET).
pub fn discard_transaction(srv: &Server, client: &mut Client, locks: &mut LockSet<'_>) {
    client.multi = None;
    client.shared.set_flag(cflags::MULTI, false);
    client.shared.multi_len.store(0, Ordering::Relaxed);
    unwatch_all(srv, client, locks);
}

/// EXEC rejected before it runs (wrong arity): Redis discards the open
/// transaction and says why. `msg` is the rejection, e.g. `ERR wrong number
/// of arguments for 'exec' command`; its `ERR ` prefix is not repeated.
pub fn abort_exec(srv: &Server, client: &mut Client, locks: &mut LockSet<'_>, reply: &mut Reply<'_>, msg: &str) {
    discard_transaction(srv, client, locks);
    reply.error(errors::execabort_because(msg));
}

fn multi(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if ctx.client.multi.is_some() {
        ctx.reply.error(errors::MULTI_NESTED);
        return;
    }
    ctx.client.multi = Some(Default::default());
    ctx.client.shared.set_flag(cflags::MULTI, true);
    ctx.client.shared.multi_len.store(0, Ordering::Relaxed);
    ctx.reply.ok();
}

fn discard(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    if ctx.client.multi.is_none() {
        ctx.reply.error(errors::DISCARD_WITHOUT_MULTI);
        return;
    }
    discard_transaction(ctx.srv, ctx.client, ctx.locks);
    ctx.reply.ok();
}

fn watch(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    if ctx.client.multi.is_some() {
        ctx.reply.error(errors::WATCH_INSIDE_MULTI);
        return;
    }
    // Already doomed: EXEC will fail whatever happens to these keys.
    if ctx.client.watch_flag.is_set() {
        ctx.reply.ok();
        return;
    }
    let db = ctx.client.db;
    for (i, &loc) in ctx.locs.iter().enumerate() {
        let key = args.get(1 + i);
        if ctx.client.watched.iter().any(|w| w.db == db && w.loc == loc && *w.key == *key) {
            continue;
        }
        let shard = ctx.locks.shard(loc.gid);
        // Drop the key now if it is expired, so that only live keys (or
        // absent ones) are registered; see the module docs.
        let _ = shard.get(key, loc.hash, ctx.now);
        let first = shard.watch(key, loc.hash, &ctx.client.watch_flag);
        ctx.srv.count_watched_key(first, true);
        ctx.client.watched.push(Watched { db, key: key.into(), loc });
    }
    ctx.client.shared.watch_count.store(ctx.client.watched.len(), Ordering::Relaxed);
    ctx.reply.ok();
}

fn unwatch(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    unwatch_all(ctx.srv, ctx.client, ctx.locks);
    ctx.reply.ok();
}

fn exec(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let Some(queued) = ctx.client.multi.take() else {
        ctx.reply.error(errors::EXEC_WITHOUT_MULTI);
        return;
    };
    if queued.failed {
        discard_transaction(ctx.srv, ctx.client, ctx.locks);
        ctx.reply.error(crate::errors::EXECABORT);
        return;
    }
    ctx.locks.lock_all();
    let now = crate::server::now_ms();
    for w in &ctx.client.watched {
        let _ = ctx.locks.shard(w.loc.gid).get(&w.key, w.loc.hash, now);
    }
    let dirty = ctx.client.watch_flag.is_set();
    // Unwatch before running, as Redis does: the transaction's own writes
    // must not flag this client.
    discard_transaction(ctx.srv, ctx.client, ctx.locks);
    if dirty {
        ctx.locks.unpin();
        ctx.reply.null_array();
        return;
    }
    ctx.reply.array(queued.cmds.len());
    // The transaction's writes reach the AOF as one MULTI/EXEC.
    let effects_from = ctx.locks.effects.len();
    // Errors of the queued commands are theirs: EXEC itself only counts as
    // failed when it is rejected or aborted.
    let errors_before = ctx.reply.errors;
    let mut scratch = Scratch { req_len: ctx.req_len, ..Scratch::default() };
    for (id, ranges) in &queued.cmds {
        let cmd = ctx.commands.get(*id);
        let args = Args::from_parts(&queued.data, ranges);
        // The rules are checked again: they may have changed since the
        // command was queued (Redis's execCommand).
        ctx.client.refresh_user(&ctx.srv.acl);
        if !ctx.client.user.unrestricted {
            if let Err(why) = super::access::check(&ctx.client.user, cmd, args) {
                let place = super::access::Place::Exec(queued.cmds.len());
                let _ = super::access::refused(ctx.srv, ctx.commands, ctx.client, cmd, args, why, ctx.now, place);
                let reason = match why.0 {
                    crate::acl::Denied::Key => errors::EXEC_DENIED_KEY,
                    crate::acl::Denied::Channel => errors::EXEC_DENIED_CHANNEL,
                    _ => errors::EXEC_DENIED_COMMAND,
                };
                ctx.reply.error(errors::noperm_exec(reason));
                continue;
            }
        }
        call(ctx.srv, ctx.commands, ctx.locks, &mut ctx.reply, ctx.client, ctx.stats, &mut scratch, ctx.worker, cmd, args);
    }
    ctx.reply.errors = errors_before;
    ctx.locks.gather_effects();
    ctx.locks.effects.wrap_from(effects_from);
    ctx.locks.unpin();
}
