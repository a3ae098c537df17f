//! Point-in-time snapshots without fork and without stopping the world:
//! what BGSAVE (and later the AOF rewrite and a replica's full sync)
//! serialise.
//!
//! Goals: the snapshot holds exactly the keyspace as it was at the
//! moment it started, while every worker keeps writing; no write waits
//! on it for more than one bounded slice of work; extra memory stays a
//! small share of the dataset (only what is changed before the walk
//! reaches it is copied, and copies are handed out as soon as their
//! database's turn allows). A write pays nothing while no snapshot runs
//! but a load of a field of the shard it has locked.
//! Non-goals: serialising (the RDB writer's job, given each entry in
//! turn); saving a single huge value in pieces (it is copied whole,
//! under its shard's lock); LRU/LFU clocks (not part of the data).
//!
//! # Use
//!
//! ```
//! use tern_store::{Keyspace, NewValue, ValueRef};
//!
//! let ks = Keyspace::new(16, 16);
//! let l = ks.locate(0, b"k");
//! ks.lock(l.gid).set(b"k", l.hash, NewValue::Bytes(b"v"), None, 0);
//! // On the thread that runs BGSAVE, with no shard lock held: the
//! // snapshot's instant.
//! let mut snap = ks.begin_snapshot(1_000).expect("no other snapshot runs");
//! let sizes = snap.db_sizes().to_vec(); // RESIZEDB's hints
//! std::thread::scope(|t| {
//!     // A saver thread drives it; writers go on meanwhile.
//!     t.spawn(|| {
//!         let mut out = Vec::new();
//!         let mut db_now = None;
//!         loop {
//!             let step = snap.next(&ks, |db, key: &[u8], value: ValueRef<'_>, expire_ms| {
//!                 // No shard lock is held here (the slice was copied out).
//!                 if db_now != Some(db) {
//!                     db_now = Some(db); // SELECTDB db, RESIZEDB sizes[db]
//!                 }
//!                 out.extend_from_slice(key);
//!                 if let ValueRef::Str(s) = value {
//!                     s.with_bytes(|b| out.extend_from_slice(b));
//!                 }
//!                 let _ = expire_ms;
//!             });
//!             // No lock held here: write `out` to the file.
//!             if step.done {
//!                 break;
//!             }
//!         }
//!         assert_eq!(out, b"kv");
//!     });
//!     ks.lock(l.gid).set(b"k", l.hash, NewValue::Bytes(b"changed"), None, 1_001);
//! });
//! assert_eq!(sizes[0], (1, 0));
//! ```
//!
//! # How it works
//!
//! ```text
//!  begin_snapshot: every shard lock held at once (the instant of the snapshot),
//!                  each shard given a ShardSnap { cursor: 0, captured: [], marked: [] }
//!
//!  a shard's table, in position order (a key's position: its hash's low 32 bits)
//!  0 ───────────── cursor ─────────────────────────────── 2^32
//!  │  walked: saved │  not walked yet: a write here first   │
//!  │  writes here   │  captures the entry's pre-snapshot    │
//!  │  are ignored   │  form (once: the entry's SNAP bit)    │
//!
//!  saver: Snapshot::next → one slice of one shard under its lock: the
//!         entries from `cursor` on, up to a budget, that have no SNAP bit
//!         and were live at the start, are copied out; `cursor` moves on.
//!         Lock released: the copies, then the shard's captured forms,
//!         go to the sink.
//! ```
//!
//! The walk is a SCAN over positions (see `tern_table::Table::scan`):
//! positions never change, so a resize of the table during the walk
//! neither hides an entry from it nor shows one twice, and "walked"
//! is a comparison of the key's position with the cursor, which a
//! writer can make from the hash it already has. An entry written ahead
//! of the cursor gets the SNAP bit (see [`crate::Meta`]): its
//! pre-snapshot form is in hand (captured), or it had none (created
//! after the start), and the walk passes over it. Behind the cursor no
//! bit is ever set, so when a shard's walk is over the bits it set are
//! cleared from the hashes it noted, and the shard is back to no bits at
//! all: the next snapshot starts from a clean state, and so does one after
//! a cancelled snapshot (its shards clear their noted bits the same way),
//! with no walk over the keyspace. (A flip of a keyspace-wide parity bit
//! per snapshot, the other way to avoid a clearing walk, needs every
//! entry's bit rewritten by each walk, and a cancelled walk leaves bits
//! of both parities behind: the next snapshot would skip keys.)
//!
//! Whole tables leave a shard in two ways, both handled without copying:
//! FLUSHDB/FLUSHALL (sync or ASYNC) hand the detached table, with its
//! ShardSnap, to the snapshot instead of freeing it (the saver walks
//! it, then drops it); SWAPDB exchanges the ShardSnaps with the tables,
//! so a ShardSnap always describes the table it sits beside, and knows
//! which database that table's content belonged to at the start.
//!
//! # Order of delivery
//!
//! The sink sees database 0's entries, then database 1's, and so on:
//! each database's walked entries and captured forms, in no particular
//! order within it, and never an entry of a database before all of an
//! earlier one's. Captured forms of the database being walked are
//! handed out every few slices; those of later databases wait for
//! their turn (the memory this holds is [`Stats::peak_held`]).
//!
//! # Costs
//!
//! The instant: every shard lock taken once, in ascending order, all
//! held for the time it takes to install one prepared box in each. A
//! slice: up to [`SLICE`] entries (a large value weighs more) examined
//! and copied into a reused buffer under one shard lock (the sink's
//! serialising happens after it is released). A write ahead of the cursor, once per key per
//! snapshot: an owned copy of its value (a big list pushed to is
//! cloned whole before the push) and 8 bytes to note its hash.
//! Entries whose deadline had passed at the start are not saved
//! (Redis's rule); a hash's fields whose deadline had passed are in the
//! value delivered, for the writer to skip ([`Snapshot::start_ms`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};

