//! The `tern-aof` thread: each round's records merged by number, written
//! to the current incremental file as commands and synced as
//! `appendfsync` says, and encoded once more as the replication stream
//! (see the `aof` module docs).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tern_config::{log_notice, log_warning};
use tern_store::aof::{self as fmt, fill, AofFile, Kind, Merger};
use tern_store::Log;

use tern_commands::aofstate::{Aof, Fsync};
use tern_commands::server::Server;

use super::persist_manifest;

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
        let w = merger.collect(&aof.feed);
        last_round = Instant::now();
        // Stopping, the workers and the cron are gone: nothing lower can
        // come any more.
        let w = if stopping { u64::MAX } else { w };
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
            write_records(srv, &mut cur, &mut buf, recs, policy);
            srv.repl.feed(recs, repl_limit);
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
            write_records(srv, &mut cur, &mut buf, recs, policy);
            srv.repl.feed(recs, repl_limit);
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
        write_records(srv, &mut cur, &mut buf, recs, policy);
        srv.repl.feed(recs, repl_limit);
        super::fed_to(srv, w, round);
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
            super::wake_waiters(srv);
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
fn write_records(srv: &Server, cur: &mut Option<Incr>, buf: &mut Vec<u8>, recs: &Log, policy: Fsync) {
    let aof = &srv.aof;
    let Some(c) = cur.as_mut() else {
        return;
    };
    fmt::encode_log(buf, recs, &mut c.db, 0);
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
