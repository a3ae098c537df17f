//! An in-process executor: a [`Server`] and its clients without sockets,
//! for fuzzing and tests that want the whole request path (RESP parsing,
//! the prefetch plan, dispatch, the keyspace) at function-call speed.
//!
//! ```text
//!  bytes ──Session::feed──► Frame / Plan ──► cmd::dispatch ──► OutBuf ──take_replies──► bytes
//! ```
//!
//! A [`Session`] is one connection as a worker sees it: its unexecuted
//! bytes, resumable frame, client state and unsent replies. Feeding runs
//! every complete request through the workers' own request step,
//! `net::run_request` (plan ahead, execute, a protocol error replies and
//! closes, HTTP closes silently, RESET re-parses with the unauthenticated
//! limits), so a fuzzer driving a session drives the code the network does.
//!
//! Memcached connections ([`InProc::connect_mc`]) run each complete
//! request through the same executor as the workers' (`memcache::Exec`).
//! The clock can be moved ahead ([`InProc::advance`]) so that TTLs pass
//! without waiting, and the worker's effect records are readable
//! ([`InProc::effects`]) once a reader is attached to the keyspace.
//!
//! Non-goals: output-buffer and query-buffer limits, pausing, idle
//! timeouts, waiting in blocking commands (they time out at once), and anything else that needs a socket or the clock of an
//! event loop; persistence (no file is written or loaded: BGSAVE has no
//! saver thread here, SAVE no directory).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tern_resp::{Frame, Limits};
use tern_store::{Effects, LockSet};

use tern_commands::client::{Client, ClientShared};
use tern_commands::cmd::{self, Scratch};
use tern_commands::engine::Engine;
use tern_commands::memcache;
use tern_commands::outbuf::OutBuf;
use tern_commands::prefetch::Plan;
use tern_commands::server::{now_ms, Server};
use tern_config::Config;

use crate::net;

/// A server with one worker's state (worker 0), run by the caller.
pub struct InProc {
    eng: Arc<Engine>,
    scratch: Scratch,
    plan: Plan,
    /// memcached's shared state (CAS ids, counters), as the workers share it.
    mc: Arc<memcache::Shared>,
    /// How far the executor's clock runs ahead of the wall clock, in ms.
    skew: u64,
    /// The worker's effect records.
    effects: Effects,
}

/// One memcached connection of an [`InProc`] server.
pub struct McSession {
    parser: tern_memcache::Parser,
    buf: Vec<u8>,
    out: OutBuf,
    authenticated: bool,
    closed: bool,
}

/// One client connection of an [`InProc`] server.
pub struct Session {
    eng: Arc<Engine>,
    pub client: Client,
    frame: Frame,
    /// Received bytes not executed yet (the start of a partial request).
    buf: Vec<u8>,
    out: OutBuf,
    closed: bool,
}

impl InProc {
    /// A server for `cfg`, forced to one worker (whose stats and id the
    /// sessions use).
    pub fn new(mut cfg: Config) -> InProc {
        cfg.threads = 1;
        // Nothing reaches the disk: no `save` schedule (FLUSHALL does not
        // save), and SAVE finds no directory to write in.
        cfg.save.clear();
        cfg.dir = Some(std::env::temp_dir().join("tern-inproc-writes-nothing").join("none").display().to_string());
        let mc = Arc::new(memcache::Shared::new(cfg.memcache_max_item_size));
        let eng = Arc::new(Engine::new(cfg));
        tern_persist::install(&eng.srv);
        InProc { eng, scratch: Scratch::default(), plan: Plan::default(), mc, skew: 0, effects: Effects::new() }
    }

