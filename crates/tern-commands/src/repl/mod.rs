//! Replication's shared state on a master: the replication stream built
//! from effect records, its backlog, and the queues of the replicas fed
//! from it. The links themselves (handshake, full and partial
//! resynchronisation, the threads that serve a replica) are
//! `tern-persist`'s `repl::master`.
//!
//! ```text
//!  workers ── Effects ──► Feed ──► tern-aof thread ──► AOF file
//!                                        │ feed(log): the records' commands, SELECT when the db changes
//!                                        ▼
//!                          Repl: offset, backlog ──► replica queues (shared chunks)
//!                                                        │
//!  PSYNC on a worker ── socket handed over ──► tern-replica-<id> thread: +FULLRESYNC, RDB, then the queue
//!                                              tern-replica-ack thread: REPLCONF ACK [FACK]
//! ```
//!
//! - **The stream** is made by the one thread that already puts every
//!   effect record in an order that keeps each key's records in the order
//!   they happened: the AOF writer (`tern_persist::aof::writer`, whether or not
//!   the AOF is on). The records come already written as the AOF's
//!   commands (a shard encodes each as it stages it, MULTI/EXEC around a
//!   transaction's or a script's, see `tern_store::effect::Log`); the
//!   writer puts a SELECT where the database changes, appends the bytes to
//!   the backlog and hands them, shared, to every attached replica's queue.
//! - **A full resynchronisation** begins a point-in-time snapshot (no
//!   fork) and asks the writer for a cut at its instant: the records
//!   numbered before it are in the snapshot; the replica's queue is
//!   attached to the stream right after them, at offset O, and gets every
//!   record from the instant on. The replica is told `+FULLRESYNC <replid>
//!   O`, then gets the snapshot as an RDB — straight onto the socket
//!   (`$EOF:<mark>` … `<mark>`) when it can take that and
//!   `repl-diskless-sync` is on, else written to a file first and sent
//!   with its length — and then its queue. Replicas that ask for one
//!   while another waits to begin (`repl-diskless-sync-delay`, or for a
//!   snapshot in progress to end) and want the same RDB join it
//!   ([`SyncGroup`]): one snapshot, one cut and one offset for all, the
//!   RDB written once (to all their sockets, or to one file sent to each).
//! - **A partial resynchronisation** (PSYNC with this server's replication
//!   id, or its previous one up to where it ended, and an offset the
//!   backlog still holds) answers `+CONTINUE` and sends the backlog from
//!   that offset, then the queue.
//! - Each replica has a thread that writes to it (a slow replica holds up
//!   nobody else; its queue is bounded by `client-output-buffer-limit
//!   replica`) and one that reads its `REPLCONF ACK`s.
//!
//! - **On a replica** the stream is its master's, byte for byte
//!   ([`Repl::proxy`] from the link thread, with the master's id
//!   and offsets; records go to the AOF only), as Redis's PSYNC2 has it:
//!   a sub-replica's snapshot begins with the link held between two
//!   commands and is attached at that offset, and a promoted replica
//!   keeps the master's id as its previous one, so that its siblings and
//!   the old master continue from it.
//!
//! Non-goals for now: one snapshot shared by replicas that sync together
//! (each gets its own, one after the other), replication over TLS.

mod backlog;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use tern_config::{log_notice, log_warning, OutputLimit};
use tern_store::rdb::ReplPosition;
use tern_store::{Keyspace, Log};

pub use backlog::Backlog;

/// 40 random hex digits: a replication id (and the run id).
pub fn random_hex40() -> String {
    use rand::Rng;
    let mut r = rand::thread_rng();
    (0..40).map(|_| char::from_digit(r.gen_range(0..16), 16).unwrap_or('0')).collect()
}

/// What a replica said of itself before SYNC or PSYNC (REPLCONF).
#[derive(Clone, Debug, Default)]
pub struct Hello {
    pub listening_port: u16,
    pub ip: Option<String>,
    /// `capa eof`: it takes an RDB streamed without a length.
    pub eof: bool,
    /// `capa psync2`: it understands `+CONTINUE <replid>`.
    pub psync2: bool,
    /// `rdb-only 1`: it wants the snapshot and no stream (redis-cli --rdb).
    pub rdb_only: bool,
    /// `rdb-filter-only`: what the snapshot leaves out.
    pub exclude_data: bool,
    pub exclude_functions: bool,
}

/// SYNC (None) or PSYNC's replication id and offset: what a connection
/// handed over to replication asked for.
#[derive(Clone, Debug)]
pub struct SyncRequest {
    pub psync: Option<(Vec<u8>, i64)>,
}

/// A replica's place in its synchronisation (INFO's `state=`).
pub mod state {
    pub const WAIT_BGSAVE: u8 = 0;
    pub const SEND_BULK: u8 = 1;
    pub const ONLINE: u8 = 2;
}

/// The smallest backlog, whatever `repl-backlog-size` says (Redis's
/// CONFIG_REPL_BACKLOG_MIN_SIZE).
pub const BACKLOG_MIN: usize = 16 * 1024;

/// Stream bytes shared by the replicas' queues: the writer's round buffer
/// itself, not copied.
pub type Chunk = Arc<Vec<u8>>;

/// A full resynchronisation gathering replicas (see the module docs): the
/// first replica's thread leads it; the others' threads join it and wait
/// for their [`Outcome`].
pub struct SyncGroup {
    /// What a replica must want to join: the RDB to sockets (not to a
    /// file first), with functions, with data.
    pub kind: (bool, bool, bool),
    pub st: Mutex<SyncMembers>,
    pub cv: Condvar,
}

