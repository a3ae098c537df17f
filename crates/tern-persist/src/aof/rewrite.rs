//! BGREWRITEAOF, the automatic trigger and `appendonly yes`: a new base
//! from a point-in-time snapshot, new increments from its instant on
//! (see the `aof` module docs).

use std::fs::File;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tern_config::{log_notice, log_warning};
use tern_store::aof::{self as fmt, AofFile, Kind, Manifest};

use tern_commands::aofstate::Rewrite;
use tern_commands::aofstate::Files;
use crate::rdb;
use tern_commands::server::{now_ms, Server};

use super::{measure, persist_manifest, place};

/// Starts a background rewrite, or schedules it after a running BGSAVE
/// (see [`Aof::request_rewrite`]).
pub fn request_rewrite(srv: &Server) -> Rewrite {
    srv.aof.request_rewrite(tern_commands::persist::bgsave_active(srv))
}

pub(super) fn bgrewrite(srv: &Server) -> Result<(), String> {
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
        rdb::snapshot_priority(srv);
        let _ = rewrite(srv, false);
    }
}

/// One rewrite: see the module docs. `at_start`: the server-start one,
/// run in place before the workers.
pub(super) fn rewrite(srv: &Server, at_start: bool) -> Result<(), String> {
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
                super::wake_waiters(srv);
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
        let file = rdb::AutoSync::new(file, srv.config.read().aof_rewrite_incremental_fsync);
        rdb::write_snapshot_to(srv, snap, file, rdb::rdb_options(srv), began, &cancel, &aof.last_cow).map(|(file, _)| file)
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
    let file = rdb::AutoSync::new(file, srv.config.read().aof_rewrite_incremental_fsync);
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
        rdb::starvation_check(srv);
    }
    out.write_all(&buf).map_err(werr)?;
    out.into_inner().map(rdb::AutoSync::into_file).map_err(|e| werr(e.into_error()))
}

/// The cron's part: a rewrite scheduled behind a BGSAVE starts once it
/// is over; `auto-aof-rewrite-percentage` of growth over the base (and
/// at least `auto-aof-rewrite-min-size`) starts one.
pub fn cron(srv: &Server) {
    let aof = &srv.aof;
    if !aof.is_on() || aof.rewrite_running.load(Ordering::Relaxed) || tern_commands::persist::bgsave_active(srv) {
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