use crate::keyspace::Keyspace;
use crate::shard::snap::{walk, Captured, Orphan, ShardSnap, Shared, GONE, ORPHAN, WALKED};
pub use crate::shard::snap::WEIGHT_BYTES;
use crate::shard::Shard;
use crate::value::{McRef, StrRef, Value, ValueRef};

/// Entries one slice examines under one shard lock (an entry weighs one
/// more per [`WEIGHT_BYTES`] it holds: its item and its value's heap).
pub const SLICE: usize = 256;
/// Noted hashes whose SNAP bits one lock hold clears.
const CLEAR_SLICE: usize = 1024;
/// Captured bytes of the database being walked above which the saver
/// collects them from every shard of it (else at each shard's turn).
const DRAIN_AT: usize = 1 << 20;

/// A slice's entries, copied out under their shard's lock so that the
/// sink (the RDB writer: encoding, LZF, checksum) runs after it is
/// released. Copying is a few `memcpy`s into one buffer that lives as
/// long as the snapshot; serialising the same entries took the lock for
/// 10–30× longer, and a saver preempted while holding it made a worker
/// wait a whole scheduler period. What is copied is the entry's form at
/// the start, exactly: the slice examines it under the lock, as before,
/// and the cursor passes it in the same hold, so later writes to it
/// neither capture it nor reach the copy.
#[derive(Debug, Default)]
struct Batch {
    /// Keys and string bytes of the slice, back to back.
    bytes: Vec<u8>,
    items: Vec<Copied>,
}

#[derive(Debug)]
struct Copied {
    /// The key: `bytes[key.0..key.1]`.
    key: (usize, usize),
    value: CopiedValue,
    expire: Option<u64>,
}

/// A value as a slice copied it: string bytes into the batch's buffer,
/// buffers shared with replies by reference (their writers copy before a
/// change while one is held), other types cloned (a slice weighs them by
/// their heap size, see [`WEIGHT_BYTES`]).
#[derive(Debug)]
enum CopiedValue {
    Int(i64),
    Whole(usize, usize),
    Raw(usize, usize),
    /// A memcached item's header and data, in the buffer or shared.
    Mc(usize, usize),
    McShared(Arc<Vec<u8>>),
    Shared(Arc<Vec<u8>>),
    Owned(Value),
}

