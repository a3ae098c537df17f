//! The saves' state as commands see it: where the RDB file is, the
//! changes since the last save, the `save` schedule, BGSAVE's request to
//! the saver thread and `stop-writes-on-bgsave-error`. The saving and
//! loading themselves (SAVE, the saver thread, the snapshot written as an
//! RDB, start-up's load) are the `tern-persist` crate's `rdb` module,
//! which the server reaches through [`crate::server::Durability`].

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use tern_config::Config;
use tern_store::rdb::Limits;
use tern_store::{HashLimits, ListLimits, SetLimits, ZsetLimits};

use crate::server::Server;

/// `dir/dbfilename`.
pub fn rdb_path(cfg: &Config) -> PathBuf {
    let dir = cfg.dir.clone().unwrap_or_else(|| ".".into());
    PathBuf::from(dir).join(&cfg.dbfilename)
}

/// The conversion thresholds loaded and restored values are built for.
pub fn limits(srv: &Server) -> Limits {
    let s = &srv.settings;
    Limits {
        hash: HashLimits { max_entries: s.hash_max_listpack_entries(), max_value: s.hash_max_listpack_value() },
        list: ListLimits { fill: s.list_max_listpack_size(), depth: usize::try_from(s.list_compress_depth()).unwrap_or(0) },
        set: SetLimits {
            max_intset: s.set_max_intset_entries(),
            max_entries: s.set_max_listpack_entries(),
            max_value: s.set_max_listpack_value(),
        },
        zset: ZsetLimits { max_entries: s.zset_max_listpack_entries(), max_value: s.zset_max_listpack_value() },
    }
}

/// The sum of every shard's change count (locks each shard in turn):
/// exact, for a save or a load to note what the file holds.
pub fn total_changes(srv: &Server) -> u64 {
    (0..srv.ks.total_shards() as u32).map(|g| srv.ks.lock(g).changes).sum()
}

/// Changes since the last save or load (INFO's
/// `rdb_changes_since_last_save`, the `save` schedule's count), from the
/// counts the shards publish as their locks are released: no lock is
/// taken, so the cron can ask every tick, and a command holding shards
/// (INFO inside MULTI) can ask too.
pub fn changes_since_save(srv: &Server) -> u64 {
    srv.ks.published_changes().saturating_sub(srv.persist.changes_at_save.load(Ordering::Relaxed))
}

/// After FLUSHALL, with a `save` schedule, as Redis does: a running
/// background save is given up and the (now empty) keyspace is saved at
/// once, so that a restart does not bring the flushed data back.
pub fn after_flushall(srv: &Server, locks: &mut tern_store::LockSet<'_>) {
    if srv.config.read().save.is_empty() {
        return;
    }
    {
        let _rename = srv.persist.rename.lock();
        srv.persist.bg_cancel.store(true, Ordering::Relaxed);
    }
    let _ = srv.durability().save(srv, locks);
}

/// How a BGSAVE request was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bgsave {
    /// The saver thread starts it now.
    Started,
    /// It starts once the EXEC that asked for it is over (Redis's reply
    /// inside a transaction).
    Scheduled,
    /// One is already running or about to.
    InProgress,
}

/// After a failed background save, the `save` schedule waits this long
/// before it tries again (Redis's `CONFIG_BGSAVE_RETRY_DELAY`).
const RETRY_DELAY_MS: u64 = 5_000;

/// Asks the saver thread for a background save (BGSAVE, the schedule).
pub fn request_bgsave(srv: &Server, in_exec: bool) -> Bgsave {
    let p = &srv.persist;
    let mut wanted = p.bg_wanted.lock();
    if *wanted || p.bg_running.load(Ordering::Acquire) {
        return Bgsave::InProgress;
    }
    *wanted = true;
    p.bg_wake.notify_one();
    if in_exec {
        Bgsave::Scheduled
    } else {
        Bgsave::Started
    }
}

/// Whether a background save is running or about to.
pub fn bgsave_active(srv: &Server) -> bool {
    *srv.persist.bg_wanted.lock() || srv.persist.bg_running.load(Ordering::Acquire)
}

