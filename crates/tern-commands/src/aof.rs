//! The append-only file: Redis 7's multi-part AOF, written from effect
//! records (formats in `tern_store::aof`).
//!
//! ```text
//!  workers, cron ── Effects (marked) ──hand──► Feed ──► tern-aof thread ──write──► <appenddirname>/<prefix>.<n>.incr.aof
//!        ▲  appendfsync always: replies wait            │  merges by number below the marks' watermark
//!        └──────────────── durable ticket ◄─────────────┘  fsync: always (one per round), everysec, no
//!
//!                                                       └──► the replication stream (`repl`), AOF on or off
//!  BGREWRITEAOF ── snapshot at instant S (tern-store's engine, no fork) ── base <prefix>.<n+1>.base.rdb
//!               └─ the writer moves to <prefix>.<m+1>.incr.aof for records numbered from S on
//! ```
//!
//! - **Writing.** Each worker (and the cron) hands its records over once
//!   per event-loop round; the `tern-aof` thread merges them by number up
//!   to the watermark (see `tern_store::aof::feed` for why each key's
//!   records then keep their order), writes them as commands with one
//!   `write(2)` per round, and syncs as `appendfsync` says: `always` once
//!   per round, and a worker sends the replies of a round only once its
//!   records are durable, so one fsync serves every write of every worker
//!   gathered meanwhile (group commit); `everysec` once a second and `no`
//!   never, neither making a worker wait for the disk (so a reply may
//!   leave a few milliseconds before its record is written: a `kill -9`
//!   can lose those, where Redis writes before it replies).
//! - **WAITAOF** counts the writer's rounds (`Repl::begin_round`): a round
//!   whose records are all fsynced is `Aof::synced_round` (after its own
//!   fsync; with nothing left to sync, unless `appendfsync no`; the rounds
//!   before a rewrite's switch, whose file is closed synced). It counts
//!   only once the files hold everything (not while the rewrite that
//!   `appendonly yes` or a replica's full sync starts runs), as Redis's
//!   `fsynced_reploff`.
//! - **Rewriting** (BGREWRITEAOF, `auto-aof-rewrite-*`, `CONFIG SET
//!   appendonly yes`): a point-in-time snapshot is begun; the records
//!   numbered before its instant are in it, so the writer finishes the
//!   current incremental file with them and opens a new one (listed in
//!   the manifest at once) for the rest. The snapshot is written as the
//!   new base; then the manifest names the new base and the new
//!   increments, and the old files become history, deleted unless
//!   `aof-disable-auto-gc`. A rewrite that fails leaves a manifest that
//!   still loads (old base, old and new increments).
//! - **Loading** at start: the manifest's base (an RDB, or commands), then
//!   its increments, replayed through `Record::apply`; commands that are
//!   not record forms (a Redis-written INCR) run through the command
//!   table. A torn last command is cut off with `aof-load-truncated yes`;
//!   anything else stops start-up naming the file and offset. A Redis 6
//!   single file (`appendfilename` in `dir`, no directory) loads too, and
//!   is moved into a new directory as its base, as Redis upgrades it.
//!
//! With `aof-use-rdb-preamble no` the base is commands: each key's whole
//! value in its effect record's form.
//!
//! Non-goals: `aof-timestamp-enabled` (Redis's `#TS:` lines are skipped
//! when loading), `no-appendfsync-on-rewrite`. A reply under `appendfsync
//! always` waits for every record handed over before it, so a read does
//! not show a write a crash could take back; a write still being made on
//! another worker at that instant may be seen first, as a Redis replica
//! can see what its primary has not synced.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tern_config::{log_notice, log_warning, Config};
use tern_store::aof::{self as fmt, fill, AofFile, Kind, Manifest, Merger};
use tern_store::{Effects, Record};

pub use crate::aofstate::{Aof, Fsync, InfoFields};
use crate::aofstate::Files;
use crate::persist;
use crate::server::{now_ms, Server};

/// `dir/appenddirname`, and `appendfilename` (the files' prefix).
pub(crate) fn place(cfg: &Config) -> (PathBuf, String) {
    let dir = PathBuf::from(cfg.dir.clone().unwrap_or_else(|| ".".into()));
    (dir.join(&cfg.appenddirname), cfg.appendfilename.clone())
}

