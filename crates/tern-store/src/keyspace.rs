//! Databases, shards, key location and ordered shard locking.
//!
//! A key has two placements, from two functions of its bytes:
//!
//! ```text
//!   key ──► slot = CRC16(hash tag or key) mod 16384 ──► shard = slot >> (14 - shard_bits)
//!    └────► hash = seeded 64-bit hash ────────────────► bucket inside the shard's table
//! ```
//!
//! Each shard owns a contiguous range of Redis Cluster's hash slots, so keys
//! that share a `{hash tag}` share a shard (a multi-key command on one tag
//! takes one lock) and a cluster mode can hand out whole shards. The slot is
//! public and predictable, so it only chooses among a few shards; the bucket
//! comes from the hash, keyed with a per-process seed, so crafted keys cannot
//! pile into one bucket.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use hashbrown::DefaultHashBuilder;
use parking_lot::{Mutex, MutexGuard};
use smallvec::SmallVec;

use crate::effect::Effects;
use crate::evict::Pool;
use crate::lazyfree::LazyFree;
use crate::padded::Padded;
use crate::shard::{Shard, Waiter};
use crate::slot::{key_slot, SLOTS};
use crate::event::NOTE_EVENTS;
use crate::tracked::{Marks, NOTE_TRACK};

mod evict;

const _: () = assert!(std::mem::align_of::<Padded<Mutex<Shard>>>() == 128);

/// What a shard publishes each time its lock is released, for readers
/// that take no lock: its table's prefetch hint (see
/// [`Keyspace::prefetch_hint`]), its memory and key counts (the memory
/// limit's check and eviction's choice of shards) and its change count
/// (the save schedule's). Written only by the lock holder, so each is a
/// single-writer counter.
#[derive(Debug, Default)]
struct Hint {
    base: AtomicUsize,
    nb: AtomicU64,
    /// [`Shard::mem`] as of the last release.
    mem: AtomicUsize,
    /// The part of `mem` added to [`Keyspace::used_memory`]'s total.
    reported: AtomicUsize,
    keys: AtomicUsize,
    volatile: AtomicUsize,
    /// [`Shard::changes`] as of the last release.
    changes: AtomicU64,
}

/// How far a shard's memory may move before it is added to the
/// keyspace's total: the total is off by at most this much per shard,
/// and the shared counter is written once per this many bytes changed
/// rather than once per write.
pub const MEM_REPORT_GRAIN: usize = 16 * 1024;

/// Where a key lives: its hash (computed once, places it in its table), its
/// shard's global id and its cluster slot (which chose the shard).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loc {
    pub hash: u64,
    pub gid: u32,
    pub slot: u16,
}

const _: () = assert!(std::mem::size_of::<Loc>() == 16);

#[derive(Debug)]
pub struct Keyspace {
    /// All shards of all databases, database-major: `gid = db * S + shard`.
    shards: Box<[Padded<Mutex<Shard>>]>,
    /// Per shard, its table's bucket array address and bucket count as last
    /// published under the lock: read without the lock to prefetch before a
    /// batch takes its locks. A stale pair only wastes a prefetch.
    hints: Box<[Padded<Hint>]>,
    dbs: usize,
    shard_bits: u32,
    hasher: DefaultHashBuilder,
    /// Where the next active-expiry cycle starts.
    expire_cursor: AtomicUsize,
    /// Background freeing of detached data (UNLINK, FLUSH* ASYNC).
    pub lazyfree: LazyFree,
    /// New keys start an LFU counter (shared with every shard).
    lfu: Arc<AtomicBool>,
    /// The FIFO policy the shards' queues follow (shared with every shard).
    fifo_mode: Arc<AtomicU8>,
    /// A replica's keyspace (shared with every shard; see
    /// [`Keyspace::set_replica`]).
    replica: Arc<AtomicBool>,
    /// A reader of effect records is attached (shared with every shard).
    recording: Arc<AtomicBool>,
    /// Whether writes are noted, for tracking ([`NOTE_TRACK`]) or
    /// notifications ([`NOTE_EVENTS`]); shared with every shard.
    noting: Arc<AtomicU8>,
    /// The shards' memory, summed in steps of [`MEM_REPORT_GRAIN`] (see
    /// [`Keyspace::used_memory`]).
    used: Padded<AtomicUsize>,
    /// Eviction's pool of candidates (see [`crate::evict`]); taken by one
    /// evictor at a time, with no shard lock held.
    pub(crate) pool: Mutex<Pool>,
    /// The running snapshot (see [`crate::snapshot`]); taken with no shard
    /// lock held.
    pub(crate) snapshot: Mutex<Option<Arc<crate::shard::snap::Shared>>>,
    /// The effect records' sequence (see [`crate::effect`]), shared with
    /// every shard.
    pub(crate) seq: Arc<AtomicU64>,
    /// Keys with tracking marks, per database (see [`crate::tracked`]),
    /// shared with every shard.
    marked: Arc<Marks>,
}

