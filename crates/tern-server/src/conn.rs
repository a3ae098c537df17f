//! One client connection as its worker owns it (`net/`): the read
//! buffer and the parser's place in it, the reply buffer, the client's
//! state, and the socket below, plain or through its rustls session
//! ([`crate::tls`]). What it holds in memory, and the reads and writes that
//! go through TLS when it has it, are here; the event loop that drives it
//! is `net/`.

use std::io::{self, Read};
use std::sync::atomic::Ordering;
use std::time::Instant;

use mio::net::TcpStream;
use tern_commands::client::Client;
use tern_commands::outbuf::OutBuf;
use tern_commands::stats::WorkerStats;
use tern_resp::Frame;

use crate::tls::TlsConn;

pub(crate) struct Conn {
    pub(crate) stream: TcpStream,
    /// Set for a connection accepted on a TLS listener: reads and writes go
    /// through it ([`crate::tls`]).
    pub(crate) tls: Option<Box<TlsConn>>,
    /// Bytes `rbuf[rpos..rlen]` are received and not yet executed; the rest
    /// of `rbuf` is zeroed room for the next read (grown, never re-zeroed).
    pub(crate) rbuf: Vec<u8>,
    pub(crate) rpos: usize,
    pub(crate) rlen: usize,
    pub(crate) frame: Frame,
    pub(crate) out: OutBuf,
    pub(crate) client: Client,
    /// Replies are over the high-water mark: requests wait.
    pub(crate) paused: bool,
    /// CLIENT PAUSE holds its next request back (it stays in `rbuf`);
    /// listed in `net::Worker::postponed`.
    pub(crate) postponed: bool,
    pub(crate) closing: bool,
    /// When the unsent output first went over the soft limit.
    pub(crate) soft_since: Option<Instant>,
    /// Set for a connection accepted on a memcached listener.
    pub(crate) mc: Option<Box<tern_memcache::Parser>>,
    /// What [`Conn::buffer_mem`] was when last added to the worker's
    /// `client_mem` gauge.
    pub(crate) mem_counted: u64,
    /// The reply buffer's capacity when [`Conn::account_mem`] last looked
    /// (INFO `reply_buffer_expands`/`shrinks` count its changes).
    pub(crate) rbs_seen: usize,
    /// With `appendfsync always`: the AOF ticket that must be durable
    /// before the replies in `out` may go (0: none held).
    pub(crate) hold: u64,
}

impl Conn {
    /// Unsent reply bytes, shared values included at their full length;
    /// one more while rustls holds records not yet written (at most its
    /// 64 KiB buffer, whose length it does not tell).
    pub(crate) fn pending_out(&self) -> usize {
        self.out.pending() + self.tls.as_ref().map_or(0, |t| usize::from(t.session.wants_write()))
    }

    /// What `client-query-buffer-limit` measures: request bytes received
    /// and not executed, plus the arguments queued by MULTI (Redis 7.4
    /// counts both).
    pub(crate) fn query_len(&self) -> usize {
        self.rlen - self.rpos + self.client.multi.as_ref().map_or(0, |m| m.data.len())
    }

    /// Bytes of this connection's buffers (read buffer, reply buffer,
    /// MULTI's queued arguments) at jemalloc's size classes: its part of
    /// `used_memory`. Values a reply references are the shards'.
    pub(crate) fn buffer_mem(&self) -> u64 {
        let class = |n: usize| if n == 0 { 0 } else { tern_store::size_class(n) as u64 };
        class(self.rbuf.capacity()) + class(self.out.capacity()) + self.client.multi.as_ref().map_or(0, |m| class(m.data.capacity()))
    }

    /// Brings the worker's `client_mem` gauge up to date with this
    /// connection's buffers, and publishes them for CLIENT LIST and INFO.
    pub(crate) fn account_mem(&mut self, stats: &WorkerStats) {
        let now = self.buffer_mem();
        stats.client_mem.adjust(self.mem_counted, now);
        self.mem_counted = now;
        // The reply buffer's resizes, seen after replies are appended and
        // after they are written: it grows (by the Vec's reallocation) to
        // take a large reply and is given back once written (`OutBuf`'s
        // `settle`). The first allocation of a new connection's buffer is
        // not a resize (Redis's client comes with its buffer).
        let cap = self.out.capacity();
        if cap != self.rbs_seen {
            if cap < self.rbs_seen {
                stats.reply_buffer_shrinks.add(1);
            } else if self.rbs_seen > 0 {
                stats.reply_buffer_expands.add(1);
            }
            self.rbs_seen = cap;
        }
        let g = &self.client.shared.buffers;
        let r = Ordering::Relaxed;
        g.qbuf.store(self.rlen - self.rpos, r);
        g.qbuf_free.store(self.rbuf.len() - self.rlen, r);
        g.rbs.store(self.out.capacity(), r);
        g.obl.store(self.out.owned_pending(), r);
        g.oll.store(self.out.shared_count(), r);
        g.omem.store(self.out.pending(), r);
        g.multi_mem.store(self.client.multi.as_ref().map_or(0, |m| m.mem()), r);
    }

    /// Writes as much pending output as the socket takes. `Ok(true)` when
    /// everything is written, `Ok(false)` when the socket is full, an error
    /// when the peer is gone.
    /// `now_ms`: the worker's latest reading of the clock.
    pub(crate) fn write_out(&mut self, stats: &WorkerStats, now_ms: u64) -> io::Result<bool> {
        // Through TLS the reply buffer's slices go to rustls (counted as
        // plaintext, as Redis counts them), then its records to the socket.
        let (n, result) = match &mut self.tls {
            None => self.out.write_to(&mut self.stream),
            Some(t) => {
                let (n, r) = self.out.write_to(&mut t.sink(&mut self.stream));
                (n, r.and_then(|all_in| if all_in { t.flush(&mut self.stream) } else { Ok(false) }))
            }
        };
        if n > 0 {
            stats.net_output_bytes.add(n as u64);
            tern_commands::client::ClientShared::count(&self.client.shared.net_out, n as u64);
            stats.writes_processed.add(1);
            self.client.shared.last_interaction_ms.store(now_ms, Ordering::Relaxed);
        }
        result
    }

    /// Reads what the connection has for `rbuf[rlen..]`: from the socket,
    /// or the plaintext out of TLS. See [`TlsConn::read`] for `drained`.
    pub(crate) fn read_some(&mut self, short_drains: bool, drained: &mut bool) -> io::Result<usize> {
        match &mut self.tls {
            None => self.stream.read(&mut self.rbuf[self.rlen..]),
            Some(t) => t.read(&mut self.stream, &mut self.rbuf[self.rlen..], short_drains, drained),
        }
    }
}