/// Makes durable what a directory lists (a file created or renamed in it).
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Writes the manifest as Redis does: a temporary file, synced, renamed
/// over the old one.
pub(crate) fn persist_manifest(files: &Files) -> Result<(), String> {
    let name = fmt::manifest::manifest_name(&files.prefix);
    let tmp = files.dir.join(format!("temp-{name}"));
    let r = (|| -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(files.manifest.to_text().as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, files.dir.join(&name))?;
        sync_dir(&files.dir)
    })();
    r.map_err(|e| format!("Can't persist the AOF manifest file {name}: {e}"))
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Recomputes `aof_current_size` and `aof_base_size` from the files.
pub(crate) fn measure(aof: &Aof, files: &Files) {
    let base = files.manifest.base.as_ref().map_or(0, |f| file_size(&files.dir.join(&f.name)));
    let incr: u64 = files.manifest.incrs.iter().map(|f| file_size(&files.dir.join(&f.name))).sum();
    let incr = incr.saturating_sub(aof.prealloc_ahead.load(Ordering::Relaxed));
    aof.base_size.store(base, Ordering::Relaxed);
    aof.current_size.store(base + incr, Ordering::Relaxed);
}

// ---------------------------------------------------------------- start

/// After loading, before the workers run: with `appendonly yes`, the
/// files are made ready (a new base of what was loaded when there was no
/// AOF, else the last increment opened for appending) and records start
/// to be written. From now on CONFIG SET appendonly acts.
pub fn start(srv: &Server) -> Result<(), String> {
    let aof = &srv.aof;
    let cfg = srv.config.read().clone();
    aof.policy.store(Fsync::of(cfg.appendfsync) as u8, Ordering::Relaxed);
    if cfg.appendonly {
        let (dir, prefix) = place(&cfg);
        let has = srv.aof.files.lock().manifest.load_order().count() > 0;
        if has {
            let mut files = aof.files.lock();
            let incr = match files.manifest.incrs.last() {
                Some(f) => {
                    log_notice!("Opening AOF incr file {} on server start", f.name);
                    f.seq
                }
                None => {
                    let seq = files.manifest.last_incr_seq().max(files.manifest.base_seq()) + 1;
                    let name = fmt::manifest::incr_name(&files.prefix, seq);
                    File::create(files.dir.join(&name)).map_err(|e| format!("Can't create the AOF incr file {name}: {e}"))?;
                    files.manifest.incrs.push(AofFile { name: name.clone(), seq, kind: Kind::Incr });
                    persist_manifest(&files)?;
                    log_notice!("Creating AOF incr file {} on server start", name);
                    seq
                }
            };
            aof.ctl.lock().open = Some(incr);
            srv.ks.attach_effects(true);
            aof.on.store(true, Ordering::Relaxed);
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| format!("Can't open or create append-only dir {}: {e}", dir.display()))?;
            *aof.files.lock() = Files { dir, prefix, manifest: Manifest::default() };
            srv.ks.attach_effects(true);
            aof.on.store(true, Ordering::Relaxed);
            // Nothing runs yet: the rewrite is the server-start one.
            aof.rewrite_running.store(true, Ordering::Relaxed);
            rewrite(srv, true)?;
        }
    }
    // The files hold everything loaded (or the start's rewrite made them).
    aof.synced_valid.store(cfg.appendonly, Ordering::Release);
    aof.started.store(true, Ordering::Relaxed);
    Ok(())
}