#[derive(Default)]
pub struct SyncMembers {
    /// Taking members: its snapshot has not begun.
    pub open: bool,
    pub joined: Vec<Joined>,
    /// Each joined replica's outcome, once the leader is done with it.
    pub outcomes: Vec<(Arc<Replica>, Outcome)>,
}

/// A replica that joined a [`SyncGroup`]: its socket (a handle to it)
/// and whether it asked with PSYNC (told `+FULLRESYNC`) or SYNC.
pub struct Joined {
    pub rep: Arc<Replica>,
    pub sock: std::net::TcpStream,
    pub psync: bool,
}

/// How a joined replica's synchronisation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// It has the snapshot and is attached to the stream.
    Synced,
    Failed(String),
    /// The leader gave up before the snapshot began: the replica
    /// synchronises on its own.
    Retry,
}

impl SyncGroup {
    pub fn new(kind: (bool, bool, bool)) -> Self {
        SyncGroup { kind, st: Mutex::new(SyncMembers { open: true, ..SyncMembers::default() }), cv: Condvar::new() }
    }

    /// Sets `rep`'s outcome and wakes its thread.
    pub fn settle(&self, rep: &Arc<Replica>, outcome: Outcome) {
        let mut st = self.st.lock();
        if !st.outcomes.iter().any(|(r, _)| Arc::ptr_eq(r, rep)) {
            st.outcomes.push((rep.clone(), outcome));
        }
        self.cv.notify_all();
    }

    /// Waits for `rep`'s outcome; None once `give_up` says to stop.
    pub fn outcome(&self, rep: &Arc<Replica>, give_up: impl Fn() -> bool) -> Option<Outcome> {
        let mut st = self.st.lock();
        loop {
            if let Some((_, o)) = st.outcomes.iter().find(|(r, _)| Arc::ptr_eq(r, rep)) {
                return Some(o.clone());
            }
            if give_up() {
                return None;
            }
            self.cv.wait_for(&mut st, Duration::from_millis(100));
        }
    }
}

/// The replication state a server keeps as a master.
pub struct Repl {
    /// The full resynchronisation taking members, if one is.
    pub forming: Mutex<Option<Arc<SyncGroup>>>,
    /// A backlog exists: the writer feeds the stream (and effect records
    /// are built for it).
    active: AtomicBool,
    pub st: Mutex<State>,
    pub sync_full: AtomicU64,
    pub sync_partial_ok: AtomicU64,
    pub sync_partial_err: AtomicU64,
    pub net_output: AtomicU64,
    pub net_input: AtomicU64,
    /// A client went into WAIT: the writer asks the replicas to
    /// acknowledge at its next round.
    getack: AtomicBool,
    /// The writer's rounds, counted as each begins (before it collects
    /// records): a waiter's writes are known to be in the stream and the
    /// AOF only from a round that began after it registered.
    round: AtomicU64,
    /// `min-replicas-to-write` when `min-replicas-max-lag` is set too
    /// (0: writes never wait for replicas), and the replicas online that
    /// acknowledged within the lag, counted by the cron (Redis's
    /// `repl_good_slaves_count`).
    min_good: AtomicU64,
    good: AtomicU64,
    /// A replica's stream is its master's, byte for byte, with the
    /// master's id and offsets (Redis's proxying of the master's stream):
    /// its link thread appends each command it applies, and the effect
    /// records of those writes go to the AOF only. After a promotion,
    /// records numbered below `feed_from` (applied from the old master)
    /// are not fed again.
    proxy: AtomicBool,
    feed_from: AtomicU64,
    /// FAILOVER's coordinated failover, while one runs.
    pub failover: Mutex<Option<Failover>>,
    /// This server is a replica (REPLICAOF): its master's link and state.
    replica: AtomicBool,
    link_up: AtomicBool,
    pub up: Mutex<Option<Upstream>>,
    pub up_cv: Condvar,
    /// Held by the link thread while it applies one command of the
    /// stream and counts it into the offset, and by a save while its
    /// snapshot begins: the file's `repl-offset` is then exactly what it
    /// holds.
    pub applying: Mutex<()>,
    /// The place in a master's stream the RDB loaded at start-up records,
    /// for the first PSYNC.
    loaded: Mutex<Option<ReplPosition>>,
}

/// The master this server replicates (REPLICAOF host port), as its link
/// thread (`tern_persist::repl::replica`) keeps it.
#[derive(Debug)]
pub struct Upstream {
    pub host: String,
    pub port: u16,
    /// REPLICAOF's count: a link made for an older one ends.
    pub generation: u64,
    pub state: LinkState,
    /// The master's replication id and the offset of the stream applied
    /// (`slave_repl_offset`; -1 before the first sync).
    pub replid: String,
    pub offset: i64,
    /// The database the master's stream is in at `offset` (the stream
    /// goes on without a SELECT after a partial resynchronisation).
    pub db: u32,
    /// The stream read (`slave_read_repl_offset`).
    pub read_offset: i64,
    pub last_io_ms: u64,
    /// When the link last went down (ms; 0: never up).
    pub down_since_ms: u64,
    /// The socket of the link, to cut it at REPLICAOF.
    pub sock: Option<std::net::TcpStream>,
}

