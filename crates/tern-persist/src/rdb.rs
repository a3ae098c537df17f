//! Snapshots on disk in Redis's RDB format (tern_store::rdb).
//!
//! - SAVE and the save at shutdown write `dir/dbfilename` while holding
//!   every shard, so the file is trivially one point in time.
//! - BGSAVE (and the `save` schedule, checked by the cron; requests and
//!   state in `tern_commands::persist`) hands the work to the saver
//!   thread ([`saver`]), which writes a point-in-time snapshot without
//!   fork and without stopping the workers (`tern_store::Snapshot`: every
//!   shard lock taken once at the start, then a walk in bounded slices
//!   while writes go on, each entry changed ahead of the walk copied
//!   first).
//! - Start-up loads the file before the workers accept connections.
//!
//! A save writes a temporary file in `dir`, syncs it, then renames it over
//! the old file, as Redis does: a crash mid-save leaves the last good file.
//!
//! The AOF is [`crate::aof`]; its rewrite's base is written by
//! [`write_snapshot_to`] too, and so is a replica's full resynchronisation
//! ([`crate::repl::master`]).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tern_store::rdb::{self, LoadInfo, RdbError, RdbOptions, RdbWriter};
use tern_store::{EntryExt, LockSet, ValueRef};

use tern_commands::persist::{limits, rdb_path, total_changes};
use tern_commands::server::{now_ms, Server};

/// The options of an RDB written now.
pub(crate) fn rdb_options(srv: &Server) -> RdbOptions {
    let cfg = srv.config.read();
    RdbOptions {
        compression: cfg.rdbcompression,
        checksum: cfg.rdbchecksum,
        redis_ver: tern_commands::REDIS_VERSION.into(),
        ctime_secs: now_ms() / 1000,
        used_mem: tern_commands::maxmemory::used_memory_exact(srv),
        repl: None,
    }
}

/// A replica's save: holds its link thread between two commands while
/// the snapshot begins (`begin`), and gives where in the master's stream
/// the snapshot is, for the file's `repl-*` AUX fields (a PSYNC after a
/// restart). None on a master, or when the link thread could not be
/// held (a save under EXEC's locks, which it may be waiting for).
fn at_stream_position<T>(srv: &Server, begin: impl FnOnce() -> T) -> (T, Option<tern_store::rdb::ReplPosition>) {
    let applying = if srv.repl.is_replica() { srv.repl.pause_applying() } else { None };
    let began = begin();
    let at = applying.as_ref().and_then(|_| srv.repl.stream_position());
    (began, at)
}

/// Where a save writes and with which options.
fn target(srv: &Server, tmp_name: String) -> (PathBuf, PathBuf, RdbOptions) {
    (temp_path(srv, &tmp_name), rdb_path(&srv.config.read()), rdb_options(srv))
}

/// A temporary file `name` beside `dir/dbfilename` (a save's, a
/// replica's full resynchronisation's).
pub(crate) fn temp_path(srv: &Server, name: &str) -> PathBuf {
    let path = rdb_path(&srv.config.read());
    path.parent().map(PathBuf::from).unwrap_or_else(|| ".".into()).join(name)
}

/// Saves the whole keyspace to `dir/dbfilename` while `locks` holds
/// every shard. Returns the keys written, or the error Redis would log.
pub fn save(srv: &Server, locks: &mut LockSet<'_>) -> Result<u64, String> {
    let (tmp, path, mut opts) = target(srv, format!("temp-{}.rdb", std::process::id()));
    let now = now_ms();
    let total = srv.ks.total_shards() as u32;
    ((), opts.repl) = at_stream_position(srv, || locks.acquire(0..total));
    // Held from the temporary file's creation to its rename: a save the
    // shards were released to (a FLUSHALL on another worker) would
    // otherwise truncate this one's file under it, and its own rename
    // then find nothing to move.
    let _rename = srv.persist.rename.lock();
    let result = write_all(srv, locks, &tmp, opts, now);
    let changes: u64 = (0..total).map(|g| locks.shard(g).changes).sum();
    locks.release();
    let result = result.and_then(|file| finish_file(file, &tmp, &path));
    saved(srv, &result, &tmp, now, changes, "DB saved on disk");
    result
}