/// CONFIG SET's side: `appendonly` turned on (a rewrite makes the files)
/// or off (the writer closes its file), `appendfsync` changed.
pub fn follow_config(srv: &Server, c: &Config) {
    let aof = &srv.aof;
    aof.policy.store(Fsync::of(c.appendfsync) as u8, Ordering::Relaxed);
    if !aof.started.load(Ordering::Relaxed) {
        return;
    }
    if c.appendonly && !aof.is_on() {
        {
            let (dir, prefix) = place(c);
            let mut files = aof.files.lock();
            if files.dir != dir || files.prefix != prefix {
                *files = Files { dir, prefix, manifest: Manifest::default() };
            }
        }
        srv.ks.attach_effects(true);
        aof.invalidate_synced();
        aof.on.store(true, Ordering::Relaxed);
        // A rewrite running (given up by a turn off) is followed by the
        // one that makes the files, as Redis schedules it.
        if bgrewrite(srv).is_err() {
            aof.rewrite_scheduled.store(true, Ordering::Relaxed);
        }
    } else if !c.appendonly && aof.is_on() {
        // Replicas still read them.
        srv.ks.attach_effects(srv.repl.active());
        aof.on.store(false, Ordering::Relaxed);
        aof.rewrite_cancel.store(true, Ordering::Relaxed);
        aof.rewrite_scheduled.store(false, Ordering::Relaxed);
        aof.ctl.lock().close = true;
        aof.feed.nudge();
        // WAITAOFs for the local AOF end (with an error).
        crate::repl_master::fsync_moved(srv);
    }
}

// ---------------------------------------------------------------- writer

/// The incremental file being appended to.
struct Incr {
    file: File,
    /// The database of the last command written (None: a SELECT first).
    db: Option<u32>,
    /// Written since the last sync.
    dirty: bool,
    /// Where the next command goes: the end of the last one written.
    len: u64,
    /// The file's length on disk: beyond `len` it is filler written and
    /// synced ahead of the commands (`aof-prealloc-size`; annotation lines
    /// Redis skips, `tern_store::aof::fill`), so a sync then writes data
    /// only, not the file's size and block map.
    room: u64,
}

impl Incr {
    fn new(file: File, len: u64) -> Self {
        Incr { file, db: None, dirty: false, len, room: len }
    }

    /// Syncs and closes the file, cutting the filler written ahead off.
    fn close(self, aof: &Aof) {
        aof.prealloc_ahead.store(0, Ordering::Relaxed);
        if self.room > self.len {
            if let Err(e) = self.file.set_len(self.len) {
                log_warning!("Error truncating the AOF file's preallocated space: {}", e);
            }
        }
        if let Err(e) = self.file.sync_data() {
            log_warning!("Error syncing the AOF file: {}", e);
        }
    }

    /// Makes the file at least `need` bytes long in filler written and
    /// synced, `step` more at a time (to a filler line's end). On an
    /// error the writes simply go past the end, as without preallocation.
    fn prealloc(&mut self, need: u64, step: u64) {
        if need <= self.room {
            return;
        }
        let to = fill::round_up(need + step);
        let mut chunk = Vec::with_capacity(1 << 16);
        let mut at = self.room;
        let r = (|| {
            while at < to {
                let n = (to - at).min(1 << 16);
                chunk.clear();
                fill::extend(&mut chunk, at, at + n);
                self.file.write_all_at(&chunk, at)?;
                at += n;
            }
            self.file.sync_data()
        })();
        match r {
            Ok(()) => self.room = to,
            Err(e) => log_warning!("Error preallocating the AOF file: {}", e),
        }
    }
}