/// A coordinated failover (FAILOVER): writes are paused while the master
/// waits for a replica (`target`, or any) to acknowledge its whole
/// stream, then it turns replica of it and asks it, with `PSYNC … FAILOVER`,
/// to take over.
#[derive(Clone, Debug)]
pub struct Failover {
    pub target: Option<(String, u16)>,
    pub force: bool,
    /// TIMEOUT's end (ms since the epoch).
    pub end_ms: Option<u64>,
    /// The PSYNC FAILOVER is under way (`failover-in-progress`).
    pub in_progress: bool,
}

/// Where a replica's link is (INFO's `master_link_status`, ROLE's state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    Connect,
    Connecting,
    Sync,
    Connected,
}

impl LinkState {
    /// ROLE's name for it.
    pub fn role_name(self) -> &'static str {
        match self {
            LinkState::Connect => "connect",
            LinkState::Connecting => "connecting",
            LinkState::Sync => "sync",
            LinkState::Connected => "connected",
        }
    }
}

pub struct State {
    pub replid: String,
    /// The previous replication id, valid up to `second_offset`.
    pub replid2: String,
    pub second_offset: i64,
    /// `master_repl_offset`: the offset of the last byte of the stream.
    pub offset: u64,
    pub backlog: Option<Backlog>,
    pub replicas: Vec<Arc<Replica>>,
    /// Full resynchronisations waiting for the writer to reach their
    /// snapshot's instant (the number of the first record after it).
    pub cuts: Vec<(u64, Arc<Replica>)>,
    /// The database the stream's last command ran in (None: a SELECT
    /// goes before the next record).
    db: Option<u32>,
    /// When the last replica went (the backlog is freed after
    /// `repl-backlog-ttl` without one).
    pub alone_since: Option<Instant>,
    pub last_ping: Option<Instant>,
    /// Clients in WAIT and WAITAOF.
    waiters: Vec<Waiter>,
    /// As a replica with its AOF on: the master's stream applied, as
    /// (writer's round when noted, next record number, offset), until a
    /// round has written those records; then as (round, offset) until
    /// that round is fsynced; `fack` is the offset fsynced so far (REPLCONF
    /// ACK's FACK).
    applied: VecDeque<(u64, u64, u64)>,
    written: VecDeque<(u64, u64)>,
    fack: u64,
}

/// A client in WAIT or WAITAOF: the records up to `seq` (one past the
/// last of its writes), the stream offset they end at and the writer's
/// round that wrote them once known, how many replicas must acknowledge
/// it, and for WAITAOF how many local AOFs (0 or 1) must have it fsynced.
struct Waiter {
    client: u64,
    worker: usize,
    seq: u64,
    need: i64,
    local: Option<i64>,
    /// The writer's round count when it registered.
    after: u64,
    target: Option<u64>,
    written: Option<u64>,
    /// A wake is posted and not yet answered.
    woken: bool,
}

/// Where a WAIT or WAITAOF stands: for WAITAOF whether the local AOF has
/// its writes fsynced, and the replicas that acknowledged them (fsynced
/// to their AOFs, for WAITAOF).
#[derive(Clone, Copy, Debug)]
pub struct Acked {
    pub local: Option<bool>,
    pub replicas: usize,
    /// Where its writes end, once known.
    pub known: Option<Known>,
}

/// A client's writes up to record `seq` end at stream offset `target`,
/// and were written to the AOF by the writer's round `written`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub seq: u64,
    pub target: u64,
    pub written: u64,
}

/// One replica, as its threads and INFO see it.
pub struct Replica {
    pub id: u64,
    /// Its address as INFO and ROLE show it: `REPLCONF ip-address` or the
    /// peer's, and its `REPLCONF listening-port`.
    pub ip: String,
    pub port: u16,
    pub state: AtomicU8,
    /// The last offset it acknowledged, and when (ms).
    pub ack: AtomicU64,
    /// The last offset it said is fsynced to its AOF (`REPLCONF ACK <off>
    /// FACK <aof_off>`; 0 from a replica that sends none).
    pub aof_ack: AtomicU64,
    pub ack_ms: AtomicU64,
    /// It has acknowledged at least once.
    pub acked: AtomicBool,
    /// Closing: its threads end.
    pub gone: AtomicBool,
    pub q: Mutex<Queue>,
    cv: Condvar,
}

#[derive(Default)]
pub struct Queue {
    chunks: VecDeque<Chunk>,
    bytes: usize,
    /// The stream offset its queue starts after, once attached.
    pub attached_at: Option<u64>,
    soft_since: Option<Instant>,
}

impl Replica {
    pub fn new(id: u64, ip: String, port: u16, now_ms: u64) -> Self {
        Replica {
            id,
            ip,
            port,
            state: AtomicU8::new(state::WAIT_BGSAVE),
            ack: AtomicU64::new(0),
            aof_ack: AtomicU64::new(0),
            ack_ms: AtomicU64::new(now_ms),
            acked: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            q: Mutex::new(Queue::default()),
            cv: Condvar::new(),
        }
    }

    /// `ip:port`, as Redis's log names a replica.
    pub fn name(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }

    /// Bytes waiting to be sent (INFO's `mem_total_replication_buffers`).
    pub fn queued(&self) -> usize {
        self.q.lock().bytes
    }

    pub fn close(&self) {
        self.gone.store(true, Ordering::Relaxed);
        self.cv.notify_all();
    }

