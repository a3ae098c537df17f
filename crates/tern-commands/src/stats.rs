//! Counters with a single writer each, summed when read (INFO, CLIENT LIST).
//!
//! A worker owns its [`WorkerStats`]: it is the only thread that adds to
//! them, so an add is a plain load and store, not a locked read-modify-write,
//! and the struct sits on its own cache lines so that the INFO reader never
//! makes a worker's line bounce.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// A counter written by one thread and read by any.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`. Only the owning thread may call this.
    #[inline]
    pub fn add(&self, n: u64) {
        self.0.store(self.0.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
    #[inline]
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
    pub fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// Moves a gauge from `old` to `new` (its owner's figures). Only the
    /// owning thread may call this.
    #[inline]
    pub fn adjust(&self, old: u64, new: u64) {
        if old != new {
            self.add(new.wrapping_sub(old));
        }
    }
}

/// Per-command counters (INFO commandstats).
#[derive(Debug, Default)]
pub struct CmdStat {
    pub calls: Counter,
    pub usec: Counter,
    pub rejected: Counter,
    pub failed: Counter,
}

/// One worker's counters.
#[repr(align(128))]
#[derive(Debug)]
pub struct WorkerStats {
    pub commands: Counter,
    pub net_input_bytes: Counter,
    pub net_output_bytes: Counter,
    pub keyspace_hits: Counter,
    pub keyspace_misses: Counter,
    pub total_error_replies: Counter,
    pub connections_received: Counter,
    pub rejected_connections: Counter,
    /// Replies that referenced a stored value instead of copying it.
    pub reply_copy_avoided: Counter,
    /// Reads and writes that moved bytes (INFO `total_reads_processed`,
    /// `total_writes_processed`).
    pub reads_processed: Counter,
    pub writes_processed: Counter,
    /// Changes of a client's reply buffer capacity (INFO
    /// `reply_buffer_expands`, `reply_buffer_shrinks`).
    pub reply_buffer_expands: Counter,
    pub reply_buffer_shrinks: Counter,
    /// Turns of the event loop, and the nanoseconds they took from the
    /// end of the wait for events (INFO `eventloop_cycles`,
    /// `eventloop_duration_sum`).
    pub eventloop_cycles: Counter,
    pub eventloop_ns: Counter,
    /// Clients closed for their query or output buffer limit.
    pub qbuf_limit_disconnections: Counter,
    pub obuf_limit_disconnections: Counter,
    /// Clients this worker closed for `maxmemory-clients`.
    pub evicted_clients: Counter,
    /// Bytes of this worker's clients' query and output buffers, at
    /// jemalloc's size classes: a gauge (its writer adds differences,
    /// wrapping), part of `used_memory`. Not reset by CONFIG RESETSTAT.
    pub client_mem: Counter,
    /// This worker's blocked clients whose wait has a timeout (INFO
    /// `clients_in_timeout_table`): a gauge (the writer adds 1 or
    /// wrapping -1), not reset by CONFIG RESETSTAT.
    pub clients_in_timeout: Counter,
    /// Indexed by command id (see `cmd::table`).
    pub cmds: Box<[CmdStat]>,
    /// Error replies by their first word (INFO errorstats). Written only on
    /// the error path, so a lock is fine.
    pub errors: Mutex<HashMap<String, u64>>,
}

impl WorkerStats {
    pub fn new(commands: usize) -> Self {
        WorkerStats {
            commands: Counter::default(),
            net_input_bytes: Counter::default(),
            net_output_bytes: Counter::default(),
            keyspace_hits: Counter::default(),
            keyspace_misses: Counter::default(),
            total_error_replies: Counter::default(),
            connections_received: Counter::default(),
            rejected_connections: Counter::default(),
            reply_copy_avoided: Counter::default(),
            reads_processed: Counter::default(),
            writes_processed: Counter::default(),
            reply_buffer_expands: Counter::default(),
            reply_buffer_shrinks: Counter::default(),
            eventloop_cycles: Counter::default(),
            eventloop_ns: Counter::default(),
            qbuf_limit_disconnections: Counter::default(),
            obuf_limit_disconnections: Counter::default(),
            client_mem: Counter::default(),
            clients_in_timeout: Counter::default(),
            evicted_clients: Counter::default(),
            cmds: (0..commands).map(|_| CmdStat::default()).collect(),
            errors: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one error reply by its prefix (`ERR`, `WRONGTYPE`, ...).
    pub fn record_error(&self, msg: &[u8]) {
        self.total_error_replies.add(1);
        let end = msg.iter().position(|&c| c == b' ').unwrap_or(msg.len());
        let prefix = String::from_utf8_lossy(&msg[..end]).into_owned();
        *self.errors.lock().entry(prefix).or_insert(0) += 1;
    }

    /// CONFIG RESETSTAT. Racy with the owning worker by design: a count
    /// added during the reset may survive it, as in Redis.
    pub fn reset(&self) {
        for c in [
            &self.commands,
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.keyspace_hits,
            &self.keyspace_misses,
            &self.total_error_replies,
            &self.connections_received,
            &self.rejected_connections,
            &self.reply_copy_avoided,
            &self.reads_processed,
            &self.writes_processed,
            &self.reply_buffer_expands,
            &self.reply_buffer_shrinks,
            &self.eventloop_cycles,
            &self.eventloop_ns,
            &self.qbuf_limit_disconnections,
            &self.obuf_limit_disconnections,
            &self.evicted_clients,
        ] {
            c.reset();
        }
        for s in self.cmds.iter() {
            s.calls.reset();
            s.usec.reset();
            s.rejected.reset();
            s.failed.reset();
        }
        self.errors.lock().clear();
    }
}