/// The `tern-aof` thread: see the module docs. Returns once `stop` is
/// set and everything handed over is written and synced.
pub fn writer(srv: &Server) {
    let aof = &srv.aof;
    let mut merger = Merger::default();
    let mut cur: Option<Incr> = None;
    let mut buf: Vec<u8> = Vec::new();
    let mut last_sync = Instant::now();
    let mut last_round = Instant::now();
    loop {
        let stopping = aof.stop.load(Ordering::Acquire);
        let policy = aof.policy();
        if !stopping && policy != Fsync::Always {
            // Records gather for a gap before the next write: under load
            // one write and one wake-up a gap, not one per round.
            let gap = Duration::from_micros(srv.settings.aof_write_gap_us().max(0) as u64);
            if let Some(rest) = gap.checked_sub(last_round.elapsed()) {
                std::thread::sleep(rest);
            }
        }
        let wait = if cur.as_ref().is_some_and(|c| c.dirty) && policy == Fsync::EverySec {
            Duration::from_secs(1).saturating_sub(last_sync.elapsed()).max(Duration::from_millis(1))
        } else {
            Duration::from_millis(100)
        };
        if !stopping {
            aof.feed.wait_work(wait);
        }
        // The requests are read before the records are collected, so that
        // a cut's watermark is read after the cut was asked for.
        let (cut, open, close) = {
            let mut ctl = aof.ctl.lock();
            (ctl.cut, ctl.open.take(), std::mem::take(&mut ctl.close))
        };
        let repl_cuts = srv.repl.cut_points();
        let round = srv.repl.begin_round();
        let (batches, w) = aof.feed.collect();
        last_round = Instant::now();
        // Stopping, the workers and the cron are gone: nothing lower can
        // come any more.
        let w = if stopping { u64::MAX } else { w };
        merger.push(batches);
        if let Some(seq) = open {
            let files = aof.files.lock();
            let name = fmt::manifest::incr_name(&files.prefix, seq);
            // Not O_APPEND: commands are written at their offset, over
            // the filler written ahead of them.
            match OpenOptions::new().write(true).open(files.dir.join(&name)) {
                Ok(file) => {
                    let len = file.metadata().map_or(0, |m| m.len());
                    cur = Some(Incr::new(file, len));
                    aof.ctl.lock().writing = seq;
                }
                Err(e) => log_warning!("Can't open the append-only file {}: {}", name, e),
            }
        }
        // Turned off: what was recorded before goes to the file, synced,
        // and the file is closed before anything else (a rewrite asked
        // for since then opens its own).
        let repl_limit = srv.settings.client_output_buffer_limit().replica;
        if close {
            let recs = merger.ready(w);
            write_records(srv, &mut cur, &mut buf, &recs, policy);
            srv.repl.feed(&recs, repl_limit);
            if let Some(c) = cur.take() {
                c.close(aof);
            }
            buf.clear();
            aof.ctl.lock().writing = 0;
            log_notice!("AOF turned off: the append-only file is closed.");
        }
        // The cuts reached (a rewrite's, replicas' full syncs'), in
        // order: the records numbered before each go first.
        let mut points = repl_cuts;
        points.extend(cut.map(|(s, _)| s));
        points.sort_unstable();
        points.dedup();
        for p in points.into_iter().filter(|&p| p < w) {
            let recs = merger.ready(p);
            write_records(srv, &mut cur, &mut buf, &recs, policy);
            srv.repl.feed(&recs, repl_limit);
            if let Some((_, incr)) = cut.filter(|&(s, _)| s == p) {
                switch(srv, &mut cur, incr);
                // The earlier rounds' records are in the file closed (and
                // synced), as Redis's fsync of the file it closes counts
                // whatever `appendfsync` says.
                if buf.is_empty() {
                    aof.synced_round.store(round - 1, Ordering::Release);
                }
            }
            srv.repl.cut_reached(p);
        }
        let recs = merger.ready(w);
        write_records(srv, &mut cur, &mut buf, &recs, policy);
        srv.repl.feed(&recs, repl_limit);
        crate::repl_master::fed_to(srv, w, round);
        let synced_before = aof.synced_round.load(Ordering::Relaxed);
        let mut synced_now = false;
        if let Some(c) = cur.as_mut().filter(|c| c.dirty) {
            let due = match policy {
                Fsync::Always => true,
                Fsync::EverySec => last_sync.elapsed() >= Duration::from_secs(1),
                Fsync::No => false,
            };
            if due || stopping {
                if let Err(e) = c.file.sync_data() {
                    log_warning!("Error syncing the AOF file: {}", e);
                    aof.last_write_failed.store(true, Ordering::Relaxed);
                    if policy == Fsync::Always {
                        log_warning!("Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. Exiting...", e);
                        std::process::exit(1);
                    }
                }
                c.dirty = false;
                last_sync = Instant::now();
                synced_now = true;
            }
        }
        // This round's records are fsynced: just now, or before (nothing
        // left to sync, which Redis counts unless `appendfsync no`).
        if buf.is_empty() && cur.as_ref().is_some_and(|c| !c.dirty) && (synced_now || policy != Fsync::No) {
            aof.synced_round.store(round, Ordering::Release);
        }
        if aof.synced_round.load(Ordering::Relaxed) != synced_before {
            crate::repl_master::fsync_moved(srv);
        }
        if buf.is_empty() {
            let d = merger.durable();
            aof.feed.publish_durable(d);
            srv.wake_durable(d);
        }
        // One last round once stopping: what failed to be written then
        // is lost, as with Redis's last write.
        if stopping {
            if let Some(c) = cur.take() {
                c.close(aof);
            }
            return;
        }
    }
}

