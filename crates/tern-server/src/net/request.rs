//! The request loop: reading a connection's socket, running every
//! complete request in its buffer, and the query-buffer limit. One loop
//! ([`Worker::run_loop`]) serves both protocols through [`Protocol`]: RESP
//! through [`run_request`] (which the in-process executor shares),
//! memcached through its executor.

use super::*;

/// What a worker (or [`crate::inproc`]) needs to run a connection's
/// requests, besides the connection itself.
pub(crate) struct Ctx<'a, 'ks> {
    pub srv: &'ks Server,
    pub commands: &'ks CommandTable,
    pub worker: usize,
    pub stats: &'a WorkerStats,
    pub scratch: &'a mut Scratch,
    pub plan: &'a mut Plan,
    pub locks: &'a mut LockSet<'ks>,
    pub limits: &'a mut Limits,
    /// `prefetch-batch-max-size` for this read (0: no look-ahead).
    pub batch: usize,
}

/// What [`run_request`] did with the front of a connection's buffer.
pub(crate) enum Step {
    /// No complete request yet.
    Incomplete,
    /// `len` bytes ran (`command`: they held a command, not an empty
    /// request); `close` when the connection closes after its replies.
    Ran { len: usize, command: bool, close: bool },
    /// CLIENT PAUSE holds the request back: nothing ran, nothing was
    /// consumed; run it again once the pause ends.
    Postponed,
    /// HTTP (`POST`, `Host:`): close at once, replies dropped, as Redis does.
    Http,
    /// Replied with this protocol error (logged; empty: nothing to log,
    /// as memcached's, which gets no reply); close, dropping what follows.
    ProtocolError(Vec<u8>),
}

/// Runs the first request of `buf` for one connection: the one request
/// path a worker and the in-process executor share. Parses what the read
/// holds ahead when it can, locating and prefetching its keys
/// (prefetch.rs), then runs it command by command.
pub(crate) fn run_request(c: Ctx<'_, '_>, frame: &mut Frame, client: &mut Client, out: &mut OutBuf, buf: &[u8]) -> Step {
    c.limits.authenticated = client.authenticated;
    match c.plan.next_request(c.srv, c.commands, &mut c.scratch.last_name, frame, buf, c.limits, client, c.batch) {
        Ok(None) => Step::Incomplete,
        Ok(Some((args, len, ahead))) => {
            let mut close = false;
            let command = !args.is_empty();
            if command {
                let first = args.get(0);
                if first.eq_ignore_ascii_case(b"post") || first.eq_ignore_ascii_case(b"host:") {
                    out.clear();
                    return Step::Http;
                }
                if let Some(p) = ahead {
                    c.scratch.plan_next(p.cmd, p.planned, p.ahead);
                }
                c.scratch.req_len = len;
                let after = cmd::dispatch(
                    cmd::Conn { srv: c.srv, commands: c.commands, locks: c.locks, out, client: &mut *client, stats: c.stats, scratch: &mut *c.scratch, worker: c.worker },
                    args,
                );
                c.scratch.pre = None;
                c.scratch.pre_cmd = None;
                c.scratch.pre_ahead = Default::default();
                if after == After::Postpone {
                    c.plan.abandon(frame);
                    return Step::Postponed;
                }
                close = after == After::Close;
            }
            // RESET may drop authentication: what follows must be parsed
            // with the tighter limits.
            if !client.authenticated {
                c.plan.abandon(frame);
            }
            Step::Ran { len, command, close }
        }
        Err(e) => {
            let msg = e.message();
            c.stats.record_error(&msg);
            tern_resp::Encoder::RESP2.error(out, &msg);
            Step::ProtocolError(msg)
        }
    }
}