/// A snapshot's file, synced every [`AutoSync::EVERY`] bytes written
/// (`rdb-save-incremental-fsync`, `aof-rewrite-incremental-fsync`, as
/// Redis's rio autosync): its dirty pages never pile up into one
/// writeback of the whole file, which on this project's VM stalls the
/// clients for tens of milliseconds (a `dd` of 600 MB beside a GET/SET
/// load took its p99.9 from 4 to 37 ms; see bench/RESULTS.md).
pub(crate) struct AutoSync {
    file: File,
    since: u64,
    on: bool,
}

impl AutoSync {
    /// Redis's `REDIS_AUTOSYNC_BYTES`.
    pub(crate) const EVERY: u64 = 4 << 20;

    pub(crate) fn new(file: File, on: bool) -> Self {
        AutoSync { file, since: 0, on }
    }

    pub(crate) fn into_file(self) -> File {
        self.file
    }
}

impl std::io::Write for AutoSync {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(b)?;
        self.since += n as u64;
        if self.on && self.since >= Self::EVERY {
            self.file.sync_data()?;
            self.since = 0;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl std::io::Seek for AutoSync {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

/// Syncs a written temporary file and renames it over `path`.
fn finish_file((file, n): (File, u64), tmp: &Path, path: &Path) -> Result<u64, String> {
    file.sync_all().map_err(|e| format!("Write error saving DB on disk: {e}"))?;
    drop(file);
    std::fs::rename(tmp, path).map_err(|e| {
        let dir = path.parent().map(|d| d.display().to_string()).unwrap_or_default();
        format!("Error moving temp DB file {} on the final destination {} (in server root dir {dir}): {e}", tmp.display(), path.display())
    })?;
    Ok(n)
}

/// A save's bookkeeping, SAVE's and BGSAVE's alike: INFO persistence's
/// fields and the log line, or on failure the temporary file removed.
fn saved(srv: &Server, result: &Result<u64, String>, tmp: &Path, began_ms: u64, changes: u64, done: &str) {
    let p = &srv.persist;
    match result {
        Ok(_) => {
            p.last_save.store(began_ms / 1000, Ordering::Relaxed);
            p.saves.fetch_add(1, Ordering::Relaxed);
            p.changes_at_save.store(changes, Ordering::Relaxed);
            p.last_failed.store(false, Ordering::Relaxed);
            p.consecutive_failures.store(0, Ordering::Relaxed);
            tern_config::log_notice!("{done}");
        }
        Err(e) => {
            let _ = std::fs::remove_file(tmp);
            p.last_failed.store(true, Ordering::Relaxed);
            p.consecutive_failures.fetch_add(1, Ordering::Relaxed);
            tern_config::log_warning!("{e}");
        }
    }
}

fn write_all(srv: &Server, locks: &mut LockSet<'_>, tmp: &Path, opts: RdbOptions, now: u64) -> Result<(File, u64), String> {
    let fail = |e: std::io::Error| format!("Failed opening the temp RDB file {} (in server root dir): {e}", tmp.display());
    let file = File::create(tmp).map_err(fail)?;
    let werr = |e: std::io::Error| format!("Write error saving DB on disk: {e}");
    let sync = srv.config.read().rdb_save_incremental_fsync;
    let mut w = RdbWriter::new(BufWriter::new(AutoSync::new(file, sync)), opts).map_err(werr)?;
    for code in srv.scripts.library_codes() {
        w.function(&code).map_err(werr)?;
    }
    let mut written = 0;
    for db in 0..srv.ks.db_count() {
        let gids = srv.ks.db_gids(db);
        let (mut keys, mut expires) = (0u64, 0u64);
        for g in gids.clone() {
            let s = locks.shard(g);
            keys += s.len() as u64;
            expires += s.volatile_count() as u64;
        }
        if keys == 0 {
            continue;
        }
        w.select_db(db as u32, keys, expires).map_err(werr)?;
        for g in gids {
            let s = locks.shard(g);
            for e in s.iter(now) {
                if matches!(e.value(), tern_store::ValueRef::Hash(h) if h.all_expired(now)) {
                    continue;
                }
                w.entry(e.key(), e.value(), e.expire()).map_err(werr)?;
                written += 1;
            }
        }
    }
    let out = w.finish().map_err(werr)?;
    let file = out.into_inner().map_err(|e| werr(e.into_error()))?;
    Ok((file.into_file(), written))
}

/// Loads `dir/dbfilename` into the (empty) keyspace, if it exists: keys
/// already expired are dropped, as Redis does on a primary.
pub fn load_at_start(srv: &Server) -> Result<Option<LoadInfo>, String> {
    let path = rdb_path(&srv.config.read());
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("Fatal error loading the DB, check server logs. Exiting. ({}: {e})", path.display())),
    };
    srv.persist.loading.store(true, Ordering::Relaxed);
    let now = now_ms();
    let size = file.metadata().ok().map(|m| m.len());
    let r = load_rdb(srv, file, size, now);
    srv.persist.loading.store(false, Ordering::Relaxed);
    let (info, loaded, expired) = r.map_err(|e| format!("Short read or OOM loading DB. Unrecoverable error, aborting now. ({}: {e})", path.display()))?;
    load_done(srv, loaded, expired, now);
    Ok(Some(info))
}

/// An RDB stream's keys into the keyspace (dump.rdb, an AOF's base) on
/// `load-threads` threads: keys already expired at `now` are dropped, as
/// Redis does on a primary. `size`, the stream's length if known, bounds
/// what its RESIZEDB hints reserve. Reads `r` past the end of the RDB
/// data ([`LoadInfo::bytes`] says where it ended). Returns the keys
/// loaded and those dropped.
pub(crate) fn load_rdb(srv: &Server, r: impl std::io::Read, size: Option<u64>, now: u64) -> Result<(LoadInfo, u64, u64), RdbError> {
    load_rdb_keeping(srv, r, size, now, false, false)
}

/// [`load_rdb`]; `keep_expired`: keys past their deadline are stored too
/// (a replica's, for its master's DEL to remove, as Redis keeps them);
/// `allow_dup`: a key already present is replaced, not an error.
pub(crate) fn load_rdb_keeping(
    srv: &Server,
    r: impl std::io::Read,
    size: Option<u64>,
    now: u64,
    keep_expired: bool,
    allow_dup: bool,
) -> Result<(LoadInfo, u64, u64), RdbError> {
    let lim = limits(srv);
    let dbs = srv.ks.db_count();
    let threads = srv.config.read().load_threads;
    let fill = rdb::Fill { lim, threads, now, size, allow_dup };
    let info = rdb::load_into(r, &srv.ks, fill, |db, key, value, expire| {
        let db = db as usize;
        if db >= dbs {
            return Err(RdbError::Rejected(format!(
                "FATAL: Data file was created with a Redis server configured to handle more than {dbs} databases. Exiting"
            )));
        }
        if key.len() > tern_store::MAX_KEY_LEN {
            return Err(RdbError::Corrupt("key too long"));
        }
        let hash_expired = matches!(value, tern_store::ValueRef::Hash(h) if h.all_expired(now));
        Ok(keep_expired || !(expire.is_some_and(|t| t <= now) || hash_expired))
    })?;
    let (loaded, expired) = (info.stored, info.keys - info.stored);
    Ok((info, loaded, expired))
}

/// INFO persistence's record of a load at start.
pub(crate) fn load_done(srv: &Server, loaded: u64, expired: u64, now: u64) {
    srv.persist.loaded_keys.store(loaded, Ordering::Relaxed);
    srv.persist.load_expired.store(expired, Ordering::Relaxed);
    // The loaded shards' counts are published now (the load wrote under
    // bare locks), so that the schedule's count starts from the file's.
    for g in 0..srv.ks.total_shards() as u32 {
        srv.ks.publish_hint(g, &srv.ks.lock(g));
    }
    srv.persist.last_save.store(now / 1000, Ordering::Relaxed);
    srv.persist.changes_at_save.store(total_changes(srv), Ordering::Relaxed);
}

/// The saver thread's loop: one background save per request, until the
/// server shuts down (a save running then is given up, as Redis kills its
/// child: the final save, if any, is a synchronous one).
pub fn saver(srv: &Server) {
    let p = &srv.persist;
    loop {
        {
            let mut wanted = p.bg_wanted.lock();
            while !*wanted {
                if srv.is_shutting_down() {
                    return;
                }
                p.bg_wake.wait_for(&mut wanted, Duration::from_millis(100));
            }
            *wanted = false;
            p.bg_running.store(true, Ordering::Release);
        }
        // A BGSAVE SCHEDULE'd behind an AOF rewrite: one snapshot at a time.
        while srv.aof.rewrite_running.load(Ordering::Acquire) && !srv.is_shutting_down() {
            std::thread::sleep(Duration::from_millis(10));
        }
        snapshot_priority(srv);
        bgsave(srv);
        p.bg_running.store(false, Ordering::Release);
    }
}

/// Gives the calling snapshot thread (the saver, the AOF rewriter) its
/// priority before a snapshot, a thread's own so the workers keep
/// theirs: SCHED_IDLE with `snapshot-sched-idle` (watched for starvation
/// by [`starvation_check`]), else the normal policy at the nice value
/// `snapshot-nice` asks for. Leaving SCHED_IDLE or raising the priority
/// back may be refused to a process without CAP_SYS_NICE (or
/// RLIMIT_NICE); the snapshot then runs at the lower one, which only
/// makes it slower.
pub(crate) fn snapshot_priority(srv: &Server) {
    use thread_priority::unix::{set_thread_priority_and_policy, thread_native_id, thread_schedule_policy};
    use thread_priority::ThreadPriority;
    let idle = srv.settings.snapshot_sched_idle();
    if idle {
        // The wrapper also sets nice 0, which SCHED_IDLE ignores and which
        // may be refused after the policy itself was taken: the policy
        // read back is what tells.
        let _ = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, SCHED_IDLE);
        if thread_schedule_policy().ok() != Some(SCHED_IDLE) {
            tern_config::log_verbose!("Could not give the snapshot thread the SCHED_IDLE policy");
        }
    } else {
        normal_priority(srv);
    }
    WATCH.with(|w| w.set(idle.then(|| Watch { start: Instant::now(), waited0: runqueue_wait_ns(), next: Instant::now() + STARVE_AFTER })));
}

