//! Workers: one event loop per thread, each owning its connections from
//! accept to close. There is no command thread: a worker parses, executes
//! against the shared keyspace, and writes the replies of its own clients.
//!
//! Per readable event: read until the socket is drained, execute every
//! complete request in the buffer, then write all replies in one go (one
//! `writev` when they reference large stored values, see [`tern_commands::outbuf`]).
//! A client whose unsent replies pass [`OUT_HIGH_WATER`] is not read from
//! until they drain, so a client that pipelines without reading cannot grow
//! the server's memory without bound.
//!
//! A connection accepted on a TLS listener (`tls-port`, `memcache-tls-port`)
//! reads and writes through its rustls session ([`crate::tls`], the
//! connection itself: [`crate::conn`]); the read
//! buffer, the parsers, the commands and the reply buffer are the same.
//!
//! Limits, each closing only the client that passes it:
//!
//! | limit | what is measured | when |
//! |---|---|---|
//! | protocol errors, `proto-max-bulk-len` | each request line (parser) | reply, then close |
//! | `client-query-buffer-limit` | unexecuted request bytes + queued MULTI arguments | close at once |
//! | (unauthenticated) | the same, capped at [`UNAUTH_QUERY_LIMIT`] | close at once |
//! | `client-output-buffer-limit normal` | unsent reply bytes; hard at once, soft after its seconds | close at once |
//! | `maxclients` | connected clients | error, then close |
//! | `timeout` | seconds since the client last sent or received anything | close |
//! | `tls-handshake-timeout` | ms since the accept, while the TLS handshake is not done | close |
//!
//! Memory follows bytes that actually arrived, never a length a client
//! claims: the read buffer grows by doubling as data comes in.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;
use tern_resp::{Args, Frame, Limits};
use tern_store::{Effects, Keyspace, LockSet};

use tern_commands::client::{flags as client_flags, Client, ClientShared, ReplyMode};
use tern_commands::cmd::table::CommandTable;
use tern_commands::cmd::{self, After, Scratch};
use tern_commands::engine::Engine;
use tern_commands::maxmemory;
use tern_commands::server::{now_ms, Server, Wake};
use tern_commands::stats::WorkerStats;
use tern_commands::memcache;
use tern_commands::prefetch::Plan;
use tern_commands::outbuf::OutBuf;
use tern_commands::errors;
use tern_config::{log_notice, log_verbose, log_warning};

use crate::conn::Conn;
use crate::tls::{Tls, TlsConn};

const WAKER: Token = Token(0);
const LISTENER_BASE: usize = 1;
const CONN_BASE: usize = 1 << 20;
const READ_CHUNK: usize = 16 * 1024;
/// Free room below which the read buffer is compacted or grown before the
/// next read. Far below READ_CHUNK, so that a connection whose requests are
/// small keeps one 16 KB buffer instead of doubling it after its first read.
const MIN_READ_ROOM: usize = 4 * 1024;
/// A connection idle this long with nothing buffered gives its read buffer
/// back (Redis frees an idle client's query buffer after 2 s too): 5,000
/// quiet connections then hold no buffers at all.
const IDLE_BUFFER_RELEASE_MS: u64 = 2000;
/// How soon after activity the periodic work runs (`Worker::tick`).
const TICK: Duration = Duration::from_millis(100);
/// Unsent reply bytes above which a client's requests wait.
pub const OUT_HIGH_WATER: usize = 8 * 1024 * 1024;
/// Unsent reply bytes above which replies are written while a pipeline is
/// still executing, rather than after it: a client that reads its replies
/// must not hit an output limit only because its pipeline was long.
const OUT_WRITE_EARLY: usize = 256 * 1024;
/// Query buffer limit for a client that has not authenticated yet
/// (Redis 7.4: at most 1mb, whatever `client-query-buffer-limit` says).
pub const UNAUTH_QUERY_LIMIT: usize = 1024 * 1024;
/// Clients with less in their buffers are never closed for
/// `maxmemory-clients` (Redis's smallest eviction bucket).
const CLIENT_EVICT_MIN: u64 = 32 * 1024;
/// How long shutdown waits for replies in flight to be written.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(5);