impl Worker {
    /// Reads what the socket holds and runs it. `to_eagain`: read until
    /// EAGAIN even after a short read, as when the peer has half-closed
    /// (the end of the stream must be read, and no later event will say
    /// so) or when nothing says what the socket still holds.
    pub(super) fn on_readable(&mut self, key: usize, to_eagain: bool) {
        let mut eof = false;
        let short_drains = !to_eagain && self.eng.srv.settings.io_short_read_drains();
        // TLS: a socket read came back short (see `TlsConn::read`).
        let mut drained = false;
        loop {
            let Some(conn) = self.conns.get_mut(key) else { return };
            if conn.closing || conn.paused {
                break;
            }
            if conn.rbuf.len() - conn.rlen < MIN_READ_ROOM {
                // Compact before growing: executed bytes at the front are dead.
                if conn.rpos > 0 {
                    conn.rbuf.copy_within(conn.rpos..conn.rlen, 0);
                    conn.rlen -= conn.rpos;
                    conn.rpos = 0;
                }
                if conn.rbuf.len() - conn.rlen < MIN_READ_ROOM {
                    let want = (conn.rlen + READ_CHUNK).max(conn.rbuf.len() * 2).min(conn.rlen + (64 << 20));
                    conn.rbuf.resize(want, 0);
                }
            }
            let room = conn.rbuf.len() - conn.rlen;
            let read = conn.read_some(short_drains, &mut drained);
            if conn.tls.as_ref().is_some_and(|t| t.deadline.is_some() && !t.session.is_handshaking()) {
                self.handshake_done(key);
            }
            let Some(conn) = self.conns.get_mut(key) else { return };
            // Through TLS a short read of plaintext says nothing of the
            // socket: `TlsConn::read` knows.
            let plain = conn.tls.is_none();
            match read {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => {
                    conn.rlen += n;
                    self.stats.net_input_bytes.add(n as u64);
                    ClientShared::count(&conn.client.shared.net_in, n as u64);
                    self.stats.reads_processed.add(1);
                    conn.client.shared.last_interaction_ms.store(self.scratch.clock.last_ms(), Ordering::Relaxed);
                    // Execute as we go once a fair amount is in: a long
                    // pipeline does not pile up, and what is left
                    // unexecuted is only the request still arriving, which
                    // is what the query buffer limit is about (it is never
                    // below 1mb, far above this threshold).
                    if conn.rlen - conn.rpos >= 4 * READ_CHUNK {
                        self.process(key);
                        if self.close_if_query_too_big(key) {
                            return;
                        }
                    }
                    if short_drains && n < room && plain {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    if let Some(t) = &conn.tls {
                        if t.deadline.is_some() {
                            // As Redis logs a failed TLS accept.
                            log_warning!("Error accepting a client connection: {} (addr={} laddr={})", e, conn.client.shared.addr, local(&conn.stream));
                        } else {
                            log_verbose!("Error reading from client: {} (id={} addr={})", e, conn.client.id, conn.client.shared.addr);
                        }
                    }
                    eof = true;
                    break;
                }
            }
        }
        self.process(key);
        if self.close_if_query_too_big(key) {
            return;
        }
        if eof {
            // The peer is gone or half-closed: deliver what we can, then close.
            if let Some(c) = self.conns.get_mut(key) {
                c.closing = true;
            }
        }
        if self.conns.get(key).is_some_and(|c| c.client.sync.is_some() && !c.closing) {
            self.hand_over_replica(key);
            return;
        }
        self.flush(key);
    }

    /// Applies `client-query-buffer-limit` (and the tighter limit for
    /// clients that have not authenticated). Returns true if it closed the
    /// client. A paused client is not read from, so its buffer cannot grow
    /// and the complete requests waiting in it do not count.
    pub(super) fn close_if_query_too_big(&mut self, key: usize) -> bool {
        let Some(conn) = self.conns.get(key) else { return true };
        if conn.paused || conn.closing {
            return false;
        }
        let mut limit = self.eng.srv.settings.client_query_buffer_limit() as usize;
        if !conn.client.authenticated {
            limit = limit.min(UNAUTH_QUERY_LIMIT);
        }
        if conn.query_len() <= limit {
            return false;
        }
        log_warning!(
            "Closing client that reached max query buffer length: id={} addr={} (qbuf initial bytes: {:?})",
            conn.client.id,
            conn.client.shared.addr,
            String::from_utf8_lossy(&conn.rbuf[conn.rpos..(conn.rpos + 64).min(conn.rlen)])
        );
        self.stats.qbuf_limit_disconnections.add(1);
        self.close(key);
        true
    }

    /// Executes every complete request in the read buffer, until the
    /// client's unsent replies reach the high-water mark (or its hard
    /// output limit, which closes it), in the connection's protocol.
    pub(super) fn process(&mut self, key: usize) {
        let eng = self.eng.clone();
        let srv = &eng.srv;
        let Some(conn) = self.conns.get(key) else { return };
        self.scratch.clock.mark_now();
        match conn.mc.is_some() {
            false => {
                let limits = Limits { max_bulk_len: srv.settings.proto_max_bulk_len(), ..Limits::default() };
                let batch = self.scratch.tuner.begin(srv.prefetch_batch(), srv.settings.prefetch_tune());
                let resp = Resp { locks: lock_set(&srv.ks, &self.effects), limits, batch, started_ns: self.scratch.clock.mark_ns(), commands: 0 };
                self.run_loop(&eng, key, resp);
            }
            true => {
                let mc = Memcached { lim: tern_memcache::Limits { max_item_size: self.mc.max_item_size() }, batch: srv.prefetch_batch(), ahead: 0 };
                self.run_loop(&eng, key, mc);
            }
        }
    }

    /// The request loop both protocols share: writes early what a long
    /// pipeline produced, stops at the high-water mark, runs request after
    /// request through `proto`, then settles the connection's buffers and
    /// its output limits.
    fn run_loop<'ks, P: Protocol<'ks>>(&mut self, eng: &'ks Engine, key: usize, mut proto: P) {
        let srv = &eng.srv;
        let Some(conn) = self.conns.get_mut(key) else { return };
        let mut w = Parts { srv, commands: &eng.commands, worker: self.id, stats: &self.stats, scratch: &mut self.scratch, plan: &mut self.plan, effects: &self.effects, mc: &self.mc };
        // With `appendfsync always` no reply leaves before its write is
        // on disk: the buffer waits for the round's end (or pauses).
        let early = !srv.aof.waits();
        let hard = srv.settings.client_output_buffer_limit().normal.hard as usize;
        let mut ran = false;
        while conn.rpos < conn.rlen && !conn.closing && conn.client.blocked.is_none() && !conn.postponed && conn.client.sync.is_none() {
            if early && conn.pending_out() > OUT_WRITE_EARLY && conn.write_out(w.stats, w.scratch.clock.last_ms()).is_err() {
                // The peer is gone: nothing more will be delivered.
                conn.closing = true;
                conn.rpos = conn.rlen;
                break;
            }
            let pending = conn.pending_out();
            if pending > OUT_HIGH_WATER || (hard > 0 && pending >= hard) {
                conn.paused = true;
                break;
            }
            let buf = &conn.rbuf[conn.rpos..conn.rlen];
            let session = Session { frame: &mut conn.frame, client: &mut conn.client, out: &mut conn.out, mc: &mut conn.mc };
            match proto.step(&mut w, session, buf) {
                Step::Incomplete => break,
                Step::Http => {
                    log_warning!("Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. Connection aborted.");
                    conn.closing = true;
                    break;
                }
                Step::Ran { len, command, close } => {
                    ran |= command;
                    conn.closing |= close;
                    conn.rpos += len;
                }
                Step::Postponed => {
                    blocked::set_postponed(&self.eng.srv, conn, true);
                    self.postponed.push(key);
                    break;
                }
                Step::ProtocolError(msg) => {
                    if !msg.is_empty() {
                        log_verbose!("Protocol error ({}) from client: id={} addr={}", String::from_utf8_lossy(&msg), conn.client.id, conn.client.shared.addr);
                    }
                    conn.closing = true;
                    conn.rpos = conn.rlen;
                }
            }
        }
        proto.end(&mut w, Session { frame: &mut conn.frame, client: &mut conn.client, out: &mut conn.out, mc: &mut conn.mc });
        // A command started waiting: its requests wait with it.
        if let Some(b) = &conn.client.blocked {
            if let std::collections::hash_map::Entry::Vacant(v) = self.blocked.entry(conn.client.id) {
                v.insert(key);
                if let Some(at) = b.deadline {
                    self.deadlines.push(Reverse((at, conn.client.id)));
                    if self.timed.insert(conn.client.id) {
                        self.stats.clients_in_timeout.add(1);
                    }
                }
            }
        }
        // The arguments of what ran are not needed any more: a
        // million-argument request must not pin its ranges for the
        // connection's life.
        conn.frame.shrink();
        if conn.rpos == conn.rlen {
            conn.rpos = 0;
            conn.rlen = 0;
            if conn.rbuf.len() > 1 << 20 && !conn.frame.is_partial() {
                conn.rbuf = Vec::new();
            }
        }
        if ran {
            conn.client.shared.last_interaction_ms.store(self.scratch.clock.last_ms(), Ordering::Relaxed);
        }
        self.check_output_limits(key);
    }
}

/// What a protocol's step may use of its worker.
pub(super) struct Parts<'a, 'ks> {
    srv: &'ks Server,
    commands: &'ks CommandTable,
    worker: usize,
    stats: &'a WorkerStats,
    scratch: &'a mut Scratch,
    plan: &'a mut Plan,
    effects: &'a Effects,
    mc: &'a Arc<memcache::Shared>,
}

/// The parts of a connection a protocol's step works on (its read buffer
/// is the step's `buf`).
pub(super) struct Session<'a> {
    frame: &'a mut Frame,
    client: &'a mut Client,
    out: &'a mut OutBuf,
    mc: &'a mut Option<Box<tern_memcache::Parser>>,
}

