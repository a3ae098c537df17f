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
//! Non-goals: output-buffer and query-buffer limits, pausing, idle
//! timeouts, the memcached protocol, and anything else that needs a socket
//! or the clock of an event loop.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tern_resp::{Frame, Limits};
use tern_store::LockSet;

use crate::client::{Client, ClientShared};
use crate::cmd::{self, Scratch};
use crate::config::Config;
use crate::net;
use crate::outbuf::OutBuf;
use crate::prefetch::Plan;
use crate::server::{now_ms, Server};

/// A server with one worker's state (worker 0), run by the caller.
pub struct InProc {
    srv: Arc<Server>,
    scratch: Scratch,
    plan: Plan,
}

/// One client connection of an [`InProc`] server.
pub struct Session {
    srv: Arc<Server>,
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
        InProc { srv: Arc::new(Server::new(cfg)), scratch: Scratch::default(), plan: Plan::default() }
    }

    pub fn server(&self) -> &Arc<Server> {
        &self.srv
    }

    /// A new client, registered as an accepted connection is, and
    /// authenticated only if no password is set.
    pub fn connect(&self) -> Session {
        let srv = &self.srv;
        let id = srv.next_client_id.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(ClientShared::new(id, "127.0.0.1:1".into(), "127.0.0.1:0".into(), -1, 0, now_ms()));
        srv.connected.fetch_add(1, Ordering::SeqCst);
        srv.clients.lock().insert(id, shared.clone());
        let authenticated = !srv.settings.requirepass_set();
        Session { srv: srv.clone(), client: Client::new(shared, authenticated), frame: Frame::new(), buf: Vec::new(), out: OutBuf::new(), closed: false }
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
        let srv: &Server = &self.srv;
        let stats = &srv.workers[0];
        self.scratch.clock = cmd::Clock::now();
        let mut locks = LockSet::new(&srv.ks);
        let mut limits = Limits { max_bulk_len: srv.settings.proto_max_bulk_len(), ..Limits::default() };
        let batch = srv.settings.prefetch_batch_max_size();
        let mut pos = 0;
        while pos < s.buf.len() && !s.closed {
            let step = net::run_request(
                net::Ctx { srv, worker: 0, stats, scratch: &mut self.scratch, plan: &mut self.plan, locks: &mut locks, limits: &mut limits, batch },
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
                }
                net::Step::ProtocolError(_) => {
                    s.closed = true;
                    pos = s.buf.len();
                }
            }
        }
        self.plan.abandon(&mut s.frame);
        s.frame.shrink();
        if s.closed {
            pos = s.buf.len();
        }
        s.buf.drain(..pos);
    }
}

impl Session {
    /// The replies written since the last call, as a client would read them.
    pub fn take_replies(&mut self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.out.pending());
        // Writing into a Vec takes everything and cannot fail.
        let _ = self.out.write_to(&mut v);
        self.out.clear();
        v
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
    /// Unregisters the client and drops its WATCHes, as closing a
    /// connection does.
    fn drop(&mut self) {
        for w in self.client.watched.drain(..) {
            self.srv.ks.lock(w.loc.gid).unwatch(&w.key, w.loc.hash, &self.client.watch_flag);
        }
        self.srv.clients.lock().remove(&self.client.id);
        self.srv.connected.fetch_sub(1, Ordering::SeqCst);
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