impl Keyspace {
    /// `shards_per_db` is rounded up to a power of two, at most 16384 (one
    /// slot per shard).
    pub fn new(dbs: usize, shards_per_db: usize) -> Self {
        let per = shards_per_db.max(1).next_power_of_two().min(SLOTS);
        let hasher = DefaultHashBuilder::default();
        let lfu = Arc::new(AtomicBool::new(false));
        let fifo_mode = Arc::new(AtomicU8::new(0));
        let replica = Arc::new(AtomicBool::new(false));
        let recording = Arc::new(AtomicBool::new(false));
        let noting = Arc::new(AtomicU8::new(0));
        let seq = Arc::new(AtomicU64::new(0));
        let marked = Arc::new(Marks::new(dbs));
        let shard = |gid: usize| {
            let mut s = Shard::with_hasher(hasher);
            s.share_lfu_flag(lfu.clone());
            s.share_fifo_mode(fifo_mode.clone());
            s.share_replica_flag(replica.clone());
            s.place((gid / per) as u32, gid & (per - 1) == 0, recording.clone(), noting.clone(), seq.clone(), marked.clone());
            Padded(Mutex::new(s))
        };
        let ks = Keyspace {
            shards: (0..dbs * per).map(shard).collect(),
            hints: (0..dbs * per).map(|_| Padded(Hint::default())).collect(),
            dbs,
            shard_bits: per.trailing_zeros(),
            hasher,
            expire_cursor: AtomicUsize::new(0),
            lazyfree: LazyFree::new(),
            lfu,
            fifo_mode,
            replica,
            recording,
            noting,
            used: Padded(AtomicUsize::new(0)),
            pool: Mutex::new(Pool::default()),
            snapshot: Mutex::new(None),
            seq,
            marked,
        };
        // The empty tables' bucket arrays count from the start.
        for gid in 0..ks.shards.len() as u32 {
            ks.publish_hint(gid, &ks.lock(gid));
        }
        ks
    }

    /// Attaches (or detaches) a reader of effect records: while attached,
    /// every write builds its record (see [`crate::effect`]); while not,
    /// none is built. Takes no lock; a write already under way when the
    /// flag changes may or may not be recorded.
    pub fn attach_effects(&self, on: bool) {
        self.recording.store(on, Ordering::Relaxed);
    }

    /// Makes every write note its key for CLIENT TRACKING's invalidations
    /// (see [`Effects::take_modified`]), or stop. A write under way when
    /// the flag changes may or may not be noted.
    pub fn track_writes(&self, on: bool) {
        self.note(NOTE_TRACK, on);
    }

    /// Makes every write note its key and its event (see [`crate::event`])
    /// for keyspace notifications, or stop.
    pub fn notify_writes(&self, on: bool) {
        self.note(NOTE_EVENTS, on);
    }

    fn note(&self, bit: u8, on: bool) {
        if on {
            self.noting.fetch_or(bit, Ordering::Relaxed);
        } else {
            self.noting.fetch_and(!bit, Ordering::Relaxed);
        }
    }

    /// Keys with tracking marks in database `db` (see [`crate::tracked`]).
    pub fn marked(&self, db: usize) -> usize {
        self.marked.of(db)
    }

    /// Keys with tracking marks in every database, and the (key, client)
    /// pairs they stand for (INFO's `tracking_total_keys` and
    /// `tracking_total_items`, beside the tracking table's): the pairs
    /// summed over the shards of the databases that have marks, under
    /// their locks (none may be held).
    pub fn marked_total(&self) -> (usize, usize) {
        let mut pairs = 0;
        for db in (0..self.dbs).filter(|&d| self.marked(d) > 0) {
            for gid in self.db_gids(db) {
                pairs += self.lock(gid).mark_pairs();
            }
        }
        (self.marked_keys(), pairs)
    }

    /// Keys with tracking marks in every database (one load).
    #[inline]
    pub fn marked_keys(&self) -> usize {
        self.marked.keys.load(Ordering::Relaxed)
    }

    /// Takes the tracking marks of `key` in every database but `db` that
    /// has any (a write in `db`: the tracking table Redis keeps is one for
    /// all databases). Takes the shards' locks: none may be held.
    pub fn take_marks_elsewhere(&self, db: usize, key: &[u8]) -> u64 {
        let mut m = 0;
        for other in (0..self.dbs).filter(|&d| d != db && self.marked(d) > 0) {
            let l = self.locate(other, key);
            m |= self.lock(l.gid).take_marks(key, l.hash);
        }
        m
    }

    /// Clears `mask`'s bits from the tracking marks of every key (in the
    /// databases that have marks). Takes the shards' locks one at a time:
    /// none may be held.
    pub fn clear_marks(&self, mask: u64) {
        for db in (0..self.dbs).filter(|&d| self.marked(d) > 0) {
            for gid in self.db_gids(db) {
                self.lock(gid).clear_marks(mask);
            }
        }
    }

    /// Takes the marks of a key drawn at random among the marked ones
    /// (a few draws in one shard of a database that has marks): its
    /// database, name and marks. None if the draws found none. Takes a
    /// shard's lock: none may be held.
    pub fn take_random_marks(&self, rng: &mut dyn FnMut() -> u64) -> Option<(usize, Box<[u8]>, u64)> {
        let dbs: Vec<usize> = (0..self.dbs).filter(|&d| self.marked(d) > 0).collect();
        let db = *dbs.get(rng() as usize % dbs.len().max(1))?;
        let gids = self.db_gids(db);
        let gid = gids.start + (rng() % u64::from(gids.end - gids.start)) as u32;
        let (key, m) = self.lock(gid).take_random_marks(&mut || rng(), 16)?;
        Some((db, key, m))
    }

    /// Whether writes are noted for tracking.
    #[inline]
    pub fn writes_tracked(&self) -> bool {
        self.noting.load(Ordering::Relaxed) & NOTE_TRACK != 0
    }

    /// Whether writes are noted (for tracking or notifications).
    #[inline]
    pub fn writes_noted(&self) -> bool {
        self.noting.load(Ordering::Relaxed) != 0
    }

    /// Whether new keys start an LFU counter (see [`Keyspace::set_lfu`]).
    pub(crate) fn lfu(&self) -> bool {
        self.lfu.load(Ordering::Relaxed)
    }