/// One protocol's side of [`Worker::run_loop`]: RESP ([`Resp`]) and the
/// memcached protocols ([`Memcached`]); a new kind of connection (a
/// replica's stream) is another.
pub(super) trait Protocol<'ks> {
    /// Runs the first request of `buf`.
    fn step(&mut self, w: &mut Parts<'_, 'ks>, c: Session<'_>, buf: &[u8]) -> Step;
    /// The loop is over: whatever the batch set up is settled.
    fn end(&mut self, w: &mut Parts<'_, 'ks>, c: Session<'_>);
}

/// RESP: each request through [`run_request`] (the pipeline planner, then
/// dispatch), under one lock set for the batch.
struct Resp<'ks> {
    locks: LockSet<'ks>,
    limits: Limits,
    /// `prefetch-batch-max-size` for this batch, as the tuner set it.
    batch: usize,
    started_ns: u64,
    /// Commands run (the tuner's measure).
    commands: u64,
}

impl<'ks> Protocol<'ks> for Resp<'ks> {
    fn step(&mut self, w: &mut Parts<'_, 'ks>, c: Session<'_>, buf: &[u8]) -> Step {
        let ctx = Ctx {
            srv: w.srv,
            commands: w.commands,
            worker: w.worker,
            stats: w.stats,
            scratch: &mut *w.scratch,
            plan: &mut *w.plan,
            locks: &mut self.locks,
            limits: &mut self.limits,
            batch: self.batch,
        };
        let step = run_request(ctx, c.frame, c.client, c.out, buf);
        if let Step::Ran { command: true, .. } = step {
            self.commands += 1;
        }
        step
    }

    fn end(&mut self, w: &mut Parts<'_, 'ks>, c: Session<'_>) {
        w.plan.abandon(c.frame);
        w.scratch.tuner.end(w.scratch.clock.mark_ns().saturating_sub(self.started_ns), self.commands);
        w.effects.absorb(&self.locks.effects);
    }
}