/// Appends records to the current file (dropped when there is none: the
/// AOF is being turned on and the rewrite's snapshot holds them). `buf`
/// keeps what a failed write could not write, for the next round.
fn write_records(srv: &Server, cur: &mut Option<Incr>, buf: &mut Vec<u8>, recs: &[Record], policy: Fsync) {
    let aof = &srv.aof;
    let Some(c) = cur.as_mut() else {
        return;
    };
    for r in recs {
        fmt::encode(buf, r, &mut c.db);
    }
    if buf.is_empty() {
        return;
    }
    if policy == Fsync::Always {
        c.prealloc(c.len + buf.len() as u64, srv.settings.aof_prealloc_size() as u64);
    }
    // Over filler, the byte after the commands must not end a line (an
    // empty line, which Redis's loader refuses): it is written as '#'
    // with them, and the next write covers it.
    let end = c.len + buf.len() as u64;
    let guard = if end < c.room { fill::after(end) } else { None };
    if let Some(b) = guard {
        buf.push(b);
    }
    let r = c.file.write_all_at(buf, c.len);
    if guard.is_some() {
        buf.pop();
    }
    match r {
        Ok(()) => {
            c.len += buf.len() as u64;
            c.room = c.room.max(c.len);
            aof.prealloc_ahead.store(c.room - c.len, Ordering::Relaxed);
            aof.current_size.fetch_add(buf.len() as u64, Ordering::Relaxed);
            buf.clear();
            c.dirty = true;
            aof.last_write_failed.store(false, Ordering::Relaxed);
        }
        Err(e) => {
            log_warning!("Error writing to the AOF file: {}", e);
            aof.last_write_failed.store(true, Ordering::Relaxed);
            if policy == Fsync::Always {
                log_warning!("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
                std::process::exit(1);
            }
            // What was partly written goes (or is written over, in the
            // space written ahead); the whole is tried again.
            if c.room <= c.len {
                let _ = c.file.set_len(c.len);
            }
        }
    }
}

/// The rewrite's cut is reached: the current file is synced and closed,
/// a new incremental file numbered `incr` is created and listed in the
/// manifest, and records go there from now on.
fn switch(srv: &Server, cur: &mut Option<Incr>, incr: u64) {
    let aof = &srv.aof;
    if let Some(c) = cur.take() {
        c.close(aof);
    }
    let mut files = aof.files.lock();
    let name = fmt::manifest::incr_name(&files.prefix, incr);
    let made = File::create(files.dir.join(&name)).map_err(|e| format!("Can't create the AOF incr file {name}: {e}"));
    let made = made.and_then(|file| {
        files.manifest.incrs.push(AofFile { name: name.clone(), seq: incr, kind: Kind::Incr });
        persist_manifest(&files)?;
        Ok(file)
    });
    drop(files);
    let mut ctl = aof.ctl.lock();
    ctl.cut = None;
    match made {
        Ok(file) => {
            let when = if aof.started.load(Ordering::Relaxed) { "background rewrite" } else { "server start" };
            log_notice!("Creating AOF incr file {} on {}", name, when);
            *cur = Some(Incr::new(file, 0));
            ctl.writing = incr;
        }
        Err(e) => {
            log_warning!("{}", e);
            aof.last_write_failed.store(true, Ordering::Relaxed);
            ctl.writing = 0;
        }
    }
    aof.ctl_cv.notify_all();
}

/// Stops the writer once everything handed over is written: called after
/// the workers and the cron have stopped.
pub fn finish(srv: &Server) {
    srv.aof.stop.store(true, Ordering::Release);
    srv.aof.feed.nudge();
}

// ---------------------------------------------------------------- rewrite

/// How a BGREWRITEAOF request was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    Started,
    /// Once the running BGSAVE is over.
    Scheduled,
    InProgress,
}