    fn push(&self, chunk: &Chunk, limit: OutputLimit) {
        let mut q = self.q.lock();
        q.bytes += chunk.len();
        q.chunks.push_back(chunk.clone());
        let over_hard = limit.hard > 0 && q.bytes as u64 >= limit.hard;
        let over_soft = limit.soft > 0 && q.bytes as u64 >= limit.soft;
        let soft_out = match (over_soft, q.soft_since) {
            (false, _) => {
                q.soft_since = None;
                false
            }
            (true, None) => {
                q.soft_since = Some(Instant::now());
                limit.soft_seconds == 0
            }
            (true, Some(t)) => t.elapsed().as_secs() >= limit.soft_seconds,
        };
        drop(q);
        if (over_hard || soft_out) && !self.gone.load(Ordering::Relaxed) {
            log_warning!("Client id={} addr={} flags=S scheduled to be closed ASAP for overcoming of output buffer limits.", self.id, self.name());
            self.close();
        } else {
            self.cv.notify_one();
        }
    }

    /// Waits (up to `wait`) for stream bytes; takes them all.
    pub fn take(&self, wait: std::time::Duration) -> Vec<Chunk> {
        let mut q = self.q.lock();
        if q.chunks.is_empty() && !self.gone.load(Ordering::Relaxed) {
            self.cv.wait_for(&mut q, wait);
        }
        q.bytes = 0;
        q.chunks.drain(..).collect()
    }
}

impl Default for Repl {
    fn default() -> Self {
        Repl::new()
    }
}

impl Repl {
    pub fn new() -> Self {
        Repl {
            forming: Mutex::new(None),
            active: AtomicBool::new(false),
            st: Mutex::new(State {
                replid: random_hex40(),
                replid2: "0".repeat(40),
                second_offset: -1,
                offset: 0,
                backlog: None,
                replicas: Vec::new(),
                cuts: Vec::new(),
                db: None,
                alone_since: None,
                last_ping: None,
                waiters: Vec::new(),
                applied: VecDeque::new(),
                written: VecDeque::new(),
                fack: 0,
            }),
            sync_full: AtomicU64::new(0),
            sync_partial_ok: AtomicU64::new(0),
            sync_partial_err: AtomicU64::new(0),
            net_output: AtomicU64::new(0),
            net_input: AtomicU64::new(0),
            getack: AtomicBool::new(false),
            round: AtomicU64::new(0),
            min_good: AtomicU64::new(0),
            good: AtomicU64::new(0),
            proxy: AtomicBool::new(false),
            feed_from: AtomicU64::new(0),
            failover: Mutex::new(None),
            replica: AtomicBool::new(false),
            link_up: AtomicBool::new(false),
            up: Mutex::new(None),
            up_cv: Condvar::new(),
            applying: Mutex::new(()),
            loaded: Mutex::new(None),
        }
    }

    /// Redis's checkGoodReplicasStatus: a master with `min-replicas-to-write`
    /// N (and a `min-replicas-max-lag`) takes writes only while N replicas
    /// acknowledged within the lag. One relaxed load while it is off.
    #[inline]
    pub fn writes_allowed(&self) -> bool {
        let min = self.min_good.load(Ordering::Relaxed);
        min == 0 || self.is_replica() || self.good.load(Ordering::Relaxed) >= min
    }

    /// `min-replicas-to-write` and `-max-lag` (seconds), from the config.
    pub fn set_min_replicas(&self, to_write: u64, max_lag: u64) {
        self.min_good.store(if max_lag == 0 { 0 } else { to_write }, Ordering::Relaxed);
    }

    /// INFO's `min_slaves_good_slaves`, while `min-replicas-to-write` is on.
    pub fn good_replicas(&self) -> Option<u64> {
        (self.min_good.load(Ordering::Relaxed) > 0).then(|| self.good.load(Ordering::Relaxed))
    }

    /// The cron's count of the replicas online whose last acknowledgement
    /// is at most `max_lag_s` seconds old (at `now_ms`), as Redis counts
    /// them in whole seconds.
    pub fn count_good(&self, now_ms: u64, max_lag_s: u64) {
        let n = {
            let st = self.st.lock();
            let now_s = now_ms / 1000;
            st.replicas
                .iter()
                .filter(|r| {
                    let ack_s = r.ack_ms.load(Ordering::Relaxed) / 1000;
                    r.state.load(Ordering::Relaxed) == state::ONLINE && !r.gone.load(Ordering::Relaxed) && now_s.saturating_sub(ack_s) <= max_lag_s
                })
                .count() as u64
        };
        self.good.store(n, Ordering::Relaxed);
    }

