//! Servers and their connection pools, and the ring that picks a server
//! for a key.
//!
//! ```text
//!  Cluster ── Ring (key → server index)
//!     └── Server × N ── Mutex<Idle> (idle connections, open count, down state)
//!                        Condvar     (a connection came back or was dropped)
//! ```
//!
//! A [`Lease`] is one connection taken from a server's pool. It goes back
//! only through [`Lease::finish`] with a result that was read to its end;
//! dropping it, or finishing it with a transport error, closes the
//! connection, so a half-read reply never reaches the next caller.
//!
//! A server that refuses, times out or breaks a connection is marked down:
//! for `down_for`, doubled on each consecutive failure up to `down_max`
//! (the reconnect backoff). While down, taking a connection fails at once
//! with [`Error::ServerDown`]; the first caller after the down time tries a
//! fresh connection, and a success clears the failure count.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::ring::{Hashing, Ring};

/// RESP connection set-up: AUTH, HELLO 3, SELECT, in that order, each only
/// when asked for.
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    pub username: Option<Vec<u8>>,
    pub password: Option<Vec<u8>>,
    /// Speak RESP3 (`HELLO 3`); the AUTH is then folded into the HELLO.
    pub resp3: bool,
    pub db: u32,
}

impl Handshake {
    pub fn is_needed(&self) -> bool {
        self.password.is_some() || self.resp3 || self.db != 0
    }
}

/// What a failed server means to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailurePolicy {
    /// Reads from a failed or down server are misses instead of errors.
    pub reads_miss: bool,
    /// Writes to a failed or down server report "not stored" instead of an
    /// error.
    pub skip_writes: bool,
}

#[derive(Clone, Debug)]
pub struct Options {
    /// Connections per server, idle and in use together.
    pub max_connections: usize,
    pub connect_timeout: Duration,
    /// For every read and write of a request; a reply slower than this
    /// marks the server down.
    pub read_timeout: Duration,
    /// How long to wait for a connection when all `max_connections` are in use.
    pub pool_timeout: Duration,
    /// First mark-down after a failure; zero never marks a server down.
    pub down_for: Duration,
    /// Cap of the doubling mark-down (the reconnect backoff).
    pub down_max: Duration,
    pub hashing: Hashing,
    pub failure: FailurePolicy,
    /// RESP only; `None` for memcached.
    pub handshake: Option<Handshake>,
    /// The most bytes one reply (a whole multi-get's, for meta) may take
    /// in the read buffer; a server sending more is treated as broken
    /// rather than allowed to grow the client's memory without bound.
    pub max_reply: usize,
}

/// Default [`Options::max_reply`]: well above the 512 MB of Redis's
/// largest string, so that only a broken or hostile server reaches it.
pub const MAX_REPLY: usize = 1 << 30;

impl Default for Options {
    fn default() -> Options {
        Options {
            max_connections: 32,
            connect_timeout: Duration::from_secs(1),
            read_timeout: Duration::from_secs(1),
            pool_timeout: Duration::from_secs(1),
            down_for: Duration::from_secs(1),
            down_max: Duration::from_secs(30),
            hashing: Hashing::default(),
            failure: FailurePolicy { reads_miss: false, skip_writes: false },
            handshake: None,
            max_reply: MAX_REPLY,
        }
    }
}

#[derive(Default)]
struct Idle {
    conns: Vec<Conn>,
    /// Connections that exist, idle or leased (or being connected).
    open: usize,
    down_until: Option<Instant>,
    failures: u32,
}

pub struct Server {
    /// `host:port` (or the caller's name for it): the ring's name and the
    /// one errors carry.
    name: Arc<str>,
    addr: String,
    idle: Mutex<Idle>,
    freed: Condvar,
}

impl Server {
    pub fn name(&self) -> &str {
        &self.name
    }

    fn lock(&self) -> MutexGuard<'_, Idle> {
        // A panic while holding this lock leaves only counters behind.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True while the server is marked down.
    pub fn is_down(&self) -> bool {
        self.lock().down_until.is_some_and(|t| Instant::now() < t)
    }