/// The `save <seconds> <changes>` schedule, checked by the cron: a save
/// is due when some rule's changes have been made and its seconds have
/// passed since the last save (and, after a failure, the retry delay).
/// Every tick, so it takes no shard lock: the times are checked first,
/// and the changes are the shards' published counts.
pub fn schedule_check(srv: &Server, now: u64) {
    let p = &srv.persist;
    let rules = {
        let cfg = srv.config.read();
        if cfg.save.is_empty() {
            return;
        }
        cfg.save.clone()
    };
    if bgsave_active(srv) || p.loading.load(Ordering::Relaxed) {
        return;
    }
    let since = (now / 1000).saturating_sub(p.last_save.load(Ordering::Relaxed));
    let retry_ok = !p.last_failed.load(Ordering::Relaxed) || now.saturating_sub(p.bg_last_try_ms.load(Ordering::Relaxed)) > RETRY_DELAY_MS;
    if !retry_ok || !rules.iter().any(|&(secs, _)| since >= secs) {
        return;
    }
    let changes = changes_since_save(srv);
    if let Some((secs, n)) = rules.iter().copied().find(|&(secs, n)| changes >= n && since >= secs) {
        tern_config::log_notice!("{n} changes in {secs} seconds. Saving...");
        request_bgsave(srv, false);
    }
}

/// Redis's `stop-writes-on-bgsave-error`: with a `save` schedule and the
/// last background save failed, writes (and PING) are refused until a
/// save succeeds.
pub fn writes_refused(srv: &Server) -> bool {
    if !srv.persist.last_failed.load(Ordering::Relaxed) {
        return false;
    }
    let cfg = srv.config.read();
    cfg.stop_writes_on_bgsave_error && !cfg.save.is_empty()
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::time::Duration;

    use tern_store::{LockSet, NewValue};

    use super::*;

    /// When the test servers last saved (ms).
    const T0: u64 = 1_700_000_000_000;

    /// A server with the `save` schedule `rules`, last saved at [`T0`],
    /// one change made since.
    fn server(rules: Vec<(u64, u64)>) -> Arc<Server> {
        let srv = Arc::new(Server::new(Config { threads: 1, save: rules, ..Config::default() }, 0));
        srv.persist.last_save.store(T0 / 1000, Ordering::Relaxed);
        write(&srv, b"a");
        srv
    }

    /// A write as a command makes it: under a lock set, published at release.
    fn write(srv: &Server, key: &[u8]) {
        let loc = srv.ks.locate(0, key);
        let mut set = LockSet::new(&srv.ks);
        set.acquire([loc.gid]);
        set.shard(loc.gid).set(key, loc.hash, NewValue::Bytes(b"v"), None, 0);
        set.release();
    }

    /// Whether the check at `now` asks for a background save (the request
    /// is taken back, as the saver thread would).
    fn fires(srv: &Server, now: u64) -> bool {
        schedule_check(srv, now);
        std::mem::take(&mut *srv.persist.bg_wanted.lock())
    }

    #[test]
    fn a_rule_fires_once_both_its_seconds_and_its_changes_are_reached() {
        let srv = server(vec![(10, 2), (100, 1)]);
        assert_eq!(changes_since_save(&srv), 1);
        // No rule's seconds have passed, then the first's have but one
        // change is short, then the second's have (one change is enough).
        assert!(!fires(&srv, T0 + 9_000));
        assert!(!fires(&srv, T0 + 50_000));
        assert!(fires(&srv, T0 + 100_000));
        write(&srv, b"b");
        assert!(fires(&srv, T0 + 10_000));
        // A save resets the count.
        srv.persist.changes_at_save.store(total_changes(&srv), Ordering::Relaxed);
        assert_eq!(changes_since_save(&srv), 0);
        assert!(!fires(&srv, T0 + 200_000));
    }

    #[test]
    fn after_a_failure_the_schedule_waits_for_the_retry_delay() {
        let srv = server(vec![(1, 1)]);
        srv.persist.last_failed.store(true, Ordering::Relaxed);
        srv.persist.bg_last_try_ms.store(T0 + 1_000, Ordering::Relaxed);
        assert!(!fires(&srv, T0 + 1_000 + RETRY_DELAY_MS));
        assert!(fires(&srv, T0 + 1_001 + RETRY_DELAY_MS));
    }

    #[test]
    fn the_check_takes_no_shard_lock() {
        let srv = server(vec![(1, 1)]);
        // Every shard held here: a check that locked one would never end.
        let mut all = LockSet::new(&srv.ks);
        all.acquire(0..srv.ks.total_shards() as u32);
        let (tx, rx) = mpsc::channel();
        let s = srv.clone();
        std::thread::spawn(move || tx.send(fires(&s, T0 + 2_000)));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(true));
        all.release();
    }
}