impl Batch {
    fn put(&mut self, b: &[u8]) -> (usize, usize) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(b);
        (at, self.bytes.len())
    }

    fn push(&mut self, key: &[u8], v: ValueRef<'_>, expire: Option<u64>) {
        let key = self.put(key);
        let value = match v {
            ValueRef::Str(StrRef::Int(n)) => CopiedValue::Int(n),
            ValueRef::Str(StrRef::Whole(b)) => {
                let (a, z) = self.put(b);
                CopiedValue::Whole(a, z)
            }
            ValueRef::Str(StrRef::Raw(b)) => {
                let (a, z) = self.put(b);
                CopiedValue::Raw(a, z)
            }
            ValueRef::Str(StrRef::Mc(m)) => match m.shared() {
                Some(a) => CopiedValue::McShared(a.clone()),
                None => {
                    let (a, z) = self.put(m.buffer());
                    CopiedValue::Mc(a, z)
                }
            },
            ValueRef::Str(StrRef::Shared(a)) => CopiedValue::Shared(a.clone()),
            ValueRef::Hash(h) => CopiedValue::Owned(Value::Hash(h.clone())),
            ValueRef::List(l) => CopiedValue::Owned(Value::List(l.to_list())),
            ValueRef::Set(x) => CopiedValue::Owned(Value::Set(x.clone())),
            ValueRef::ZSet(z) => CopiedValue::Owned(Value::ZSet(z.clone())),
            ValueRef::Stream(x) => CopiedValue::Owned(Value::Stream(Box::new(x.clone()))),
        };
        self.items.push(Copied { key, value, expire });
    }

    /// Hands every entry to `sink` as database `db`'s, and empties the
    /// batch (its buffers keep their capacity for the next slice).
    fn deliver(&mut self, db: u32, sink: &mut impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) {
        let b = &self.bytes;
        for c in &self.items {
            let v = match &c.value {
                CopiedValue::Int(n) => ValueRef::Str(StrRef::Int(*n)),
                CopiedValue::Whole(a, z) => ValueRef::Str(StrRef::Whole(&b[*a..*z])),
                CopiedValue::Raw(a, z) => ValueRef::Str(StrRef::Raw(&b[*a..*z])),
                CopiedValue::Mc(a, z) => ValueRef::Str(StrRef::Mc(McRef::new(&b[*a..*z], None))),
                CopiedValue::McShared(s) => ValueRef::Str(StrRef::Mc(McRef::new(s, Some(s)))),
                CopiedValue::Shared(s) => ValueRef::Str(StrRef::Shared(s)),
                CopiedValue::Owned(v) => v.as_value_ref(),
            };
            sink(db, &b[c.key.0..c.key.1], v, c.expire);
        }
        self.items.clear();
        self.bytes.clear();
    }
}

/// Why [`Keyspace::begin_snapshot`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// Another snapshot of this keyspace is running.
    InProgress,
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a snapshot is already in progress")
    }
}

impl std::error::Error for SnapshotError {}

/// What one [`Snapshot::next`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Entries examined under the one shard lock the call held (0 if it
    /// walked a detached table, which needs no lock).
    pub visited: usize,
    /// Entries handed to the sink, walked and captured.
    pub delivered: usize,
    /// The snapshot is complete: nothing more will be delivered.
    pub done: bool,
}

/// Counters over a snapshot's run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Entries delivered from the walk, and from captured copies.
    pub walked: u64,
    pub captured: u64,
    /// Shard lock holds of the walk, the most entries one examined, and
    /// the longest one (wall time: it includes the sink's work, and any
    /// time the saver was descheduled while holding the lock).
    pub slices: u64,
    pub max_slice: usize,
    pub max_hold: Duration,
    /// The most bytes of captured copies held at once.
    pub peak_held: usize,
    /// Hashes of marked entries noted (8 bytes each while the part lasts)
    /// by the parts walked in place.
    pub noted: u64,
}

/// A running snapshot, driven by one saver thread: call
/// [`Snapshot::next`] until it reports `done`. Dropping it before then
/// gives it up (the next [`Keyspace::begin_snapshot`] clears what it
/// left; [`Snapshot::cancel`] does it at once).
#[derive(Debug)]
pub struct Snapshot {
    shared: Arc<Shared>,
    /// The keyspace it belongs to, checked on every call.
    ks: usize,
    start_ms: u64,
    /// The first effect record number after the snapshot's instant.
    seq: u64,
    dbs: usize,
    /// Keys and keys with a TTL per database at the start (expired ones
    /// not yet removed included): RESIZEDB's hint.
    sizes: Vec<(usize, usize)>,
    /// The walk's place: database, shard index.
    db: usize,
    index: usize,
    orphan: Option<Orphan>,
    slice: usize,
    /// The slice being copied out (see [`Batch`]).
    batch: Batch,
    stats: Stats,
    finished: bool,
}