const SCHED_IDLE: thread_priority::unix::ThreadSchedulePolicy =
    thread_priority::unix::ThreadSchedulePolicy::Normal(thread_priority::unix::NormalThreadSchedulePolicy::Idle);

/// The normal policy at nice 19 (allowed to any thread), then the nice
/// value `snapshot-nice` asks for.
fn normal_priority(srv: &Server) {
    use thread_priority::unix::{
        set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy, ThreadSchedulePolicy,
    };
    let other = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other);
    if let Err(e) = set_thread_priority_and_policy(thread_native_id(), thread_priority::ThreadPriority::Min, other) {
        tern_config::log_verbose!("Could not give the snapshot thread the normal scheduling policy: {:?}", e);
    }
    let nice = srv.settings.snapshot_nice().clamp(0, 19) as i32;
    if let Err(e) = rustix::process::setpriority_process(Some(rustix::thread::gettid()), nice) {
        tern_config::log_verbose!("Could not set the snapshot thread's nice value to {}: {}", nice, e);
    }
}

/// A snapshot under SCHED_IDLE on this thread: since when, and the
/// run-queue wait it had then.
#[derive(Clone, Copy)]
struct Watch {
    start: Instant,
    waited0: u64,
    next: Instant,
}

thread_local! {
    static WATCH: std::cell::Cell<Option<Watch>> = const { std::cell::Cell::new(None) };
}

