//! CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO (subcommands of
//! CLIENT, declared in `client.rs`), and what [`super::call`] does for a
//! tracking client: the keys of its read-only commands are remembered
//! ([`remember`]), and the keys any command wrote are invalidated
//! ([`Server::invalidate_written`]). The table and the deliveries are
//! `crate::messaging::tracking`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tern_resp::Args;

use super::table::{flags, Cmd};
use super::Ctx;
use crate::client::{flags as cflags, Client, ClientTracking};
use crate::errors;
use crate::messaging::tracking::Tracker;
use crate::server::Server;

/// CLIENT TRACKING (ON|OFF) [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN]
/// [OPTOUT] [NOLOOP], checked as Redis's clientCommand checks it.
pub(super) fn tracking(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let mut redirect: Option<(u64, Arc<crate::client::ClientShared>)> = None;
    let (mut bcast, mut optin, mut optout, mut noloop) = (false, false, false, false);
    let mut prefixes: Vec<Box<[u8]>> = Vec::new();
    let mut j = 3;
    while j < args.len() {
        let a = args.get(j);
        let more = j + 1 < args.len();
        if a.eq_ignore_ascii_case(b"redirect") && more {
            j += 1;
            if redirect.is_some() {
                return ctx.reply.error(errors::TRACKING_ONE_REDIRECT);
            }
            let Some(id) = tern_resp::parse_i64(args.get(j)) else {
                return ctx.reply.error(errors::NOT_INTEGER);
            };
            let Some(target) = u64::try_from(id).ok().and_then(|id| ctx.srv.clients.lock().get(&id).cloned()) else {
                return ctx.reply.error(errors::TRACKING_NO_REDIRECT_TARGET);
            };
            redirect = Some((target.id, target));
        } else if a.eq_ignore_ascii_case(b"bcast") {
            bcast = true;
        } else if a.eq_ignore_ascii_case(b"optin") {
            optin = true;
        } else if a.eq_ignore_ascii_case(b"optout") {
            optout = true;
        } else if a.eq_ignore_ascii_case(b"noloop") {
            noloop = true;
        } else if a.eq_ignore_ascii_case(b"prefix") && more {
            j += 1;
            prefixes.push(args.get(j).into());
        } else {
            return ctx.reply.error(errors::SYNTAX);
        }
        j += 1;
    }
    let mode = args.get(2);
    if mode.eq_ignore_ascii_case(b"off") {
        stop(ctx.srv, ctx.client);
        return ctx.reply.ok();
    }
    if !mode.eq_ignore_ascii_case(b"on") {
        return ctx.reply.error(errors::SYNTAX);
    }
    if !bcast && !prefixes.is_empty() {
        return ctx.reply.error(errors::TRACKING_PREFIX_NEEDS_BCAST);
    }
    let old = ctx.client.tracking.as_deref();
    if old.is_some_and(|o| o.tracker.bcast != bcast) {
        return ctx.reply.error(errors::TRACKING_BCAST_SWITCH);
    }
    if bcast && (optin || optout) {
        return ctx.reply.error(errors::TRACKING_OPT_BCAST);
    }
    if optin && optout {
        return ctx.reply.error(errors::TRACKING_OPTIN_OPTOUT);
    }
    if old.is_some_and(|o| (optin && o.optout) || (optout && o.optin)) {
        return ctx.reply.error(errors::TRACKING_OPT_SWITCH);
    }
    // Prefixes may not overlap one another or those the client has.
    let had: Vec<Box<[u8]>> = old.map(|o| o.prefixes.clone()).unwrap_or_default();
    for (i, p) in prefixes.iter().enumerate() {
        if let Some(h) = had.iter().find(|h| overlap(h, p)) {
            return ctx.reply.error(errors::tracking_prefix_overlap(p, h, true));
        }
        if let Some(q) = prefixes[i + 1..].iter().find(|q| overlap(p, q)) {
            return ctx.reply.error(errors::tracking_prefix_overlap(p, q, false));
        }
    }
    let srv = ctx.srv;
    let target = redirect.as_ref().map(|(id, sh)| (*id, Arc::clone(sh.inbox())));
    let mut all = had;
    if bcast {
        // No PREFIX: every key (the empty prefix), beside any it had.
        if prefixes.is_empty() {
            prefixes.push(Box::default());
        }
        all.extend(prefixes);
        all.sort();
        all.dedup();
    }
    let tracker = Tracker::new(ctx.client.id, Arc::clone(ctx.client.shared.inbox()), target, noloop, bcast);
    tracker.set_resp3(ctx.client.resp3);
    srv.messaging.tracking.enable_then(&tracker, &all, || srv.ks.track_writes(true));
    let sh = &ctx.client.shared;
    sh.set_flag(cflags::TRACKING, true);
    sh.set_flag(cflags::TRACKING_BCAST, bcast);
    sh.set_flag(cflags::TRACKING_BROKEN, false);
    sh.redirect.store(redirect.map_or(0, |(id, _)| id as i64), Ordering::Relaxed);
    let caching = old.is_some_and(|o| o.caching);
    let mark = if bcast || !srv.settings.tracking_item_marks() { 0 } else { srv.tracking_slot(ctx.client.id, !ctx.locks.is_pinned()) };
    ctx.client.tracking = Some(Box::new(ClientTracking { tracker, optin, optout, caching, prefixes: if bcast { all } else { Vec::new() }, mark }));
    ctx.reply.ok();
}

