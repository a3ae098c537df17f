//! Snapshots on disk, synchronously: SAVE and the save at shutdown write
//! `dir/dbfilename` in Redis's RDB format (tern_store::rdb) while holding
//! every shard, so the file is trivially one point in time; start-up loads
//! it before the workers accept connections.
//!
//! A save writes `temp-<pid>.rdb` in `dir`, syncs it, then renames it over
//! the old file, as Redis does: a crash mid-save leaves the last good file.
//!
//! Non-goals here: BGSAVE and the `save` schedule (the point-in-time
//! machinery without fork lives with the store), the AOF.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use tern_config::Config;
use tern_store::rdb::{self, Limits, LoadInfo, RdbError, RdbOptions, RdbWriter};
use tern_store::{EntryExt, HashLimits, ListLimits, LockSet, NewValue, SetLimits, ZsetLimits};

use crate::server::{now_ms, Server};

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

/// The sum of every shard's change count (locks each shard in turn).
pub fn total_changes(srv: &Server) -> u64 {
    (0..srv.ks.total_shards() as u32).map(|g| srv.ks.lock(g).changes).sum()
}

/// Saves the whole keyspace to `dir/dbfilename` while `locks` holds
/// every shard. Returns the keys written, or the error Redis would log.
pub fn save(srv: &Server, locks: &mut LockSet<'_>) -> Result<u64, String> {
    let (path, opts) = {
        let cfg = srv.config.read();
        let opts = RdbOptions {
            compression: cfg.rdbcompression,
            checksum: cfg.rdbchecksum,
            redis_ver: crate::REDIS_VERSION.into(),
            ctime_secs: now_ms() / 1000,
            used_mem: crate::maxmemory::used_memory_exact(srv),
        };
        (rdb_path(&cfg), opts)
    };
    let dir = path.parent().map(PathBuf::from).unwrap_or_else(|| ".".into());
    let tmp = dir.join(format!("temp-{}.rdb", std::process::id()));
    let now = now_ms();
    let total = srv.ks.total_shards() as u32;
    locks.acquire(0..total);
    let result = write_all(srv, locks, &tmp, opts, now);
    let changes: u64 = (0..total).map(|g| locks.shard(g).changes).sum();
    locks.release();
    let result = result.and_then(|n| {
        std::fs::rename(&tmp, &path).map_err(|e| format!("Error moving temp DB file {} on the final destination {} (in server root dir {}): {e}", tmp.display(), path.display(), dir.display()))?;
        Ok(n)
    });
    let p = &srv.persist;
    match &result {
        Ok(_) => {
            p.last_save.store(now / 1000, Ordering::Relaxed);
            p.saves.fetch_add(1, Ordering::Relaxed);
            p.changes_at_save.store(changes, Ordering::Relaxed);
            p.last_failed.store(false, Ordering::Relaxed);
            p.consecutive_failures.store(0, Ordering::Relaxed);
            tern_config::log_notice!("DB saved on disk");
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            p.last_failed.store(true, Ordering::Relaxed);
            p.consecutive_failures.fetch_add(1, Ordering::Relaxed);
            tern_config::log_warning!("{e}");
        }
    }
    result
}

fn write_all(srv: &Server, locks: &mut LockSet<'_>, tmp: &std::path::Path, opts: RdbOptions, now: u64) -> Result<u64, String> {
    let fail = |e: std::io::Error| format!("Failed opening the temp RDB file {} (in server root dir): {e}", tmp.display());
    let file = File::create(tmp).map_err(fail)?;
    let werr = |e: std::io::Error| format!("Write error saving DB on disk: {e}");
    let mut w = RdbWriter::new(BufWriter::new(file), opts).map_err(werr)?;
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
    file.sync_all().map_err(werr)?;
    Ok(written)
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
    let lim = limits(srv);
    let now = now_ms();
    let dbs = srv.ks.db_count();
    let (mut loaded, mut expired) = (0u64, 0u64);
    let r = rdb::load(BufReader::with_capacity(1 << 16, file), lim, |db, key, value, expire| {
        let db = db as usize;
        if db >= dbs {
            return Err(RdbError::Rejected(format!(
                "FATAL: Data file was created with a Redis server configured to handle more than {dbs} databases. Exiting"
            )));
        }
        if key.len() > tern_store::MAX_KEY_LEN {
            return Err(RdbError::Corrupt("key too long"));
        }
        if expire.is_some_and(|t| t <= now) || value.all_fields_expired(now) {
            expired += 1;
            return Ok(());
        }
        let loc = srv.ks.locate(db, &key);
        srv.ks.lock(loc.gid).set(&key, loc.hash, NewValue::Value(value), expire, now);
        loaded += 1;
        Ok(())
    });
    srv.persist.loading.store(false, Ordering::Relaxed);
    let info = r.map_err(|e| format!("Short read or OOM loading DB. Unrecoverable error, aborting now. ({}: {e})", path.display()))?;
    srv.persist.loaded_keys.store(loaded, Ordering::Relaxed);
    srv.persist.load_expired.store(expired, Ordering::Relaxed);
    srv.persist.last_save.store(now / 1000, Ordering::Relaxed);
    srv.persist.changes_at_save.store(total_changes(srv), Ordering::Relaxed);
    Ok(Some(info))
}
