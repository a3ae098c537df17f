//! Writing replies: at once or at the end of the round, held for the AOF
//! under `appendfsync always`; a client that went over its output limit
//! (`client-output-buffer-limit`, the class its state gives it) or
//! `maxmemory-clients` is closed.

use super::*;

impl Worker {
    /// `maxmemory-clients`: while all workers' client buffers together
    /// are over it, closes this worker's largest client, as Redis's client
    /// eviction does (biggest first, never one under 32 KiB, never one
    /// that asked for CLIENT NO-EVICT). A worker only closes its own
    /// clients; one with only small clients leaves the work to the others.
    pub(super) fn evict_clients(&mut self) {
        let limit = self.eng.srv.settings.maxmemory_clients();
        if limit == 0 {
            return;
        }
        while maxmemory::client_memory(&self.eng.srv) > limit {
            let biggest = self
                .conns
                .iter()
                .filter(|(_, c)| !c.client.shared.has_flag(client_flags::NO_EVICT) && c.mem_counted >= CLIENT_EVICT_MIN)
                .max_by_key(|(_, c)| c.mem_counted)
                .map(|(k, _)| k);
            let Some(key) = biggest else { return };
            if let Some(c) = self.conns.get(key) {
                log_verbose!("Evicting client: id={} addr={} (buffers {} bytes)", c.client.id, c.client.shared.addr, c.mem_counted);
            }
            self.stats.evicted_clients.add(1);
            self.close(key);
        }
    }


    pub(super) fn check_output_limits(&mut self, key: usize) {
        let Some(conn) = self.conns.get_mut(key) else { return };
        // Redis's client classes: a subscriber is measured against the
        // `pubsub` limits.
        let limits = self.eng.srv.settings.client_output_buffer_limit();
        let l = if conn.client.shared.has_flag(client_flags::PUBSUB) { limits.pubsub } else { limits.normal };
        let (hard, soft, soft_secs) = (l.hard, l.soft, l.soft_seconds);
        conn.account_mem(&self.stats);
        if self.eng.srv.settings.maxmemory_clients() > 0 {
            self.evict_clients();
        }
        let Some(conn) = self.conns.get_mut(key) else { return };
        let pending = conn.pending_out() as u64;
        let over_hard = hard > 0 && pending >= hard;
        let over_soft = soft > 0 && pending >= soft;
        if !over_soft {
            conn.soft_since = None;
        }
        // Like Redis, the soft limit must be exceeded for longer than its
        // seconds, continuously.
        let soft_expired = over_soft && {
            let since = *conn.soft_since.get_or_insert_with(Instant::now);
            since.elapsed() > Duration::from_secs(soft_secs)
        };
        if over_hard || soft_expired {
            log_warning!(
                "Client id={} addr={} closed for overcoming of output buffer limits.",
                conn.client.id,
                conn.client.shared.addr
            );
            self.stats.obuf_limit_disconnections.add(1);
            self.close(key);
        }
    }


    pub(super) fn on_writable(&mut self, key: usize) {
        // Replies held for the AOF go when their ticket is durable; under
        // `appendfsync always` any others may answer this round's writes,
        // whose ticket comes at its end, so they wait for it (`flush`).
        if self.conns.get(key).is_some_and(|c| c.hold == 0) {
            self.flush(key);
        }
    }

    /// The end of a round: hands the worker's records to the AOF writer.
    /// With `appendfsync always`, the replies of the round are held until
    /// those records (and every earlier batch) are on disk, and the ones
    /// held before whose records now are go out; otherwise they go now.
    /// A client resumed by its replies draining runs its requests at once,
    /// so this repeats until a round leaves no reply unsettled.
    pub(super) fn end_round(&mut self) {
        // Invalidations this turn's writes sent to other workers' clients
        // go out before this turn's replies do.
        self.eng.srv.messaging.await_urgent(self.id);
        loop {
            let srv = &self.eng.srv;
            let replies = !self.deferred.is_empty();
            let ticket = tern_persist::aof::hand_round(srv, &self.effects, replies);
            if replies {
                let mut keys = std::mem::take(&mut self.deferred);
                keys.sort_unstable();
                keys.dedup();
                match ticket {
                    Some(t) if t > srv.aof.feed.durable_now() => {
                        for &k in &keys {
                            if let Some(c) = self.conns.get_mut(k) {
                                c.hold = t;
                            }
                        }
                        self.held.push_back((t, keys));
                    }
                    // No wait, or what they wait for is on disk already (a
                    // round of reads, with nothing written since the last
                    // sync).
                    _ => {
                        for &k in &keys {
                            self.send(k);
                        }
                        // The list's room serves the next round (what the
                        // sends ran may have deferred more meanwhile).
                        if self.deferred.is_empty() {
                            keys.clear();
                            self.deferred = keys;
                        }
                    }
                }
            }
            self.release_held();
            if self.deferred.is_empty() {
                return;
            }
        }
    }

    /// Sends the held replies whose records are durable now (all of them
    /// once `appendfsync always` is off), and tells the AOF writer which
    /// ticket to wake this worker for next.
    pub(super) fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let eng = self.eng.clone();
        let srv = &eng.srv;
        loop {
            let durable = if srv.aof.waits() { srv.aof.feed.durable_now() } else { u64::MAX };
            while self.held.front().is_some_and(|(t, _)| *t <= durable) {
                let Some((_, keys)) = self.held.pop_front() else { break };
                for k in keys {
                    // A connection held again since (a later ticket), or
                    // gone and its slot reused, is not this round's.
                    let Some(c) = self.conns.get_mut(k) else { continue };
                    if c.hold == 0 || c.hold > durable {
                        continue;
                    }
                    c.hold = 0;
                    self.send(k);
                }
            }
            match self.held.front() {
                None => {
                    srv.await_durable(self.id, 0);
                    return;
                }
                Some(&(next, _)) => {
                    if srv.await_durable(self.id, next) < next {
                        return;
                    }
                }
            }
        }
    }

    /// Writes the replies of a connection: once every ready connection of
    /// the round has been read and run (`io-replies-after-round`, as Redis
    /// writes in `beforeSleep`), or at once; with `appendfsync always`
    /// at the round's end, held until their records are on disk
    /// ([`Worker::end_round`]).
    pub(super) fn flush(&mut self, key: usize) {
        let srv = &self.eng.srv;
        if srv.settings.io_replies_after_round() || srv.aof.waits() {
            self.deferred.push(key);
            return;
        }
        srv.messaging.await_urgent(self.id);
        self.send(key);
    }

    /// Writes pending replies; resumes a paused client once they drain.
    pub(super) fn send(&mut self, key: usize) {
        loop {
            let Some(conn) = self.conns.get_mut(key) else { return };
            match conn.write_out(&self.stats, self.scratch.clock.last_ms()) {
                Err(_) => {
                    self.close(key);
                    return;
                }
                Ok(false) => {
                    conn.account_mem(&self.stats);
                    return;
                }
                Ok(true) => {}
            }
            conn.account_mem(&self.stats);
            if conn.closing {
                self.close(key);
                return;
            }
            if !conn.paused {
                return;
            }
            // Drained: run the requests that waited, then read what the
            // edge-triggered socket may still hold.
            conn.paused = false;
            self.process(key);
            if self.eng.srv.aof.waits() {
                // Their replies wait for their records (the read ends
                // in `flush`, which holds them).
                self.on_readable(key, true);
                return;
            }
            let Some(conn) = self.conns.get_mut(key) else { return };
            if conn.paused || conn.pending_out() > 0 {
                continue;
            }
            self.on_readable(key, true);
            return;
        }
    }
}