/// Starts a background rewrite (BGREWRITEAOF, the automatic trigger,
/// appendonly turned on), or schedules it after a running BGSAVE.
pub fn request_rewrite(srv: &Server) -> Rewrite {
    let aof = &srv.aof;
    if aof.rewrite_running.swap(true, Ordering::AcqRel) {
        return Rewrite::InProgress;
    }
    if persist::bgsave_active(srv) {
        aof.rewrite_running.store(false, Ordering::Release);
        aof.rewrite_scheduled.store(true, Ordering::Relaxed);
        return Rewrite::Scheduled;
    }
    aof.rewrite_scheduled.store(false, Ordering::Relaxed);
    aof.rewrite_cancel.store(false, Ordering::Relaxed);
    let mut wanted = aof.rewrite_wanted.lock();
    *wanted = true;
    aof.rewrite_wake.notify_one();
    Rewrite::Started
}

fn bgrewrite(srv: &Server) -> Result<(), String> {
    match request_rewrite(srv) {
        Rewrite::InProgress => Err("Background append only file rewriting already in progress".into()),
        _ => Ok(()),
    }
}

/// The `tern-aof-rewrite` thread: one rewrite per request, until the
/// server shuts down (as the saver thread does for BGSAVE).
pub fn rewriter(srv: &Server) {
    let aof = &srv.aof;
    loop {
        {
            let mut wanted = aof.rewrite_wanted.lock();
            while !*wanted {
                if srv.is_shutting_down() {
                    return;
                }
                aof.rewrite_wake.wait_for(&mut wanted, Duration::from_millis(100));
            }
            *wanted = false;
        }
        persist::snapshot_priority(srv);
        let _ = rewrite(srv, false);
    }
}

/// One rewrite: see the module docs. `at_start`: the server-start one,
/// run in place before the workers.
fn rewrite(srv: &Server, at_start: bool) -> Result<(), String> {
    let aof = &srv.aof;
    let began = now_ms();
    let clock = Instant::now();
    aof.rewrite_started_ms.store(began, Ordering::Relaxed);
    if !at_start {
        log_notice!("Background append only file rewriting started");
    }
    let epoch = aof.synced_epoch.load(Ordering::Acquire);
    let r = rewrite_inner(srv, began, at_start);
    aof.rewrite_running.store(false, Ordering::Release);
    // The server-start base is not a rewrite to INFO, as in Redis.
    if at_start {
        return r;
    }
    aof.last_rewrite_secs.store(clock.elapsed().as_secs() as i64, Ordering::Relaxed);
    match &r {
        Ok(()) => {
            aof.last_rewrite_failed.store(false, Ordering::Relaxed);
            aof.rewrite_failures.store(0, Ordering::Relaxed);
            aof.rewrites.fetch_add(1, Ordering::Relaxed);
            log_notice!("Background AOF rewrite finished successfully");
            // The files hold everything again: what the writer fsynced
            // counts (Redis's AOF_WAIT_REWRITE turning AOF_ON).
            if aof.is_on() && aof.synced_epoch.load(Ordering::Acquire) == epoch && !aof.synced_valid.swap(true, Ordering::AcqRel) {
                crate::repl_master::fsync_moved(srv);
            }
        }
        Err(e) => {
            aof.last_rewrite_failed.store(true, Ordering::Relaxed);
            aof.rewrite_failures.fetch_add(1, Ordering::Relaxed);
            log_warning!("Background AOF rewrite failed: {}", e);
        }
    }
    r
}