    /// Whether a reader of effect records is attached.
    pub fn effects_attached(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    /// log2 of the shards per database: a global SCAN cursor keeps the shard
    /// index in this many low bits.
    pub fn shard_bits(&self) -> u32 {
        self.shard_bits
    }

    pub fn db_count(&self) -> usize {
        self.dbs
    }

    pub fn shards_per_db(&self) -> usize {
        1 << self.shard_bits
    }

    /// The hasher of [`Keyspace::hash`], for tables kept beside the
    /// keyspace that are keyed by the same hashes (the tracking table).
    pub fn hasher(&self) -> &DefaultHashBuilder {
        &self.hasher
    }

    /// The key's 64-bit hash, keyed with a per-process random seed.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        tern_table::hash_key(&self.hasher, key)
    }

    /// Shard index within a database for a cluster slot: shard `i` owns
    /// slots `i << (14 - shard_bits)` up to the next shard's first.
    #[inline]
    pub fn shard_of(&self, slot: u16) -> usize {
        (slot as usize) >> (SLOTS.trailing_zeros() - self.shard_bits)
    }

    #[inline]
    pub fn gid(&self, db: usize, shard: usize) -> u32 {
        ((db << self.shard_bits) | shard) as u32
    }

    /// The database a global shard id belongs to.
    pub fn db_of(&self, gid: u32) -> usize {
        (gid as usize) >> self.shard_bits
    }

    /// The "locate" step: the key's slot picks its shard, its hash (computed
    /// once) its bucket. Inlined into each caller's loop over keys: as a
    /// call, saving and restoring registers cost more than the rest of it.
    #[inline(always)]
    pub fn locate(&self, db: usize, key: &[u8]) -> Loc {
        let slot = key_slot(key);
        Loc { hash: self.hash(key), gid: self.gid(db, self.shard_of(slot)), slot }
    }

    /// Locks one shard by global id. For walks that hold one shard at a time.
    /// Cross-command stage 1, before any lock is taken: asks for the cache
    /// lines of shard `gid`'s lock and of `hash`'s bucket. Only a hint.
    #[inline]
    pub fn prefetch_hint(&self, gid: u32, hash: u64) {
        let Some(Padded(h)) = self.hints.get(gid as usize) else { return };
        let base = h.base.load(Ordering::Relaxed);
        if base != 0 {
            tern_table::prefetch_hinted(base, h.nb.load(Ordering::Relaxed), hash);
        }
    }

    /// Publishes shard `gid`'s table hint, memory and key counts; called
    /// with the shard locked, as the lock is released. Each store is
    /// skipped when the value did not change, so a read-only command
    /// leaves the lines clean for other readers.
    #[inline]
    pub fn publish_hint(&self, gid: u32, shard: &Shard) {
        let Some(Padded(h)) = self.hints.get(gid as usize) else { return };
        let (base, nb) = shard.hint();
        let store = |cell: &AtomicUsize, v: usize| {
            if cell.load(Ordering::Relaxed) != v {
                cell.store(v, Ordering::Relaxed);
            }
        };
        store(&h.base, base);
        if h.nb.load(Ordering::Relaxed) != nb {
            h.nb.store(nb, Ordering::Relaxed);
        }
        let mem = shard.mem();
        store(&h.mem, mem);
        store(&h.keys, shard.len());
        store(&h.volatile, shard.volatile_count());
        if h.changes.load(Ordering::Relaxed) != shard.changes {
            h.changes.store(shard.changes, Ordering::Relaxed);
        }
        let reported = h.reported.load(Ordering::Relaxed);
        if mem.abs_diff(reported) >= MEM_REPORT_GRAIN {
            h.reported.store(mem, Ordering::Relaxed);
            if mem > reported {
                self.used.0.fetch_add(mem - reported, Ordering::Relaxed);
            } else {
                self.used.0.fetch_sub(reported - mem, Ordering::Relaxed);
            }
        }
    }

    /// Bytes held by every shard (tables, items, values, each rounded to
    /// jemalloc's size classes), as their counters were last published:
    /// the sum of one shared total, off by less than
    /// [`MEM_REPORT_GRAIN`] per shard, so that checking it before every
    /// write costs one load.
    #[inline]
    pub fn used_memory(&self) -> usize {
        self.used.0.load(Ordering::Relaxed)
    }

    /// [`Keyspace::used_memory`] exactly: the sum of every shard's
    /// published counter (INFO, MEMORY STATS).
    pub fn used_memory_exact(&self) -> usize {
        self.hints.iter().map(|Padded(h)| h.mem.load(Ordering::Relaxed)).sum()
    }

    /// The shards' change counts ([`Shard::changes`]) as last published:
    /// what the save schedule and INFO compare with the count at the last
    /// save, without taking a lock. A write is counted once its lock is
    /// released (a command's before its reply); one made under a bare
    /// [`Keyspace::lock`] once the shard is next released through a
    /// [`LockSet`], or visited by [`Keyspace::expire_cycle`].
    pub fn published_changes(&self) -> u64 {
        self.hints.iter().map(|Padded(h)| h.changes.load(Ordering::Relaxed)).sum()
    }

    /// Keys in shard `gid` as last published (`volatile`: keys with a TTL).
    pub(crate) fn published_keys(&self, gid: u32, volatile: bool) -> usize {
        let Some(Padded(h)) = self.hints.get(gid as usize) else { return 0 };
        if volatile {
            h.volatile.load(Ordering::Relaxed)
        } else {
            h.keys.load(Ordering::Relaxed)
        }
    }