    /// Takes an idle connection, or opens one (with the handshake), waiting
    /// up to the pool timeout when the pool is full.
    pub fn lease(&self, opts: &Options) -> Result<Lease<'_>> {
        let deadline = Instant::now() + opts.pool_timeout;
        let mut idle = self.lock();
        loop {
            if idle.down_until.is_some_and(|t| Instant::now() < t) {
                return Err(Error::ServerDown { server: self.name.to_string() });
            }
            if let Some(conn) = idle.conns.pop() {
                return Ok(Lease { server: self, conn: Some(conn) });
            }
            if idle.open < opts.max_connections.max(1) {
                idle.open += 1;
                drop(idle);
                return match self.open(opts) {
                    Ok(conn) => Ok(Lease { server: self, conn: Some(conn) }),
                    Err(e) => {
                        let mut idle = self.lock();
                        idle.open -= 1;
                        if e.is_transport() {
                            self.mark_down(&mut idle, opts);
                        }
                        self.freed.notify_one();
                        Err(e)
                    }
                };
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::PoolExhausted { server: self.name.to_string() });
            }
            idle = self.freed.wait_timeout(idle, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    fn open(&self, opts: &Options) -> Result<Conn> {
        let mut conn = Conn::connect(&self.name, &self.addr, opts)?;
        if let Some(h) = &opts.handshake {
            crate::resp::handshake(&mut conn, h)?;
        }
        Ok(conn)
    }

    fn mark_down(&self, idle: &mut Idle, opts: &Options) {
        if opts.down_for.is_zero() {
            return;
        }
        idle.failures = idle.failures.saturating_add(1);
        let factor = 1u32 << (idle.failures - 1).min(16);
        let wait = opts.down_for.saturating_mul(factor).min(opts.down_max.max(opts.down_for));
        idle.down_until = Some(Instant::now() + wait);
        // The idle connections were opened before the failure and are most
        // likely broken too.
        idle.open -= idle.conns.len();
        idle.conns.clear();
    }
}

/// A connection out of its server's pool. See the module docs.
pub struct Lease<'a> {
    server: &'a Server,
    conn: Option<Conn>,
}

impl Lease<'_> {
    pub fn conn(&mut self) -> &mut Conn {
        // Only `finish`/`drop` take the connection, and both consume the lease.
        self.conn.get_or_insert_with(|| unreachable!("a lease always holds its connection"))
    }

    pub fn server(&self) -> &Server {
        self.server
    }

    /// Returns the connection to the pool when `result` left it in step
    /// with the server; closes it and marks the server down on a transport
    /// error. Passes `result` through.
    pub fn finish<T>(mut self, opts: &Options, result: Result<T>) -> Result<T> {
        let conn = self.conn.take();
        let mut idle = self.server.lock();
        match (&result, conn) {
            (Err(e), _) if e.is_transport() => {
                idle.open -= 1;
                self.server.mark_down(&mut idle, opts);
            }
            (_, Some(conn)) if conn.is_clean() => {
                idle.failures = 0;
                idle.down_until = None;
                idle.conns.push(conn);
            }
            _ => idle.open -= 1,
        }
        self.server.freed.notify_one();
        result
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if self.conn.take().is_some() {
            self.server.lock().open -= 1;
            self.server.freed.notify_one();
        }
    }
}

/// The servers of one client and the ring over them.
pub struct Cluster {
    pub servers: Vec<Server>,
    pub ring: Ring,
    pub opts: Options,
}

/// `host:port`, with IPv6 hosts bracketed, as meta-memcache names servers.
pub fn server_name(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

impl Cluster {
    pub fn new(servers: &[(String, u16)], opts: Options) -> Result<Cluster> {
        if servers.is_empty() {
            return Err(Error::Invalid("a client needs at least one server".into()));
        }
        let names: Vec<String> = servers.iter().map(|(h, p)| server_name(h, *p)).collect();
        let ring = Ring::new(opts.hashing, &names);
        let servers = names
            .into_iter()
            .map(|name| Server { addr: name.clone(), name: name.into(), idle: Mutex::default(), freed: Condvar::new() })
            .collect();
        Ok(Cluster { servers, ring, opts })
    }

    pub fn server_for(&self, key: &[u8]) -> usize {
        if self.servers.len() == 1 {
            0
        } else {
            self.ring.server_for(key)
        }
    }

    /// Leases a connection of server `i`, runs `f` on it and finishes the lease.
    pub fn with_conn<T>(&self, i: usize, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let mut lease = self.servers[i].lease(&self.opts)?;
        let r = f(lease.conn());
        lease.finish(&self.opts, r)
    }

    /// Runs one batch per server concurrently: every server's request is
    /// written first, so that all servers work at once, and then each
    /// server's replies are read in turn. `write(i, conn)` encodes and
    /// flushes server `i`'s part, `read(i, conn)` reads it back. Results
    /// come back in the order of `parts`.
    pub fn fan_out<T>(
        &self,
        parts: &[usize],
        mut write: impl FnMut(usize, &mut Conn) -> Result<()>,
        mut read: impl FnMut(usize, &mut Conn) -> Result<T>,
    ) -> Vec<Result<T>> {
        // Connections are taken in server order, so that two callers that
        // each need several servers of a small pool never hold one each
        // while waiting for the other's.
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by_key(|&n| parts[n]);
        let mut leases: Vec<Option<Result<Lease<'_>>>> = (0..parts.len()).map(|_| None).collect();
        for n in order {
            let lease = self.servers[parts[n]].lease(&self.opts).and_then(|mut l| match write(n, l.conn()) {
                Ok(()) => Ok(l),
                Err(e) => l.finish(&self.opts, Err(e)),
            });
            leases[n] = Some(lease);
        }
        leases
            .into_iter()
            .enumerate()
            .map(|(n, lease)| {
                let mut lease = lease.unwrap_or_else(|| Err(Error::Invalid("part not leased".into())))?;
                let r = read(n, lease.conn());
                lease.finish(&self.opts, r)
            })
            .collect()
    }
}
