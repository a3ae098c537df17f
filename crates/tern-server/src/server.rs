//! The state all workers share: the keyspace, the configuration, the client
//! registry, the stats of every worker, and the shutdown switch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use tern_store::Keyspace;

use crate::client::ClientShared;
use crate::cmd::table::CommandTable;
use crate::config::Config;
use crate::stats::WorkerStats;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Limits read on the request path, copied out of the config so that a
/// worker reads an atomic instead of taking the config lock per request.
#[derive(Debug, Default)]
pub struct HotLimits {
    pub proto_max_bulk_len: AtomicU64,
    pub query_buffer_limit: AtomicU64,
    pub maxclients: AtomicUsize,
    pub timeout_secs: AtomicU64,
    pub output_hard: AtomicU64,
    pub output_soft: AtomicU64,
    pub output_soft_secs: AtomicU64,
    pub requirepass_set: AtomicBool,
    /// `protected-mode`: refuse non-loopback clients while the default
    /// user has no password.
    pub protected_mode: AtomicBool,
    pub tcp_keepalive_secs: AtomicU64,
    pub hz: AtomicU64,
    pub hash_max_listpack_entries: AtomicUsize,
    pub hash_max_listpack_value: AtomicUsize,
    /// maxmemory-policy is an LFU one, with its tuning: read on every
    /// key access, so kept here rather than behind the config lock.
    pub lfu_policy: AtomicBool,
    pub lfu_log_factor: std::sync::atomic::AtomicU32,
    pub lfu_decay_minutes: std::sync::atomic::AtomicU32,
    /// `reply-copy-avoid-min-size` (0: off), read once per command.
    pub reply_copy_avoid_min: AtomicUsize,
    /// `prefetch-batch-max-size`: read once per request batch and per
    /// multi-key command.
    pub prefetch_batch: AtomicUsize,
}

impl HotLimits {
    pub fn load_from(&self, c: &Config) {
        let r = Ordering::Relaxed;
        let lfu = c.maxmemory_policy.ends_with("-lfu");
        let num = |name: &str, default: u32| {
            crate::config::find_directive(name).and_then(|d| (d.get)(c).parse().ok()).unwrap_or(default)
        };
        let d = tern_store::Lfu::default();
        self.lfu_policy.store(lfu, r);
        self.lfu_log_factor.store(num("lfu-log-factor", d.log_factor), r);
        self.lfu_decay_minutes.store(num("lfu-decay-time", d.decay_minutes), r);
        self.proto_max_bulk_len.store(c.proto_max_bulk_len, r);
        self.query_buffer_limit.store(c.client_query_buffer_limit, r);
        self.maxclients.store(c.maxclients, r);
        self.timeout_secs.store(c.timeout_secs, r);
        self.output_hard.store(c.output_limit_normal.hard, r);
        self.output_soft.store(c.output_limit_normal.soft, r);
        self.output_soft_secs.store(c.output_limit_normal.soft_seconds, r);
        self.requirepass_set.store(c.requirepass.is_some(), r);
        self.protected_mode.store(c.protected_mode, r);
        self.tcp_keepalive_secs.store(c.tcp_keepalive_secs, r);
        self.hz.store(u64::from(c.hz), r);
        self.hash_max_listpack_entries.store(c.hash_max_listpack_entries, r);
        self.hash_max_listpack_value.store(c.hash_max_listpack_value, r);
        self.reply_copy_avoid_min.store(usize::try_from(c.reply_copy_avoid_min_size).unwrap_or(usize::MAX), r);
        self.prefetch_batch.store(c.prefetch_batch_max_size, r);
    }
}

/// Applies the settings that belong to the process rather than to a
/// request: at start-up and after every CONFIG SET.
pub fn apply_process_settings(c: &Config) {
    // Without background threads jemalloc purges freed pages only when a
    // thread allocates again, so RSS stays high after a FLUSHALL on an
    // idle server; failure (a build without the support) only costs that.
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(c.jemalloc_bg_thread) {
        crate::log_verbose!("jemalloc-bg-thread: {}", e);
    }
}