/// A listening socket and what its connections speak.
pub struct Listener {
    pub socket: TcpListener,
    /// The memcached protocols (else RESP).
    pub mc: bool,
    /// TLS below the protocol ([`crate::tls`]).
    pub tls: bool,
}


pub struct Worker {
    id: usize,
    eng: Arc<Engine>,
    poll: Poll,
    listeners: Vec<Listener>,
    mc: Arc<memcache::Shared>,
    /// The TLS context the TLS listeners' connections start from.
    tls: Arc<Tls>,
    /// Connections whose TLS handshake is under way (their deadlines are
    /// looked at by `tick` only while there are some).
    handshaking: usize,
    conns: Slab<Conn>,
    stats: Arc<WorkerStats>,
    scratch: Scratch,
    plan: Plan,
    /// The worker's effect records (see `tern_store::effect`): its
    /// commands' writes, gathered as their shard locks are released. Only
    /// filled while a reader is attached to the keyspace.
    effects: tern_store::Effects,
    /// This worker's clients waiting in a blocking command: id -> slab key.
    blocked: HashMap<u64, usize>,
    /// (deadline ms, client id) of the waits that time out; stale pairs
    /// (served, gone) are skipped when popped.
    deadlines: BinaryHeap<Reverse<(u64, u64)>>,
    /// The blocked clients (ids) whose wait has a timeout: Redis's timeout
    /// table. Its size is the worker's `clients_in_timeout` gauge.
    timed: std::collections::HashSet<u64>,
    /// Connections whose next request CLIENT PAUSE holds back (slab keys;
    /// a key whose connection is gone or no longer postponed is skipped).
    postponed: Vec<usize>,
    /// The pause generation (`Pause::generation`) the postponed
    /// connections were last tried at.
    pause_seen: u64,
    /// With `appendfsync always`, the connections with replies from
    /// this round (slab keys, repeats allowed): they wait for the round's
    /// records to be on disk.
    deferred: Vec<usize>,
    /// Rounds whose replies wait for an AOF ticket to be durable, oldest
    /// first: the ticket and the connections. A connection goes when the
    /// ticket it holds for (`Conn::hold`, its latest) is durable; the
    /// worker goes on with other clients meanwhile, and the AOF writer
    /// wakes it (see `Server::await_durable`).
    held: VecDeque<(u64, Vec<usize>)>,
}

/// A lock set whose records note the worker's mark (see
/// `tern_store::aof::feed`) as they leave their shards.
fn lock_set<'a>(ks: &'a Keyspace, fx: &Effects) -> LockSet<'a> {
    let mut locks = LockSet::new(ks);
    if let Some(m) = fx.mark() {
        locks.effects = Effects::marked(m.clone());
    }
    locks
}

/// Redis's `connIsLocal`: 127.0.0.0/8 or ::1.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr {
        SocketAddr::V4(a) => a.ip().octets()[0] == 127,
        SocketAddr::V6(a) => a.ip().is_loopback(),
    }
}

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
    /// Replied with this protocol error; close, dropping what follows.
    ProtocolError(Vec<u8>),
}

