//! The append-only file: Redis 7's multi-part AOF, written from effect
//! records (formats in `tern_store::aof`).
//!
//! ```text
//!  workers, cron ── Effects (marked) ──hand──► Feed ──► tern-aof thread ──write──► <appenddirname>/<prefix>.<n>.incr.aof
//!        ▲  appendfsync always: replies wait            │  merges by number below the marks' watermark
//!        └──────────────── durable ticket ◄─────────────┘  fsync: always (one per round), everysec, no
//!
//!                                                       └──► the replication stream (`tern_commands::repl`), AOF on or off
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

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use tern_config::{log_notice, Config};
use tern_store::aof::{self as fmt, AofFile, Kind, Manifest};
use tern_store::Effects;

use tern_commands::aofstate::{Aof, Fsync};
use tern_commands::aofstate::Files;
use tern_commands::server::Server;

pub mod load;
mod rewrite;
mod writer;

pub use rewrite::{cron, request_rewrite, rewriter};
pub use writer::{finish, writer};

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
            rewrite::rewrite(srv, true)?;
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
        if rewrite::bgrewrite(srv).is_err() {
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
        wake_waiters(srv);
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

// ---------------------------------------------------------------- waits

/// WAITs and WAITAOFs that the replicas' acknowledgements and the local
/// AOF's fsync now satisfy (or end: the AOF turned off) are woken: their
/// workers run them again. After the writer's fsync moved, and when a
/// replica's ACK comes in.
pub fn wake_waiters(srv: &Server) {
    wake(srv, srv.repl.acks_changed(srv.aof.fsynced()));
}

/// Posts a wake to each WAIT or WAITAOF that is satisfied.
fn wake(srv: &Server, due: Vec<(usize, u64)>) {
    for (worker, client) in due {
        srv.post(worker, tern_commands::server::Wake::Ready(client));
    }
}

/// The stream's writer finished round `r`: records below `w` are in the
/// stream and the AOF. WAITs and WAITAOFs learn where their writes end;
/// the replicas are asked to acknowledge (REPLCONF GETACK *, as Redis
/// asks before it sleeps with a client in WAIT); those already satisfied
/// are woken.
fn fed_to(srv: &Server, w: u64, r: u64) {
    let (asked, due) = srv.repl.fed_to(w, r, srv.aof.fsynced());
    if asked {
        srv.repl.append_raw(b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n", srv.settings.client_output_buffer_limit().replica);
    }
    wake(srv, due);
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