fn rewrite_inner(srv: &Server, began: u64, at_start: bool) -> Result<(), String> {
    let aof = &srv.aof;
    // The configuration is read before the files' lock is taken (CONFIG
    // SET takes them the other way round).
    let (place_now, keep_history, preamble) = {
        let cfg = srv.config.read();
        (place(&cfg), cfg.aof_disable_auto_gc, cfg.aof_use_rdb_preamble)
    };
    let (dir, prefix, base_seq, incr_seq) = {
        let mut files = aof.files.lock();
        // BGREWRITEAOF with appendonly off makes the directory too.
        if files.prefix.is_empty() {
            *files = Files { dir: place_now.0, prefix: place_now.1, manifest: Manifest::default() };
        }
        let m = &files.manifest;
        (files.dir.clone(), files.prefix.clone(), m.base_seq() + 1, m.last_incr_seq() + 1)
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("Can't open or create append-only dir {}: {e}", dir.display()))?;
    let tmp = dir.join(format!("temp-rewriteaof-bg-{}.aof", std::process::id()));
    let file = File::create(&tmp).map_err(|e| format!("Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): {e}"))?;
    let snap = srv.ks.begin_snapshot(began).map_err(|e| e.to_string())?;
    // Records from the snapshot's instant on go to the new increment.
    aof.ctl.lock().cut = Some((snap.first_seq_after(), incr_seq));
    aof.feed.nudge();
    let cancel = || aof.rewrite_cancel.load(Ordering::Relaxed);
    let written = if preamble {
        let file = persist::AutoSync::new(file, srv.config.read().aof_rewrite_incremental_fsync);
        persist::write_snapshot_to(srv, snap, file, persist::rdb_options(srv), began, &cancel, &aof.last_cow).map(|(file, _)| file)
    } else {
        write_commands(srv, snap, file, began, &cancel)
    };
    let written = written.and_then(|file| file.sync_all().map_err(|e| format!("Write error writing the AOF base: {e}")));
    // The writer's move to the new increment (it makes the rewrite's
    // manifest consistent even when the base failed).
    let switched = {
        let mut ctl = aof.ctl.lock();
        let deadline = Instant::now() + Duration::from_secs(30);
        while ctl.cut.is_some() && Instant::now() < deadline && !srv.is_shutting_down() {
            aof.ctl_cv.wait_for(&mut ctl, Duration::from_millis(100));
        }
        ctl.cut.is_none() && ctl.writing == incr_seq
    };
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if cancel() {
        let _ = std::fs::remove_file(&tmp);
        return Err("the rewrite was given up (appendonly turned off)".into());
    }
    if !switched {
        let _ = std::fs::remove_file(&tmp);
        return Err("the new incremental file could not be opened".into());
    }
    let mut files = aof.files.lock();
    let base_name = fmt::manifest::base_name(&prefix, base_seq, preamble);
    std::fs::rename(&tmp, dir.join(&base_name)).map_err(|e| format!("Error trying to rename the temporary AOF base file {}: {e}", tmp.display()))?;
    if at_start {
        log_notice!("Creating AOF base file {} on server start", base_name);
    }
    let old = std::mem::take(&mut files.manifest);
    let mut history = old.history;
    history.extend(old.base.into_iter().map(|f| AofFile { kind: Kind::History, ..f }));
    let (keep, gone): (Vec<AofFile>, Vec<AofFile>) = old.incrs.into_iter().partition(|f| f.seq >= incr_seq);
    history.extend(gone.into_iter().map(|f| AofFile { kind: Kind::History, ..f }));
    files.manifest = Manifest { base: Some(AofFile { name: base_name, seq: base_seq, kind: Kind::Base }), incrs: keep, history };
    persist_manifest(&files)?;
    if !keep_history && !files.manifest.history.is_empty() {
        for f in std::mem::take(&mut files.manifest.history) {
            match std::fs::remove_file(files.dir.join(&f.name)) {
                Ok(()) => log_notice!("Removing the history file {} in the background", f.name),
                Err(e) => log_warning!("Can't remove the history file {}: {}", f.name, e),
            }
        }
        persist_manifest(&files)?;
    }
    measure(aof, &files);
    Ok(())
}