    /// Whether this server is a replica (one relaxed load).
    #[inline]
    pub fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Relaxed)
    }

    /// Whether a replica's link with its master is up.
    #[inline]
    pub fn link_up(&self) -> bool {
        self.link_up.load(Ordering::Relaxed)
    }

    pub fn set_link_up(&self, up: bool) {
        self.link_up.store(up, Ordering::Relaxed);
    }

    /// REPLICAOF host port: the link thread connects there (a link to
    /// another master is cut). False when it already replicates it.
    pub fn set_master(&self, host: &str, port: u16) -> bool {
        let mut up = self.up.lock();
        if let Some(u) = up.as_ref() {
            if u.host == host && u.port == port {
                return false;
            }
        }
        let generation = up.as_ref().map_or(1, |u| u.generation + 1);
        if let Some(s) = up.as_ref().and_then(|u| u.sock.as_ref()) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        // What a previous link applied stays cached for a PSYNC to the
        // same history, as does the place the RDB loaded at start-up had.
        // A master turned replica offers its own stream's place (Redis's
        // replicationCacheMasterUsingMyself): a new master that was its
        // replica takes it up where it is.
        let loaded = self.loaded.lock().take();
        let own = || {
            let st = self.st.lock();
            st.backlog.as_ref().map(|_| (st.replid.clone(), st.offset as i64, st.db.unwrap_or(0)))
        };
        let (replid, offset, db) = match (up.as_ref(), loaded) {
            (Some(u), _) => (u.replid.clone(), u.offset, u.db),
            (None, Some(p)) => (p.replid, p.offset, p.db),
            (None, None) => own().unwrap_or(("?".to_string(), -1, 0)),
        };
        *up = Some(Upstream {
            host: host.to_string(),
            port,
            generation,
            state: LinkState::Connect,
            replid,
            offset,
            db,
            read_offset: offset,
            last_io_ms: 0,
            down_since_ms: 0,
            sock: None,
        });
        self.replica.store(true, Ordering::Relaxed);
        self.link_up.store(false, Ordering::Relaxed);
        self.up_cv.notify_all();
        true
    }

    /// REPLICAOF NO ONE: the link is cut and this server is a master
    /// again, keeping its data; its own stream takes a new id, and the
    /// old one (its master's) stays valid up to where it was applied, so
    /// that a replica that followed the same master can continue.
    pub fn unset_master(&self, next_seq: u64) {
        // The link is cut first, so that a transfer under way ends rather
        // than hold the applier; then, between two of its commands, what
        // it applied is in the stream already and what comes next is this
        // server's own.
        self.cut_link();
        let _applying = self.applying.lock();
        let mut up = self.up.lock();
        let Some(u) = up.take() else { return };
        self.feed_from.store(next_seq, Ordering::Relaxed);
        self.proxy.store(false, Ordering::Relaxed);
        if let Some(s) = u.sock.as_ref() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        self.replica.store(false, Ordering::Relaxed);
        self.link_up.store(false, Ordering::Relaxed);
        self.up_cv.notify_all();
        let mut st = self.st.lock();
        st.replid2 = std::mem::replace(&mut st.replid, random_hex40());
        st.second_offset = st.offset as i64 + 1;
    }

    /// INFO's `master_failover_state`.
    pub fn failover_state(&self) -> &'static str {
        match self.failover.lock().as_ref() {
            None => "no-failover",
            Some(f) if f.in_progress => "failover-in-progress",
            Some(_) => "waiting-for-sync",
        }
    }

    /// A FAILOVER is running (this server's link sends PSYNC … FAILOVER).
    pub fn failing_over(&self) -> bool {
        self.failover.lock().is_some()
    }

    /// The replica online at `host:port` and the offset it acknowledged.
    pub fn find_replica(&self, host: &str, port: u16) -> Option<(bool, u64)> {
        self.replicas()
            .into_iter()
            .find(|r| r.ip == host && r.port == port && !r.gone.load(Ordering::Relaxed))
            .map(|r| (r.state.load(Ordering::Relaxed) == state::ONLINE, r.ack.load(Ordering::Relaxed)))
    }

    /// A replica online that has acknowledged the whole stream.
    pub fn caught_up_replica(&self) -> Option<(String, u16)> {
        let st = self.st.lock();
        st.replicas
            .iter()
            .find(|r| r.state.load(Ordering::Relaxed) == state::ONLINE && r.ack.load(Ordering::Relaxed) == st.offset)
            .map(|r| (r.ip.clone(), r.port))
    }

    /// CLIENT KILL of replica `id`'s connection.
    pub fn close_replica(&self, id: u64) {
        if let Some(r) = self.replicas().into_iter().find(|r| r.id == id) {
            r.close();
        }
    }

    /// CLIENT KILL of the link with the master: its socket is shut, and
    /// the link thread connects again.
    pub fn cut_link(&self) {
        if let Some(s) = self.up.lock().as_ref().and_then(|u| u.sock.as_ref()) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }

    /// The RDB loaded at start-up was written by a replica at `p` in its
    /// master's stream: the first link tries a PSYNC from there.
    pub fn loaded_position(&self, p: ReplPosition) {
        *self.loaded.lock() = Some(p);
    }

    /// As a replica that has synchronised: where in its master's stream
    /// the data is (a save's `repl-*` AUX fields). Read with
    /// [`Repl::applying`] held, it is exact.
    pub fn stream_position(&self) -> Option<ReplPosition> {
        let up = self.up.lock();
        let u = up.as_ref()?;
        (u.offset >= 0 && u.replid.len() == 40).then(|| ReplPosition { db: u.db, replid: u.replid.clone(), offset: u.offset })
    }

    /// For a save's snapshot: the lock that keeps the link thread between
    /// two commands (None if it could not be had at once-ish: a save
    /// under EXEC's locks, which the link thread may be waiting for).
    pub fn pause_applying(&self) -> Option<parking_lot::MutexGuard<'_, ()>> {
        self.applying.try_lock_for(Duration::from_millis(100))
    }

    /// As a replica: its master, the link's state as ROLE names it, and the
    /// offset applied (-1 before the first sync).
    pub fn upstream_view(&self) -> Option<(String, u16, &'static str, i64)> {
        let up = self.up.lock();
        let u = up.as_ref()?;
        Some((u.host.clone(), u.port, u.state.role_name(), if u.state == LinkState::Connected { u.offset } else { -1 }))
    }

    /// As a replica, INFO replication's fields about its master.
    pub fn upstream_info(&self) -> Option<UpstreamInfo> {
        let up = self.up.lock();
        let u = up.as_ref()?;
        Some(UpstreamInfo {
            host: u.host.clone(),
            port: u.port,
            up: u.state == LinkState::Connected,
            last_io_ms: u.last_io_ms,
            down_since_ms: u.down_since_ms,
            sync_in_progress: u.state == LinkState::Sync,
            replid: u.replid.clone(),
            offset: u.offset,
            read_offset: u.read_offset,
        })
    }

    /// Whether the stream is being made (a backlog exists).
    #[inline]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The replication id (INFO `master_replid`).
    pub fn replid(&self) -> String {
        self.st.lock().replid.clone()
    }

    /// DEBUG CHANGE-REPL-ID: a new id, and no previous one.
    pub fn change_replid(&self) {
        let mut st = self.st.lock();
        st.replid = random_hex40();
        st.replid2 = "0".repeat(40);
        st.second_offset = -1;
    }

    /// `master_repl_offset`.
    pub fn offset(&self) -> u64 {
        self.st.lock().offset
    }

    /// The replicas attached or synchronising.
    pub fn replicas(&self) -> Vec<Arc<Replica>> {
        let st = self.st.lock();
        st.replicas.iter().chain(st.cuts.iter().map(|(_, r)| r)).cloned().collect()
    }

    /// Makes the stream (a backlog of `repl-backlog-size`), as Redis does
    /// when its first replica comes; effect records are built from now on.
    pub fn activate(&self, size: usize, ks: &Keyspace) {
        let mut st = self.st.lock();
        if st.backlog.is_none() && !self.proxying() {
            st.backlog = Some(Backlog::new(size.max(BACKLOG_MIN), st.offset));
            // A new history: a replica must not take up an old one.
            st.replid = random_hex40();
            st.replid2 = "0".repeat(40);
            st.second_offset = -1;
            ks.attach_effects(true);
            self.active.store(true, Ordering::Relaxed);
            log_notice!("Replication backlog created, my new replication IDs are '{}' and '{}'", st.replid, st.replid2);
        }
    }

    /// The writer's part: a round's records (numbered below the next
    /// cut) go into the stream (not a replica's: its stream is its
    /// master's, see [`Repl::proxy`]).
    pub fn feed(&self, recs: &Log, limit: OutputLimit) {
        if recs.is_empty() || !self.active() || self.proxying() {
            return;
        }
        let from = self.feed_from.load(Ordering::Relaxed);
        let mut st = self.st.lock();
        // The records' bytes and room for a SELECT or two.
        let mut buf = Vec::with_capacity(recs.bytes_len() + 64);
        let st = &mut *st;
        tern_store::aof::encode_log(&mut buf, recs, &mut st.db, from);
        st.append(buf, limit);
    }

    /// This replica's stream is its master's (see [`Repl::proxy`]).
    #[inline]
    pub fn proxying(&self) -> bool {
        self.proxy.load(Ordering::Relaxed)
    }

    /// A replica's link has synchronised with its master at `offset` of
    /// stream `replid` (`full`: from a new snapshot): its own stream is
    /// the master's from there on, in a backlog of `size` (made now if
    /// need be, as Redis's replica makes one). Sub-replicas of an older
    /// history are dropped, to resynchronise.
    pub fn follow(&self, replid: &str, offset: u64, full: bool, size: usize) {
        let mut st = self.st.lock();
        let same = !full && st.replid == replid && st.offset == offset && st.backlog.is_some();
        if !same {
            if !full && st.backlog.is_some() && st.offset == offset {
                // The master took a new id (a failover): the old history
                // stays good up to here.
                st.replid2 = std::mem::replace(&mut st.replid, replid.to_string());
                st.second_offset = offset as i64 + 1;
            } else {
                st.replid = replid.to_string();
                st.replid2 = "0".repeat(40);
                st.second_offset = -1;
                st.offset = offset;
                st.backlog = Some(Backlog::new(size.max(BACKLOG_MIN), offset));
                // What its AOF had fsynced was of another history.
                st.applied.clear();
                st.written.clear();
                st.fack = 0;
            }
            let mut gone: Vec<Arc<Replica>> = st.replicas.drain(..).collect();
            gone.extend(st.cuts.drain(..).map(|(_, r)| r));
            for r in gone {
                r.close();
            }
        }
        st.db = None;
        // No effect records are built for it: a replica's stream is its
        // master's (the AOF, if on, has them attached; a promotion does).
        self.active.store(true, Ordering::Relaxed);
        self.proxy.store(true, Ordering::Relaxed);
    }

    /// Commands the link applied, as its master sent them: into this
    /// replica's stream (its backlog and sub-replicas), byte for byte.
    pub fn proxy(&self, bytes: &[u8], limit: OutputLimit) {
        if !self.proxying() {
            return;
        }
        self.st.lock().append(bytes.to_vec(), limit);
    }

    /// A sub-replica's full resynchronisation on a replica: attached at
    /// the stream's offset now (the caller holds the link between two
    /// commands, at its snapshot's instant).
    pub fn attach_now(&self, rep: &Arc<Replica>) -> u64 {
        let mut st = self.st.lock();
        let at = st.offset;
        rep.q.lock().attached_at = Some(at);
        rep.cv.notify_all();
        st.replicas.push(rep.clone());
        st.alone_since = None;
        at
    }

    /// The snapshot instants the writer must stop at (sorted).
    pub fn cut_points(&self) -> Vec<u64> {
        if !self.active() {
            return Vec::new();
        }
        let st = self.st.lock();
        let mut v: Vec<u64> = st.cuts.iter().map(|(s, _)| *s).collect();
        v.sort_unstable();
        v
    }

    /// The writer has put every record numbered below `seq` in the
    /// stream: the replicas cut there are attached.
    pub fn cut_reached(&self, seq: u64) {
        let mut st = self.st.lock();
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut st.cuts).into_iter().partition(|(s, _)| *s == seq);
        st.cuts = later;
        for (_, r) in now {
            r.q.lock().attached_at = Some(st.offset);
            r.cv.notify_all();
            st.replicas.push(r);
            // The replica's stream starts with a SELECT.
            st.db = None;
        }
        st.alone_since = None;
    }

    /// Stream bytes sent to no replica (REPLCONF GETACK for WAIT, PING).
    pub fn append_raw(&self, bytes: &[u8], limit: OutputLimit) {
        if !self.active() {
            return;
        }
        self.st.lock().append(bytes.to_vec(), limit);
    }

    /// No replica and no backlog any more (`repl-backlog-ttl`).
    pub fn deactivate(&self, st: &mut State) {
        st.backlog = None;
        self.active.store(false, Ordering::Relaxed);
    }

    /// PSYNC's partial resynchronisation: when `replid` is this stream's
    /// (or the previous one's, up to where it ended) and the backlog holds
    /// the stream from `from` on, `rep` is attached with those bytes
    /// queued; returns the id to answer with.
    pub fn try_partial(&self, replid: &[u8], from: i64, rep: &Arc<Replica>) -> Result<String, &'static str> {
        let mut st = self.st.lock();
        let ours = replid == st.replid.as_bytes();
        let previous = replid == st.replid2.as_bytes() && from <= st.second_offset;
        if !ours && !previous {
            return Err("Replication ID mismatch");
        }
        let Some(b) = st.backlog.as_ref() else { return Err("no backlog") };
        if from < 0 || !b.covers(from as u64) {
            return Err("offset out of the backlog's range");
        }
        let data: Chunk = Arc::new(b.read_from(from as u64));
        {
            let mut q = rep.q.lock();
            q.attached_at = Some(from as u64 - 1);
            q.bytes = data.len();
            q.chunks.push_back(data);
        }
        rep.state.store(state::ONLINE, Ordering::Relaxed);
        st.replicas.push(rep.clone());
        st.alone_since = None;
        Ok(st.replid.clone())
    }

    /// Queues a full resynchronisation's cut at `seq`.
    pub fn request_cut(&self, seq: u64, rep: &Arc<Replica>) {
        self.st.lock().cuts.push((seq, rep.clone()));
    }

    /// Forgets a replica whose link is closed.
    pub fn remove(&self, rep: &Arc<Replica>) {
        let mut st = self.st.lock();
        st.replicas.retain(|r| !Arc::ptr_eq(r, rep));
        st.cuts.retain(|(_, r)| !Arc::ptr_eq(r, rep));
    }

    /// WAIT (`local` None) and WAITAOF (`local`: numlocal): where every
    /// write of `client` (up to record `seq`, exclusive) stands so far,
    /// the local AOF being fsynced up to the writer's round `fsynced`
    /// (None: the AOF is off); it is registered, to be woken as that
    /// changes, until [`Repl::forget_waiter`]. A client without writes
    /// waits for offset 0 (every replica online has it, as in Redis); one
    /// whose writes an earlier wait placed (`known`) takes that place.
    #[allow(clippy::too_many_arguments)]
    pub fn wait_status(&self, client: u64, worker: usize, seq: u64, known: Option<Known>, need: i64, local: Option<i64>, fsynced: Option<u64>) -> Acked {
        let mut st = self.st.lock();
        let i = match st.waiters.iter().position(|w| w.client == client) {
            Some(i) => i,
            None => {
                let after = self.round.load(Ordering::SeqCst);
                let (target, written) = match known.filter(|k| k.seq == seq) {
                    _ if seq == 0 => (Some(0), Some(0)),
                    Some(k) => (Some(k.target), Some(k.written)),
                    None => (None, None),
                };
                st.waiters.push(Waiter { client, worker, seq, need, local, after, target, written, woken: false });
                st.waiters.len() - 1
            }
        };
        st.waiters[i].woken = false;
        st.acked(&st.waiters[i], fsynced)
    }

    /// A client waits for acknowledgements: the replicas are asked for
    /// them at the writer's next round.
    pub fn want_acks(&self) {
        self.getack.store(true, Ordering::Relaxed);
    }

    /// Ends a client's WAIT or WAITAOF; returns where it stands.
    pub fn forget_waiter(&self, client: u64, fsynced: Option<u64>) -> Acked {
        let mut st = self.st.lock();
        let Some(i) = st.waiters.iter().position(|w| w.client == client) else { return Acked { local: None, replicas: 0, known: None } };
        let w = st.waiters.swap_remove(i);
        st.acked(&w, fsynced)
    }

    /// The writer begins round number `r` (returned), before it collects
    /// records.
    pub fn begin_round(&self) -> u64 {
        self.round.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The writer's round `r` is over: every record below `w` is in the
    /// stream and written to the AOF. Waiters registered before the round
    /// began whose writes are now all in it learn their target offset;
    /// returns whether any did (the replicas are then asked to
    /// acknowledge), and the waiters to wake.
    pub fn fed_to(&self, w: u64, r: u64, fsynced: Option<u64>) -> (bool, Vec<(usize, u64)>) {
        let mut st = self.st.lock();
        while st.applied.front().is_some_and(|&(after, seq, _)| after < r && seq <= w) {
            if let Some((_, _, off)) = st.applied.pop_front() {
                st.written.push_back((r, off));
            }
        }
        if st.waiters.is_empty() {
            return (false, Vec::new());
        }
        let offset = st.offset;
        let mut asked = self.getack.swap(false, Ordering::Relaxed);
        for wt in st.waiters.iter_mut() {
            if wt.target.is_none() && wt.after < r && wt.seq <= w {
                wt.target = Some(offset);
                wt.written = Some(r);
                asked = true;
            }
        }
        (asked, st.due_waiters(fsynced))
    }

    /// A replica acknowledged, or the local AOF's fsync moved (`fsynced`,
    /// as in [`Repl::wait_status`]): the waiters now satisfied, to wake.
    pub fn acks_changed(&self, fsynced: Option<u64>) -> Vec<(usize, u64)> {
        let mut st = self.st.lock();
        if st.waiters.is_empty() {
            return Vec::new();
        }
        st.due_waiters(fsynced)
    }

    /// As a replica with its AOF on: the link applied the master's stream
    /// up to `off`, its records numbered below `seq` handed to the writer.
    pub fn note_applied(&self, seq: u64, off: u64) {
        let after = self.round.load(Ordering::SeqCst);
        self.st.lock().applied.push_back((after, seq, off));
    }

    /// As a replica: the master's stream offset its AOF has fsynced, the
    /// writer's rounds up to `fsynced` being fsynced (0: none, while the
    /// AOF waits for the rewrite that makes it), as Redis's replica sends
    /// it in FACK (its `fsynced_reploff`).
    pub fn fsynced_offset(&self, fsynced: u64) -> u64 {
        let mut st = self.st.lock();
        while let Some(&(_, off)) = st.written.front().filter(|&&(r, _)| r <= fsynced) {
            st.fack = st.fack.max(off);
            st.written.pop_front();
        }
        if fsynced == 0 { 0 } else { st.fack }
    }

    /// Bytes of the backlog, and of what waits in the replicas' queues.
    pub fn memory(&self) -> (usize, usize) {
        let backlog = self.st.lock().backlog.as_ref().map_or(0, Backlog::size);
        (backlog, self.replicas().iter().map(|r| r.queued()).sum())
    }

    /// INFO replication's master fields.
    pub fn info(&self) -> Info {
        let st = self.st.lock();
        let (first, hist, size) = match &st.backlog {
            Some(b) => (b.first(), b.histlen(), b.size()),
            None => (0, 0, 0),
        };
        Info {
            replid: st.replid.clone(),
            replid2: st.replid2.clone(),
            offset: st.offset,
            second_offset: st.second_offset,
            backlog_active: st.backlog.is_some(),
            backlog_size: size,
            backlog_first: first,
            backlog_histlen: hist,
        }
    }
}

