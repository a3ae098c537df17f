//! The append-only file's shared state, kept in [`crate::server::Server`]
//! (the writer, the rewrite and the loader are `tern-persist`'s `aof`
//! module): the feed of effect records, the requests to
//! the writer thread, the directory and its manifest, and INFO
//! persistence's `aof_*` fields.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::path::PathBuf;

use parking_lot::{Condvar, Mutex};
use tern_store::aof::{Feed, Manifest};

/// `appendfsync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    No = 0,
    EverySec = 1,
    Always = 2,
}

impl Fsync {
    pub fn of(s: &str) -> Fsync {
        match s {
            "always" => Fsync::Always,
            "no" => Fsync::No,
            _ => Fsync::EverySec,
        }
    }
}

/// How a BGREWRITEAOF request was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    Started,
    /// Once the running BGSAVE is over.
    Scheduled,
    InProgress,
}

/// The AOF's shared state: the feed, what the writer is asked to do, and
/// INFO persistence's `aof_*` fields.
#[derive(Default)]
pub struct Aof {
    pub feed: Feed,
    /// `appendfsync` as the workers read it.
    pub policy: AtomicU8,
    /// Records are written (`aof_enabled`).
    pub on: AtomicBool,
    /// Start-up is over: CONFIG SET appendonly acts from then on.
    pub started: AtomicBool,
    /// The writer thread is to finish (after the workers and cron did).
    pub stop: AtomicBool,
    pub ctl: Mutex<Ctl>,
    pub ctl_cv: Condvar,
    pub files: Mutex<Files>,
    /// A rewrite asked of the rewriter thread, and its wake-up.
    pub rewrite_wanted: Mutex<bool>,
    pub rewrite_wake: Condvar,
    pub rewrite_running: AtomicBool,
    pub rewrite_scheduled: AtomicBool,
    pub rewrite_cancel: AtomicBool,
    pub rewrite_started_ms: AtomicU64,
    pub last_rewrite_secs: AtomicI64,
    pub last_rewrite_failed: AtomicBool,
    pub rewrites: AtomicU64,
    pub rewrite_failures: AtomicU64,
    pub last_write_failed: AtomicBool,
    pub current_size: AtomicU64,
    /// The zeros written ahead of the commands at the end of the file
    /// being appended to (`aof-prealloc-size`): not part of the AOF's size.
    pub prealloc_ahead: AtomicU64,
    pub base_size: AtomicU64,
    pub delayed_fsync: AtomicU64,
    /// `aof_last_cow_size`: the most the last rewrite's snapshot held copied.
    pub last_cow: AtomicU64,
    /// The last of the writer's rounds (`Repl::begin_round`) whose records
    /// are all fsynced to the file (Redis's `fsynced_reploff_pending`),
    /// valid while `synced_valid` (not while the AOF waits for the rewrite
    /// that makes its files, as Redis's `fsynced_reploff` waits).
    pub synced_round: AtomicU64,
    pub synced_valid: AtomicBool,
    /// Counts the invalidations: a rewrite begun before the last one does
    /// not make `synced_round` valid.
    pub synced_epoch: AtomicU64,
}

/// Requests to the writer thread, and its answers.
#[derive(Default)]
pub struct Ctl {
    /// A rewrite's cut: records numbered from `.0` on go to a new
    /// incremental file numbered `.1`.
    pub cut: Option<(u64, u64)>,
    /// The incremental file the writer appends to (its number; 0: none).
    pub writing: u64,
    /// Open this incremental file for appending (start-up).
    pub open: Option<u64>,
    /// Close the file: appendonly was turned off.
    pub close: bool,
}

/// The AOF directory and its manifest.
#[derive(Default)]
pub struct Files {
    pub dir: PathBuf,
    pub prefix: String,
    pub manifest: Manifest,
}