/// Runs the first request of `buf` for one connection: the one request
/// path a worker and the in-process executor share. Parses what the read
/// holds ahead when it can, locating and prefetching its keys
/// (prefetch.rs), then runs it command by command.
pub(crate) fn run_request(c: Ctx<'_, '_>, frame: &mut Frame, client: &mut Client, out: &mut OutBuf, buf: &[u8]) -> Step {
    c.limits.authenticated = client.authenticated;
    if c.batch > 0 && c.plan.is_empty() && c.limits.authenticated && !frame.is_partial() {
        c.plan.fill(c.srv, c.commands, &mut c.scratch.last_name, frame, buf, c.limits, client, c.batch);
    }
    let (step, ahead) = match c.plan.next_cmd() {
        Some(p) => (Ok(Some((Args::from_parts(buf, p.ranges), p.len))), Some((p.cmd, p.planned, p.ahead))),
        None => (frame.parse(buf, c.limits).map(|r| r.map(|n| (frame.args(buf), n))), None),
    };
    match step {
        Ok(None) => Step::Incomplete,
        Ok(Some((args, len))) => {
            let mut close = false;
            let command = !args.is_empty();
            if command {
                let first = args.get(0);
                if first.eq_ignore_ascii_case(b"post") || first.eq_ignore_ascii_case(b"host:") {
                    out.clear();
                    return Step::Http;
                }
                if let Some((id, planned, members)) = ahead {
                    c.scratch.plan_next(id, planned, members);
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

fn peer(s: &TcpStream) -> String {
    s.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?:0".into())
}

fn local(s: &TcpStream) -> String {
    s.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?:0".into())
}

impl Worker {
    pub fn new(id: usize, eng: Arc<Engine>, listeners: Vec<Listener>, mc: Arc<memcache::Shared>, tls: Arc<Tls>) -> io::Result<(Worker, Arc<Waker>)> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let mut listeners = listeners;
        for (i, l) in listeners.iter_mut().enumerate() {
            poll.registry().register(&mut l.socket, Token(LISTENER_BASE + i), Interest::READABLE)?;
        }
        let stats = eng.srv.workers[id].clone();
        let effects = tern_commands::aof::marked_effects(&eng.srv);
        Ok((Worker { id, eng, poll, listeners, mc, tls, handshaking: 0, conns: Slab::new(), stats, scratch: Scratch::default(), plan: Plan::default(), effects, blocked: HashMap::new(), deadlines: BinaryHeap::new(), timed: Default::default(), postponed: Vec::new(), pause_seen: 0, deferred: Vec::new(), held: VecDeque::new() }, waker))
    }

    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        // When the periodic work is due: within a tick of any activity,
        // and otherwise only when `tick` knows of work that will be due
        // then. An idle worker sleeps until that, or the earliest deadline
        // of a blocked client, whatever `hz`: it costs no CPU.
        let mut next_tick = Some(Instant::now() + TICK);
        loop {
            if self.eng.srv.is_shutting_down() {
                self.shutdown();
                return;
            }
            let now = Instant::now();
            let mut wait = next_tick.map(|t| t.saturating_duration_since(now));
            if let Some(&Reverse((at, _))) = self.deadlines.peek() {
                // Rounded up to the millisecond, epoll's resolution.
                let d = Duration::from_millis((at + 1).saturating_sub(now_ms()));
                wait = Some(wait.map_or(d, |w| w.min(d)));
            }
            // Clients held back by CLIENT PAUSE go on when it runs out.
            if let (false, Some(at)) = (self.postponed.is_empty(), self.eng.srv.pause.deadline()) {
                let d = Duration::from_millis(at.saturating_sub(now_ms()));
                wait = Some(wait.map_or(d, |w| w.min(d)));
            }
            if let Err(e) = self.poll.poll(&mut events, wait) {
                if e.kind() != io::ErrorKind::Interrupted {
                    log_warning!("worker {}: poll failed: {}", self.id, e);
                }
                continue;
            }
            // The turn's clock: commands and connections read the time
            // from it (cmd::Clock).
            self.scratch.clock = cmd::Clock::now(self.eng.srv.settings.command_time_tsc());
            let mut active = !events.is_empty();
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {
                        if self.eng.srv.take_kill_hint(self.id) {
                            self.check_kills();
                        }
                        self.read_mail();
                        self.feed_monitors();
                    }
                    Token(t) if (LISTENER_BASE..CONN_BASE).contains(&t) => self.accept(t - LISTENER_BASE),
                    Token(t) => {
                        let key = t - CONN_BASE;
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.on_readable(key, ev.is_read_closed() || ev.is_error());
                        }
                        if ev.is_writable() {
                            self.on_writable(key);
                        }
                    }
                }
            }
            active |= self.fire_timeouts();
            self.resume_postponed();
            self.deliver_messages();
            self.end_round();
            let now = self.scratch.clock.mark();
            if active {
                let soon = now + TICK;
                next_tick = Some(next_tick.map_or(soon, |t| t.min(soon)));
            }
            if next_tick.is_some_and(|t| now >= t) {
                next_tick = self.tick();
                // What closing clients wrote goes too: a mark held while
                // this worker sleeps would hold every worker's records back.
                self.end_round();
            }
        }
    }

    /// Acts on the messages about this worker's blocked clients.
    fn read_mail(&mut self) {
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
    fn retry_blocked(&mut self, key: usize) {
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
    fn end_wait(&mut self, key: usize, error: bool) {
        let eng = self.eng.clone();
        let Some(conn) = self.conns.get_mut(key) else { return };
        let mut locks = lock_set(&eng.srv.ks, &self.effects);
        cmd::blocking::abandon(&eng.srv, &mut locks, &mut conn.client, &self.stats, Some(&mut conn.out), error);
        self.effects.absorb(&locks.effects);
        self.resume(key);
    }

    /// A client's wait is over: it is forgotten here, and the requests it
    /// sent meanwhile run.
    fn resume(&mut self, key: usize) {
        if let Some(conn) = self.conns.get(key) {
            let id = conn.client.id;
            self.forget_blocked(id);
        }
        self.process(key);
        self.flush(key);
    }

    /// Drops client `id` from the blocked ones (and from the timeout
    /// table, keeping the gauge in step). Returns its slab key if it was.
    fn forget_blocked(&mut self, id: u64) -> Option<usize> {
        if self.timed.remove(&id) {
            self.stats.clients_in_timeout.add(u64::MAX);
        }
        self.blocked.remove(&id)
    }

    /// Runs again the requests CLIENT PAUSE held back, once the pause has
    /// ended or changed (UNPAUSE, a PAUSE in another mode): those still
    /// held are postponed again, in the order they came.
    fn resume_postponed(&mut self) {
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
            conn.postponed = false;
            conn.client.shared.set_flag(client_flags::PAUSED, false);
            self.process(key);
            self.flush(key);
        }
    }

    /// Times out the blocked clients whose deadline has passed. Strictly
    /// passed: the deadline was computed from a clock read in whole
    /// milliseconds, so at the deadline's own millisecond up to 1 ms of
    /// the timeout may be left.
    /// True when a wait ended.
    fn fire_timeouts(&mut self) -> bool {
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

    fn accept(&mut self, li: usize) {
        loop {
            let (stream, addr) = match self.listeners[li].socket.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    log_warning!("Accepting client connection: {}", e);
                    return;
                }
            };
            let (mc, tls) = (self.listeners[li].mc, self.listeners[li].tls);
            self.add_conn(stream, addr, mc, tls);
        }
    }

    fn add_conn(&mut self, mut stream: TcpStream, addr: SocketAddr, mc: bool, tls: bool) {
        let srv = &self.eng.srv;
        self.stats.connections_received.add(1);
        let refuse = |stream: &mut TcpStream, mc_line: &str, resp_err: &str| {
            // A TLS client would read plaintext as a broken record: it is
            // only closed.
            if tls {
                return;
            }
            let mut msg = Vec::new();
            if mc {
                msg.extend_from_slice(mc_line.as_bytes());
                msg.extend_from_slice(b"\r\n");
            } else {
                tern_resp::Encoder::RESP2.error(&mut msg, resp_err.as_bytes());
            }
            let _ = stream.write(&msg);
        };
        // Protected mode, as Redis: with no password for the default user,
        // only loopback clients are served, on every port.
        if srv.settings.protected_mode() && srv.acl.default_user().nopass && !is_loopback(&addr) {
            self.stats.rejected_connections.add(1);
            log_verbose!("Refused {} (protected mode)", addr);
            refuse(&mut stream, &tern_memcache::errors::server_error(errors::DENIED), errors::DENIED);
            return;
        }
        let max = srv.settings.maxclients();
        if srv.connected.fetch_add(1, Ordering::SeqCst) >= max {
            srv.connected.fetch_sub(1, Ordering::SeqCst);
            self.stats.rejected_connections.add(1);
            refuse(&mut stream, tern_memcache::errors::TOO_MANY_CONNECTIONS, errors::MAX_CLIENTS);
            return;
        }
        let _ = stream.set_nodelay(true);
        let ka = srv.settings.tcp_keepalive().as_secs();
        if ka > 0 {
            let sock = socket2::SockRef::from(&stream);
            // As Redis's anetKeepAlive: first probe after `ka` idle seconds,
            // then every ka/3 seconds, dead after 3 unanswered probes.
            let params = socket2::TcpKeepalive::new()
                .with_time(Duration::from_secs(ka))
                .with_interval(Duration::from_secs((ka / 3).max(1)))
                .with_retries(3);
            let _ = sock.set_tcp_keepalive(&params);
        }
        let tls = if tls {
            let Some(session) = self.tls.accept() else {
                log_warning!("Error accepting a client connection: no TLS context (addr={} laddr={})", addr, local(&stream));
                srv.connected.fetch_sub(1, Ordering::SeqCst);
                return;
            };
            let deadline = now_ms().saturating_add(srv.settings.tls_handshake_timeout().as_millis() as u64);
            self.handshaking += 1;
            Some(Box::new(TlsConn::new(session, deadline)))
        } else {
            None
        };
        let id = srv.next_client_id.fetch_add(1, Ordering::Relaxed);
        use std::os::fd::AsRawFd;
        let shared = Arc::new(ClientShared::new(id, addr.to_string(), local(&stream), stream.as_raw_fd(), self.id, now_ms()));
        let (user, epoch) = srv.acl.default_session();
        let client = Client::new(shared.clone(), user, epoch);
        let entry = self.conns.vacant_entry();
        shared.handle.store(entry.key(), Ordering::Relaxed);
        let token = Token(CONN_BASE + entry.key());
        if let Err(e) = self.poll.registry().register(&mut stream, token, Interest::READABLE | Interest::WRITABLE) {
            log_warning!("registering client: {}", e);
            srv.connected.fetch_sub(1, Ordering::SeqCst);
            self.handshaking -= usize::from(tls.is_some());
            return;
        }
        log_verbose!("Accepted {}", peer(&stream));
        srv.clients.lock().insert(id, shared);
        entry.insert(Conn {
            stream,
            tls,
            rbuf: Vec::new(),
            rpos: 0,
            rlen: 0,
            frame: Frame::new(),
            out: OutBuf::new(),
            client,
            paused: false,
            postponed: false,
            closing: false,
            soft_since: None,
            mc: mc.then(|| Box::new(tern_memcache::Parser::new())),
            mem_counted: 0,
            rbs_seen: 0,
            hold: 0,
        });
        if mc {
            self.mc.total_connections.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn close(&mut self, key: usize) {
        if !self.conns.contains(key) {
            return;
        }
        let mut conn = self.conns.remove(key);
        self.stats.client_mem.adjust(conn.mem_counted, 0);
        if let Some(t) = &mut conn.tls {
            if t.deadline.is_some() {
                self.handshaking -= 1;
            } else {
                // A clean end for the peer, if its socket takes it now.
                t.session.send_close_notify();
                let _ = t.flush(&mut conn.stream);
            }
        }
        let _ = self.poll.registry().deregister(&mut conn.stream);
        if self.forget_blocked(conn.client.id).is_some() {
            // It takes nothing more; its turn passes to the next waiter.
            let mut locks = lock_set(&self.eng.srv.ks, &self.effects);
            cmd::blocking::abandon(&self.eng.srv, &mut locks, &mut conn.client, &self.stats, None, false);
            self.effects.absorb(&locks.effects);
        }
        self.eng.srv.forget_client(&mut conn.client);
        log_verbose!("Client closed connection id={}", conn.client.id);
    }

    /// Reads what the socket holds and runs it. `to_eagain`: read until
    /// EAGAIN even after a short read, as when the peer has half-closed
    /// (the end of the stream must be read, and no later event will say
    /// so) or when nothing says what the socket still holds.
    fn on_readable(&mut self, key: usize, to_eagain: bool) {
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
        self.flush(key);
    }

    /// A connection's TLS handshake is over: its deadline goes.
    fn handshake_done(&mut self, key: usize) {
        let Some(t) = self.conns.get_mut(key).and_then(|c| c.tls.as_mut()) else { return };
        if t.deadline.take().is_some() {
            self.handshaking -= 1;
        }
    }

    /// Closes the connections whose TLS handshake outlived
    /// `tls-handshake-timeout`; returns when the next one falls due.
    fn expire_handshakes(&mut self, now: u64) -> u64 {
        let mut due = u64::MAX;
        if self.handshaking == 0 {
            return due;
        }
        let mut late = Vec::new();
        for (k, c) in self.conns.iter() {
            match c.tls.as_ref().and_then(|t| t.deadline) {
                Some(at) if at <= now => late.push(k),
                Some(at) => due = due.min(at),
                None => {}
            }
        }
        for k in late {
            if let Some(c) = self.conns.get(k) {
                log_warning!("Error accepting a client connection: TLS handshake timed out (addr={} laddr={})", c.client.shared.addr, local(&c.stream));
            }
            self.close(k);
        }
        due
    }

    /// Applies `client-query-buffer-limit` (and the tighter limit for
    /// clients that have not authenticated). Returns true if it closed the
    /// client. A paused client is not read from, so its buffer cannot grow
    /// and the complete requests waiting in it do not count.
    fn close_if_query_too_big(&mut self, key: usize) -> bool {
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
    /// output limit, which closes it).
    fn process(&mut self, key: usize) {
        if self.conns.get(key).is_some_and(|c| c.mc.is_some()) {
            return self.process_mc(key);
        }
        let eng = self.eng.clone();
        let (srv, commands) = (&eng.srv, &eng.commands);
        let Some(conn) = self.conns.get_mut(key) else { return };
        self.scratch.clock.mark_now();
        let started_ns = self.scratch.clock.mark_ns();
        let mut locks = lock_set(&srv.ks, &self.effects);
        // With `appendfsync always` no reply leaves before its write is
        // on disk: the buffer waits for the round's end (or pauses).
        let early = !srv.aof.waits();
        let mut limits = Limits {
            max_bulk_len: srv.settings.proto_max_bulk_len(),
            ..Limits::default()
        };
        let hard = srv.settings.client_output_buffer_limit().normal.hard as usize;
        let batch = self.scratch.tuner.begin(srv.prefetch_batch(), srv.settings.prefetch_tune());
        let mut ran = false;
        let mut ran_commands = 0;
        while conn.rpos < conn.rlen && !conn.closing && conn.client.blocked.is_none() && !conn.postponed {
            if early && conn.pending_out() > OUT_WRITE_EARLY && conn.write_out(&self.stats, self.scratch.clock.last_ms()).is_err() {
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
            let step = run_request(
                Ctx { srv, commands, worker: self.id, stats: &self.stats, scratch: &mut self.scratch, plan: &mut self.plan, locks: &mut locks, limits: &mut limits, batch },
                &mut conn.frame,
                &mut conn.client,
                &mut conn.out,
                buf,
            );
            match step {
                Step::Incomplete => break,
                Step::Http => {
                    log_warning!("Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. Connection aborted.");
                    conn.closing = true;
                    break;
                }
                Step::Ran { len, command, close } => {
                    ran |= command;
                    ran_commands += u64::from(command);
                    conn.closing |= close;
                    conn.rpos += len;
                }
                Step::Postponed => {
                    conn.postponed = true;
                    conn.client.shared.set_flag(client_flags::PAUSED, true);
                    self.postponed.push(key);
                    break;
                }
                Step::ProtocolError(msg) => {
                    log_verbose!(
                        "Protocol error ({}) from client: id={} addr={}",
                        String::from_utf8_lossy(&msg),
                        conn.client.id,
                        conn.client.shared.addr
                    );
                    conn.closing = true;
                    conn.rpos = conn.rlen;
                }
            }
        }
        self.plan.abandon(&mut conn.frame);
        self.scratch.tuner.end(self.scratch.clock.mark_ns().saturating_sub(started_ns), ran_commands);
        self.effects.absorb(&locks.effects);
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

    /// [`Worker::process`] for a memcached connection: every complete
    /// request of the buffer runs, replies collect in the output buffer
    /// and leave in one write after the batch.
    fn process_mc(&mut self, key: usize) {
        let eng = self.eng.clone();
        let srv = &eng.srv;
        let Some(conn) = self.conns.get_mut(key) else { return };
        let Some(mut parser) = conn.mc.take() else { return };
        let lim = tern_memcache::Limits { max_item_size: self.mc.max_item_size() };
        let hard = srv.settings.client_output_buffer_limit().normal.hard as usize;
        let batch = srv.prefetch_batch();
        // Requests already looked at by the prefetch look-ahead.
        let mut ahead = 0;
        let mut ran = false;
        // One reading for the batch: memcached itself keeps a clock that
        // moves once a second.
        self.scratch.clock.mark_now();
        let now = self.scratch.clock.last_ms();
        let early = !srv.aof.waits();
        while conn.rpos < conn.rlen && !conn.closing {
            if early && conn.pending_out() > OUT_WRITE_EARLY && conn.write_out(&self.stats, now).is_err() {
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
            let authenticated = conn.client.authenticated || !srv.acl.auth_required();
            if batch > 0 && ahead == 0 && authenticated {
                ahead = self.plan.look_ahead_mc(srv, &parser, buf, &lim, batch);
            }
            match parser.parse(buf, &lim) {
                Ok(None) => break,
                Ok(Some((req, n))) => {
                    ahead = ahead.saturating_sub(1);
                    ran = true;
                    self.stats.commands.add(1);
                    let mut ex = memcache::Exec { srv, sh: &self.mc, out: &mut conn.out, stats: &self.stats, now, fx: &self.effects };
                    conn.rpos += n;
                    if !authenticated {
                        let epoch = srv.acl.epoch();
                        let (user, after) = ex.run_unauthenticated(req);
                        if let Some(u) = user {
                            conn.client.log_in(u, epoch);
                        }
                        if after == memcache::After::Close {
                            conn.rpos = conn.rlen;
                        }
                        continue;
                    }
                    conn.client.refresh_user(&srv.acl);
                    if !conn.client.user.unrestricted {
                        if let Err(line) = memcache::access::check(srv, &conn.client, &req, now) {
                            tern_memcache::reply::line(ex.out, &line);
                            continue;
                        }
                    }
                    if ex.run(req) == memcache::After::Close {
                        conn.closing = true;
                    }
                }
                Err(_) => {
                    // memcached closes without a reply.
                    conn.closing = true;
                    conn.rpos = conn.rlen;
                }
            }
        }
        conn.mc = Some(parser);
        if conn.rpos == conn.rlen {
            conn.rpos = 0;
            conn.rlen = 0;
            if conn.rbuf.len() > 1 << 20 {
                conn.rbuf = Vec::new();
            }
        }
        if ran {
            conn.client.shared.last_interaction_ms.store(self.scratch.clock.last_ms(), Ordering::Relaxed);
        }
        self.check_output_limits(key);
    }

    /// `maxmemory-clients`: while all workers' client buffers together
    /// are over it, closes this worker's largest client, as Redis's client
    /// eviction does (biggest first, never one under 32 KiB, never one
    /// that asked for CLIENT NO-EVICT). A worker only closes its own
    /// clients; one with only small clients leaves the work to the others.
    fn evict_clients(&mut self) {
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

    fn check_output_limits(&mut self, key: usize) {
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

    fn on_writable(&mut self, key: usize) {
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
    fn end_round(&mut self) {
        loop {
            let srv = &self.eng.srv;
            let replies = !self.deferred.is_empty();
            let ticket = tern_commands::aof::hand_round(srv, &self.effects, replies);
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
    fn release_held(&mut self) {
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
    fn flush(&mut self, key: usize) {
        let srv = &self.eng.srv;
        if srv.settings.io_replies_after_round() || srv.aof.waits() {
            self.deferred.push(key);
            return;
        }
        self.send(key);
    }

    /// Writes pending replies; resumes a paused client once they drain.
    fn send(&mut self, key: usize) {
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

    /// Closes clients marked by CLIENT KILL, and subscribers whose user
    /// no longer allows what they listen to (ACL SETUSER, ACL LOAD).
    fn check_kills(&mut self) {
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
    fn deliver_messages(&mut self) {
        let srv = &self.eng.srv;
        srv.invalidate_written(&self.effects, 0, self.id);
        if srv.messaging.tracking.any() {
            srv.messaging.tracking.broadcast(|i, d| srv.deliver(i, d, self.id));
        }
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
                self.check_output_limits(key);
                if self.conns.contains(key) {
                    self.flush(key);
                }
            }
        }
    }

    /// Moves the lines other workers left for this worker's MONITOR
    /// clients into their replies; closes one whose lines overflowed.
    fn feed_monitors(&mut self) {
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

    /// Periodic work: idle timeouts, soft output limits, kills, idle
    /// read buffers. Returns when it is next due with nothing happening
    /// meanwhile (activity brings it forward): None when nothing will be.
    fn tick(&mut self) -> Option<Instant> {
        self.check_kills();
        // The earliest wall-clock ms something is due.
        let mut due = self.expire_handshakes(now_ms());
        let timeout = u64::try_from(self.eng.srv.settings.timeout().as_millis()).unwrap_or(u64::MAX);
        if timeout > 0 {
            let now = now_ms();
            // Redis spares subscribers (they only listen) and blocked
            // clients (their own timeout applies) but not clients in the
            // middle of a MULTI.
            let mut idle = Vec::new();
            for (k, c) in self.conns.iter() {
                let sh = &c.client.shared;
                if sh.has_flag(client_flags::PUBSUB) || sh.has_flag(client_flags::BLOCKED) {
                    continue;
                }
                let last = sh.last_interaction_ms.load(Ordering::Relaxed);
                if now.saturating_sub(last) > timeout {
                    idle.push(k);
                } else {
                    due = due.min(last.saturating_add(timeout).saturating_add(1));
                }
            }
            for k in idle {
                log_verbose!("Closing idle client");
                self.close(k);
            }
        }
        let keys: Vec<usize> = self.conns.iter().filter(|(_, c)| c.pending_out() > 0).map(|(k, _)| k).collect();
        if !keys.is_empty() {
            // The soft limit counts seconds over it, continuously.
            due = due.min(now_ms() + TICK.as_millis() as u64);
        }
        for k in keys {
            self.check_output_limits(k);
        }
        let now = now_ms();
        for (_, c) in self.conns.iter_mut() {
            if c.rbuf.capacity() > 0 && c.rpos == c.rlen && !c.frame.is_partial() {
                let last = c.client.shared.last_interaction_ms.load(Ordering::Relaxed);
                if now.saturating_sub(last) >= IDLE_BUFFER_RELEASE_MS {
                    c.rbuf = Vec::new();
                    c.rpos = 0;
                    c.rlen = 0;
                    c.account_mem(&self.stats);
                } else {
                    due = due.min(last + IDLE_BUFFER_RELEASE_MS);
                }
            }
        }
        (due != u64::MAX).then(|| Instant::now() + Duration::from_millis(due.saturating_sub(now_ms())))
    }

    /// Stops accepting, writes the replies in flight, closes everything.
    fn shutdown(&mut self) {
        for l in &mut self.listeners {
            let _ = self.poll.registry().deregister(&mut l.socket);
        }
        self.listeners.clear();
        let deadline = Instant::now() + SHUTDOWN_FLUSH;
        let mut events = Events::with_capacity(256);
        loop {
            let keys: Vec<usize> = self.conns.iter().map(|(k, _)| k).collect();
            for &k in &keys {
                self.flush(k);
            }
            self.end_round();
            let pending = self.conns.iter().any(|(_, c)| c.pending_out() > 0);
            if !pending || Instant::now() >= deadline {
                break;
            }
            let _ = self.poll.poll(&mut events, Some(Duration::from_millis(50)));
        }
        let keys: Vec<usize> = self.conns.iter().map(|(k, _)| k).collect();
        for k in keys {
            self.close(k);
        }
        // The last records go to the AOF writer, which writes them once
        // every worker has stopped.
        tern_commands::aof::hand(&self.eng.srv, &self.effects, false);
        log_notice!("worker {} stopped", self.id);
    }
}
