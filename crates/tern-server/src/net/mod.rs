//! Workers: one event loop per thread, each owning its connections from
//! accept to close. There is no command thread: a worker parses, executes
//! against the shared keyspace, and writes the replies of its own clients.
//!
//! ```text
//!  mod.rs      the loop (run), accepting and closing connections, the tick
//!  request.rs  reading a socket and running the requests in its buffer
//!  blocked.rs  clients waiting in a blocking command or held by CLIENT PAUSE
//!  push.rs     what arrives without a request: messages, invalidations,
//!              MONITOR lines, CLIENT KILL
//!  output.rs   writing replies (now, at the round's end, or once the AOF
//!              has them on disk) and the output limits
//! ```
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
use tern_resp::{Frame, Limits};
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

mod blocked;
mod output;
mod push;
mod request;

pub(crate) use request::{run_request, Ctx, Step};

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
    /// The urgent deliveries (invalidations) taken by this turn's
    /// `deliver_messages`, marked written after its `end_round`.
    drain_ticket: u64,
    /// While a fan-out's messages gather (`pubsub-coalesce-us`): when
    /// they are written.
    coalesce_until: Option<Instant>,
}

/// A lock set whose records note the worker's mark (see
/// `tern_store::aof::feed`) as they leave their shards, in a buffer the
/// worker's lends it ([`Effects::lend`]).
fn lock_set<'a>(ks: &'a Keyspace, fx: &Effects) -> LockSet<'a> {
    let mut locks = LockSet::new(ks);
    locks.effects = fx.lend();
    locks
}

pub use tern_commands::client::is_loopback;

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
        let effects = tern_persist::aof::marked_effects(&eng.srv);
        Ok((Worker { id, eng, poll, listeners, mc, tls, handshaking: 0, conns: Slab::new(), stats, scratch: Scratch::default(), plan: Plan::default(), effects, blocked: HashMap::new(), deadlines: BinaryHeap::new(), timed: Default::default(), postponed: Vec::new(), pause_seen: 0, deferred: Vec::new(), held: VecDeque::new(), drain_ticket: 0, coalesce_until: None }, waker))
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
            // Messages gathering for a fan-out are written when due.
            if let Some(at) = self.coalesce_until {
                let d = at.saturating_duration_since(now);
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
            self.eng.srv.messaging.end_drain(self.id, self.drain_ticket);
            // The turn's length, from the end of the wait (INFO's
            // eventloop_* figures).
            self.scratch.clock.mark_now();
            self.stats.eventloop_cycles.add(1);
            self.stats.eventloop_ns.add(self.scratch.clock.mark_ns());
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
        blocked::set_postponed(&self.eng.srv, &mut conn, false);
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

    /// SYNC or PSYNC ran: the connection leaves the worker for a thread
    /// of its own that serves the replica (`tern_persist::repl::master`),
    /// with the replies not yet written. It is no client any more (CLIENT
    /// LIST and `connected_clients` leave it out); a replica over TLS is
    /// closed (`tls-replication` is refused).
    fn hand_over_replica(&mut self, key: usize) {
        if self.conns.get(key).is_some_and(|c| c.tls.is_some()) {
            log_warning!("Replication over TLS is not supported: closing the replica's connection");
            self.close(key);
            return;
        }
        let mut conn = self.conns.remove(key);
        blocked::set_postponed(&self.eng.srv, &mut conn, false);
        self.stats.client_mem.adjust(conn.mem_counted, 0);
        let _ = self.poll.registry().deregister(&mut conn.stream);
        let mut pending = Vec::new();
        let _ = conn.out.write_to(&mut pending);
        let Some(req) = conn.client.sync.take() else { return };
        let hello = conn.client.replica.take().map(|h| *h).unwrap_or_default();
        let (client_id, addr) = (conn.client.id, conn.client.shared.addr.clone());
        self.eng.srv.forget_client(&mut conn.client);
        // Still in CLIENT LIST (flag S, TYPE replica) until its threads end,
        // but no longer one of `connected_clients`, as in Redis.
        conn.client.shared.set_flag(client_flags::REPLICA, true);
        self.eng.srv.clients.lock().insert(client_id, conn.client.shared.clone());
        let stream = std::net::TcpStream::from(std::os::fd::OwnedFd::from(conn.stream));
        let eng = self.eng.clone();
        let handoff = tern_persist::repl::master::Handoff { stream, pending, client_id, addr, hello, psync: req.psync };
        let spawned = std::thread::Builder::new().name(format!("tern-replica-{client_id}")).spawn(move || tern_persist::repl::master::serve(&eng.srv, handoff));
        if let Err(e) = spawned {
            log_warning!("Can't start the thread that serves a replica: {}", e);
        }
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
        tern_persist::aof::hand(&self.eng.srv, &self.effects, false);
        log_notice!("worker {} stopped", self.id);
    }
}