impl Keyspace {
    /// Starts a snapshot of the whole keyspace as it is now: every shard
    /// lock is taken once, in ascending order, and all of them are held
    /// while each shard is given its (prepared) part, so a multi-key
    /// write is in it whole or not at all. `now_ms` is the start time:
    /// keys whose deadline is at or before it are not saved.
    ///
    /// One snapshot runs at a time; a previous one that was dropped
    /// unfinished is cleared up first.
    ///
    /// The caller must hold no shard lock: called under EXEC's pinned
    /// [`crate::LockSet`] (BGSAVE in MULTI) it would wait for itself.
    pub fn begin_snapshot(&self, now_ms: u64) -> Result<Snapshot, SnapshotError> {
        self.begin_snapshot_with(now_ms, |_, _| {})
    }

    /// [`Keyspace::begin_snapshot`], calling `inspect` with each shard
    /// (by global id) at the instant of the snapshot (tests record what
    /// the snapshot must hold).
    pub(crate) fn begin_snapshot_with(&self, now_ms: u64, mut inspect: impl FnMut(usize, &Shard)) -> Result<Snapshot, SnapshotError> {
        let mut cur = self.snapshot.lock();
        if let Some(prev) = cur.take() {
            if !prev.abandoned.load(Ordering::Acquire) {
                *cur = Some(prev);
                return Err(SnapshotError::InProgress);
            }
            clear_up(self, &prev);
        }
        let per = self.shards_per_db();
        let total = self.total_shards();
        let shared = Arc::new(Shared {
            per_db: per,
            homes: (0..total).map(|g| AtomicU32::new((g / per) as u32)).collect(),
            pending: (0..total).map(|_| AtomicUsize::new(0)).collect(),
            orphans: Mutex::new(Vec::new()),
            held: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            abandoned: AtomicBool::new(false),
        });
        let mut parts: Vec<Box<ShardSnap>> = (0..total)
            .map(|g| {
                Box::new(ShardSnap {
                    shared: shared.clone(),
                    db: (g / per) as u32,
                    index: (g % per) as u32,
                    start_ms: now_ms,
                    cursor: 0,
                    captured: Vec::new(),
                    captured_bytes: 0,
                    marked: Vec::new(),
                    noted: 0,
                })
            })
            .collect();
        let mut sizes = vec![(0, 0); self.db_count()];
        let mut guards = Vec::with_capacity(total);
        for g in 0..total as u32 {
            guards.push(self.lock(g));
        }
        for (g, guard) in guards.iter_mut().enumerate().rev() {
            let s = &mut sizes[g / per];
            s.0 += guard.len();
            s.1 += guard.volatile_count();
            let part = parts.pop();
            guard.snap_begin(part);
            inspect(g, guard);
        }
        // Every shard is held: no record is being numbered.
        let seq = self.seq.load(Ordering::Relaxed);
        drop(guards);
        *cur = Some(shared.clone());
        Ok(Snapshot {
            shared,
            ks: self as *const Keyspace as usize,
            start_ms: now_ms,
            seq,
            dbs: self.db_count(),
            sizes,
            db: 0,
            index: 0,
            orphan: None,
            slice: SLICE,
            batch: Batch::default(),
            stats: Stats::default(),
            finished: false,
        })
    }

    /// Whether a snapshot is running (begun, neither finished nor given up).
    pub fn snapshot_running(&self) -> bool {
        self.snapshot.lock().as_ref().is_some_and(|s| !s.abandoned.load(Ordering::Acquire))
    }
}