/// How long a snapshot runs under SCHED_IDLE before its share is judged,
/// and how often after that.
const STARVE_AFTER: Duration = Duration::from_secs(1);
const STARVE_EVERY: Duration = Duration::from_millis(250);

/// Nanoseconds this thread has spent runnable but waiting for a CPU
/// (/proc/thread-self/schedstat's second field; 0 where it is missing).
fn runqueue_wait_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|f| f.parse().ok()))
        .unwrap_or(0)
}

/// Called by a snapshot's loop between slices: a snapshot thread under
/// SCHED_IDLE that has spent more than three quarters of the time since
/// its snapshot began waiting for a CPU (every CPU busy with workers and
/// clients: an idle-policy thread may then get a fraction of a percent)
/// goes over to the normal policy at `snapshot-nice` for the rest of the
/// snapshot, so that a save on a saturated machine still ends. Costs a
/// clock read per call, and a small file read every 250 ms.
pub(crate) fn starvation_check(srv: &Server) {
    WATCH.with(|cell| {
        let Some(mut w) = cell.get() else { return };
        let now = Instant::now();
        if now < w.next {
            return;
        }
        w.next = now + STARVE_EVERY;
        cell.set(Some(w));
        let elapsed = now.duration_since(w.start).as_nanos() as u64;
        let waited = runqueue_wait_ns().saturating_sub(w.waited0);
        if waited.saturating_mul(4) > elapsed.saturating_mul(3) {
            cell.set(None);
            normal_priority(srv);
            tern_config::log_notice!(
                "The snapshot thread waited for a CPU {:.1} s of its {:.1} s under SCHED_IDLE: it goes on at nice {}.",
                waited as f64 / 1e9,
                elapsed as f64 / 1e9,
                srv.settings.snapshot_nice().clamp(0, 19)
            );
        }
    });
}

