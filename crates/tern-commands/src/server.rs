//! The state all workers share: the keyspace, the configuration, the client
//! registry, the stats of every worker, and the shutdown switch. The
//! command table is not part of it but sits beside it ([`crate::engine`]),
//! so that this state, which every command handler reaches, depends on no
//! command.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use tern_store::Keyspace;

use crate::client::ClientShared;
use crate::cmdlog::CommandLogs;
use crate::latency::{CommandLatency, LatencyMonitor};
use crate::monitor::Monitors;
use tern_config::{Config, Settings};
use crate::stats::WorkerStats;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Applies the settings that belong to the process rather than to a
/// request (the directives declared `process`): at start-up and after
/// every CONFIG SET.
fn apply_process_settings(c: &Config) {
    // Without background threads jemalloc purges freed pages only when a
    // thread allocates again, so RSS stays high after a FLUSHALL on an
    // idle server; failure (a build without the support) only costs that.
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(c.jemalloc_bg_thread) {
        tern_config::log_verbose!("jemalloc-bg-thread: {}", e);
    }
    tern_config::log::set_level(c.loglevel);
}

/// The user a connection starts as, and AUTH's one-argument form's.
pub const DEFAULT_USER: &[u8] = b"default";

/// A message to a worker about one of its blocked clients (see
/// `cmd::blocking`): posted by any thread, acted on by the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// A key it waits on was written: it tries its command again.
    Ready(u64),
    /// CLIENT UNBLOCK: it stops waiting, with the timeout's reply or an
    /// `-UNBLOCKED` error.
    Unblock { client: u64, error: bool },
}

/// What CLIENT PAUSE holds back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseMode {
    /// Commands that write or may replicate (and EXEC of a transaction
    /// that queued one); reads go on.
    Write,
    /// Every command.
    All,
}

/// Who paused clients, each pause kept apart as Redis keeps them (its
/// `pause_purpose`): CLIENT UNPAUSE ends the command's own, not a
/// FAILOVER's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PausePurpose {
    /// CLIENT PAUSE.
    Client = 0,
    /// FAILOVER, until it ends or is aborted.
    Failover = 1,
}

/// The pauses in force, packed in one word so that every command's check
/// is one load while none is set:
///
/// ```text
///  bits 63..2: the first deadline, ms since the Unix epoch    bits 1..0: 0 none, 1 WRITE, 2 ALL
/// ```
///
/// The word is the union of the purposes' pauses (the stronger mode) up
/// to the first of their deadlines; the check that finds it run out works
/// it out again from the purposes (under the lock), so a longer pause of
/// another purpose goes on. `generation` counts every change, so that a
/// worker holding postponed clients knows when to try them again.
#[derive(Debug, Default)]
pub struct Pause {
    state: AtomicU64,
    generation: AtomicU64,
    /// Each purpose's deadline and mode bits (0: none); changed one at a
    /// time.
    purposes: Mutex<[(u64, u64); 2]>,
}

impl Pause {
    fn unpack(state: u64) -> (u64, Option<PauseMode>) {
        let mode = match state & 3 {
            0 => None,
            1 => Some(PauseMode::Write),
            _ => Some(PauseMode::All),
        };
        (state >> 2, mode)
    }

