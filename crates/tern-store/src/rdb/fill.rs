//! Loading a whole file into a [`Keyspace`] on several threads: what
//! start-up does with `dump.rdb`.
//!
//! ```text
//!  calling thread: read → checksum → decode → admit → locate ─┬─ batch ─► lane 0 thread: insert
//!                                                             └─ batch ─► lane n thread: insert
//! ```
//!
//! The file is one stream (lengths are variable, so it cannot be cut
//! without reading it), so one thread decodes it; inserting (an item
//! built, the table grown and rehashed) is spread over lanes, one
//! thread each. A shard belongs to one lane (its global id modulo the
//! lanes), so every shard is written by one thread, in file order, and
//! its lock is never contended. The decoder inserts nothing itself: by
//! `perf` on a 1M-key file (100 B values), decoding (reads, checksum,
//! LZF) took about 30% of the samples and inserting (table rehash 20%,
//! store 15%) about 40%, so with two cores a decoder that also took
//! half the inserts would be the bottleneck.
//!
//! Errors are the single-threaded loader's: the first one ends the load,
//! the lanes are stopped and joined before it is returned, and the
//! caller (start-up) exits with it, so a dataset half loaded is never
//! served.

use std::io::Read;
use std::sync::mpsc::{sync_channel, SyncSender};

use crate::keyspace::Keyspace;
use crate::value::Value;
use crate::NewValue;

use super::{load, Limits, LoadInfo, RdbError};

/// Entries sent to a lane at a time.
const BATCH: usize = 512;
/// Batches waiting per lane before the decoder waits for it (bounds the
/// memory in flight: about 50 KiB a batch of small strings).
const QUEUE: usize = 16;

/// A decoded entry on its way to its lane.
struct Pending {
    key: Vec<u8>,
    value: Value,
    expire: Option<u64>,
    gid: u32,
    hash: u64,
}

fn insert(ks: &Keyspace, p: Pending, now: u64) {
    ks.lock(p.gid).set(&p.key, p.hash, NewValue::Value(p.value), p.expire, now);
}