/// Clears every part of `shared` left in `ks` (a cancelled or abandoned
/// snapshot): its bits are cleared from the entries it marked, its copies
/// and detached tables dropped. Each shard is locked once per
/// [`CLEAR_SLICE`] hashes.
fn clear_up(ks: &Keyspace, shared: &Arc<Shared>) {
    let per = shared.per_db;
    for slot in 0..shared.homes.len() {
        loop {
            match shared.homes[slot].load(Ordering::Acquire) {
                GONE => break,
                ORPHAN => {
                    if let Some(o) = shared.take_orphan(slot) {
                        shared.held(-(o.snap.captured_bytes as isize));
                        ks.lazyfree.free(o.table);
                    }
                    shared.homes[slot].store(GONE, Ordering::Release);
                    break;
                }
                home => {
                    let gid = ks.gid(home as usize, slot % per);
                    let mut s = ks.lock(gid);
                    if !s.snap_is(shared, slot) {
                        shared.check_home(slot, home);
                        continue;
                    }
                    let done = s.snap_clear(CLEAR_SLICE, true).is_some();
                    if done {
                        shared.homes[slot].store(GONE, Ordering::Release);
                    }
                    MutexGuard::unlock_fair(s);
                    if done {
                        break;
                    }
                }
            }
        }
    }
}

impl Snapshot {
    /// The start time (ms since the Unix epoch) the snapshot holds the
    /// keyspace at: what the RDB writer compares hash field deadlines
    /// with (fields due by then are delivered in their hash; Redis would
    /// not have them).
    pub fn start_ms(&self) -> u64 {
        self.start_ms
    }

    /// The effect records numbered below this are of writes the snapshot
    /// holds; those from it on, of writes after its instant (where an AOF
    /// rewrite starts its new incremental file).
    pub fn first_seq_after(&self) -> u64 {
        self.seq
    }

    /// Keys and keys with a TTL in each database at the start, counting
    /// expired keys not yet removed (RESIZEDB's hint).
    pub fn db_sizes(&self) -> &[(usize, usize)] {
        &self.sizes
    }

    /// Sets the entries one slice may examine under a shard lock (at
    /// least 1; [`SLICE`] by default).
    pub fn set_slice(&mut self, entries: usize) {
        self.slice = entries.max(1);
    }

    pub fn stats(&self) -> Stats {
        Stats { peak_held: self.shared.peak.load(Ordering::Relaxed), ..self.stats }
    }

    /// Captured bytes held now, not yet delivered.
    pub fn held_bytes(&self) -> usize {
        self.shared.held.load(Ordering::Relaxed)
    }