    pub fn lock(&self, gid: u32) -> MutexGuard<'_, Shard> {
        self.shards[gid as usize].0.lock()
    }

    /// Locks one shard for a writer that holds no [`LockSet`] (the
    /// memcached executor): the effect records of its writes go to `fx`
    /// when the lock is released.
    pub fn lock_writing<'a>(&'a self, gid: u32, fx: &'a Effects) -> ShardLock<'a> {
        ShardLock { guard: self.lock(gid), fx, ks: self, gid }
    }

    /// Locks one shard if no one holds it: for work that is only worth
    /// doing when it costs no wait (cross-command prefetch).
    pub fn try_lock(&self, gid: u32) -> Option<MutexGuard<'_, Shard>> {
        self.shards.get(gid as usize)?.0.try_lock()
    }

    /// Locks one shard, waiting at most `wait` for it.
    pub fn lock_for(&self, gid: u32, wait: std::time::Duration) -> Option<MutexGuard<'_, Shard>> {
        self.shards.get(gid as usize)?.0.try_lock_for(wait)
    }

    /// Whether new keys start an LFU counter (under an LFU
    /// maxmemory-policy) or an LRU time. Takes no lock.
    /// The number the next effect record will take: every record made so
    /// far is below it.
    pub fn next_seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// The keyspace is a replica's (REPLICAOF): reads hide keys past their
    /// deadline without deleting them, and the expiry cycle leaves them,
    /// for the master's DEL to remove, as in Redis.
    pub fn set_replica(&self, on: bool) {
        // No shard is locked here: REPLICAOF NO ONE may run under EXEC,
        // which holds them all. A promoted server's expiry cycle forgets
        // the writable replica's own deadlines shard by shard.
        self.replica.store(on, Ordering::Relaxed);
    }

    pub fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Relaxed)
    }

    pub fn set_lfu(&self, lfu: bool) {
        self.lfu.store(lfu, Ordering::Relaxed);
    }

    /// Makes the shards track keys for S3-FIFO or SIEVE (or stop): each
    /// shard rebuilds its queues at its next write or eviction. Takes no
    /// lock.
    pub fn set_fifo(&self, policy: crate::evict::Policy) {
        let (kind, volatile) = policy.fifo();
        self.fifo_mode.store(crate::fifo::encode(kind, volatile), Ordering::Relaxed);
    }

    /// Global ids of database `db`'s shards, ascending.
    pub fn db_gids(&self, db: usize) -> std::ops::Range<u32> {
        let per = self.shards_per_db() as u32;
        let start = db as u32 * per;
        start..start + per
    }

    pub fn total_shards(&self) -> usize {
        self.shards.len()
    }

    /// One bounded round of active expiry: visits shards round-robin,
    /// removing up to `per_shard` expired keys from each, until `shards`
    /// shards have been visited. Returns the keys removed. Each shard is
    /// locked only while it is being cleaned; the deletions' records go
    /// to `fx`, the expiry cycle's own buffer.
    pub fn expire_cycle(&self, now: u64, shards: usize, per_shard: usize, fx: &Effects) -> usize {
        self.expire_cycle_with(now, shards, per_shard, fx, &mut |_| {})
    }

    /// [`Keyspace::expire_cycle`], calling `after_shard` with `fx` after
    /// each shard's records are in it and while that shard is still held:
    /// the server tells CLIENT TRACKING's trackers there, so that a read
    /// of a removed key on another worker, which waits for the shard,
    /// comes after the invalidation and is remembered anew.
    pub fn expire_cycle_with(&self, now: u64, shards: usize, per_shard: usize, fx: &Effects, after_shard: &mut dyn FnMut(&Effects)) -> usize {
        let n = self.shards.len();
        let start = self.expire_cursor.fetch_add(shards, Ordering::Relaxed);
        let mut removed = 0;
        // A replica's keys go when its master's DEL comes; only those its
        // own clients gave a deadline (a writable replica's) go here.
        let replica = self.is_replica();
        for i in 0..shards.min(n) {
            let gid = ((start + i) % n) as u32;
            let mut s = self.lock(gid);
            if replica {
                removed += s.expire_local(now, per_shard);
            } else {
                s.forget_local_deadlines();
                // An idle shard follows a policy switch here, not on a command.
                s.fifo_sync(now);
                if s.has_deadlines() {
                    removed += s.expire_cycle(now, per_shard);
                }
            }
            s.drain_effects(fx);
            after_shard(fx);
            if !replica {
                // An idle table finishes its resize here, not on a command.
                s.rehash_step(per_shard);
            }
            self.publish_hint(gid, &s);
        }
        removed
    }
}

/// A shard locked by [`Keyspace::lock_writing`].
pub struct ShardLock<'a> {
    guard: MutexGuard<'a, Shard>,
    fx: &'a Effects,
    ks: &'a Keyspace,
    gid: u32,
}

impl std::ops::Deref for ShardLock<'_> {
    type Target = Shard;
    fn deref(&self) -> &Shard {
        &self.guard
    }
}

impl std::ops::DerefMut for ShardLock<'_> {
    fn deref_mut(&mut self) -> &mut Shard {
        &mut self.guard
    }
}

impl Drop for ShardLock<'_> {
    fn drop(&mut self) {
        self.guard.drain_effects(self.fx);
        self.ks.publish_hint(self.gid, &self.guard);
    }
}

/// Shard ids a [`LockSet`] finds by direct index (see `LockSet::near`).
const NEAR: usize = 64;
/// Held shards a [`LockSet`] scans rather than indexes (a command of one
/// key, or of a few).
const FEW: usize = 4;