/// One background save: a point-in-time snapshot written to a temporary
/// file while the workers go on, then renamed over `dir/dbfilename`.
fn bgsave(srv: &Server) {
    let p = &srv.persist;
    let began = now_ms();
    let clock = Instant::now();
    p.bg_started_ms.store(began, Ordering::Relaxed);
    p.bg_last_try_ms.store(began, Ordering::Relaxed);
    tern_config::log_notice!("Background saving started");
    let (tmp, path, opts) = target(srv, format!("temp-bg-{}.rdb", std::process::id()));
    // The change count at the start is what the file holds (writes made
    // while it runs are after its instant).
    let changes = total_changes(srv);
    p.bg_cancel.store(false, Ordering::Relaxed);
    let result = write_snapshot(srv, &tmp, opts, began).and_then(|file| {
        let _rename = p.rename.lock();
        if p.bg_cancel.load(Ordering::Relaxed) {
            return Err(String::new());
        }
        finish_file(file, &tmp, &path)
    });
    if result.is_err() && (p.bg_cancel.load(Ordering::Relaxed) || srv.is_shutting_down()) {
        // Given up on purpose (FLUSHALL, shutdown): not a failure, as a
        // child Redis kills itself does not set the bgsave status.
        let _ = std::fs::remove_file(&tmp);
        tern_config::log_notice!("Background saving given up (FLUSHALL or shutdown)");
    } else {
        saved(srv, &result, &tmp, began, changes, "Background saving terminated with success");
    }
    p.bg_last_secs.store(clock.elapsed().as_secs() as i64, Ordering::Relaxed);
}

fn write_snapshot(srv: &Server, tmp: &Path, mut opts: RdbOptions, began: u64) -> Result<(File, u64), String> {
    let file = File::create(tmp).map_err(|e| format!("Failed opening the temp RDB file {} (in server root dir): {e}", tmp.display()))?;
    let snap;
    (snap, opts.repl) = at_stream_position(srv, || srv.ks.begin_snapshot(began));
    let snap = snap.map_err(|e| e.to_string())?;
    let file = AutoSync::new(file, srv.config.read().rdb_save_incremental_fsync);
    write_snapshot_to(srv, snap, file, opts, began, &|| srv.persist.bg_cancel.load(Ordering::Relaxed), &srv.persist.bg_last_cow_bytes)
}

/// Writes a begun snapshot to `file` as an RDB (a BGSAVE's file, an AOF
/// rewrite's base), giving up when `cancel` says so or at shutdown;
/// `last_cow` gets the most it held copied.
pub(crate) fn write_snapshot_to(
    srv: &Server,
    snap: tern_store::Snapshot,
    file: AutoSync,
    opts: RdbOptions,
    began: u64,
    cancel: &dyn Fn() -> bool,
    last_cow: &std::sync::atomic::AtomicU64,
) -> Result<(File, u64), String> {
    let werr = |e: std::io::Error| format!("Write error saving DB on disk: {e}");
    let w = match RdbWriter::new(BufWriter::with_capacity(1 << 18, file), opts) {
        Ok(w) => w,
        Err(e) => {
            snap.cancel(&srv.ks);
            return Err(werr(e));
        }
    };
    let (w, written) = write_rdb(srv, snap, w, Parts::ALL, began, cancel, last_cow)?;
    let out = w.finish().map_err(werr)?;
    let file = out.into_inner().map_err(|e| werr(e.into_error()))?;
    Ok((file.into_file(), written))
}

/// What of a snapshot an RDB holds (a replica's `rdb-filter-only` may
/// leave parts out).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts {
    pub(crate) functions: bool,
    pub(crate) data: bool,
}

impl Parts {
    pub(crate) const ALL: Parts = Parts { functions: true, data: true };
}