/// Redis's prefix collision: one is a prefix of the other.
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Ends the client's tracking (CLIENT TRACKING OFF, RESET).
pub fn stop(srv: &Server, client: &mut Client) {
    if client.tracking.take().is_some() {
        srv.stop_tracking(client.id);
        let sh = &client.shared;
        sh.set_flag(cflags::TRACKING, false);
        sh.set_flag(cflags::TRACKING_BCAST, false);
        sh.set_flag(cflags::TRACKING_BROKEN, false);
        sh.redirect.store(-1, Ordering::Relaxed);
    }
}

/// CLIENT CACHING (YES|NO).
pub(super) fn caching(ctx: &mut Ctx<'_, '_>, args: Args<'_>) {
    let Some(t) = ctx.client.tracking.as_deref_mut() else {
        return ctx.reply.error(errors::CACHING_NOT_TRACKING);
    };
    let opt = args.get(2);
    if opt.eq_ignore_ascii_case(b"yes") {
        if !t.optin {
            return ctx.reply.error(errors::CACHING_YES_NOT_OPTIN);
        }
    } else if opt.eq_ignore_ascii_case(b"no") {
        if !t.optout {
            return ctx.reply.error(errors::CACHING_NO_NOT_OPTOUT);
        }
    } else {
        return ctx.reply.error(errors::SYNTAX);
    }
    t.caching = true;
    ctx.reply.ok();
}

/// CLIENT GETREDIR: -1 when not tracking, 0 without a redirection.
pub(super) fn getredir(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let r = ctx.client.tracking.as_ref().map_or(-1, |t| t.tracker.redirect() as i64);
    ctx.reply.int(r);
}

/// CLIENT TRACKINGINFO.
pub(super) fn trackinginfo(ctx: &mut Ctx<'_, '_>, _args: Args<'_>) {
    let t = ctx.client.tracking.as_deref();
    let mut words: Vec<&str> = vec![if t.is_some() { "on" } else { "off" }];
    if let Some(t) = t {
        if t.tracker.bcast {
            words.push("bcast");
        }
        if t.optin {
            words.push("optin");
            if t.caching {
                words.push("caching-yes");
            }
        }
        if t.optout {
            words.push("optout");
            if t.caching {
                words.push("caching-no");
            }
        }
        if t.tracker.noloop {
            words.push("noloop");
        }
        if t.tracker.broken() {
            words.push("broken_redirect");
        }
    }
    let r = &mut ctx.reply;
    r.map(3);
    r.bulk(b"flags");
    r.set(words.len());
    for w in &words {
        r.bulk(w.as_bytes());
    }
    r.bulk(b"redirect");
    r.int(t.map_or(-1, |t| t.tracker.redirect() as i64));
    r.bulk(b"prefixes");
    let prefixes = t.map(|t| t.prefixes.as_slice()).unwrap_or_default();
    r.array(prefixes.len());
    for p in prefixes {
        r.bulk(p);
    }
}

/// Whether `cmd`'s keys are remembered for the tracking client `t`: a
/// read-only command (OPTIN: only after CLIENT CACHING YES; OPTOUT: unless
/// after CLIENT CACHING NO; BCAST clients are told by prefix instead).
pub(super) fn remembers(t: &ClientTracking, cmd: &Cmd) -> bool {
    let read = cmd.has(flags::READONLY) && !cmd.has(flags::PUBSUB) && !matches!(cmd.fullname.as_str(), "eval_ro" | "evalsha_ro" | "fcall_ro");
    read && !t.tracker.bcast && !((t.optin && !t.caching) || (t.optout && t.caching))
}

/// After `cmd` ran for `client`: the keys of a read-only command
/// ([`remembers`]) are remembered for it, those its lookups marked in
/// their items already (`tern_store::tracked`), the rest in the table (by
/// the hashes `locs` located them with: the table is keyed by the
/// keyspace's hash), and CACHING's one-command grace ends, as in Redis's
/// call() and resetClient().
pub(super) fn after_command(srv: &Server, client: &mut Client, cmd: &Cmd, args: Args<'_>, locs: &[tern_store::Loc], in_exec: bool) {
    let Some(t) = client.tracking.as_deref_mut() else { return };
    if remembers(t, cmd) {
        let tr = &srv.messaging.tracking;
        // Every key marked in its item (a GET of a key that exists):
        // nothing to walk.
        let all_marked = t.mark != 0 && !locs.is_empty() && locs.iter().all(|l| tern_store::tracked::was_marked(l.hash));
        if !all_marked {
            // `locs` follow the same key walk; none when it was invalid.
            for (i, k) in cmd.keys(args).enumerate() {
                let key = args.get(k.pos);
                let hash = locs.get(i).map_or_else(|| tr.hash(key), |l| l.hash);
                if t.mark == 0 || !tern_store::tracked::was_marked(hash) {
                    tr.remember(t.tracker.client_id, key, hash);
                }
            }
        }
        tern_store::tracked::clear_marked();
        let max = usize::try_from(srv.settings.tracking_table_max_keys()).unwrap_or(usize::MAX);
        // Marked keys are drawn under their shards' locks: not while a
        // transaction holds them all.
        let ks = &srv.ks;
        let take = |rng: &mut dyn FnMut() -> u64| if in_exec { None } else { ks.take_random_marks(rng).map(|(_, k, m)| (k, m)) };
        tr.limit(max, || ks.marked_keys(), take, |i, d| srv.deliver(i, d, client.shared.worker));
    }
    let caching_cmd = cmd.parent.is_some() && cmd.fullname.starts_with("client|");
    if !in_exec && client.multi.is_none() && !caching_cmd {
        t.caching = false;
    }
}