/// The shard locks one command (or one EXEC) holds, in ascending id order.
///
/// Rules that keep locking deadlock-free: either acquire everything needed
/// at once through [`LockSet::acquire`] with nothing held, or only add shards
/// with a higher id than every held one. Under EXEC the set is *pinned*:
/// every shard is held, and acquire/release do nothing.
///
/// A script's set is pinned too, but holds only what the script has
/// touched so far ([`LockSet::pin_growing`]): it adds shards in any order,
/// waiting for each with the others held. That is deadlock-free because
/// one script runs at a time (its runner holds the scripts' gate while it
/// runs) and nothing else ever waits for a shard while holding one: an
/// acquisition from nothing held takes its first shard by waiting and the
/// rest only if free, and when one is busy it lets go of all of them and
/// waits for that one first.
pub struct LockSet<'a> {
    ks: &'a Keyspace,
    // Inline room for the common case (a command's keys span a few shards)
    // so that taking locks does not allocate on the request path.
    held: SmallVec<[(u32, MutexGuard<'a, Shard>); 16]>,
    /// Past [`FEW`] held shards, where in `held` each shard
    /// `near_base..near_base + NEAR` sits (index + 1; 0 for not held). Finding a key's shard is then one load, not a
    /// binary search: a 100-key MGET looks its shards up three hundred
    /// times, and the search was a tenth of its instructions. Ids outside
    /// the window (another database), or past the 255th held shard (EXEC
    /// holds them all), are searched for.
    near: [u8; NEAR],
    near_base: u32,
    pinned: bool,
    /// Pinned and still taking shards as they are asked for (a script).
    growing: bool,
    /// [`LockSet::acquire`]'s set of wanted shard ids, one bit per shard
    /// (inline up to 1024 shards).
    wanted: SmallVec<[u64; 16]>,
    /// The lock holder's effect records: what the writes under its locks
    /// did (see [`crate::effect`]), gathered as each lock is released.
    pub effects: Effects,
    /// Clients blocked on keys written under these locks, to be woken by
    /// the holder once the locks are gone ([`LockSet::take_woken`]).
    woken: Vec<Waiter>,
}

impl<'a> LockSet<'a> {
    pub fn new(ks: &'a Keyspace) -> Self {
        LockSet {
            ks,
            held: SmallVec::new(),
            near: [0; NEAR],
            near_base: 0,
            pinned: false,
            growing: false,
            wanted: SmallVec::new(),
            effects: Effects::new(),
            woken: Vec::new(),
        }
    }

    pub fn keyspace(&self) -> &'a Keyspace {
        self.ks
    }

    pub fn is_pinned(&self) -> bool {
        self.pinned
    }

    /// Locks the given shards in ascending order (duplicates are fine).
    /// Ids already in ascending order, none below a held one (a one-key
    /// command, a range of shards), are locked as given. Others are
    /// gathered into a bitmap, not sorted: a 100-key MGET names a few
    /// dozen shards a hundred times.
    pub fn acquire<I>(&mut self, gids: I)
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: Clone,
    {
        if self.pinned {
            if self.growing {
                for g in gids {
                    if !self.holds(g) {
                        self.lock_one(g);
                    }
                }
            }
            return;
        }
        if self.held.is_empty() {
            return self.acquire_from_nothing(gids);
        }
        let gids = gids.into_iter();
        let top = self.held.last().map(|&(g, _)| g);
        let mut prev = top;
        if gids.clone().all(|g| {
            let ok = prev.is_none_or(|p| g >= p);
            prev = Some(g);
            ok
        }) {
            let mut last = top;
            for g in gids {
                if last != Some(g) {
                    self.lock_one(g);
                    last = Some(g);
                }
            }
            return;
        }
        let mut wanted = std::mem::take(&mut self.wanted);
        wanted.clear();
        wanted.resize(self.ks.total_shards().div_ceil(64), 0);
        for g in gids {
            wanted[g as usize / 64] |= 1 << (g % 64);
        }
        for (w, &bits) in wanted.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let g = (w * 64) as u32 + b.trailing_zeros();
                b &= b - 1;
                if !self.holds(g) {
                    self.lock_one(g);
                }
            }
        }
        self.wanted = wanted;
    }

    /// [`LockSet::acquire`] with nothing held: the shards in ascending
    /// order, the first by waiting for it, the others only if free. When one
    /// is busy, every shard taken so far is let go (nothing was done under
    /// them) and that one is waited for first, with nothing else held; then
    /// the rest are tried again. So no acquirer ever waits holding a shard
    /// that a script might be waiting for (see the type's docs).
    fn acquire_from_nothing<I>(&mut self, gids: I)
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: Clone,
    {
        let gids = gids.into_iter();
        loop {
            let mut busy = None;
            let mut prev = None;
            let mut sorted = true;
            for g in gids.clone() {
                sorted &= prev.is_none_or(|p| g >= p);
                prev = Some(g);
            }
            let try_one = |set: &mut Self, g: u32| -> bool {
                if set.holds(g) {
                    return true;
                }
                if set.held.is_empty() {
                    set.lock_one(g);
                    return true;
                }
                match set.ks.try_lock(g) {
                    Some(guard) => {
                        set.insert_held(g, guard);
                        true
                    }
                    None => false,
                }
            };
            if sorted {
                for g in gids.clone() {
                    if !try_one(self, g) {
                        busy = Some(g);
                        break;
                    }
                }
            } else {
                let mut wanted = std::mem::take(&mut self.wanted);
                wanted.clear();
                wanted.resize(self.ks.total_shards().div_ceil(64), 0);
                for g in gids.clone() {
                    wanted[g as usize / 64] |= 1 << (g % 64);
                }
                'words: for (w, &bits) in wanted.iter().enumerate() {
                    let mut b = bits;
                    while b != 0 {
                        let g = (w * 64) as u32 + b.trailing_zeros();
                        b &= b - 1;
                        if !try_one(self, g) {
                            busy = Some(g);
                            break 'words;
                        }
                    }
                }
                self.wanted = wanted;
            }
            let Some(g) = busy else { return };
            self.release();
            self.lock_one(g);
        }
    }

    /// [`LockSet::acquire`] with nothing held, for a caller that must not
    /// wait for long (a script holds shards, and past its busy threshold
    /// other clients are answered BUSY): every wait is in slices of `slice`,
    /// and when `give_up` says so between two, everything taken is let go
    /// and false returned.
    pub fn acquire_or_give_up<I>(&mut self, gids: I, slice: std::time::Duration, give_up: impl Fn() -> bool) -> bool
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: Clone,
    {
        if self.pinned || !self.held.is_empty() {
            self.acquire(gids);
            return true;
        }
        let mut gids: SmallVec<[u32; 16]> = gids.into_iter().collect();
        gids.sort_unstable();
        gids.dedup();
        let mut i = 0;
        while i < gids.len() {
            let g = gids[i];
            if self.holds(g) {
                i += 1;
                continue;
            }
            if let Some(guard) = self.ks.try_lock(g) {
                self.insert_held(g, guard);
                i += 1;
                continue;
            }
            // Busy: let go of everything, then wait for this one alone.
            self.release();
            loop {
                if give_up() {
                    return false;
                }
                if let Some(guard) = self.ks.lock_for(g, slice) {
                    self.insert_held(g, guard);
                    break;
                }
            }
            i = 0;
        }
        true
    }

    fn lock_one(&mut self, gid: u32) {
        debug_assert!(
            self.growing || self.held.last().is_none_or(|(g, _)| *g < gid),
            "shard {gid} locked out of order"
        );
        let guard = self.ks.lock(gid);
        self.insert_held(gid, guard);
    }

    /// Puts a newly locked shard in its place in `held`, keeping the index.
    fn insert_held(&mut self, gid: u32, guard: MutexGuard<'a, Shard>) {
        let at = self.held.partition_point(|(g, _)| *g < gid);
        self.held.insert(at, (gid, guard));
        // A few held shards are scanned; past that the index is built,
        // then kept up to date.
        let from = match self.held.len() {
            n if n <= FEW => return,
            n if n == FEW + 1 => {
                // A database's shards share an aligned window when it has
                // at most NEAR of them, and the lowest is held.
                self.near_base = self.held[0].0 & !(NEAR as u32 - 1);
                0
            }
            _ => at,
        };
        for i in from..self.held.len() {
            let off = self.held[i].0.wrapping_sub(self.near_base) as usize;
            if off < NEAR {
                self.near[off] = u8::try_from(i + 1).unwrap_or(0);
            }
        }
    }

    /// The position of shard `gid` in `held`, if held.
    #[inline(always)]
    fn find(&self, gid: u32) -> Option<usize> {
        if self.held.len() > FEW {
            let off = gid.wrapping_sub(self.near_base) as usize;
            if off < NEAR {
                match self.near[off] {
                    0 if self.held.len() <= u8::MAX as usize => return None,
                    0 => {}
                    p => return Some(p as usize - 1),
                }
            }
            return self.search(gid);
        }
        self.held.iter().position(|(g, _)| *g == gid)
    }

    /// [`LockSet::find`] for shards outside the index.
    #[inline(never)]
    fn search(&self, gid: u32) -> Option<usize> {
        self.held.binary_search_by_key(&gid, |(g, _)| *g).ok()
    }

    /// Locks every shard of every database and pins the set (EXEC).
    pub fn lock_all(&mut self) {
        self.release();
        self.acquire(0..self.ks.total_shards() as u32);
        self.pinned = true;
    }

    /// Pins the set as it is (a script's declared keys' shards, taken
    /// first through [`LockSet::acquire`]) and lets it grow: every shard
    /// asked for from now on is locked, in whatever order, and kept until
    /// [`LockSet::unpin`]. Only for a caller that holds the scripts' gate,
    /// or already holds every shard (see the type's docs).
    pub fn pin_growing(&mut self) {
        if !self.pinned {
            self.pinned = true;
            self.growing = true;
        }
    }

    /// Unpins and releases everything.
    pub fn unpin(&mut self) {
        self.pinned = false;
        self.growing = false;
        self.release();
    }

    /// Releases every held shard unless pinned, gathering their effect
    /// records first.
    pub fn release(&mut self) {
        if !self.pinned {
            self.gather_effects();
            let indexed = self.held.len() > FEW;
            for (_, guard) in self.held.iter_mut() {
                guard.drain_ready(&mut self.woken);
            }
            for (gid, guard) in &self.held {
                self.ks.publish_hint(*gid, guard);
                let off = gid.wrapping_sub(self.near_base) as usize;
                if indexed && off < NEAR {
                    self.near[off] = 0;
                }
            }
            self.held.clear();
        }
    }

    /// The clients to wake because keys they block on were written under
    /// locks released since the last call (first come first, per key).
    #[inline]
    pub fn has_woken(&self) -> bool {
        !self.woken.is_empty()
    }

    pub fn take_woken(&mut self) -> Vec<Waiter> {
        std::mem::take(&mut self.woken)
    }

    /// Moves the records the held shards staged into [`LockSet::effects`]:
    /// done at every release and, under EXEC's pinned set, after each
    /// command, so records keep the order of the commands.
    #[inline]
    pub fn gather_effects(&mut self) {
        if self.ks.effects_attached() || self.ks.writes_noted() {
            let start = self.effects.len();
            for (_, guard) in self.held.iter_mut() {
                guard.drain_effects(&self.effects);
            }
            // A command's records sit in its shards' buffers (RENAME's
            // source and destination): put them back in the order made.
            self.effects.sort_from(start);
        }
    }

    pub fn holds(&self, gid: u32) -> bool {
        self.find(gid).is_some()
    }

    /// The held shard `gid`. A shard not held is locked on the spot; that is
    /// only deadlock-free if its id is above every held one, which the
    /// command's key plan guarantees.
    #[inline]
    pub fn shard(&mut self, gid: u32) -> &mut Shard {
        let i = match self.find(gid) {
            Some(i) => i,
            None => {
                self.lock_one(gid);
                self.find(gid).unwrap_or(0)
            }
        };
        &mut self.held[i].1
    }

    /// A held shard, shared, so that several can be read at once (SINTER
    /// and the other set operations read all their keys together). None
    /// if `gid` is not held.
    pub fn shard_ref(&self, gid: u32) -> Option<&Shard> {
        self.find(gid).map(|i| &*self.held[i].1)
    }

    /// Two distinct held shards at once (RENAME, COPY, MOVE across shards).
    pub fn shard_pair(&mut self, a: u32, b: u32) -> (&mut Shard, &mut Shard) {
        assert_ne!(a, b, "shard_pair needs two different shards");
        self.shard(a);
        self.shard(b);
        let ia = self.find(a).unwrap_or(0);
        let ib = self.find(b).unwrap_or(0);
        if ia < ib {
            let (lo, hi) = self.held.split_at_mut(ib);
            (&mut lo[ia].1, &mut hi[0].1)
        } else {
            let (lo, hi) = self.held.split_at_mut(ia);
            (&mut hi[0].1, &mut lo[ib].1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{StrValue, Value};

    #[test]
    fn locate_and_lock() {
        let ks = Keyspace::new(16, 8);
        assert_eq!(ks.shards_per_db(), 8);
        let l = ks.locate(3, b"hello");
        assert_eq!(ks.db_of(l.gid), 3);
        assert_eq!(l, ks.locate(3, b"hello"));
        let mut set = LockSet::new(&ks);
        set.acquire([l.gid, l.gid]);
        set.shard(l.gid).set(b"hello", l.hash, Value::Str(StrValue::from_slice(b"w")), None, 0);
        set.release();
        assert_eq!(ks.lock(l.gid).len(), 1);
    }

    /// A script's growing set may wait for a shard below one it holds:
    /// an acquirer that took the lower one first lets go of it rather
    /// than wait for the higher one with it held. Run many times so both
    /// orders of the race come up; a deadlock fails by the watchdog.
    #[test]
    fn growing_set_never_deadlocks_with_an_acquirer() {
        let ks = Keyspace::new(1, 8);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
                eprintln!("deadlock: growing set and acquirer wait for each other");
                std::process::abort();
            }
        });
        for _ in 0..2000 {
            std::thread::scope(|s| {
                let mut script = LockSet::new(&ks);
                script.acquire([5]);
                script.pin_growing();
                s.spawn(|| {
                    let mut cmd = LockSet::new(&ks);
                    cmd.acquire([3, 5]);
                    assert!(cmd.holds(3) && cmd.holds(5));
                    cmd.release();
                });
                std::thread::yield_now();
                script.acquire([3]);
                assert!(script.holds(3) && script.holds(5));
                script.release();
                assert!(script.holds(3), "a pinned set keeps its shards");
                script.unpin();
            });
        }
        done_tx.send(()).unwrap();
        watchdog.join().unwrap();
    }

    /// The locate path's hash is the one each shard's table computes for a
    /// key when it resizes (`hash_one`), at every length.
    #[test]
    fn hash_is_the_tables_hash() {
        use std::hash::BuildHasher;
        let ks = Keyspace::new(1, 4);
        let long: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..=long.len() {
            let key = &long[..n];
            assert_eq!(ks.hash(key), ks.hasher.hash_one(key), "key of {n} bytes");
            let l = ks.locate(0, key);
            let mut set = LockSet::new(&ks);
            assert_eq!(set.shard(l.gid).hash_key(key), l.hash, "key of {n} bytes");
        }
    }

    #[test]
    fn shards_own_contiguous_slot_ranges() {
        for per in [1usize, 2, 16, 1024, SLOTS] {
            let ks = Keyspace::new(1, per);
            let width = SLOTS / per;
            for slot in 0..SLOTS as u16 {
                assert_eq!(ks.shard_of(slot), slot as usize / width, "{per} shards, slot {slot}");
            }
        }
        // More shards than slots would leave some empty forever.
        assert_eq!(Keyspace::new(1, 1 << 16).shards_per_db(), SLOTS);
        let ks = Keyspace::new(3, 64);
        for key in [&b"foo"[..], b"", b"{user1000}.followers", b"\xff\x00"] {
            let l = ks.locate(2, key);
            assert_eq!(l.slot, key_slot(key));
            assert_eq!(l.gid, ks.gid(2, l.slot as usize * 64 / SLOTS));
            assert_eq!(l.hash, ks.hash(key));
        }
    }

    #[test]
    fn keys_with_one_hash_tag_take_one_lock() {
        let ks = Keyspace::new(16, 256);
        let keys: Vec<String> = (0..200).map(|i| format!("{i}:{{order:42}}:{}", i * 7919)).collect();
        let locs: Vec<Loc> = keys.iter().map(|k| ks.locate(5, k.as_bytes())).collect();
        assert!(locs.iter().all(|l| l.gid == locs[0].gid && l.slot == key_slot(b"order:42")));
        // The hashes still spread the keys over the shard's buckets.
        let mut hashes: Vec<u64> = locs.iter().map(|l| l.hash).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), keys.len());
        let mut set = LockSet::new(&ks);
        set.acquire(locs.iter().map(|l| l.gid));
        assert_eq!(set.held.len(), 1);
        set.release();
        // Without the tag the same keys spread over many shards.
        let mut untagged: Vec<u32> = (0..200).map(|i| ks.locate(5, format!("{i}:order:42").as_bytes()).gid).collect();
        untagged.sort_unstable();
        untagged.dedup();
        assert!(untagged.len() > 50, "{} shards", untagged.len());
    }

    proptest::proptest! {
        /// The direct index finds exactly the held shards, at their
        /// positions, whatever was locked: one database's shards, shards
        /// of several, shards past the index's window, and more than 255
        /// of them (EXEC's lock-everything).
        #[test]
        fn lockset_finds_held_shards(
            per in proptest::sample::select(vec![1usize, 16, 64, 256]),
            rounds in proptest::collection::vec(
                (proptest::collection::vec(0u32..4096, 0..40), proptest::collection::vec(0u32..4096, 0..4), proptest::bool::ANY),
                1..6,
            ),
        ) {
            let ks = Keyspace::new(16, per);
            let total = ks.total_shards() as u32;
            let mut set = LockSet::new(&ks);
            for (acquire, extra, all) in rounds {
                if all {
                    set.lock_all();
                    set.unpin();
                    set.acquire(0..total);
                } else {
                    set.acquire(acquire.iter().map(|g| g % total));
                    // Adding shards above every held one, in ascending order.
                    let top = set.held.last().map_or(0, |(g, _)| g + 1);
                    let mut above: Vec<u32> = extra.iter().map(|g| top + g % 8).filter(|g| *g < total).collect();
                    above.sort_unstable();
                    for g in above {
                        set.shard(g);
                    }
                }
                for g in 0..total {
                    let want = set.held.binary_search_by_key(&g, |(h, _)| *h).ok();
                    proptest::prop_assert_eq!(set.find(g), want, "shard {}", g);
                }
                set.release();
                proptest::prop_assert!(set.near.iter().all(|&p| p == 0));
            }
        }
    }

    #[test]
    fn acquire_locks_each_named_shard_once_in_ascending_order() {
        // 16 databases of 8 shards: 128 ids, two words of the bitmap.
        let ks = Keyspace::new(16, 8);
        let mut set = LockSet::new(&ks);
        let gids = [127u32, 3, 64, 3, 0, 63, 127, 65, 3];
        set.acquire(gids);
        let held: Vec<u32> = set.held.iter().map(|(g, _)| *g).collect();
        assert_eq!(held, vec![0, 3, 63, 64, 65, 127]);
        for g in 0..128 {
            assert_eq!(set.holds(g), gids.contains(&g), "gid {g}");
        }
        set.release();
        assert!(set.held.is_empty());
        // Adding shards above the held ones, with repeats of held ids.
        set.acquire([5, 2]);
        set.acquire([2, 90, 5, 70, 90]);
        let held: Vec<u32> = set.held.iter().map(|(g, _)| *g).collect();
        assert_eq!(held, vec![2, 5, 70, 90]);
        set.release();
        // Every shard is free again.
        for g in 0..128 {
            assert!(ks.try_lock(g).is_some(), "gid {g}");
        }
    }

    #[test]
    fn pinned_set_holds_everything() {
        let ks = Keyspace::new(2, 4);
        let mut set = LockSet::new(&ks);
        set.lock_all();
        set.acquire([3, 1]);
        set.release();
        assert!(set.holds(7));
        let (a, b) = set.shard_pair(5, 2);
        a.set(b"x", 1, Value::Str(StrValue::Int(1)), None, 0);
        assert!(b.is_empty());
        set.unpin();
        assert!(!set.holds(0));
    }

    #[test]
    fn active_expiry_round() {
        let ks = Keyspace::new(1, 4);
        for i in 0..40 {
            let k = format!("k{i}");
            let l = ks.locate(0, k.as_bytes());
            ks.lock(l.gid).set(k.as_bytes(), l.hash, Value::Str(StrValue::Int(i)), Some(10), 0);
        }
        let fx = Effects::new();
        assert_eq!(ks.expire_cycle(11, 4, 100, &fx), 40);
        assert!(fx.is_empty());
        for i in 0..10 {
            let k = format!("k{i}");
            let l = ks.locate(0, k.as_bytes());
            ks.lock(l.gid).set(k.as_bytes(), l.hash, Value::Str(StrValue::Int(i)), Some(20), 0);
        }
        ks.attach_effects(true);
        assert_eq!(ks.expire_cycle(21, 4, 100, &fx), 10);
        let recs = crate::aof::records(&fx.take());
        assert_eq!(recs.len(), 10);
        assert!(recs.iter().all(|r| matches!(r.effect, crate::Effect::Del { .. })));
    }
}

#[cfg(test)]
mod expiry_stress {
    use super::*;
    use crate::{StrValue, Value};

    #[test]
    fn active_expiry_removes_every_key() {
        for round in 0..200u64 {
            let ks = Keyspace::new(16, 16);
            let n = 300 + (round as usize * 7) % 200;
            for i in 0..n {
                let k = format!("t{i}");
                let l = ks.locate(0, k.as_bytes());
                ks.lock(l.gid).set(k.as_bytes(), l.hash, Value::Str(StrValue::Int(1)), Some(100 + (i as u64 % 3)), 0);
            }
            let fx = Effects::new();
            let mut removed = 0;
            for now in [100u64, 101, 102, 103, 104, 200] {
                for _ in 0..16 {
                    removed += ks.expire_cycle(now, 16, 200, &fx);
                }
            }
            let left: usize = (0..ks.total_shards() as u32).map(|g| ks.lock(g).len()).sum();
            assert_eq!((removed, left), (n, 0), "round {round}");
        }
    }
}
