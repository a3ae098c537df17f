//! The append-only file's shared state, kept in [`crate::server::Server`]
//! (the logic is in `aof`): the feed of effect records, the requests to
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
    pub(crate) fn of(s: &str) -> Fsync {
        match s {
            "always" => Fsync::Always,
            "no" => Fsync::No,
            _ => Fsync::EverySec,
        }
    }
}

/// The AOF's shared state: the feed, what the writer is asked to do, and
/// INFO persistence's `aof_*` fields.
#[derive(Default)]
pub struct Aof {
    pub feed: Feed,
    /// `appendfsync` as the workers read it.
    pub(crate) policy: AtomicU8,
    /// Records are written (`aof_enabled`).
    pub(crate) on: AtomicBool,
    /// Start-up is over: CONFIG SET appendonly acts from then on.
    pub(crate) started: AtomicBool,
    /// The writer thread is to finish (after the workers and cron did).
    pub(crate) stop: AtomicBool,
    pub(crate) ctl: Mutex<Ctl>,
    pub(crate) ctl_cv: Condvar,
    pub(crate) files: Mutex<Files>,
    /// A rewrite asked of the rewriter thread, and its wake-up.
    pub(crate) rewrite_wanted: Mutex<bool>,
    pub(crate) rewrite_wake: Condvar,
    pub rewrite_running: AtomicBool,
    pub rewrite_scheduled: AtomicBool,
    pub(crate) rewrite_cancel: AtomicBool,
    pub(crate) rewrite_started_ms: AtomicU64,
    pub(crate) last_rewrite_secs: AtomicI64,
    pub(crate) last_rewrite_failed: AtomicBool,
    pub(crate) rewrites: AtomicU64,
    pub(crate) rewrite_failures: AtomicU64,
    pub(crate) last_write_failed: AtomicBool,
    pub(crate) current_size: AtomicU64,
    /// The zeros written ahead of the commands at the end of the file
    /// being appended to (`aof-prealloc-size`): not part of the AOF's size.
    pub(crate) prealloc_ahead: AtomicU64,
    pub(crate) base_size: AtomicU64,
    pub(crate) delayed_fsync: AtomicU64,
    /// `aof_last_cow_size`: the most the last rewrite's snapshot held copied.
    pub(crate) last_cow: AtomicU64,
    /// The last of the writer's rounds (`Repl::begin_round`) whose records
    /// are all fsynced to the file (Redis's `fsynced_reploff_pending`),
    /// valid while `synced_valid` (not while the AOF waits for the rewrite
    /// that makes its files, as Redis's `fsynced_reploff` waits).
    pub(crate) synced_round: AtomicU64,
    pub(crate) synced_valid: AtomicBool,
    /// Counts the invalidations: a rewrite begun before the last one does
    /// not make `synced_round` valid.
    pub(crate) synced_epoch: AtomicU64,
}

/// Requests to the writer thread, and its answers.
#[derive(Default)]
pub(crate) struct Ctl {
    /// A rewrite's cut: records numbered from `.0` on go to a new
    /// incremental file numbered `.1`.
    pub(crate) cut: Option<(u64, u64)>,
    /// The incremental file the writer appends to (its number; 0: none).
    pub(crate) writing: u64,
    /// Open this incremental file for appending (start-up).
    pub(crate) open: Option<u64>,
    /// Close the file: appendonly was turned off.
    pub(crate) close: bool,
}

/// The AOF directory and its manifest.
#[derive(Default)]
pub(crate) struct Files {
    pub(crate) dir: PathBuf,
    pub(crate) prefix: String,
    pub(crate) manifest: Manifest,
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
    pub fn new() -> Self {
        Aof { last_rewrite_secs: AtomicI64::new(-1), ..Aof::default() }
    }

    /// `appendfsync` now.
    pub(crate) fn policy(&self) -> Fsync {
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
    pub(crate) fn invalidate_synced(&self) {
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

