//! Loading a whole file into a [`Keyspace`] on several threads: what
//! start-up does with `dump.rdb`.
//!
//! ```text
//!  calling thread: read → checksum → scan (record ends only) ─┬─ batch ─► worker 1: decode → admit → store
//!                        │                                    ├─ batch ─► worker n-1: ...
//!                        └─ RESIZEDB: reserve the db's shards  └─ every queue full: decode → admit → store itself
//! ```
//!
//! The file is one stream whose lengths are variable, so it cannot be cut
//! without reading it; but finding where a record ends (type byte,
//! lengths, skip) costs a small part of decoding it, so one thread only
//! scans (see `scan`) and every thread, the scanning one included when
//! the others' queues are full, decodes and stores whole batches of
//! records. A shard may be written by any thread: each gathers its
//! entries per shard and stores them 64 at a time under one lock hold,
//! so the lock is rarely contended. Before that, an
//! earlier version decoded on one thread and inserted on the others; by
//! `perf` on a 1M-key file (100-byte values) decoding and inserting each
//! took about a third, so on two cores the decoder was the bottleneck.
//!
//! Each database's shards are sized from its RESIZEDB hint before its
//! keys arrive ([`tern_table::Table::reserve`]), so no table resizes
//! during the load (it was 20% of the samples), as Redis sizes its dict.
//! The hint is the file's word: reservations are capped by the bytes
//! the file has (a key takes at least 3).
//!
//! Records are stored in any order, which changes nothing: a key appears
//! once in a valid file, and a second time is an error (as in Redis's
//! loader). Errors end the load: the first one, from any thread, is
//! returned after every thread has stopped, the checksum is checked
//! before [`load_into`] returns, and the caller (start-up) exits on an
//! error, so a dataset half loaded is never served.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};

use parking_lot::Mutex;
use smallvec::SmallVec;

use crate::entry::{self, Entry, NewValue};
use crate::keyspace::Keyspace;
use crate::value::{McStr, StrRef, ValueRef};

use super::scan::{scan, Batch, Body, Piece, Record, Sink};
use super::{Limits, LoadInfo, RdbError};

/// Batches waiting per worker before the scanning thread decodes one
/// itself (bounds the memory in flight: a batch is about 64 KiB).
const QUEUE: usize = 4;
/// The fewest bytes a key's record takes in a file (type, key length,
/// value length): caps what RESIZEDB hints may reserve.
const MIN_RECORD: u64 = 3;

/// How [`load_into`] runs.
#[derive(Clone, Copy, Debug)]
pub struct Fill {
    /// The conversion thresholds values are built for.
    pub lim: Limits,
    /// Threads that decode and store (the calling one included); 1: the
    /// calling thread does everything (`load-threads`).
    pub threads: usize,
    /// The stored keys' creation time (ms).
    pub now: u64,
    /// The input's size in bytes, if known: the tables are reserved from
    /// RESIZEDB hints up to what that many bytes can hold (none if None).
    pub size: Option<u64>,
    /// A key already present is replaced (DEBUG RELOAD MERGE, Redis's
    /// `RDBFLAGS_ALLOW_DUP`); otherwise the load fails on it.
    pub allow_dup: bool,
}

/// Entries a thread gathers per shard before it takes the shard's lock
/// and stores them all. Storing moves the shard's lock and counters
/// (their cache lines) to this core: with two threads storing into the
/// same shards one entry at a time, a 5M-key load took about 1.4× the
/// CPU of one thread (3.6 s against 2.5 s, `bench/bgsave.py --load`); a
/// group pays for the move once per 64 entries (about 1.25× since, the
/// rest not from one cause: see bench/RESULTS.md).
const GROUP: usize = 64;
/// How many entries ahead of the one being stored its bucket's cache line
/// is asked for: by `perf` on a 1M-key load, the table's insert was a
/// fifth of the samples, most of it the wait for the bucket.
const AHEAD: usize = 8;

/// An entry built, on its way into its shard.
struct Built {
    hash: u64,
    entry: Box<Entry>,
}

/// Decodes and stores batches: each thread has one.
struct Worker<'a, A> {
    ks: &'a Keyspace,
    admit: &'a A,
    fill: Fill,
    kbuf: Vec<u8>,
    vbuf: Vec<u8>,
    /// Entries built and not stored yet, by shard (global id).
    groups: Vec<Vec<Built>>,
    stored: u64,
}