    /// The executor's time: the wall clock plus what [`InProc::advance`]
    /// added, in ms since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        now_ms() + self.skew
    }

    /// Moves the executor's clock `ms` ahead, so that TTLs pass.
    pub fn advance(&mut self, ms: u64) {
        self.skew += ms;
    }

    /// The effect records of what ran so far (none unless a reader is
    /// attached: `server().ks.attach_effects(true)`).
    pub fn effects(&self) -> &Effects {
        &self.effects
    }

    /// One full round of active expiry at the executor's time, run here
    /// rather than on a cron thread; its records join the worker's, in
    /// order with the commands around it. Returns the keys removed.
    pub fn expire_cycle(&self) -> usize {
        let ks = &self.eng.srv.ks;
        ks.expire_cycle(self.now_ms(), ks.total_shards(), usize::MAX, &self.effects)
    }

    /// A new memcached connection, authenticated only if no password is set.
    pub fn connect_mc(&self) -> McSession {
        let authenticated = !self.eng.srv.acl.auth_required();
        McSession { parser: tern_memcache::Parser::new(), buf: Vec::new(), out: OutBuf::new(), authenticated, closed: false }
    }

    /// [`InProc::feed`] for a memcached connection: every complete request
    /// of what `s` has received runs; a malformed one closes it silently,
    /// as memcached does.
    pub fn feed_mc(&mut self, s: &mut McSession, bytes: &[u8]) {
        if s.closed {
            return;
        }
        s.buf.extend_from_slice(bytes);
        let srv = &self.eng.srv;
        let lim = tern_memcache::Limits { max_item_size: self.mc.max_item_size() };
        let mut pos = 0;
        while pos < s.buf.len() && !s.closed {
            match s.parser.parse(&s.buf[pos..], &lim) {
                Ok(None) => break,
                Ok(Some((req, n))) => {
                    pos += n;
                    let now = now_ms() + self.skew;
                    let mut ex =
                        memcache::Exec { srv, sh: &self.mc, out: &mut s.out, stats: &srv.workers[0], now, fx: &self.effects };
                    if !s.authenticated {
                        let (user, after) = ex.run_unauthenticated(req);
                        s.authenticated = user.is_some();
                        s.closed |= after == memcache::After::Close;
                    } else if ex.run(req) == memcache::After::Close {
                        s.closed = true;
                    }
                }
                Err(_) => s.closed = true,
            }
        }
        if s.closed {
            pos = s.buf.len();
        }
        s.buf.drain(..pos);
    }

    pub fn server(&self) -> &Server {
        &self.eng.srv
    }

    /// A new client, registered as an accepted connection is, and
    /// authenticated only if no password is set.
    pub fn connect(&self) -> Session {
        let srv = &self.eng.srv;
        let id = srv.next_client_id.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(ClientShared::new(id, "127.0.0.1:1".into(), "127.0.0.1:0".into(), -1, 0, now_ms()));
        srv.connected.fetch_add(1, Ordering::SeqCst);
        srv.clients.lock().insert(id, shared.clone());
        let (user, epoch) = srv.acl.default_session();
        Session { eng: self.eng.clone(), client: Client::new(shared, user, epoch), frame: Frame::new(), buf: Vec::new(), out: OutBuf::new(), closed: false }
    }

    /// Appends `bytes` to what `s` has received and executes every complete
    /// request; the replies wait in `s` ([`Session::take_replies`]). Once
    /// the session is closed (QUIT, a protocol error, CLIENT KILL), what
    /// follows is dropped, as a closing connection is not read.
    pub fn feed(&mut self, s: &mut Session, bytes: &[u8]) {
        if s.client.shared.kill.load(Ordering::Relaxed) {
            s.closed = true;
        }
        if s.closed {
            return;
        }
        s.buf.extend_from_slice(bytes);
        let (srv, commands) = (&self.eng.srv, &self.eng.commands);
        let stats = &srv.workers[0];
        self.scratch.clock = cmd::Clock::starting_at(now_ms() + self.skew);
        let mut locks = LockSet::new(&srv.ks);
        let mut limits = Limits { max_bulk_len: srv.settings.proto_max_bulk_len(), ..Limits::default() };
        let batch = srv.prefetch_batch();
        let mut pos = 0;
        while pos < s.buf.len() && !s.closed {
            let step = net::run_request(
                net::Ctx { srv, commands, worker: 0, stats, scratch: &mut self.scratch, plan: &mut self.plan, locks: &mut locks, limits: &mut limits, batch },
                &mut s.frame,
                &mut s.client,
                &mut s.out,
                &s.buf[pos..],
            );
            match step {
                net::Step::Incomplete => break,
                net::Step::Http => s.closed = true,
                net::Step::Ran { len, close, .. } => {
                    s.closed |= close;
                    pos += len;
                    // No event loop waits here: a blocking command that
                    // found nothing times out at once.
                    if s.client.blocked.is_some() {
                        cmd::blocking::abandon(srv, &mut locks, &mut s.client, stats, Some(&mut s.out), false);
                    }
                }
                // No event loop waits here: a request CLIENT PAUSE holds
                // back stays in the buffer, and runs at a later feed once
                // the pause has ended (also by `advance`).
                net::Step::Postponed => break,
                net::Step::ProtocolError(_) => {
                    s.closed = true;
                    pos = s.buf.len();
                }
            }
        }
        self.plan.abandon(&mut s.frame);
        self.effects.absorb(&locks.effects);
        s.frame.shrink();
        if s.closed {
            pos = s.buf.len();
        }
        s.buf.drain(..pos);
    }
}