/// Reads an RDB file from `r` into `ks` (as [`load`] reads it) on
/// `threads` threads: the calling thread decodes and, with more than one,
/// `threads - 1` others insert (with one, it inserts too). Each entry
/// that `admit(db, key, value, expire_ms)` accepts is stored, `now` being
/// its creation time; one it declines (`Ok(false)`) is dropped; its error
/// ends the load. `admit` runs on the calling thread, in file order.
pub fn load_into<R: Read>(
    r: R,
    lim: Limits,
    ks: &Keyspace,
    threads: usize,
    now: u64,
    mut admit: impl FnMut(u32, &[u8], &Value, Option<u64>) -> Result<bool, RdbError>,
) -> Result<LoadInfo, RdbError> {
    if threads <= 1 {
        return load(r, lim, |db, key, value, expire| {
            if admit(db, &key, &value, expire)? {
                let loc = ks.locate(db as usize, &key);
                insert(ks, Pending { key, value, expire, gid: loc.gid, hash: loc.hash }, now);
            }
            Ok(())
        });
    }
    let lanes = (threads - 1).min(ks.total_shards().max(1));
    std::thread::scope(|t| {
        let mut out: Vec<(SyncSender<Vec<Pending>>, Vec<Pending>)> = Vec::with_capacity(lanes);
        for _ in 0..lanes {
            let (tx, rx) = sync_channel::<Vec<Pending>>(QUEUE);
            std::thread::Builder::new()
                .name("tern-loader".into())
                .spawn_scoped(t, move || {
                    for batch in rx {
                        for p in batch {
                            insert(ks, p, now);
                        }
                    }
                })
                .map_err(RdbError::Io)?;
            out.push((tx, Vec::with_capacity(BATCH)));
        }
        let info = load(r, lim, |db, key, value, expire| {
            if !admit(db, &key, &value, expire)? {
                return Ok(());
            }
            let loc = ks.locate(db as usize, &key);
            let (tx, buf) = &mut out[loc.gid as usize % lanes];
            buf.push(Pending { key, value, expire, gid: loc.gid, hash: loc.hash });
            if buf.len() == BATCH {
                let full = std::mem::replace(buf, Vec::with_capacity(BATCH));
                tx.send(full).map_err(|_| RdbError::Rejected("a loader thread stopped".into()))?;
            }
            Ok(())
        });
        // On an error the batches not yet sent are dropped; either way the
        // lanes finish what they have and end when their sender goes (the
        // scope joins them before returning).
        if info.is_ok() {
            for (tx, buf) in &mut out {
                if !buf.is_empty() {
                    tx.send(std::mem::take(buf)).map_err(|_| RdbError::Rejected("a loader thread stopped".into()))?;
                }
            }
        }
        drop(out);
        info
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryExt;
    use crate::rdb::{RdbOptions, RdbWriter};
    use crate::ValueRef;

    fn file(n: usize) -> Vec<u8> {
        let mut w = RdbWriter::new(std::io::Cursor::new(Vec::new()), RdbOptions::default()).unwrap();
        w.select_db(0, n as u64, 0).unwrap();
        for i in 0..n {
            let v = format!("value-{i}-{}", "x".repeat(i % 50));
            let ttl = (i % 7 == 0).then_some(1_000_000 + i as u64);
            w.entry(format!("key:{i}").as_bytes(), ValueRef::Str(crate::StrRef::Whole(v.as_bytes())), ttl).unwrap();
        }
        w.select_db(3, 1, 0).unwrap();
        w.entry(b"other", ValueRef::Str(crate::StrRef::Int(7)), None).unwrap();
        w.finish().unwrap().into_inner()
    }

    fn contents(ks: &Keyspace) -> Vec<(usize, Vec<u8>, Vec<u8>, Option<u64>)> {
        let mut all = Vec::new();
        for db in 0..ks.db_count() {
            for g in ks.db_gids(db) {
                for e in ks.lock(g).iter(0) {
                    let ValueRef::Str(s) = e.value() else { panic!() };
                    all.push((db, e.key().to_vec(), s.to_vec(), e.expire()));
                }
            }
        }
        all.sort();
        all
    }

    #[test]
    fn lanes_load_what_one_thread_loads() {
        let f = file(5000);
        let one = Keyspace::new(16, 4);
        load_into(&f[..], Limits::default(), &one, 1, 0, |_, _, _, _| Ok(true)).unwrap();
        assert_eq!(contents(&one).len(), 5001);
        for threads in [2, 3, 64] {
            let ks = Keyspace::new(16, 4);
            let info = load_into(&f[..], Limits::default(), &ks, threads, 0, |_, _, _, _| Ok(true)).unwrap();
            assert_eq!(info.keys, 5001);
            assert_eq!(contents(&ks), contents(&one), "{threads} threads");
        }
    }

    #[test]
    fn admit_drops_and_refuses() {
        let f = file(3000);
        let ks = Keyspace::new(16, 4);
        let mut seen = 0;
        load_into(&f[..], Limits::default(), &ks, 2, 0, |_, _, _, t| {
            seen += 1;
            Ok(t.is_none())
        })
        .unwrap();
        assert_eq!(seen, 3001);
        assert_eq!(contents(&ks).len(), 3001 - 3000usize.div_ceil(7));
        let ks = Keyspace::new(16, 4);
        let err = load_into(&f[..], Limits::default(), &ks, 2, 0, |db, _, _, _| {
            if db == 3 {
                Err(RdbError::Rejected("no".into()))
            } else {
                Ok(true)
            }
        });
        assert!(matches!(err, Err(RdbError::Rejected(_))));
    }

    #[test]
    fn a_corrupt_file_is_an_error_on_every_lane_count() {
        let mut f = file(2000);
        let n = f.len();
        f[n / 2] ^= 0x5a;
        for threads in [1, 2, 4] {
            let ks = Keyspace::new(16, 4);
            assert!(load_into(&f[..], Limits::default(), &ks, threads, 0, |_, _, _, _| Ok(true)).is_err(), "{threads} threads");
        }
        let ks = Keyspace::new(16, 4);
        assert!(matches!(load_into(&f[..n - 100], Limits::default(), &ks, 2, 0, |_, _, _, _| Ok(true)), Err(RdbError::Truncated | RdbError::Corrupt(_))));
    }
}