    /// Does one bounded piece of the snapshot: one slice of one shard's
    /// walk under its lock, the entries it finds copied out (see
    /// [`Batch`]); then, with no lock held, those entries and the captured
    /// copies that are due go to the sink (which may take shard locks and
    /// write: what it is given is the start's form all the same). Databases are delivered in order (see the
    /// module docs). Call again until `done`.
    ///
    /// # Panics
    /// If `ks` is not the keyspace the snapshot was begun on.
    pub fn next(&mut self, ks: &Keyspace, mut sink: impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) -> Step {
        assert_eq!(self.ks, ks as *const Keyspace as usize, "snapshot driven on another keyspace");
        let mut step = Step::default();
        let per = self.shared.per_db;
        // Copies taken from the part walked, delivered once its lock is
        // released, as its database's.
        let (out, db) = loop {
            if self.db >= self.dbs {
                self.finish(ks);
                step.done = true;
                return step;
            }
            let slot = self.db * per + self.index;
            let db = self.db as u32;
            if let Some(o) = self.orphan.as_mut() {
                // No lock: a bigger slice only makes the call longer.
                step.delivered += walk(&o.table, &mut o.snap, self.slice.saturating_mul(64), db, &mut sink).1;
                let out = o.snap.take_captured();
                if o.snap.cursor == WALKED {
                    self.orphan = None;
                    self.shared.homes[slot].store(GONE, Ordering::Release);
                    self.advance();
                }
                break (out, db);
            }
            match self.shared.homes[slot].load(Ordering::Acquire) {
                GONE => self.advance(),
                ORPHAN => {
                    // Taken by this thread alone: it walks without a lock.
                    self.orphan = self.shared.take_orphan(slot);
                    if self.orphan.is_none() {
                        self.shared.homes[slot].store(GONE, Ordering::Release);
                    }
                }
                home => {
                    let gid = ks.gid(home as usize, self.index);
                    let mut s = ks.lock(gid);
                    let since = Instant::now();
                    if !s.snap_is(&self.shared, slot) {
                        // SWAPDB or a FLUSH moved the part between the load and the lock.
                        self.shared.check_home(slot, home);
                        continue;
                    }
                    let batch = &mut self.batch;
                    let (visited, delivered, walked) = s.snap_slice(self.slice, db, &mut |_, k: &[u8], v: ValueRef<'_>, t| batch.push(k, v, t));
                    step.visited = visited;
                    step.delivered += delivered;
                    self.stats.walked += delivered as u64;
                    self.stats.slices += 1;
                    self.stats.max_slice = self.stats.max_slice.max(visited);
                    let out = s.snap_take_captured();
                    if let Some(noted) = walked.then(|| s.snap_clear(CLEAR_SLICE, false)).flatten() {
                        self.stats.noted += noted as u64;
                        self.shared.homes[slot].store(GONE, Ordering::Release);
                        self.advance();
                    }
                    // Handed straight to a writer waiting for it: unlocked
                    // plainly, the saver's next slice took the lock
                    // again before a parked writer woke (one waited 19 ms
                    // at 1M keys).
                    self.stats.max_hold = self.stats.max_hold.max(since.elapsed());
                    MutexGuard::unlock_fair(s);
                    self.batch.deliver(db, &mut sink);
                    break (out, db);
                }
            }
        };
        step.delivered += self.deliver(out, db, &mut sink);
        if self.shared.held.load(Ordering::Relaxed) >= DRAIN_AT {
            step.delivered += self.drain_db(ks, &mut sink);
        }
        step
    }

    /// Runs the snapshot to its end, handing every entry to `sink`.
    pub fn run(&mut self, ks: &Keyspace, mut sink: impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) -> Stats {
        while !self.next(ks, &mut sink).done {}
        self.stats()
    }

    /// Gives the snapshot up now: the bits it set are cleared and its
    /// copies and detached tables dropped, shard by shard (each lock
    /// held for a bounded piece), so the next snapshot starts clean.
    pub fn cancel(mut self, ks: &Keyspace) {
        assert_eq!(self.ks, ks as *const Keyspace as usize, "snapshot cancelled on another keyspace");
        self.orphan = None;
        clear_up(ks, &self.shared);
        self.finish(ks);
    }

    fn advance(&mut self) {
        self.index += 1;
        if self.index == self.shared.per_db {
            self.index = 0;
            self.db += 1;
        }
    }

    fn deliver(&mut self, out: Vec<Captured>, db: u32, sink: &mut impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) -> usize {
        let n = out.len();
        let mut bytes = 0;
        for c in out {
            bytes += c.bytes();
            sink(db, &c.key, c.value.as_value_ref(), c.expire);
        }
        self.shared.held(-(bytes as isize));
        self.stats.captured += n as u64;
        n
    }

    /// Collects and delivers the captured copies waiting in the shards
    /// of the database being walked.
    fn drain_db(&mut self, ks: &Keyspace, sink: &mut impl FnMut(u32, &[u8], ValueRef<'_>, Option<u64>)) -> usize {
        if self.db >= self.dbs {
            return 0;
        }
        let per = self.shared.per_db;
        let mut n = 0;
        for index in self.index..per {
            let slot = self.db * per + index;
            if self.shared.pending[slot].load(Ordering::Relaxed) == 0 {
                continue;
            }
            let home = self.shared.homes[slot].load(Ordering::Acquire);
            if home == GONE || home == ORPHAN {
                continue;
            }
            let out = {
                let mut s = ks.lock(ks.gid(home as usize, index));
                if !s.snap_is(&self.shared, slot) {
                    continue;
                }
                let out = s.snap_take_captured();
                MutexGuard::unlock_fair(s);
                out
            };
            n += self.deliver(out, self.db as u32, sink);
        }
        n
    }

    fn finish(&mut self, ks: &Keyspace) {
        if !self.finished {
            self.finished = true;
            let mut cur = ks.snapshot.lock();
            if cur.as_ref().is_some_and(|s| Arc::ptr_eq(s, &self.shared)) {
                *cur = None;
            }
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.abandoned.store(true, Ordering::Release);
        }
    }
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