/// Everything `out` holds, as a client would read it.
fn drain(out: &mut OutBuf) -> Vec<u8> {
    let mut v = Vec::with_capacity(out.pending());
    // Writing into a Vec takes everything and cannot fail.
    let _ = out.write_to(&mut v);
    out.clear();
    v
}

impl McSession {
    /// The replies written since the last call, as a client would read them.
    pub fn take_replies(&mut self) -> Vec<u8> {
        drain(&mut self.out)
    }

    /// The connection is closing: it executes nothing more.
    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

impl Session {
    /// The replies written since the last call, as a client would read them.
    pub fn take_replies(&mut self) -> Vec<u8> {
        drain(&mut self.out)
    }

    /// The connection is closing: it executes nothing more.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Received bytes that do not make a complete request yet.
    pub fn unexecuted(&self) -> usize {
        self.buf.len()
    }
}

impl Drop for Session {
    /// Unregisters the client, as closing a connection does.
    fn drop(&mut self) {
        self.eng.srv.forget_client(&mut self.client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_in_pieces_runs_in_order() {
        let mut srv = InProc::new(Config::default());
        let mut s = srv.connect();
        let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n";
        for chunk in input.chunks(5) {
            srv.feed(&mut s, chunk);
        }
        assert_eq!(s.take_replies(), b"+OK\r\n$1\r\nv\r\n+PONG\r\n");
        assert_eq!(s.unexecuted(), 0);
    }

    #[test]
    fn protocol_error_replies_and_closes() {
        let mut srv = InProc::new(Config::default());
        let mut s = srv.connect();
        srv.feed(&mut s, b"*1\r\n$x\r\nPING\r\n");
        let out = s.take_replies();
        assert!(out.starts_with(b"-ERR Protocol error"), "{:?}", String::from_utf8_lossy(&out));
        assert!(s.is_closed());
        srv.feed(&mut s, b"PING\r\n");
        assert!(s.take_replies().is_empty());
    }

    #[test]
    fn sessions_register_and_unregister() {
        let mut srv = InProc::new(Config::default());
        let mut a = srv.connect();
        let b = srv.connect();
        assert_eq!(srv.server().clients.lock().len(), 2);
        drop(b);
        srv.feed(&mut a, b"CLIENT LIST\r\n");
        let out = a.take_replies();
        assert_eq!(out.windows(3).filter(|w| w == b"id=").count(), 1);
        assert_eq!(srv.server().connected.load(Ordering::SeqCst), 1);
    }
}
