//! What other workers (or this one) send to this worker's clients without
//! a request: publish/subscribe messages and tracking invalidations
//! (`tern_commands::messaging`), MONITOR's lines, CLIENT KILL's marks.

use super::*;

/// Inboxes on the ready list from which a worker lets messages gather
/// (`pubsub-coalesce-us`): a few subscribers are written at once.
const COALESCE_MIN_INBOXES: usize = 64;

impl Worker {
    /// Closes clients marked by CLIENT KILL, and subscribers whose user
    /// no longer allows what they listen to (ACL SETUSER, ACL LOAD).
    pub(super) fn check_kills(&mut self) {
        let acl = &self.eng.srv.acl;
        for (_, c) in self.conns.iter_mut().filter(|(_, c)| c.client.subs.is_some()) {
            c.client.refresh_user(acl);
        }
        let killed: Vec<usize> = self
            .conns
            .iter()
            .filter(|(_, c)| c.client.shared.kill.load(Ordering::Relaxed) || !c.client.subscriptions_allowed())
            .map(|(k, _)| k)
            .collect();
        for k in killed {
            self.close(k);
        }
    }

    /// Moves what was delivered to this worker's clients (messages,
    /// invalidations; by any worker, this one included) into their
    /// replies: each connection's for the turn leave in one write. First
    /// the invalidations of keys written outside commands (expiry,
    /// eviction, memcached) and the BCAST broadcast.
    pub(super) fn deliver_messages(&mut self) {
        let srv = &self.eng.srv;
        srv.invalidate_written(&self.effects, 0, 0, self.id);
        srv.invalidate_elsewhere(self.id);
        if srv.messaging.tracking.any() {
            srv.messaging.tracking.broadcast(|i, d| srv.deliver(i, d, self.id));
        }
        // Messages for many subscribers at once (a fan-out) wait up to
        // `pubsub-coalesce-us` for more, so that each subscriber gets
        // several in one write; never when an invalidation is among them.
        let window = srv.settings.pubsub_coalesce_us();
        if window > 0 && srv.messaging.ready_len(self.id) >= COALESCE_MIN_INBOXES && !srv.messaging.urgent_pending(self.id) {
            let now = Instant::now();
            let until = *self.coalesce_until.get_or_insert(now + Duration::from_micros(window));
            if now < until {
                return;
            }
        }
        self.coalesce_until = None;
        // Written once this turn's replies are out (run's end_round).
        self.drain_ticket = srv.messaging.begin_drain(self.id);
        let ready = srv.messaging.take_ready(self.id);
        if ready.is_empty() {
            return;
        }
        let share = srv.settings.reply_copy_avoid_min_size();
        for inbox in ready {
            let key = inbox.handle;
            let Some(conn) = self.conns.get_mut(key) else { continue };
            if conn.client.id != inbox.client_id {
                continue;
            }
            // CLIENT REPLY OFF drops them too, as Redis does.
            let off = matches!(conn.client.reply_mode, ReplyMode::Off);
            let mark = conn.out.len();
            let to = tern_commands::messaging::Receiver { resp3: conn.client.resp3, subscribed: conn.client.subs.is_some(), share_min: share };
            if inbox.drain_into(&mut conn.out, to) > 0 {
                if off {
                    conn.out.truncate(mark);
                }
                // A redirection found broken shows in CLIENT LIST (`R`).
                if conn.client.tracking.as_ref().is_some_and(|t| t.tracker.broken()) {
                    conn.client.shared.set_flag(client_flags::TRACKING_BROKEN, true);
                }
                self.check_output_limits(key);
                // Out now, ahead of this round's replies (a writer's reply
                // must not overtake the invalidation it caused); held like
                // any reply under `appendfsync always`.
                if self.conns.contains(key) {
                    if self.eng.srv.aof.waits() {
                        self.flush(key);
                    } else {
                        self.send(key);
                    }
                }
            }
        }
    }

    /// Moves the lines other workers left for this worker's MONITOR
    /// clients into their replies; closes one whose lines overflowed.
    pub(super) fn feed_monitors(&mut self) {
        let keys: Vec<usize> = self.conns.iter().filter(|(_, c)| c.client.monitor.is_some()).map(|(k, _)| k).collect();
        for k in keys {
            let Some(conn) = self.conns.get_mut(k) else { continue };
            let Some(feed) = conn.client.monitor.clone() else { continue };
            let (lines, overflow) = feed.take();
            if overflow {
                log_warning!("Client id={} addr={} closed for overcoming of output buffer limits.", conn.client.id, conn.client.shared.addr);
                self.close(k);
            } else if !lines.is_empty() {
                conn.out.extend_from_slice(&lines);
                self.flush(k);
            }
        }
    }
}