/// `aof-use-rdb-preamble no`: the snapshot as commands, each key's whole
/// value in the form of its effect record (a SELECT per database).
fn write_commands(srv: &Server, mut snap: tern_store::Snapshot, file: File, began: u64, cancel: &dyn Fn() -> bool) -> Result<File, String> {
    use tern_store::{Effect, Record, Ttl, ValueRef};
    let werr = |e: std::io::Error| format!("Write error writing the AOF base: {e}");
    let file = persist::AutoSync::new(file, srv.config.read().aof_rewrite_incremental_fsync);
    let mut out = std::io::BufWriter::with_capacity(1 << 18, file);
    let (mut buf, mut db_now, mut failed) = (Vec::new(), None, None);
    // The function libraries first, as an RDB base has them first.
    for code in srv.scripts.library_codes() {
        let argv = [&b"FUNCTION"[..], b"LOAD", b"REPLACE", &code].into_iter().map(Box::from).collect();
        fmt::encode(&mut buf, &Record { db: 0, seq: 0, effect: Effect::Command { argv } }, &mut db_now);
    }
    loop {
        if srv.is_shutting_down() || cancel() {
            snap.cancel(&srv.ks);
            return Err("the rewrite was given up".into());
        }
        let step = snap.next(&srv.ks, |db, key: &[u8], value: ValueRef<'_>, expire| {
            if failed.is_some() || matches!(value, ValueRef::Hash(h) if h.all_expired(began)) {
                return;
            }
            let effect = Effect::Put { key: key.into(), value: value.to_value(key.len()), ttl: Ttl::At(expire) };
            fmt::encode(&mut buf, &Record { db, seq: 0, effect }, &mut db_now);
            if buf.len() >= 1 << 16 {
                if let Err(e) = out.write_all(&buf) {
                    failed = Some(e);
                }
                buf.clear();
            }
        });
        if let Some(e) = failed.take() {
            snap.cancel(&srv.ks);
            return Err(werr(e));
        }
        if step.done {
            break;
        }
        persist::starvation_check(srv);
    }
    out.write_all(&buf).map_err(werr)?;
    out.into_inner().map(persist::AutoSync::into_file).map_err(|e| werr(e.into_error()))
}

/// The cron's part: a rewrite scheduled behind a BGSAVE starts once it
/// is over; `auto-aof-rewrite-percentage` of growth over the base (and
/// at least `auto-aof-rewrite-min-size`) starts one.
pub fn cron(srv: &Server) {
    let aof = &srv.aof;
    if !aof.is_on() || aof.rewrite_running.load(Ordering::Relaxed) || persist::bgsave_active(srv) {
        return;
    }
    if aof.rewrite_scheduled.load(Ordering::Relaxed) {
        request_rewrite(srv);
        return;
    }
    let (perc, min) = {
        let c = srv.config.read();
        (c.auto_aof_rewrite_percentage, c.auto_aof_rewrite_min_size)
    };
    let cur = aof.current_size.load(Ordering::Relaxed);
    if perc <= 0 || cur <= min {
        return;
    }
    let base = aof.base_size.load(Ordering::Relaxed).max(1);
    let growth = (cur.saturating_sub(base) * 100 / base) as i64;
    if growth >= perc {
        log_notice!("Starting automatic rewriting of AOF on {}% growth", growth);
        request_rewrite(srv);
    }
}

// ---------------------------------------------------------------- workers

/// A writer of records (a worker, the cron): its buffer, marked so the
/// AOF writer knows what it may still hand over.
pub fn marked_effects(srv: &Server) -> Effects {
    Effects::marked(srv.aof.feed.register())
}

/// Hands `fx`'s records to the AOF writer; with `appendfsync always`,
/// returns once they (and every earlier batch) are on disk.
///
/// Waiting, a worker with nothing of its own waits for what the others
/// handed over so far, as Redis sends no reply before its loop's fsync: a
/// read does not show a write that a crash could still take back.
pub fn hand(srv: &Server, fx: &Effects, wait: bool) {
    let aof = &srv.aof;
    if let Some(t) = hand_round(srv, fx, wait) {
        aof.feed.wait_durable(t, Duration::from_millis(50), || !aof.waits() || aof.stop.load(Ordering::Relaxed));
    }
}

/// Hands `fx`'s records to the AOF writer without waiting. With
/// `appendfsync always` and `replies` to send, returns the ticket that
/// must be durable before they go: the batch's own, or (nothing of its
/// own) the last one handed over by anyone, as in [`hand`].
pub fn hand_round(srv: &Server, fx: &Effects, replies: bool) -> Option<u64> {
    let aof = &srv.aof;
    let t = aof.feed.hand(fx);
    (replies && aof.waits()).then(|| t.unwrap_or_else(|| aof.feed.issued()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsync_policies() {
        assert_eq!(Fsync::of("always"), Fsync::Always);
        assert_eq!(Fsync::of("no"), Fsync::No);
        assert_eq!(Fsync::of("everysec"), Fsync::EverySec);
    }
}