    /// Whether a pause is set (possibly run out): the hot path's check.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.state.load(Ordering::Relaxed) != 0
    }

    /// The pause in force at `now_ms`, if any.
    pub fn mode_at(&self, now_ms: u64) -> Option<PauseMode> {
        let state = self.state.load(Ordering::Acquire);
        let (until, mode) = Pause::unpack(state);
        if mode.is_some() && now_ms < until {
            return mode;
        }
        if state == 0 {
            return None;
        }
        // The first deadline passed: the purposes still paused, if any.
        let mut purposes = self.purposes.lock();
        if self.state.load(Ordering::Acquire) == state {
            self.publish(&mut purposes, now_ms);
        }
        let (until, mode) = Pause::unpack(self.state.load(Ordering::Acquire));
        mode.filter(|_| now_ms < until)
    }

    /// When the pause in force changes next (ms since the epoch).
    pub fn deadline(&self) -> Option<u64> {
        let (until, mode) = Pause::unpack(self.state.load(Ordering::Acquire));
        mode.map(|_| until)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Pauses for `purpose` until `until_ms`: as in Redis, the mode is the
    /// one asked for now, and a pause of the same purpose in force ends at
    /// the later of the two deadlines.
    pub fn set(&self, purpose: PausePurpose, until_ms: u64, mode: PauseMode, now_ms: u64) {
        let mut purposes = self.purposes.lock();
        let (end, _) = purposes[purpose as usize];
        let until = if end > now_ms { end.max(until_ms) } else { until_ms };
        let bits = match mode {
            PauseMode::Write => 1,
            PauseMode::All => 2,
        };
        purposes[purpose as usize] = (until.min(u64::MAX >> 2), bits);
        self.publish(&mut purposes, now_ms);
    }

    /// Ends `purpose`'s pause (CLIENT UNPAUSE, a FAILOVER's end); another
    /// purpose's goes on.
    pub fn clear(&self, purpose: PausePurpose, now_ms: u64) {
        let mut purposes = self.purposes.lock();
        purposes[purpose as usize] = (0, 0);
        self.publish(&mut purposes, now_ms);
    }

    /// The word from the purposes still in force at `now_ms` (those run
    /// out are forgotten).
    fn publish(&self, purposes: &mut [(u64, u64); 2], now_ms: u64) {
        let (mut until, mut bits) = (u64::MAX >> 2, 0);
        for p in purposes.iter_mut() {
            if p.0 > now_ms && p.1 != 0 {
                until = until.min(p.0);
                bits |= p.1;
            } else {
                *p = (0, 0);
            }
        }
        let state = if bits == 0 { 0 } else { (until << 2) | bits.min(2) };
        self.state.store(state, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// Why the process refused a configuration CONFIG SET was about to
/// publish (see [`Server::config_hook`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The TLS context could not be rebuilt from it; the log says why.
    Tls,
}

/// Checks and puts into effect what the process (not the command layer)
/// makes of a configuration: given the old one, the new one and the
/// directives the SET names (in its order), it refuses with the directive
/// to blame, or has acted on it by the time it returns.
pub type ConfigHook = Box<dyn Fn(&Config, &Config, &[&'static str]) -> Result<(), (&'static str, Refusal)> + Send + Sync>;

/// What the commands ask of persistence and replication, whose threads and
/// files are the `tern-persist` crate's (above this one: it runs commands
/// when it loads an AOF or applies a master's stream). The process sets it
/// at start ([`Server::durability`]); a server without it (this crate's
/// unit tests) refuses to save or load and has nothing to follow.
pub trait Durability: Send + Sync {
    /// SAVE: the whole keyspace to `dir/dbfilename` while `locks` holds
    /// every shard; the keys written, or the error Redis would log.
    fn save(&self, srv: &Server, locks: &mut tern_store::LockSet<'_>) -> Result<u64, String>;
    /// DEBUG RELOAD's load of an RDB into the keyspace as it is:
    /// `keep_expired` (a replica's), `allow_dup` (MERGE: a key present is
    /// replaced). The file's aux fields and functions, the keys loaded,
    /// the keys dropped as expired.
    fn load_rdb(
        &self,
        srv: &Server,
        r: &mut dyn std::io::Read,
        size: Option<u64>,
        now: u64,
        keep_expired: bool,
        allow_dup: bool,
    ) -> Result<(tern_store::rdb::LoadInfo, u64, u64), String>;
    /// CONFIG SET's side: `appendonly` and `appendfsync` as `c` now says.
    fn follow_config(&self, srv: &Server, c: &Config);
    /// REPLICAOF NO ONE (or a failover handed to this replica): a master now.
    fn promote(&self, srv: &Server);
    /// FAILOVER ABORT (and a failover that fails): writes resume, `why` logged.
    fn abort_failover(&self, srv: &Server, why: &str);
}

/// [`Durability`] when the process set none.
struct NoDurability;

impl Durability for NoDurability {
    fn save(&self, _: &Server, _: &mut tern_store::LockSet<'_>) -> Result<u64, String> {
        Err("no persistence in this server".into())
    }
    fn load_rdb(&self, _: &Server, _: &mut dyn std::io::Read, _: Option<u64>, _: u64, _: bool, _: bool) -> Result<(tern_store::rdb::LoadInfo, u64, u64), String> {
        Err("no persistence in this server".into())
    }
    fn follow_config(&self, _: &Server, _: &Config) {}
    fn promote(&self, _: &Server) {}
    fn abort_failover(&self, _: &Server, _: &str) {}
}

/// Global counters that are not per worker.
#[derive(Debug, Default)]
pub struct GlobalStats {
    /// DEBUG SET-ACTIVE-EXPIRE 0: the background cycle expires nothing
    /// (keys and hash fields are still expired when accessed).
    pub active_expire_off: std::sync::atomic::AtomicBool,
    /// DEBUG PAUSE-CRON 1: the periodic work (expiry, eviction, scheduled
    /// saves, the AOF's rewrites and fsyncs by time) is skipped.
    pub cron_paused: std::sync::atomic::AtomicBool,
    pub expired_stale_perc: AtomicU64,
    pub active_expired: AtomicU64,
    /// Active expire cycles that stopped at their time budget with keys
    /// still expiring (INFO `expired_time_cap_reached_count`).
    pub expire_cycle_capped: AtomicU64,
    /// Time spent in active expire cycles, µs (INFO
    /// `expire_cycle_cpu_milliseconds`).
    pub expire_cycle_us: AtomicU64,
    /// Since when (µs after start, + 1; 0: not over) used memory has been
    /// over `maxmemory` with eviction at work, and the closed stretches'
    /// total, µs (INFO `current_eviction_exceeded_time`,
    /// `total_eviction_exceeded_time`; see `maxmemory::note_exceeded`).
    /// Written only when the state changes, not per command.
    pub eviction_exceeded_since_us: AtomicU64,
    pub eviction_exceeded_us: AtomicU64,
}

pub struct Server {
    pub ks: Keyspace,
    pub config: RwLock<Config>,
    /// The live settings, mirrored from `config` ([`Server::apply_config`]).
    pub settings: Settings,
    pub clients: Mutex<HashMap<u64, Arc<ClientShared>>>,
    pub next_client_id: AtomicU64,
    pub connected: AtomicUsize,
    pub workers: Vec<Arc<WorkerStats>>,
    /// SLOWLOG's and COMMANDLOG's entries, per worker.
    pub cmdlog: CommandLogs,
    /// Per-command latency histograms, per worker (INFO latencystats).
    pub latency: CommandLatency,
    /// LATENCY's events (`latency-monitor-threshold`).
    pub latency_events: LatencyMonitor,
    /// MONITOR's clients.
    pub monitors: Monitors,
    /// Publish/subscribe, CLIENT TRACKING and the inboxes they deliver to.
    pub messaging: crate::messaging::Messaging,
    pub wakers: OnceLock<Vec<Arc<mio::Waker>>>,
    /// Each worker's [`Wake`] messages, drained when its waker fires.
    pub mailboxes: Vec<Mutex<Vec<Wake>>>,
    /// CLIENT PAUSE.
    pub pause: Pause,
    /// Clients blocked in a blocking command (INFO `blocked_clients`).
    pub blocked_clients: AtomicUsize,
    /// Keys clients are blocked on, and those of them with a client to be
    /// woken by the key's deletion (INFO `total_blocking_keys`,
    /// `total_blocking_keys_on_nokey`), kept by [`Server::count_blocking_keys`].
    pub blocking_keys: AtomicUsize,
    pub blocking_keys_on_nokey: AtomicUsize,
    /// Keys at least one client WATCHes, each database's counted apart
    /// (INFO `total_watched_keys`, Redis's sum of the dbs' `watched_keys`
    /// sizes); moved by [`Server::count_watched_key`] on WATCH and UNWATCH
    /// only, never by data commands.
    pub watched_keys: AtomicUsize,
    /// Per worker: set by [`Server::wake`] (kills, shutdown).
    kill_hints: Vec<AtomicBool>,
    /// Per worker, with `appendfsync always`: the AOF ticket its oldest
    /// held replies wait for (0: none), so the AOF writer wakes it when
    /// that ticket is on disk (see [`Server::await_durable`]).
    durable_waits: Vec<tern_store::Padded<AtomicU64>>,
    pub shutdown: AtomicBool,
    pub started: Instant,
    pub started_ms: u64,
    pub run_id: String,
    /// Replication as a master: its ids, offset, backlog and replicas.
    pub repl: crate::repl::Repl,
    /// The TCP port actually listened on (differs from config when 0).
    pub port: AtomicUsize,
    pub global: GlobalStats,
    /// Set by CONFIG RESETSTAT so INFO can report since when.
    pub stat_reset_ms: AtomicU64,
    pub executable: String,
    /// The service manager the process reports to (INFO
    /// `process_supervised`): `systemd`, `upstart`, or `no`; set at start.
    pub supervised: OnceLock<&'static str>,
    /// When memcached's pending delayed `flush_all` is due (ms since the
    /// epoch): one deadline, replaced by every `flush_all`, carried out by
    /// the cron (`memcache::flush_if_due`).
    pub mc_flush_at: Mutex<Option<u64>>,
    /// PFDEBUG SIMD's switch: Redis's choice between its AVX2 and scalar
    /// HyperLogLog code. Tern has one path (vectorised by the compiler), so
    /// the switch only answers; it starts on, as Redis on this CPU.
    pub hll_simd: AtomicBool,
    /// The process's own structures (configuration, the keyspace's
    /// shards and locks, the command statistics) as allocated at start,
    /// beside what the shards and workers count: the fixed part of
    /// `used_memory` (see `memory`).
    pub base_memory: u64,
    /// SAVE, LASTSAVE and INFO persistence's state (saves: `crate::persist`).
    pub persist: Persistence,
    /// The append-only file (its threads: `tern_persist::aof`).
    pub aof: crate::aofstate::Aof,
    /// ACL users and the log of refusals (`crate::acl`).
    pub acl: crate::acl::Acl,
    /// EVAL's script cache and the scripts' gate.
    pub scripts: crate::scriptcache::ScriptCache,
    /// Set by the process at start (tern-server: the TLS context, which
    /// CONFIG SET of a `tls-*` directive rebuilds): run by CONFIG SET
    /// before it publishes a configuration.
    pub config_hook: OnceLock<ConfigHook>,
    /// Persistence and replication's side of the commands (see
    /// [`Durability`]): set by the process at start.
    pub durability: OnceLock<Box<dyn Durability>>,
    /// Cluster mode's view of the cluster (`cluster-enabled yes`), set at
    /// start; the redirections and CLUSTER read it.
    pub cluster: OnceLock<Arc<tern_cluster::Cluster>>,
}

/// INFO persistence's state of the saves.
#[derive(Debug, Default)]
pub struct Persistence {
    /// `rdb_last_save_time` (seconds): the last successful save or load,
    /// else the start.
    pub last_save: AtomicU64,
    /// `rdb_saves`: successful saves since start.
    pub saves: AtomicU64,
    /// Shard change counts summed at the last save or load.
    pub changes_at_save: AtomicU64,
    /// `rdb_last_bgsave_status` (a SAVE counts, as in Redis).
    pub last_failed: AtomicBool,
    /// `rdb_saves_consecutive_failures`.
    pub consecutive_failures: AtomicU64,
    /// `loading` while start-up reads the file.
    pub loading: AtomicBool,
    /// Keys loaded at start, and dropped as already expired
    /// (`rdb_last_load_keys_loaded`, `rdb_last_load_keys_expired`).
    pub loaded_keys: AtomicU64,
    pub load_expired: AtomicU64,
    /// SHUTDOWN already saved (or was told not to): the exit path does not.
    pub shutdown_handled: AtomicBool,
    /// A background save asked of the saver thread and not yet begun
    /// (BGSAVE, the `save` schedule), and the saver's wake-up.
    pub bg_wanted: Mutex<bool>,
    pub bg_wake: parking_lot::Condvar,
    /// `rdb_bgsave_in_progress`, and when the running (or last) one began.
    pub bg_running: AtomicBool,
    pub bg_started_ms: AtomicU64,
    /// When the last one was tried (the schedule's retry delay after a
    /// failure).
    pub bg_last_try_ms: AtomicU64,
    /// `rdb_last_bgsave_time_sec` (-1: none yet).
    pub bg_last_secs: AtomicI64,
    /// Bytes of entries copied because they changed ahead of the walk,
    /// now and at most in the last one: fork's copy-on-write counterpart
    /// (`current_cow_size`, `rdb_last_cow_size`).
    pub bg_cow_bytes: AtomicU64,
    pub bg_last_cow_bytes: AtomicU64,
    /// Held while a save's file is renamed into place (a synchronous
    /// save's from its creation, as those share one name), and while
    /// FLUSHALL gives the running background save up (`bg_cancel`): a
    /// save of the data before the flush can never land after the flush's
    /// own save.
    pub rename: Mutex<()>,
    pub bg_cancel: AtomicBool,
}

pub use crate::repl::random_hex40;

impl Server {
    /// The state for `cfg`, with per-worker statistics for `commands`
    /// command ids (the command table's length).
    pub fn new(cfg: Config, commands: usize) -> Server {
        let threads = cfg.threads.max(1);
        let per_db = if cfg.shards_per_db == 0 { (threads * 8).next_power_of_two().max(16) } else { cfg.shards_per_db };
        let run_id = random_hex40();
        let ks = Keyspace::new(cfg.databases, per_db);
        let key_hasher = *ks.hasher();
        let srv = Server {
            ks,
            workers: (0..threads).map(|_| Arc::new(WorkerStats::new(commands))).collect(),
            cmdlog: CommandLogs::new(threads),
            latency: CommandLatency::new(threads, commands),
            latency_events: LatencyMonitor::default(),
            monitors: Monitors::default(),
            messaging: crate::messaging::Messaging::with_hasher(threads, key_hasher),
            config: RwLock::new(cfg),
            settings: Settings::default(),
            clients: Mutex::new(HashMap::new()),
            next_client_id: AtomicU64::new(1),
            connected: AtomicUsize::new(0),
            wakers: OnceLock::new(),
            mailboxes: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
            pause: Pause::default(),
            blocked_clients: AtomicUsize::new(0),
            blocking_keys: AtomicUsize::new(0),
            blocking_keys_on_nokey: AtomicUsize::new(0),
            watched_keys: AtomicUsize::new(0),
            kill_hints: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            durable_waits: (0..threads).map(|_| tern_store::Padded(AtomicU64::new(0))).collect(),
            shutdown: AtomicBool::new(false),
            started: Instant::now(),
            started_ms: now_ms(),
            run_id,
            repl: crate::repl::Repl::new(),
            port: AtomicUsize::new(0),
            global: GlobalStats::default(),
            stat_reset_ms: AtomicU64::new(now_ms()),
            executable: std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
            supervised: OnceLock::new(),
            mc_flush_at: Mutex::new(None),
            hll_simd: AtomicBool::new(true),
            base_memory: 0,
            persist: Persistence { bg_last_secs: AtomicI64::new(-1), ..Persistence::default() },
            aof: crate::aofstate::Aof::new(),
            acl: crate::acl::Acl::default(),
            scripts: crate::scriptcache::ScriptCache::default(),
            config_hook: OnceLock::new(),
            durability: OnceLock::new(),
            cluster: OnceLock::new(),
        };
        srv.persist.last_save.store(srv.started_ms / 1000, Ordering::Relaxed);
        let mut srv = srv;
        srv.base_memory = crate::sysinfo::jemalloc_stats().0.saturating_sub(srv.ks.used_memory_exact() as u64);
        srv.apply_config(&srv.config.read());
        srv
    }

    /// Keys advanced together through the prefetch stages for the batch
    /// about to run: `prefetch-batch-max-size`, or 0 (no stages) while the
    /// data is under `prefetch-min-memory`.
    #[inline]
    pub fn prefetch_batch(&self) -> usize {
        let n = self.settings.prefetch_batch_max_size();
        if n > 0 && (self.ks.used_memory() as u64) < self.settings.prefetch_min_memory() {
            0
        } else {
            n
        }
    }

    /// Puts a configuration into effect: the live settings, the process
    /// settings, and the keyspace's access clock. `config` is the
    /// caller's to replace.
    pub fn apply_config(&self, c: &Config) {
        self.settings.load_from(c);
        apply_process_settings(c);
        // New keys start the clock the policy reads (existing ones adjust
        // as they are accessed, as in Redis).
        self.ks.set_lfu(c.maxmemory_policy.is_lfu());
        self.ks.set_fifo(c.maxmemory_policy.store_policy());
        tern_store::prefetch_freed(c.prefetch_freed_items);
        self.acl.set_pubsub_all(c.acl_pubsub_default == "allchannels");
        self.acl.apply_requirepass(c.requirepass.as_deref());
        self.acl.log.lock().trim(usize::try_from(c.acllog_max_len).unwrap_or(usize::MAX));
        self.refresh_notify();
        self.repl.set_min_replicas(u64::try_from(c.min_replicas_to_write).unwrap_or(0), c.min_replicas_max_lag.as_secs());
        // An idle worker sleeps until the work it knows of is due; what
        // is due may have changed (`timeout` set): each takes a look.
        for i in 0..self.workers.len() {
            self.wake_only(i);
        }
    }

    /// Wakes worker `i` so it notices kill flags or shutdown.
    pub fn wake(&self, i: usize) {
        if let Some(h) = self.kill_hints.get(i) {
            h.store(true, Ordering::Release);
        }
        self.wake_only(i);
    }

    /// Wakes every worker's event loop (CLIENT PAUSE and UNPAUSE: each
    /// looks at its postponed clients again).
    pub fn wake_all(&self) {
        for i in 0..self.workers.len() {
            self.wake_only(i);
        }
    }

    /// Wakes worker `i`'s event loop, for its mail alone (no kill hint).
    pub fn wake_only(&self, i: usize) {
        if let Some(w) = self.wakers.get().and_then(|w| w.get(i)) {
            let _ = w.wake();
        }
    }

    /// Whether worker `i` was woken by [`Server::wake`] since it last
    /// asked: only then do its connections need a look for kill flags
    /// (a wake for its mailbox alone must not walk them all).
    pub fn take_kill_hint(&self, i: usize) -> bool {
        self.kill_hints.get(i).is_some_and(|h| h.swap(false, Ordering::AcqRel))
    }

    /// Applies what a wait's start or end did to the blocking-key counts.
    pub fn count_blocking_keys(&self, d: tern_store::BlockingKeys) {
        for (n, c) in [(d.keys, &self.blocking_keys), (d.nokey, &self.blocking_keys_on_nokey)] {
            match n {
                1.. => c.fetch_add(n.unsigned_abs().into(), Ordering::Relaxed),
                i8::MIN..=-1 => c.fetch_sub(n.unsigned_abs().into(), Ordering::Relaxed),
                0 => 0,
            };
        }
    }

    /// Applies what a WATCH (`true` from `Shard::watch`: the key's first
    /// watcher, `up`) or an unwatch (`true` from `Shard::unwatch`: its
    /// last) did to `total_watched_keys`.
    pub fn count_watched_key(&self, changed: bool, up: bool) {
        if changed {
            if up {
                self.watched_keys.fetch_add(1, Ordering::Relaxed);
            } else {
                self.watched_keys.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Worker `worker` holds replies until AOF ticket `t` is durable (0:
    /// none any more). Returns the durable ticket read after noting it: if
    /// that is already `t` or more, the writer may not wake the worker for
    /// it, and the worker must look again itself.
    pub fn await_durable(&self, worker: usize, t: u64) -> u64 {
        if let Some(w) = self.durable_waits.get(worker) {
            w.0.store(t, Ordering::SeqCst);
        }
        self.aof.feed.durable_now()
    }

    /// The AOF writer's side of [`Server::await_durable`], after it
    /// published ticket `d` durable: wakes every worker waiting for it.
    pub fn wake_durable(&self, d: u64) {
        for (i, w) in self.durable_waits.iter().enumerate() {
            let t = w.0.load(Ordering::SeqCst);
            if t != 0 && t <= d {
                self.wake_only(i);
            }
        }
    }

    /// What closing a connection undoes, for a worker's connections and
    /// the in-process executor's alike: its WATCHes, MONITOR feed and
    /// subscriptions go, and it leaves the client list and the count.
    pub fn forget_client(&self, client: &mut crate::client::Client) {
        for w in client.watched.drain(..) {
            let last = self.ks.lock(w.loc.gid).unwatch(&w.key, w.loc.hash, &client.watch_flag);
            self.count_watched_key(last, false);
        }
        self.clients.lock().remove(&client.id);
        if let Some(f) = client.monitor.take() {
            self.monitors.remove(f.client_id);
        }
        if client.leave_pubsub(&self.messaging.pubsub) {
            self.refresh_notify();
        }
        if client.tracking.take().is_some() {
            self.stop_tracking(client.id);
        }
        self.messaging.tracking.release_slot(client.id);
        if let Some(inbox) = client.shared.inbox_if_any() {
            inbox.close();
        }
        self.connected.fetch_sub(1, Ordering::SeqCst);
    }

    /// Ends client `id`'s CLIENT TRACKING; the last one to stop stops the
    /// store noting written keys.
    pub fn stop_tracking(&self, id: u64) {
        let t = &self.messaging.tracking;
        t.disable(id);
        t.settle(self.ks.marked_keys(), |active| self.ks.track_writes(active));
    }

    /// Client `id`'s mark bit for its tracked reads (see
    /// `messaging::tracking`): 0 when no slot is free. Slots given up are
    /// cleared from the keyspace first if `may_lock` (the caller holds no
    /// shard).
    pub fn tracking_slot(&self, id: u64, may_lock: bool) -> u64 {
        self.messaging.tracking.slot_for(id, |dirty| {
            if may_lock {
                self.ks.clear_marks(dirty);
            }
            may_lock
        })
    }

    /// Sends the invalidations of keys written in one database whose
    /// marks sit in another ([`crate::messaging::tracking::Tracking::defer_elsewhere`]).
    /// Takes the shards' locks: none may be held.
    pub fn invalidate_elsewhere(&self, worker: usize) {
        let t = &self.messaging.tracking;
        if !t.elsewhere_pending() {
            return;
        }
        // The flag first: what is asked for after it waits for the next call.
        let keys = t.take_elsewhere();
        if t.take_clear() {
            self.clear_marks();
        }
        for (db, key, modifier) in keys {
            let readers = self.ks.take_marks_elsewhere(db, &key);
            if readers != 0 {
                t.forget(&key, false, readers, modifier, &mut |i, d| self.deliver(i, d, worker));
            }
        }
    }

    /// A database was flushed: every tracking client is told that every
    /// key is invalid, and the tracking table empties (Redis's
    /// trackingInvalidateKeysOnFlush).
    /// `may_lock`: the caller holds no shard (otherwise the marks left in
    /// databases not flushed are cleared by the next
    /// [`Server::invalidate_elsewhere`]).
    pub fn tracking_flushed(&self, worker: usize, may_lock: bool) {
        let t = &self.messaging.tracking;
        if t.active(self.ks.marked_keys()) {
            t.flush(|i, d| self.deliver(i, d, worker));
            // Every key is forgotten, in any database (Redis empties its
            // one table): the marks too, and then no slot is dirty.
            if may_lock {
                self.clear_marks();
            } else {
                t.defer_clear();
            }
            t.settle(self.ks.marked_keys(), |active| self.ks.track_writes(active));
        }
    }

    fn clear_marks(&self) {
        self.ks.clear_marks(!0);
        self.messaging.tracking.marks_cleared();
    }

    /// Delivers invalidation `d` to `inbox` from worker `worker` (or
    /// none): the worker's replies wait for it (`Messaging::deliver_urgent`).
    pub fn deliver(&self, inbox: &Arc<crate::messaging::Inbox>, d: crate::messaging::Delivery, worker: usize) {
        self.messaging.deliver_urgent(inbox, d, worker, &|w| self.wake_only(w));
    }

    /// Sends what the writes noted in `fx` make known: the invalidations
    /// of the keys written by the command of client `current` (0: none),
    /// which client `executing` ran (a script's commands: its own client),
    /// noted for the BCAST prefixes too; and their keyspace notifications.
    /// Nothing to do (one branch) while no client tracks and no
    /// notification is wanted.
    pub fn invalidate_written(&self, fx: &tern_store::Effects, current: u64, executing: u64, worker: usize) {
        if !fx.has_modified() {
            return;
        }
        let notes = fx.take_modified();
        if self.ks.writes_tracked() {
            let t = &self.messaging.tracking;
            t.invalidate(&notes, current, executing, |i, d| self.deliver(i, d, worker));
            // A name written in one database is invalidated for the reads
            // of it in any: marks in other databases are taken once no
            // shard is held.
            let marked = self.ks.marked_keys();
            if marked > 0 {
                for n in &notes {
                    if marked > self.ks.marked(n.db as usize) {
                        t.defer_elsewhere(n.db as usize, &n.key, current);
                    }
                }
            }
            // The last keys a gone client left are gone: writes need not be
            // noted any more.
            if !t.active(marked) {
                t.settle(self.ks.marked_keys(), |active| self.ks.track_writes(active));
            }
        }
        let flags = self.settings.notify_keyspace_events();
        if flags != 0 {
            crate::messaging::notify::publish(&notes, flags, |chan, msg| {
                self.messaging.publish(chan, msg, false, worker, |w| self.wake_only(w));
            });
        }
    }

    /// Tells the store whether writes are to note their events: some
    /// notification class is on and someone could hear it. Called when
    /// the configuration or the subscriptions change.
    pub fn refresh_notify(&self) {
        let flags = self.settings.notify_keyspace_events();
        self.messaging.notify.refresh(flags, &self.messaging, |on| self.ks.notify_writes(on));
    }

    /// Hands `w` to worker `worker` and wakes it.
    pub fn post(&self, worker: usize, w: Wake) {
        let Some(mb) = self.mailboxes.get(worker) else { return };
        mb.lock().push(w);
        self.wake_only(worker);
    }

    /// Worker `worker`'s messages, oldest first.
    pub fn take_mail(&self, worker: usize) -> Vec<Wake> {
        self.mailboxes.get(worker).map(|m| std::mem::take(&mut *m.lock())).unwrap_or_default()
    }

    /// Stops accepting, lets workers finish the replies in flight, and makes
    /// the process exit 0.
    pub fn begin_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        for i in 0..self.workers.len() {
            self.wake(i);
        }
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.load(Ordering::Relaxed)
    }

    /// Persistence and replication (see [`Durability`]).
    pub fn durability(&self) -> &dyn Durability {
        self.durability.get().map_or(&NoDurability, |d| d.as_ref())
    }

    /// Sum of a per-worker counter.
    pub fn sum(&self, f: impl Fn(&WorkerStats) -> u64) -> u64 {
        self.workers.iter().map(|w| f(w)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each purpose's pause holds apart: the word is the stronger mode up
    /// to the first deadline, then the other purpose's pause goes on, and
    /// ending one purpose leaves the other.
    #[test]
    fn pauses_of_two_purposes_hold_apart() {
        let p = Pause::default();
        let t = 1_000_000;
        assert_eq!(p.mode_at(t), None);
        p.set(PausePurpose::Failover, u64::MAX >> 3, PauseMode::Write, t);
        p.set(PausePurpose::Client, t + 100, PauseMode::All, t);
        assert_eq!(p.mode_at(t + 50), Some(PauseMode::All));
        assert_eq!(p.deadline(), Some(t + 100));
        let g = p.generation();
        assert_eq!(p.mode_at(t + 100), Some(PauseMode::Write));
        assert!(p.generation() > g, "postponed clients are tried again when the pause eases");
        p.set(PausePurpose::Client, t + 300, PauseMode::All, t + 200);
        p.clear(PausePurpose::Client, t + 250);
        assert_eq!(p.mode_at(t + 260), Some(PauseMode::Write));
        p.clear(PausePurpose::Failover, t + 270);
        assert_eq!(p.mode_at(t + 270), None);
        assert!(!p.is_set());
        // A purpose's later pause ends at the later deadline.
        p.set(PausePurpose::Client, t + 500, PauseMode::Write, t);
        p.set(PausePurpose::Client, t + 400, PauseMode::All, t);
        assert_eq!(p.mode_at(t + 450), Some(PauseMode::All));
        assert_eq!(p.mode_at(t + 500), None);
    }

    /// The stages run once the data reaches `prefetch-min-memory`, at any
    /// size with 0, and never with `prefetch-batch-max-size 0`.
    #[test]
    fn prefetch_waits_for_the_data_to_outgrow_the_caches() {
        let at = |min: u64, batch: usize| {
            let cfg = Config { threads: 1, prefetch_min_memory: min, prefetch_batch_max_size: batch, ..Config::default() };
            let srv = Server::new(cfg.clone(), 0);
            srv.apply_config(&cfg);
            srv
        };
        assert_eq!(at(Config::default().prefetch_min_memory, 16).prefetch_batch(), 0, "an empty server's data fits");
        assert_eq!(at(0, 16).prefetch_batch(), 16);
        let srv = at(256 * 1024, 5);
        assert_eq!(srv.prefetch_batch(), 0);
        let value = vec![b'v'; 1000];
        for i in 0..1000 {
            let key = format!("key:{i}");
            let l = srv.ks.locate(0, key.as_bytes());
            let mut shard = srv.ks.lock(l.gid);
            shard.set(key.as_bytes(), l.hash, tern_store::NewValue::Bytes(&value), None, 0);
            srv.ks.publish_hint(l.gid, &shard);
        }
        assert!(srv.ks.used_memory() > 256 * 1024, "{}", srv.ks.used_memory());
        assert_eq!(srv.prefetch_batch(), 5);
        assert_eq!(at(0, 0).prefetch_batch(), 0);
    }
}