impl<A> Worker<'_, A>
where
    A: Fn(u32, &[u8], ValueRef<'_>, Option<u64>) -> Result<bool, RdbError> + Sync,
{
    fn new<'a>(ks: &'a Keyspace, admit: &'a A, fill: Fill) -> Worker<'a, A> {
        let groups = (0..ks.total_shards()).map(|_| Vec::new()).collect();
        Worker { ks, admit, fill, kbuf: Vec::new(), vbuf: Vec::new(), groups, stored: 0 }
    }

    fn run(&mut self, b: &Batch) -> Result<(), RdbError> {
        let mut rest = b.bytes();
        let lfu = self.ks.lfu();
        while !rest.is_empty() {
            let rec = Record::parse(&mut rest, &self.fill.lim, &mut self.kbuf, &mut self.vbuf)?;
            self.build(b.db, rec, lfu)?;
        }
        Ok(())
    }

    /// Stores what is still gathered: the thread's last step.
    fn finish(&mut self) -> Result<(), RdbError> {
        for g in 0..self.groups.len() {
            self.store_group(g)?;
        }
        Ok(())
    }

    /// Stores shard `g`'s gathered entries under one lock hold.
    fn store_group(&mut self, g: usize) -> Result<(), RdbError> {
        let group = std::mem::take(&mut self.groups[g]);
        if group.is_empty() {
            return Ok(());
        }
        let gid = g as u32;
        let hashes: SmallVec<[u64; GROUP]> = group.iter().map(|b| b.hash).collect();
        for &h in hashes.iter().take(AHEAD) {
            self.ks.prefetch_hint(gid, h);
        }
        let mut shard = self.ks.lock(gid);
        let mut dup = false;
        for (i, Built { hash, entry }) in group.into_iter().enumerate() {
            if let Some(&h) = hashes.get(i + AHEAD) {
                self.ks.prefetch_hint(gid, h);
            }
            // The store takes the key beside the entry it consumes.
            let key: SmallVec<[u8; 64]> = SmallVec::from_slice(entry.key());
            dup |= shard.insert_entry(&key, hash, entry, self.fill.now).is_some();
            self.stored += 1;
        }
        if dup && !self.fill.allow_dup {
            return Err(RdbError::Corrupt("duplicated key"));
        }
        self.groups[g] = Vec::with_capacity(GROUP);
        Ok(())
    }

    /// Decodes, admits and builds one record's entry, and gathers it for
    /// its shard.
    fn build(&mut self, db: u32, rec: Record<'_>, lfu: bool) -> Result<(), RdbError> {
        let (mut kn, mut vn) = (itoa::Buffer::new(), itoa::Buffer::new());
        let key = rec.key.bytes(&self.kbuf, &mut kn);
        let value = match rec.body {
            Body::Str(p) => match (rec.mc.filter(|m| m[McStr::HEADER..] == *key), p) {
                (None, Piece::Int(n)) => NewValue::Int(n),
                (None, p) => NewValue::Bytes(p.bytes(&self.vbuf, &mut vn)),
                // A memcached item's data: an integer as its digits.
                (Some(m), p) => NewValue::Mc {
                    data: p.bytes(&self.vbuf, &mut vn),
                    flags: McStr::read_flags(m),
                    cas: McStr::read_cas(m),
                    state: m[12],
                },
            },
            Body::Value(v) => NewValue::Value(v),
        };
        let view = match &value {
            NewValue::Int(n) => ValueRef::Str(StrRef::Int(*n)),
            NewValue::Bytes(d) | NewValue::Mc { data: d, .. } => ValueRef::Str(StrRef::Whole(d)),
            NewValue::Value(v) => v.as_value_ref(),
        };
        if !(self.admit)(db, key, view, rec.expire)? {
            return Ok(());
        }
        if db as usize >= self.ks.db_count() {
            return Err(RdbError::Corrupt("database number out of range"));
        }
        if key.len() > tern_table::MAX_KEY_LEN {
            return Err(RdbError::Corrupt("key too long"));
        }
        let loc = self.ks.locate(db as usize, key);
        let entry = entry::build(key, value, rec.expire, self.fill.now, lfu);
        let g = loc.gid as usize;
        if self.groups[g].capacity() == 0 {
            self.groups[g].reserve_exact(GROUP);
        }
        self.groups[g].push(Built { hash: loc.hash, entry });
        if self.groups[g].len() >= GROUP {
            self.store_group(g)?;
        }
        Ok(())
    }
}

/// The first error of any thread, and the flag that stops the others.
#[derive(Default)]
struct Failure {
    stop: AtomicBool,
    first: Mutex<Option<RdbError>>,
}

impl Failure {
    fn set(&self, e: RdbError) {
        self.first.lock().get_or_insert(e);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The scan's sink: batches to the workers' queues, round robin, or
/// decoded here when every queue is full.
struct Spread<'a, A> {
    queues: Vec<SyncSender<Batch>>,
    next: usize,
    here: Worker<'a, A>,
    failure: &'a Failure,
    /// Keys the RESIZEDB hints may still reserve.
    budget: u64,
}

impl<A> Sink for Spread<'_, A>
where
    A: Fn(u32, &[u8], ValueRef<'_>, Option<u64>) -> Result<bool, RdbError> + Sync,
{
    fn resize(&mut self, db: u32, keys: u64) {
        let ks = self.here.ks;
        let keys = keys.min(self.budget);
        if db as usize >= ks.db_count() || keys == 0 {
            return;
        }
        self.budget -= keys;
        // Slots spread keys evenly over the shards; a sixteenth more (and
        // a bucket's worth) leaves room for the spread.
        let per = keys / ks.shards_per_db() as u64;
        let per = per + per / 16 + 16;
        for g in ks.db_gids(db as usize) {
            let mut shard = ks.lock(g);
            shard.reserve(usize::try_from(per).unwrap_or(usize::MAX));
            // The bucket array stays put for the load now: its address,
            // published, lets the threads prefetch buckets without the lock.
            ks.publish_hint(g, &shard);
        }
    }

    fn batch(&mut self, b: Batch) -> Result<(), RdbError> {
        if self.failure.stop.load(Ordering::Relaxed) {
            return Err(RdbError::Rejected("a loader thread stopped".into()));
        }
        let mut b = b;
        for k in 0..self.queues.len() {
            let i = (self.next + k) % self.queues.len();
            match self.queues[i].try_send(b) {
                Ok(()) => {
                    self.next = i + 1;
                    return Ok(());
                }
                Err(TrySendError::Full(back)) => b = back,
                Err(TrySendError::Disconnected(_)) => return Err(RdbError::Rejected("a loader thread stopped".into())),
            }
        }
        self.here.run(&b)
    }
}

/// Reads an RDB file from `r` into `ks` on `fill.threads` threads (see
/// the module docs). Each entry that `admit(db, key, value, expire_ms)`
/// accepts is stored, `fill.now` being its creation time; one it declines
/// (`Ok(false)`) is dropped; its error ends the load. `admit` runs on any
/// of the threads, in no particular order. The keyspace must not hold
/// the file's keys already: a key stored twice is an error.
pub fn load_into<R: Read, A>(r: R, ks: &Keyspace, fill: Fill, admit: A) -> Result<LoadInfo, RdbError>
where
    A: Fn(u32, &[u8], ValueRef<'_>, Option<u64>) -> Result<bool, RdbError> + Sync,
{
    let failure = Failure::default();
    let admit = &admit;
    let worker = || Worker::new(ks, admit, fill);
    let budget = fill.size.map_or(0, |n| n / MIN_RECORD);
    std::thread::scope(|t| {
        let mut queues = Vec::new();
        let mut handles = Vec::new();
        for _ in 1..fill.threads.max(1) {
            let (tx, rx): (SyncSender<Batch>, Receiver<Batch>) = sync_channel(QUEUE);
            let mut w = worker();
            let failure = &failure;
            let h = std::thread::Builder::new()
                .name("tern-loader".into())
                .spawn_scoped(t, move || {
                    for b in rx {
                        if failure.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if let Err(e) = w.run(&b) {
                            failure.set(e);
                            return w.stored;
                        }
                    }
                    if !failure.stop.load(Ordering::Relaxed) {
                        if let Err(e) = w.finish() {
                            failure.set(e);
                        }
                    }
                    w.stored
                })
                .map_err(RdbError::Io)?;
            queues.push(tx);
            handles.push(h);
        }
        let mut spread = Spread { queues, next: 0, here: worker(), failure: &failure, budget };
        let mut r = scan(r, &mut spread);
        if r.is_ok() {
            if let Err(e) = spread.here.finish() {
                r = Err(e);
            }
        }
        if r.is_err() {
            failure.stop.store(true, Ordering::Relaxed);
        }
        // The workers finish their queues (or stop at an error) and end
        // when their senders go.
        drop(std::mem::take(&mut spread.queues));
        let mut stored = spread.here.stored;
        for h in handles {
            stored += h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        if let Some(e) = failure.first.lock().take() {
            return Err(e);
        }
        let mut info = r?;
        info.stored = stored;
        Ok(info)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryExt;
    use crate::rdb::{RdbOptions, RdbWriter};
    use crate::value::{StrValue, Value};
    use crate::ValueRef;

    fn file(n: usize) -> Vec<u8> {
        let mut w = RdbWriter::new(std::io::Cursor::new(Vec::new()), RdbOptions::default()).unwrap();
        w.select_db(0, n as u64, 0).unwrap();
        for i in 0..n {
            // Long enough values are LZF-compressed, short ones not;
            // some integers, some memcached items.
            let v = format!("value-{i}-{}", "x".repeat(i % 50));
            let ttl = (i % 7 == 0).then_some(1_000_000 + i as u64);
            let key = format!("key:{i}");
            let val = match i % 11 {
                3 => Value::Str(StrValue::Int(i as i64 - 500)),
                5 => Value::Str(StrValue::Mc(McStr::new(v.as_bytes(), i as u32, i as u64 + 1, 0))),
                _ => Value::Str(StrValue::Emb(v.as_bytes().into())),
            };
            w.entry(key.as_bytes(), val.as_value_ref(), ttl).unwrap();
        }
        w.select_db(3, 1, 0).unwrap();
        w.entry(b"other", ValueRef::Str(crate::StrRef::Int(7)), None).unwrap();
        w.entry(b"12345", ValueRef::Str(crate::StrRef::Whole(b"an integer key")), None).unwrap();
        let list = Value::List(crate::List::from_items([&b"a"[..], b"b", b"c"].into_iter(), Limits::default().list));
        w.entry(b"a list", list.as_value_ref(), Some(99)).unwrap();
        w.finish().unwrap().into_inner()
    }

    fn opts(threads: usize, f: &[u8]) -> Fill {
        Fill { lim: Limits::default(), threads, now: 0, size: Some(f.len() as u64), allow_dup: false }
    }

    fn all(_: u32, _: &[u8], _: ValueRef<'_>, _: Option<u64>) -> Result<bool, RdbError> {
        Ok(true)
    }

    type Row = (usize, Vec<u8>, String, Option<u64>);

    fn contents(ks: &Keyspace) -> Vec<Row> {
        let mut rows = Vec::new();
        for db in 0..ks.db_count() {
            for g in ks.db_gids(db) {
                for e in ks.lock(g).iter(0) {
                    rows.push((db, e.key().to_vec(), format!("{:?}", e.value().to_value(e.key().len())), e.expire()));
                }
            }
        }
        rows.sort();
        rows
    }

    /// What [`crate::rdb::load`] reads, in the same form.
    fn read(f: &[u8]) -> Vec<Row> {
        let mut rows = Vec::new();
        crate::rdb::load(f, Limits::default(), |db, k, v, t| {
            let kl = k.len();
            rows.push((db as usize, k, format!("{:?}", v.as_value_ref().to_value(kl)), t));
            Ok(())
        })
        .unwrap();
        rows.sort();
        rows
    }

    #[test]
    fn threads_load_what_one_thread_reads() {
        let f = file(5000);
        let want = read(&f);
        assert_eq!(want.len(), 5003);
        for threads in [1, 2, 3, 64] {
            let ks = Keyspace::new(16, 4);
            let info = load_into(&f[..], &ks, opts(threads, &f), all).unwrap();
            assert_eq!((info.keys, info.stored, info.bytes), (5003, 5003, f.len() as u64));
            assert!(info.checksum_checked);
            assert_eq!(contents(&ks), want, "{threads} threads");
        }
    }

    #[test]
    fn resizedb_reserves_so_no_table_resizes() {
        let f = file(20_000);
        let ks = Keyspace::new(16, 4);
        load_into(&f[..], &ks, opts(2, &f), all).unwrap();
        for g in ks.db_gids(0) {
            assert!(!ks.lock(g).rehash_step(0), "shard {g} resized while loading");
        }
        // A hint beyond what the file can hold reserves only that much.
        let mut w = RdbWriter::new(std::io::Cursor::new(Vec::new()), RdbOptions::default()).unwrap();
        w.select_db(0, 1 << 40, 0).unwrap();
        w.entry(b"k", ValueRef::Str(crate::StrRef::Int(1)), None).unwrap();
        let f = w.finish().unwrap().into_inner();
        let ks = Keyspace::new(1, 1);
        load_into(&f[..], &ks, opts(2, &f), all).unwrap();
        assert!(ks.lock(0).mem() < 64 * 1024);
    }

    #[test]
    fn admit_drops_and_refuses() {
        let f = file(3000);
        let ks = Keyspace::new(16, 4);
        let seen = std::sync::atomic::AtomicU64::new(0);
        let info = load_into(&f[..], &ks, opts(2, &f), |_, _, _, t| {
            seen.fetch_add(1, Ordering::Relaxed);
            Ok(t.is_none())
        })
        .unwrap();
        assert_eq!(seen.into_inner(), 3003);
        let kept = 3002 - 3000usize.div_ceil(7);
        assert_eq!(info.stored as usize, kept);
        assert_eq!(contents(&ks).len(), kept);
        for threads in [1, 2] {
            let ks = Keyspace::new(16, 4);
            let err = load_into(&f[..], &ks, opts(threads, &f), |db, _, _, _| {
                if db == 3 {
                    Err(RdbError::Rejected("no".into()))
                } else {
                    Ok(true)
                }
            });
            assert!(matches!(err, Err(RdbError::Rejected(ref w)) if w == "no"), "{threads} threads: {err:?}");
        }
    }

    #[test]
    fn a_key_twice_is_an_error() {
        let mut w = RdbWriter::new(std::io::Cursor::new(Vec::new()), RdbOptions::default()).unwrap();
        w.select_db(0, 3000, 0).unwrap();
        for i in 0..3000 {
            w.entry(format!("k{}", i % 2999).as_bytes(), ValueRef::Str(crate::StrRef::Int(i)), None).unwrap();
        }
        let f = w.finish().unwrap().into_inner();
        for threads in [1, 2, 4] {
            let ks = Keyspace::new(16, 4);
            let r = load_into(&f[..], &ks, opts(threads, &f), all);
            assert!(matches!(r, Err(RdbError::Corrupt("duplicated key"))), "{threads} threads: {r:?}");
        }
    }

    #[test]
    fn a_corrupt_file_is_an_error_on_every_thread_count() {
        let f = file(2000);
        let n = f.len();
        for at in [9, n / 3, n / 2, n - 20, n - 9, n - 3] {
            let mut bad = f.clone();
            bad[at] ^= 0x5a;
            for threads in [1, 2, 4] {
                let ks = Keyspace::new(16, 4);
                assert!(load_into(&bad[..], &ks, opts(threads, &bad), all).is_err(), "byte {at}, {threads} threads");
            }
        }
        for cut in [0, 5, 9, n / 2, n - 9, n - 1] {
            let ks = Keyspace::new(16, 4);
            let r = load_into(&f[..cut], &ks, opts(2, &f), all);
            assert!(matches!(r, Err(RdbError::Truncated | RdbError::Corrupt(_) | RdbError::BadHeader)), "cut at {cut}: {r:?}");
        }
    }

    #[test]
    fn reads_in_small_pieces_and_stops_where_the_file_ends() {
        // A reader that hands out a few bytes at a time, with more after
        // the file (an AOF's commands after its RDB preamble).
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = out.len().min(self.0.len()).min(7);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let f = file(300);
        let mut more = f.clone();
        more.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        let ks = Keyspace::new(16, 4);
        let info = load_into(Dribble(&more), &ks, opts(2, &more), all).unwrap();
        assert_eq!(info.bytes, f.len() as u64);
        assert_eq!(contents(&ks), read(&f));
    }

    #[test]
    fn a_record_larger_than_a_chunk() {
        let big = vec![b'q'; 3 << 20];
        let mut w = RdbWriter::new(std::io::Cursor::new(Vec::new()), RdbOptions { compression: false, ..RdbOptions::default() }).unwrap();
        w.select_db(0, 2, 0).unwrap();
        w.entry(b"big", ValueRef::Str(crate::StrRef::Whole(&big)), None).unwrap();
        w.entry(b"small", ValueRef::Str(crate::StrRef::Int(1)), None).unwrap();
        let f = w.finish().unwrap().into_inner();
        let ks = Keyspace::new(1, 2);
        let info = load_into(&f[..], &ks, opts(2, &f), all).unwrap();
        assert_eq!(info.stored, 2);
        assert_eq!(contents(&ks).len(), 2);
    }
}