impl HotLimits {
    /// Keys per prefetch group; 0 when prefetching is off.
    #[inline]
    pub fn prefetch_batch(&self) -> usize {
        self.prefetch_batch.load(Ordering::Relaxed)
    }

    /// Shortest string value stored shared and sent without a copy; 0 when
    /// copy avoidance is off.
    #[inline]
    pub fn reply_copy_avoid_min(&self) -> usize {
        self.reply_copy_avoid_min.load(Ordering::Relaxed)
    }

    /// The LFU tuning when the policy is an LFU one.
    pub fn lfu(&self) -> Option<tern_store::Lfu> {
        let r = Ordering::Relaxed;
        self.lfu_policy.load(r).then(|| tern_store::Lfu {
            log_factor: self.lfu_log_factor.load(r),
            decay_minutes: self.lfu_decay_minutes.load(r),
        })
    }
}

/// Global counters that are not per worker.
#[derive(Debug, Default)]
pub struct GlobalStats {
    pub expired_stale_perc: AtomicU64,
    pub active_expired: AtomicU64,
}

pub struct Server {
    pub ks: Keyspace,
    pub config: RwLock<Config>,
    pub limits: HotLimits,
    pub commands: CommandTable,
    pub clients: Mutex<HashMap<u64, Arc<ClientShared>>>,
    pub next_client_id: AtomicU64,
    pub connected: AtomicUsize,
    pub workers: Vec<Arc<WorkerStats>>,
    pub wakers: OnceLock<Vec<Arc<mio::Waker>>>,
    pub shutdown: AtomicBool,
    pub started: Instant,
    pub started_ms: u64,
    pub run_id: String,
    /// The TCP port actually listened on (differs from config when 0).
    pub port: AtomicUsize,
    pub global: GlobalStats,
    /// Set by CONFIG RESETSTAT so INFO can report since when.
    pub stat_reset_ms: AtomicU64,
    pub executable: String,
}

impl Server {
    pub fn new(cfg: Config) -> Server {
        let commands = CommandTable::build();
        let threads = cfg.threads.max(1);
        let per_db = if cfg.shards_per_db == 0 { (threads * 8).next_power_of_two().max(16) } else { cfg.shards_per_db };
        let limits = HotLimits::default();
        limits.load_from(&cfg);
        apply_process_settings(&cfg);
        let run_id: String = {
            use rand::Rng;
            let mut r = rand::thread_rng();
            (0..40).map(|_| char::from_digit(r.gen_range(0..16), 16).unwrap_or('0')).collect()
        };
        let ks = Keyspace::new(cfg.databases, per_db);
        ks.set_lfu(limits.lfu_policy.load(Ordering::Relaxed));
        Server {
            ks,
            workers: (0..threads).map(|_| Arc::new(WorkerStats::new(commands.len()))).collect(),
            commands,
            config: RwLock::new(cfg),
            limits,
            clients: Mutex::new(HashMap::new()),
            next_client_id: AtomicU64::new(1),
            connected: AtomicUsize::new(0),
            wakers: OnceLock::new(),
            shutdown: AtomicBool::new(false),
            started: Instant::now(),
            started_ms: now_ms(),
            run_id,
            port: AtomicUsize::new(0),
            global: GlobalStats::default(),
            stat_reset_ms: AtomicU64::new(now_ms()),
            executable: std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
        }
    }

    /// Wakes worker `i` so it notices kill flags or shutdown.
    pub fn wake(&self, i: usize) {
        if let Some(w) = self.wakers.get().and_then(|w| w.get(i)) {
            let _ = w.wake();
        }
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

    /// Sum of a per-worker counter.
    pub fn sum(&self, f: impl Fn(&WorkerStats) -> u64) -> u64 {
        self.workers.iter().map(|w| f(w)).sum()
    }
}