/// What INFO persistence shows of the AOF.
pub struct InfoFields {
    pub enabled: bool,
    pub rewrite_in_progress: bool,
    pub rewrite_scheduled: bool,
    pub last_rewrite_secs: i64,
    pub current_rewrite_secs: i64,
    pub last_rewrite_ok: bool,
    pub rewrites: u64,
    pub rewrite_failures: u64,
    pub last_write_ok: bool,
    pub current_size: u64,
    pub base_size: u64,
    pub delayed_fsync: u64,
    pub last_cow: u64,
}

impl Aof {
    /// Asks the rewriter thread for a background rewrite (BGREWRITEAOF,
    /// the automatic trigger, appendonly turned on), or schedules it for
    /// after the running BGSAVE (`bgsave_active`), which the cron then
    /// asks again for.
    pub fn request_rewrite(&self, bgsave_active: bool) -> Rewrite {
        if self.rewrite_running.swap(true, Ordering::AcqRel) {
            return Rewrite::InProgress;
        }
        if bgsave_active {
            self.rewrite_running.store(false, Ordering::Release);
            self.rewrite_scheduled.store(true, Ordering::Relaxed);
            return Rewrite::Scheduled;
        }
        self.rewrite_scheduled.store(false, Ordering::Relaxed);
        self.rewrite_cancel.store(false, Ordering::Relaxed);
        let mut wanted = self.rewrite_wanted.lock();
        *wanted = true;
        self.rewrite_wake.notify_one();
        Rewrite::Started
    }

    pub fn new() -> Self {
        Aof { last_rewrite_secs: AtomicI64::new(-1), ..Aof::default() }
    }

    /// `appendfsync` now.
    pub fn policy(&self) -> Fsync {
        match self.policy.load(Ordering::Relaxed) {
            2 => Fsync::Always,
            0 => Fsync::No,
            _ => Fsync::EverySec,
        }
    }

    /// Whether a worker must hold its replies until its records are on
    /// disk (`appendfsync always`, the AOF on).
    #[inline]
    pub fn waits(&self) -> bool {
        self.policy.load(Ordering::Relaxed) == Fsync::Always as u8 && self.on.load(Ordering::Relaxed)
    }

    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// WAITAOF's local part (Redis's `fsynced_reploff`): None while the AOF
    /// is off; the last writer's round whose records are all fsynced, or
    /// 0 (none) until the files are made.
    pub fn fsynced(&self) -> Option<u64> {
        if !self.is_on() {
            return None;
        }
        Some(if self.synced_valid.load(Ordering::Acquire) { self.synced_round.load(Ordering::Acquire) } else { 0 })
    }

    /// The files no longer hold everything (the AOF turned on, or a
    /// replica's data replaced): nothing counts as fsynced until a rewrite
    /// begun from now on is done.
    pub fn invalidate_synced(&self) {
        self.synced_epoch.fetch_add(1, Ordering::AcqRel);
        self.synced_valid.store(false, Ordering::Release);
    }

    /// The fields at `now` (ms).
    pub fn info(&self, now: u64) -> InfoFields {
        let running = self.rewrite_running.load(Ordering::Relaxed);
        let cur = if running { (now.saturating_sub(self.rewrite_started_ms.load(Ordering::Relaxed)) / 1000) as i64 } else { -1 };
        InfoFields {
            enabled: self.is_on(),
            rewrite_in_progress: running,
            rewrite_scheduled: self.rewrite_scheduled.load(Ordering::Relaxed),
            last_rewrite_secs: self.last_rewrite_secs.load(Ordering::Relaxed),
            current_rewrite_secs: cur,
            last_rewrite_ok: !self.last_rewrite_failed.load(Ordering::Relaxed),
            rewrites: self.rewrites.load(Ordering::Relaxed),
            rewrite_failures: self.rewrite_failures.load(Ordering::Relaxed),
            last_write_ok: !self.last_write_failed.load(Ordering::Relaxed),
            current_size: self.current_size.load(Ordering::Relaxed),
            base_size: self.base_size.load(Ordering::Relaxed),
            delayed_fsync: self.delayed_fsync.load(Ordering::Relaxed),
            last_cow: self.last_cow.load(Ordering::Relaxed),
        }
    }
}