/// Writes a begun snapshot's function libraries and keys through `w`
/// (a file's, a replica socket's); returns it, and the keys written.
pub(crate) fn write_rdb<W: std::io::Write>(
    srv: &Server,
    mut snap: tern_store::Snapshot,
    mut w: RdbWriter<W>,
    parts: Parts,
    began: u64,
    cancel: &dyn Fn() -> bool,
    last_cow: &std::sync::atomic::AtomicU64,
) -> Result<(RdbWriter<W>, u64), String> {
    let p = &srv.persist;
    let werr = |e: std::io::Error| format!("Write error saving DB on disk: {e}");
    // Entries are serialised after their shard's lock is released (each
    // slice is copied out under it): the writer's buffer only batches
    // write(2)s.
    let codes = if parts.functions { srv.scripts.library_codes() } else { Vec::new() };
    for code in codes {
        if let Err(e) = w.function(&code) {
            snap.cancel(&srv.ks);
            return Err(werr(e));
        }
    }
    if !parts.data {
        snap.cancel(&srv.ks);
        return Ok((w, 0));
    }
    let sizes = snap.db_sizes().to_vec();
    let (mut db_now, mut written, mut failed) = (None, 0u64, None);
    loop {
        if srv.is_shutting_down() || cancel() {
            snap.cancel(&srv.ks);
            return Err(String::new());
        }
        let step = snap.next(&srv.ks, |db, key: &[u8], value: ValueRef<'_>, expire| {
            if failed.is_some() || matches!(value, ValueRef::Hash(h) if h.all_expired(began)) {
                return;
            }
            let r = (|| {
                if db_now != Some(db) {
                    db_now = Some(db);
                    let (keys, expires) = sizes[db as usize];
                    w.select_db(db, keys as u64, expires as u64)?;
                }
                w.entry(key, value, expire)
            })();
            match r {
                Ok(()) => written += 1,
                Err(e) => failed = Some(e),
            }
        });
        p.bg_cow_bytes.store(snap.held_bytes() as u64, Ordering::Relaxed);
        if let Some(e) = failed.take() {
            snap.cancel(&srv.ks);
            return Err(werr(e));
        }
        if step.done {
            break;
        }
        // A worker on this CPU gets it back within one slice's work
        // (~0.1 ms), not after a scheduler period; with a CPU free this
        // returns at once.
        std::thread::yield_now();
        starvation_check(srv);
    }
    let stats = snap.stats();
    p.bg_cow_bytes.store(0, Ordering::Relaxed);
    last_cow.store(stats.peak_held as u64, Ordering::Relaxed);
    Ok((w, written))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tern_config::Config;
    use tern_store::{LockSet, NewValue};

    use super::*;

    /// A write as a command makes it: under a lock set, published at release.
    fn write(srv: &Server, key: &[u8]) {
        let loc = srv.ks.locate(0, key);
        let mut set = LockSet::new(&srv.ks);
        set.acquire([loc.gid]);
        set.shard(loc.gid).set(key, loc.hash, NewValue::Bytes(b"v"), None, 0);
        set.release();
    }

    /// Two synchronous saves (FLUSHALLs on two workers) share one
    /// temporary file's name: the second may create it only once the
    /// first has renamed it away.
    #[test]
    fn saves_on_two_threads_never_take_each_others_file() {
        let dir = std::env::temp_dir().join(format!("tern-save-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = Config { threads: 2, save: vec![(3600, 1)], dir: Some(dir.display().to_string()), ..Config::default() };
        let srv = Arc::new(Server::new(cfg, 0));
        for i in 0..2000 {
            write(&srv, format!("key{i}").as_bytes());
        }
        let saves: Vec<_> = (0..2)
            .map(|_| {
                let srv = srv.clone();
                std::thread::spawn(move || {
                    (0..200).map(|_| save(&srv, &mut LockSet::new(&srv.ks))).find(|r| r.is_err()).unwrap_or(Ok(0))
                })
            })
            .collect();
        let results: Vec<_> = saves.into_iter().map(|t| t.join().unwrap()).collect();
        let _ = std::fs::remove_dir_all(&dir);
        for r in results {
            assert!(r.is_ok(), "{r:?}");
        }
        assert!(!srv.persist.last_failed.load(Ordering::Relaxed));
    }
}
