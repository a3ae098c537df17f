//! Blocked clients and clients CLIENT PAUSE holds back: the wake-ups
//! other workers post (`Server::post`), serving or ending a wait, the
//! deadlines of waits with a timeout, and running postponed requests
//! once a pause ends.

use super::*;

/// Marks `conn`'s request held by CLIENT PAUSE, or no longer: its `PAUSED`
/// flag, and INFO's `blocked_clients`, which counts a postponed client as
/// Redis does (it blocks it with BLOCKED_POSTPONE), so that a client
/// waiting to see it held sees it.
pub(super) fn set_postponed(srv: &Server, conn: &mut Conn, on: bool) {
    if conn.postponed == on {
        return;
    }
    conn.postponed = on;
    conn.client.shared.set_flag(client_flags::PAUSED, on);
    if on {
        srv.blocked_clients.fetch_add(1, Ordering::Relaxed);
    } else {
        srv.blocked_clients.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Worker {
    /// Acts on the messages about this worker's blocked clients.
    pub(super) fn read_mail(&mut self) {
        for w in self.eng.srv.take_mail(self.id) {
            match w {
                Wake::Ready(id) => {
                    if let Some(&key) = self.blocked.get(&id) {
                        self.retry_blocked(key);
                    }
                }
                Wake::Unblock { client, error } => {
                    if let Some(&key) = self.blocked.get(&client) {
                        self.end_wait(key, error);
                    }
                }
            }
        }
    }

    /// Runs a blocked client's command again; once served, its further
    /// requests run and the replies go out.
    pub(super) fn retry_blocked(&mut self, key: usize) {
        let eng = self.eng.clone();
        let Some(conn) = self.conns.get_mut(key) else { return };
        let mut locks = lock_set(&eng.srv.ks, &self.effects);
        let served = cmd::blocking::retry(cmd::Conn {
            srv: &eng.srv,
            commands: &eng.commands,
            locks: &mut locks,
            out: &mut conn.out,
            client: &mut conn.client,
            stats: &self.stats,
            scratch: &mut self.scratch,
            worker: self.id,
        });
        self.effects.absorb(&locks.effects);
        if served {
            self.resume(key);
        }
    }

    /// Ends a client's wait with the timeout's reply (or `-UNBLOCKED`).
    pub(super) fn end_wait(&mut self, key: usize, error: bool) {
        let eng = self.eng.clone();
        let Some(conn) = self.conns.get_mut(key) else { return };
        let mut locks = lock_set(&eng.srv.ks, &self.effects);
        cmd::blocking::abandon(&eng.srv, &mut locks, &mut conn.client, &self.stats, Some(&mut conn.out), error);
        self.effects.absorb(&locks.effects);
        self.resume(key);
    }

    /// A client's wait is over: it is forgotten here, and the requests it
    /// sent meanwhile run.
    pub(super) fn resume(&mut self, key: usize) {
        if let Some(conn) = self.conns.get(key) {
            let id = conn.client.id;
            self.forget_blocked(id);
        }
        self.process(key);
        self.flush(key);
    }

    /// Drops client `id` from the blocked ones (and from the timeout
    /// table, keeping the gauge in step). Returns its slab key if it was.
    pub(super) fn forget_blocked(&mut self, id: u64) -> Option<usize> {
        if self.timed.remove(&id) {
            self.stats.clients_in_timeout.add(u64::MAX);
        }
        self.blocked.remove(&id)
    }

    /// Runs again the requests CLIENT PAUSE held back, once the pause has
    /// ended or changed (UNPAUSE, a PAUSE in another mode): those still
    /// held are postponed again, in the order they came.
    pub(super) fn resume_postponed(&mut self) {
        if self.postponed.is_empty() {
            return;
        }
        let pause = &self.eng.srv.pause;
        let generation = pause.generation();
        if generation == self.pause_seen && pause.mode_at(now_ms()).is_some() {
            return;
        }
        self.pause_seen = generation;
        for key in std::mem::take(&mut self.postponed) {
            let Some(conn) = self.conns.get_mut(key) else { continue };
            if !conn.postponed {
                continue;
            }
            set_postponed(&self.eng.srv, conn, false);
            self.process(key);
            self.flush(key);
        }
    }

    /// Times out the blocked clients whose deadline has passed. Strictly
    /// passed: the deadline was computed from a clock read in whole
    /// milliseconds, so at the deadline's own millisecond up to 1 ms of
    /// the timeout may be left.
    /// True when a wait ended.
    pub(super) fn fire_timeouts(&mut self) -> bool {
        // Waits served before their deadline leave pairs behind; clients
        // that block and are served in a loop must not grow the heap
        // without bound.
        if self.deadlines.len() > 2 * self.blocked.len() + 64 {
            let (blocked, conns) = (&self.blocked, &self.conns);
            let live = |&Reverse((at, id)): &Reverse<(u64, u64)>| {
                blocked.get(&id).and_then(|&k| conns.get(k)).and_then(|c| c.client.blocked.as_ref()).is_some_and(|b| b.deadline == Some(at))
            };
            self.deadlines.retain(live);
        }
        let now = now_ms();
        let mut ended = false;
        while let Some(&Reverse((at, id))) = self.deadlines.peek() {
            if at >= now {
                break;
            }
            self.deadlines.pop();
            let Some(&key) = self.blocked.get(&id) else { continue };
            let due = self.conns.get(key).and_then(|c| c.client.blocked.as_ref()).is_some_and(|b| b.deadline == Some(at));
            if due {
                self.end_wait(key, false);
                ended = true;
            }
        }
        ended
    }
}