/// The memcached text and meta protocols: each request through the
/// memcached executor, the keys of the requests ahead prefetched.
struct Memcached {
    lim: tern_memcache::Limits,
    batch: usize,
    /// Requests already looked at by the prefetch look-ahead.
    ahead: usize,
}

impl<'ks> Protocol<'ks> for Memcached {
    fn step(&mut self, w: &mut Parts<'_, 'ks>, c: Session<'_>, buf: &[u8]) -> Step {
        let srv = w.srv;
        let Some(parser) = c.mc.as_mut() else { return Step::ProtocolError(Vec::new()) };
        // memcached itself keeps a clock that moves once a second: the
        // batch's reading serves.
        let now = w.scratch.clock.last_ms();
        let authenticated = c.client.authenticated || !srv.acl.auth_required();
        if self.batch > 0 && self.ahead == 0 && authenticated {
            self.ahead = w.plan.look_ahead_mc(srv, parser, buf, &self.lim, self.batch);
        }
        let (req, n) = match parser.parse(buf, &self.lim) {
            Ok(None) => return Step::Incomplete,
            Ok(Some(r)) => r,
            // memcached closes without a reply (nothing to log).
            Err(_) => return Step::ProtocolError(Vec::new()),
        };
        self.ahead = self.ahead.saturating_sub(1);
        w.stats.commands.add(1);
        let mut ex = memcache::Exec { srv, sh: w.mc, out: c.out, stats: w.stats, now, fx: w.effects };
        if !authenticated {
            let epoch = srv.acl.epoch();
            let (user, after) = ex.run_unauthenticated(req);
            if let Some(u) = user {
                c.client.log_in(u, epoch);
            }
            // Refused: what follows the request is dropped.
            let len = if after == memcache::After::Close { buf.len() } else { n };
            return Step::Ran { len, command: true, close: false };
        }
        c.client.refresh_user(&srv.acl);
        if !c.client.user.unrestricted {
            if let Err(line) = memcache::access::check(srv, c.client, &req, now) {
                tern_memcache::reply::line(ex.out, &line);
                return Step::Ran { len: n, command: true, close: false };
            }
        }
        let close = ex.run(req) == memcache::After::Close;
        Step::Ran { len: n, command: true, close }
    }

    fn end(&mut self, _w: &mut Parts<'_, 'ks>, _c: Session<'_>) {}
}