/// What INFO replication shows of a replica's master.
pub struct UpstreamInfo {
    pub host: String,
    pub port: u16,
    pub up: bool,
    pub last_io_ms: u64,
    pub down_since_ms: u64,
    pub sync_in_progress: bool,
    pub replid: String,
    pub offset: i64,
    pub read_offset: i64,
}

/// What INFO replication shows of the master's side.
pub struct Info {
    pub replid: String,
    pub replid2: String,
    pub offset: u64,
    pub second_offset: i64,
    pub backlog_active: bool,
    pub backlog_size: usize,
    pub backlog_first: u64,
    pub backlog_histlen: usize,
}

impl State {
    /// Online replicas that acknowledged offset `target` (fsynced to their
    /// AOF: `aof`).
    fn count_acked(&self, target: u64, aof: bool) -> usize {
        self.replicas
            .iter()
            .filter(|r| r.state.load(Ordering::Relaxed) == state::ONLINE && if aof { &r.aof_ack } else { &r.ack }.load(Ordering::Relaxed) >= target)
            .count()
    }

    /// Where waiter `w` stands (see [`Repl::wait_status`]).
    fn acked(&self, w: &Waiter, fsynced: Option<u64>) -> Acked {
        let replicas = w.target.map_or(0, |t| self.count_acked(t, w.local.is_some()));
        let local = w.local.map(|_| matches!((w.written, fsynced), (Some(r), Some(f)) if r <= f));
        let known = w.target.zip(w.written).map(|(target, written)| Known { seq: w.seq, target, written });
        Acked { local, replicas, known }
    }

    /// The waiters now satisfied and not yet woken (marked woken): a
    /// WAITAOF for the local AOF while it is off is too (it then ends with
    /// an error, as Redis's).
    fn due_waiters(&mut self, fsynced: Option<u64>) -> Vec<(usize, u64)> {
        let mut due = Vec::new();
        for i in 0..self.waiters.len() {
            let w = &self.waiters[i];
            if w.woken {
                continue;
            }
            let a = self.acked(w, fsynced);
            let need_local = w.local.unwrap_or(0);
            let local_off = need_local > 0 && fsynced.is_none();
            if local_off || (a.replicas as i64 >= w.need && i64::from(a.local.unwrap_or(false)) >= need_local) {
                due.push((w.worker, w.client));
                self.waiters[i].woken = true;
            }
        }
        due
    }

    /// Adds stream bytes: the backlog, the offset, every attached
    /// replica's queue (one shared chunk).
    pub fn append(&mut self, buf: Vec<u8>, limit: OutputLimit) {
        if buf.is_empty() {
            return;
        }
        self.offset += buf.len() as u64;
        if let Some(b) = self.backlog.as_mut() {
            b.push(&buf);
        }
        if self.replicas.is_empty() {
            return;
        }
        let chunk: Chunk = Arc::new(buf);
        for r in &self.replicas {
            r.push(&chunk, limit);
        }
    }
}
