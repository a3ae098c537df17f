//! One shard: its entries, its TTL index, and the WATCH flags on its keys.
//!
//! Every operation takes `now` (milliseconds since the Unix epoch) from the
//! caller: the server reads the clock once per command, and tests inject it.
//! An entry whose deadline has passed is invisible to every read and is
//! removed by the first access (lazy expiry) or by [`Shard::expire_cycle`].
//!
//! # One mutation path
//!
//! Every change to the shard's keys goes through the write methods below:
//! [`Shard::set`], [`Shard::replace_value`], [`Shard::insert_entry`],
//! [`Shard::remove`], [`Shard::set_expire`], [`Shard::modify`] (an in-place
//! change of a value, the only way to reach a value mutably),
//! [`Shard::take_data`] / [`Shard::swap_data`] (FLUSH*, SWAPDB), and
//! expiry (lazy on any access, active in [`Shard::expire_cycle`], keys and
//! hash fields alike). Each of them, in one place:
//!
//! ```text
//!  write ─► table change ─► memory delta (value heap measured before/after)
//!        ─► wrote(key): WATCH flags set, key noted ready if clients block on it
//!        ─► effect record staged (only while a reader is attached, see crate::effect)
//! ```
//!
//! so command code reports nothing by hand: no sizes, no WATCH signals.
//!
//! While a snapshot runs (see [`crate::snapshot`]), each of them first
//! hands the entry's form at the start to the snapshot, when its walk has
//! yet to reach the entry and has not got it already; with none running
//! that costs the load of one field of the shard.
//!
//! Beside the write API here: `expiry` holds the keys' deadlines (the TTL
//! index, lazy and active expiry, hash fields' deadlines), `interest` who
//! hears of a write (WATCH flags, clients blocked on a key), `snap` the
//! snapshot's hooks.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;


use hashbrown::DefaultHashBuilder;

use hashbrown::HashTable;

use crate::effect::{Effect, Effects, Log, Ttl};
use crate::event::{self, Event, NOTE_EVENTS};
use crate::tracked::{Marks, NOTE_TRACK};
use crate::fifo::{Fifo, FifoKind};
use crate::entry::{self, is_expired, Entry, EntryExt, Lfu, ListMut, NewValue, Table};
use tern_table::stage::{ItemHint, ITEM_PREFETCH_SPAN};
use crate::effect::encode_set;
use crate::value::{StrRef, Value, ValueRef};

mod expiry;
mod interest;
pub(crate) mod snap;

use interest::Interest;
use snap::ShardSnap;
pub use interest::{BlockingKeys, Waiter, WatchFlag};

/// How a lookup records itself on the entry (Redis's `lookupKey` flags):
/// reads and writes count as an access unless the command or the client
/// asked for no touch (TYPE, TTL, EXISTS, OBJECT; CLIENT NO-TOUCH).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    NoTouch,
    /// Update the access time, and the LFU counter when the policy is LFU.
    Touch(Option<Lfu>),
}

/// A shard's data detached by [`Shard::take_data`], to be dropped where it
/// does not stall a worker (FLUSHALL ASYNC).
#[derive(Debug, Default)]
pub struct Detached {
    table: Table,
}

impl Detached {
    /// Entries held (expired ones included).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

/// What a closure given to [`Shard::modify`] reports of its change.
#[derive(Debug)]
pub struct Edit {
    recording: bool,
    changed: bool,
    whole: bool,
    effects: Vec<Effect>,
    /// An item to take the edited one's place (a list kept in its item
    /// that outgrew it, or moved out of it or back; see [`crate::ListMut`]).
    replace: Option<Box<Entry>>,
    /// A keyspace event to note after the write's own (see [`Edit::then_event`]).
    then: Option<Event>,
    /// Changes the edit counts (INFO's `rdb_changes_since_last_save`, the
    /// `save` rules): Redis's count for the command when given
    /// ([`Edit::changes`]), else one per change reported.
    dirty: u64,
    counted: Option<u64>,
}

impl Edit {
    /// Whether effect records are being built (so that a caller skips
    /// gathering what only [`Edit::emit`] would use).
    pub fn recording(&self) -> bool {
        self.recording
    }

    /// The value changed as `effect` describes; `effect` is only called
    /// while a reader is attached.
    pub fn emit(&mut self, effect: impl FnOnce() -> Effect) {
        self.changed = true;
        self.dirty += 1;
        if self.recording {
            self.effects.push(effect());
        }
    }

    /// The change counts as `n` changes (Redis's `server.dirty` for the
    /// command: RPUSH's elements pushed, SADD's members added), not one
    /// per record.
    pub fn changes(&mut self, n: usize) {
        self.counted = Some(n as u64);
    }

    /// Notes keyspace event `ev` after the write's own (HSETEX's
    /// `hexpire` after its `hset`), before the `del` of a value left empty.
    pub fn then_event(&mut self, ev: Event) {
        self.then = Some(ev);
    }

    /// The value changed and its whole new form is the record (a string
    /// edited in place: `SET k v KEEPTTL`).
    pub fn changed(&mut self) {
        self.changed = true;
        self.dirty += 1;
        self.whole = true;
    }

    /// `item` (the same key, TTL and access word) replaces the edited
    /// item when the edit ends.
    pub(crate) fn replace_item(&mut self, item: Box<Entry>) {
        self.replace = Some(item);
    }
}

impl ListMut<'_> {
    /// Ends the edit: a list that moved (out of its item, into a larger
    /// one, or small enough to return to its item) is put back by `edit`
    /// in a rebuilt item that replaces the key's.
    pub fn finish(self, edit: &mut Edit) {
        if let Some(item) = self.into_rebuilt() {
            edit.replace_item(item);
        }
    }
}


#[derive(Debug, Default)]
pub struct Shard {
    table: Table,
    /// (deadline, hash) of keys with a TTL. Every key with a TTL has a
    /// pair at its hash no later than its deadline: a deadline moved later
    /// (EXPIRE again, the common case) pushes nothing, and the pair, once
    /// due, is pushed again at the key's deadline then. Stale pairs (TTL
    /// gone, key gone) are skipped when popped and dropped by a rebuild
    /// when too many.
    ttl_heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// On a writable replica, the keys its own clients gave a deadline,
    /// at that deadline (see `shard/expiry.rs`): its master never sends
    /// their DEL, so the replica's expiry cycle ends them.
    local_ttl: BinaryHeap<Reverse<(u64, Box<[u8]>)>>,
    volatile: usize,
    /// The sum of the keys' deadlines (INFO's `avg_ttl` is their mean,
    /// less now).
    deadline_sum: u128,
    /// Hashes with fields that have a TTL (INFO's `subexpiry`).
    hfe_hashes: usize,
    /// (next field deadline, hash) of hashes with field TTLs. A pair is
    /// pushed whenever a hash's earliest deadline moves earlier; a popped
    /// pair that turns out stale re-queues the hash's real deadline.
    field_heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// Hash fields removed because their TTL passed (INFO `expired_subkeys`).
    pub expired_fields: u64,
    /// Of those, the ones the active cycle removed (INFO
    /// `expired_subkeys_active`).
    pub expired_fields_active: u64,
    interest: HashTable<Interest>,
    /// Keys changed while clients were blocked on them, oldest first, for
    /// the blocking commands to serve ([`Shard::take_ready`]).
    ready: Vec<Box<[u8]>>,
    /// Waiters a stream read woke for nothing passed its wake on to (see
    /// [`Shard::pass_over`]), for [`Shard::drain_ready`] to wake.
    passed: Vec<Waiter>,
    /// Effect records of the writes done under the current lock holder,
    /// moved to its [`Effects`] by [`Shard::drain_effects`].
    staged: Log,
    /// Whether a reader of effects is attached (shared by every shard of a
    /// keyspace, set by [`crate::Keyspace::attach_effects`]).
    recording: Arc<AtomicBool>,
    /// Whether writes are noted: for CLIENT TRACKING's invalidations
    /// ([`crate::Keyspace::track_writes`]) and, with their events, for
    /// keyspace notifications ([`crate::Keyspace::notify_writes`]).
    /// Shared by every shard of a keyspace.
    noting: Arc<AtomicU8>,
    /// Writes noted under the current lock holder while `noting`, moved
    /// to its [`Effects`] with the records, each numbered in the order
    /// its thread wrote them (see [`crate::effect::Modified`]).
    modified: Vec<crate::effect::Modified>,
    /// The keyspace's record numbers (see [`Shard::stage`]).
    seq: Arc<AtomicU64>,
    /// The database this shard belongs to, and whether it is the first of
    /// its database's shards (which speaks for whole-database effects).
    db: u32,
    first_in_db: bool,
    /// Heap bytes of the values (the table counts itself and the items).
    value_mem: usize,
    /// Keys removed because their TTL passed (INFO `expired_keys`).
    pub expired: u64,
    /// Keys removed to bring memory under `maxmemory` (INFO `evicted_keys`).
    pub evicted: u64,
    /// Writes made known ([`Shard::wrote`]): INFO's
    /// `rdb_changes_since_last_save` is their sum since the last save.
    pub changes: u64,
    /// New keys start an LFU counter rather than an LRU time; shared by
    /// all shards of a keyspace so that a policy change needs no lock.
    lfu: Arc<AtomicBool>,
    /// The FIFO policy the keyspace runs (see [`crate::fifo::encode`]),
    /// shared like `lfu`; `fifo` follows it at this shard's next write.
    fifo_mode: Arc<AtomicU8>,
    /// The keyspace is a replica's: a read hides a key past its deadline
    /// rather than delete it (its master's DEL does), as Redis's replica.
    replica: Arc<AtomicBool>,
    /// This shard's S3-FIFO or SIEVE queues.
    fifo: Fifo,
    /// The running snapshot's part in the table (see [`crate::snapshot`]).
    snap: Option<Box<ShardSnap>>,
    /// Keys with tracking marks, per database (see [`crate::tracked`]),
    /// shared by every shard of a keyspace; this shard's part in its
    /// database's count as last added (`Table::marked` then).
    marked: Arc<Marks>,
    marks_seen: usize,
    /// The marks of an item just removed, for the note of its write that
    /// follows (see [`Shard::note`]).
    gone_marks: u64,
}

impl Shard {
    pub fn new() -> Self {
        Shard { first_in_db: true, ..Self::default() }
    }

    /// A shard whose table re-hashes keys with `hasher` when it resizes: it
    /// must be the keyspace's, which computed the hashes the shard is given.
    pub fn with_hasher(hasher: DefaultHashBuilder) -> Self {
        Shard { table: Table::with_hasher(hasher), first_in_db: true, ..Self::default() }
    }

    /// Places the shard in database `db`, first of its shards or not, and
    /// shares the keyspace's "effects are read" flag.
    pub(crate) fn place(&mut self, db: u32, first_in_db: bool, recording: Arc<AtomicBool>, noting: Arc<AtomicU8>, seq: Arc<AtomicU64>, marked: Arc<Marks>) {
        self.marked = marked;
        self.db = db;
        self.first_in_db = first_in_db;
        self.recording = recording;
        self.noting = noting;
        self.seq = seq;
    }

    /// Makes this (stand-alone) shard record effects, for tests and tools
    /// that drive a shard without a keyspace.
    pub fn record_effects(&mut self, on: bool) {
        self.recording = Arc::new(AtomicBool::new(on));
    }

    #[inline]
    fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    /// The one place a change to `key` is made known: WATCHers are told,
    /// a key clients block on is noted ready, and the effect is staged
    /// while a reader is attached (`effect` is not called otherwise).
    #[inline]
    fn wrote(&mut self, key: &[u8], hash: u64, effect: impl FnOnce() -> Effect) {
        self.wrote_as(key, hash, event::current, effect);
    }

    /// [`Shard::wrote`], the write being event `ev` (read only while
    /// notifications are wanted).
    #[inline]
    fn wrote_as(&mut self, key: &[u8], hash: u64, ev: impl FnOnce() -> Option<Event>, effect: impl FnOnce() -> Effect) {
        let db = self.db;
        self.wrote_with(key, hash, ev, |out| effect().encode(out, db));
    }

    /// [`Shard::wrote_as`], `enc` writing the record's commands itself
    /// (see [`Shard::record_with`]).
    #[inline]
    fn wrote_with(&mut self, key: &[u8], hash: u64, ev: impl FnOnce() -> Option<Event>, enc: impl FnOnce(&mut Vec<u8>)) {
        self.changes += 1;
        if !self.interest.is_empty() {
            self.notify(key, hash);
        }
        self.record_with(enc);
        self.note(key, hash, ev);
    }

    /// Notes `key` written, as event `ev` while notifications are wanted,
    /// for the clients that track keys, while any do, with the tracking
    /// marks the write takes: the item's, or those of the item it removed.
    #[inline]
    fn note(&mut self, key: &[u8], hash: u64, ev: impl FnOnce() -> Option<Event>) {
        // Written only when set: every write passes here.
        let gone = self.gone_marks;
        if gone != 0 {
            self.gone_marks = 0;
        }
        let noting = self.noting.load(Ordering::Relaxed);
        if noting != 0 {
            let ev = if noting & NOTE_EVENTS != 0 { ev() } else { None };
            let mut m = crate::effect::Modified::new(self.db, key, ev);
            m.readers = gone;
            if noting & NOTE_TRACK != 0 && self.table.marked() > 0 {
                m.readers |= self.table.take_mark(key, hash);
                self.sync_marks();
            }
            self.modified.push(m);
        }
    }

    /// Brings the database's count of marked keys up to this shard's
    /// table.
    fn sync_marks(&mut self) {
        let now = self.table.marked();
        if now != self.marks_seen {
            self.marked.add(self.db as usize, now as isize - self.marks_seen as isize);
            self.marks_seen = now;
        }
    }

    /// The (key, client) pairs this shard's marks stand for.
    pub fn mark_pairs(&self) -> usize {
        self.table.mark_bits()
    }

    /// Takes `key`'s tracking marks (a write of the same name in another
    /// database: Redis's tracking table is one for all databases).
    pub fn take_marks(&mut self, key: &[u8], hash: u64) -> u64 {
        let m = self.table.take_mark(key, hash);
        self.sync_marks();
        m
    }

    /// Clears `mask`'s bits from every key's tracking marks (slots given
    /// up, a flush that forgets every tracked key).
    pub fn clear_marks(&mut self, mask: u64) {
        self.table.clear_marks(mask);
        self.sync_marks();
    }

    /// Takes the marks of one key drawn at random among a few tries
    /// (`tracking-table-max-keys`): its name and marks, None if the draws
    /// found no marked key.
    pub fn take_random_marks(&mut self, rng: &mut impl FnMut() -> u64, tries: usize) -> Option<(Box<[u8]>, u64)> {
        if self.table.marked() == 0 {
            return None;
        }
        for _ in 0..tries {
            let Some(e) = self.table.random(rng) else { return None };
            if e.mark() != 0 {
                let key: Box<[u8]> = e.key().into();
                let hash = tern_table::hash_key(self.table.hasher(), &key);
                let m = self.take_marks(&key, hash);
                return Some((key, m));
            }
        }
        None
    }

    /// Whether writes are noted with their events.
    #[inline]
    fn notifying(&self) -> bool {
        self.noting.load(Ordering::Relaxed) & NOTE_EVENTS != 0
    }

    /// Notes event `ev` on `key` while notifications are wanted: an
    /// event that is no write of its own (SET's `expire` after its `set`,
    /// a read's `keymiss`), in order with the writes' events.
    pub fn note_event(&mut self, key: &[u8], ev: Event) {
        if self.notifying() {
            self.modified.push(crate::effect::Modified::new(self.db, key, Some(ev)));
        }
    }

    /// Stages `effect` while a reader is attached.
    #[inline]
    fn record(&mut self, effect: impl FnOnce() -> Effect) {
        let db = self.db;
        self.record_with(|out| effect().encode(out, db));
    }

    /// Stages a record while a reader is attached, `enc` writing its
    /// commands straight into the staged log (a write that can say what
    /// it did without building an [`Effect`]: the same bytes
    /// [`Effect::encode`] would write).
    #[inline]
    fn record_with(&mut self, enc: impl FnOnce(&mut Vec<u8>)) {
        if self.is_recording() {
            let seq = self.seq.fetch_add(1, Ordering::Relaxed);
            self.staged.push_with(seq, self.db, enc);
        }
    }

    /// Stages a record, numbered from the keyspace's sequence: taken under
    /// this shard's lock, so that the records of one key (one shard) are
    /// numbered in the order they happened whichever worker made them,
    /// and readers can merge the workers' buffers by number.
    fn stage(&mut self, effect: &Effect) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        self.staged.push(seq, self.db, effect);
    }

    /// A change outside the keyspace that persists with it (the function
    /// libraries), recorded as the command that redoes it and numbered like
    /// this shard's own records.
    pub fn record_command(&mut self, argv: Vec<Box<[u8]>>) {
        self.record(|| Effect::Command { argv });
    }

    /// A whole-database effect (FLUSHDB, SWAPDB), staged once per database
    /// by its first shard.
    fn wrote_db(&mut self, effect: Effect) {
        if self.first_in_db && self.is_recording() {
            self.stage(&effect);
        }
    }

    /// Moves the effect records staged under this lock to `fx` (the lock
    /// holder's buffer), in the order the writes happened.
    #[inline]
    pub fn drain_effects(&mut self, fx: &Effects) {
        if !self.staged.is_empty() {
            fx.extend(&mut self.staged);
        }
        if !self.modified.is_empty() {
            fx.note_modified(&mut self.modified);
        }
    }

    /// `key`'s hash as this shard's table computes it when resizing: what
    /// callers that built the shard themselves (tests, tools) must pass.
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        tern_table::hash_key(self.table.hasher(), key)
    }

    /// The table's bucket array address and bucket count, for lock-free prefetch
    /// hints (see [`crate::Keyspace::prefetch_hint`]).
    pub fn hint(&self) -> (usize, u64) {
        self.table.hint()
    }

    /// Makes room in the table for `additional` more keys, so that storing
    /// them resizes nothing (a load sized by RESIZEDB; see
    /// [`tern_table::Table::reserve`]).
    pub fn reserve(&mut self, additional: usize) {
        self.table.reserve(additional);
    }

    /// Moves up to `budget` buckets of an unfinished resize (the cron calls
    /// this for idle shards). True while a resize is still under way.
    pub fn rehash_step(&mut self, budget: usize) -> bool {
        self.table.rehash_step(budget)
    }

    /// Makes new keys start an LFU counter while `flag` is set (an LFU
    /// maxmemory-policy), an LRU time otherwise.
    pub(crate) fn share_lfu_flag(&mut self, flag: Arc<AtomicBool>) {
        self.lfu = flag;
    }

    /// Makes this shard follow the keyspace's replica flag.
    pub(crate) fn share_replica_flag(&mut self, flag: Arc<AtomicBool>) {
        self.replica = flag;
    }

    /// Makes this shard follow the keyspace's FIFO policy (`mode`, see
    /// [`crate::fifo::encode`]).
    pub(crate) fn share_fifo_mode(&mut self, mode: Arc<AtomicU8>) {
        self.fifo_mode = mode;
    }

    /// Brings the shard's queues in line with the keyspace's FIFO policy
    /// after a switch: every key's FIFO state is cleared, and under the new
    /// policy every key it wants is tracked, in table order (the order
    /// they were inserted in is not known). True while a FIFO policy runs.
    pub(crate) fn fifo_sync(&mut self, now: u64) -> bool {
        let (kind, volatile) = crate::fifo::decode(self.fifo_mode.load(Ordering::Relaxed));
        if kind == self.fifo.kind && volatile == self.fifo.volatile {
            return kind != FifoKind::Off;
        }
        let lfu = self.lfu.load(Ordering::Relaxed);
        let mut fifo = Fifo::new(kind, volatile);
        let hasher = *self.table.hasher();
        self.table.retain(|e| {
            if e.fifo_tracked() {
                e.clear_fifo(now, lfu);
            }
            if fifo.wants(e.expire().is_some()) {
                let h = tern_table::hash_key(&hasher, e.key());
                fifo.insert(e, h);
            }
            true
        });
        self.fifo = fifo;
        kind != FifoKind::Off
    }

    /// The FIFO side of storing `key`: a new key is tracked (if the
    /// policy wants it), an overwritten one keeps its place and counts as
    /// accessed, one no longer wanted (its TTL gone under a `volatile-`
    /// form) is let go.
    fn fifo_stored(&mut self, key: &[u8], hash: u64, old: Option<&Entry>, now: u64) {
        let lfu = self.lfu.load(Ordering::Relaxed);
        let Some(e) = self.table.get_mut(key, hash) else { return };
        let wants = self.fifo.wants(e.expire().is_some());
        match old {
            Some(o) if o.fifo_tracked() && wants => {
                e.take_fifo_from(**o);
                e.touch(now, None);
            }
            _ => {
                if let Some(o) = old {
                    self.fifo.removed(o);
                }
                if wants {
                    self.fifo.insert(e, hash);
                } else if e.fifo_tracked() {
                    e.clear_fifo(now, lfu);
                }
            }
        }
    }

    /// The key the FIFO policy evicts next here, with its hash; None
    /// when it tracks none.
    pub(crate) fn fifo_victim(&mut self, now: u64) -> Option<(Box<[u8]>, u64)> {
        if !self.fifo_sync(now) {
            return None;
        }
        let key = self.fifo.victim(&mut self.table)?;
        // The queues keep 48 bits of a hash; the rest of the keyspace
        // wants all 64.
        let hash = tern_table::hash_key(self.table.hasher(), &*key);
        Some((key, hash))
    }

    /// Keys the FIFO policy tracks here.
    pub fn fifo_tracked(&self) -> usize {
        self.fifo.live()
    }

    /// Bytes the FIFO policy's queues hold here.
    #[cfg(test)]
    pub(crate) fn fifo_mem(&self) -> usize {
        self.fifo.mem_bytes()
    }

    /// Live and not-yet-collected entries.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Keys with a TTL (INFO keyspace `expires`).
    pub fn volatile_count(&self) -> usize {
        self.volatile
    }

    /// The sum of the deadlines of the keys with a TTL.
    pub fn deadline_sum(&self) -> u128 {
        self.deadline_sum
    }

    /// Hashes with fields that have a TTL (Redis's `subexpiry`).
    pub fn subexpiry_count(&self) -> usize {
        self.hfe_hashes
    }

    /// Bytes held by this shard's table, items and values, rounded to the
    /// allocator's size classes for the table and items.
    pub fn mem(&self) -> usize {
        self.table.mem_bytes() + self.value_mem + self.fifo.mem_bytes() + self.expires_overhead()
    }

    /// Bytes of the table's own structure (bucket arrays; MEMORY STATS'
    /// `overhead.hashtable.main`) and of an array being resized away from.
    pub fn table_overhead(&self) -> (usize, usize) {
        (self.table.mem_bytes() - self.table.item_bytes(), self.table.rehashing_bytes())
    }

    /// Bytes of the TTL indexes (MEMORY STATS' `overhead.hashtable.expires`).
    pub fn expires_overhead(&self) -> usize {
        let pair = std::mem::size_of::<Reverse<(u64, u64)>>();
        (self.ttl_heap.capacity() + self.field_heap.capacity()) * pair
    }

    /// Whether the table is resizing (MEMORY STATS' `db.dict.rehashing.count`).
    pub fn is_rehashing(&self) -> bool {
        self.table.is_rehashing()
    }

    /// Bytes of the items and values alone: [`Shard::mem`] without the
    /// table's bucket arrays (INFO's `used_memory_dataset`).
    pub fn dataset_mem(&self) -> usize {
        self.table.item_bytes() + self.value_mem
    }

    /// Whether the shard's counts (value bytes, keys with a TTL) match
    /// what its entries hold. Walks every entry: a check for tests.
    pub fn counts_hold(&self) -> bool {
        let held: usize = self.table.iter().map(|e| e.value_heap()).sum();
        let volatile = self.table.iter().filter(|e| e.expire().is_some()).count();
        let sum: u128 = self.table.iter().filter_map(|e| e.expire()).map(u128::from).sum();
        let hfe = self.table.iter().filter(|e| e.next_field_deadline().is_some()).count();
        self.value_mem == held && self.volatile == volatile && self.deadline_sum == sum && self.hfe_hashes == hfe
    }

    /// Eviction's write: removes `key` whole (a hash with its fields and
    /// their deadlines), as a deletion WATCHers and effect readers see
    /// like `DEL`. Returns the entry and the bytes the shard's count went
    /// down by; None if the key is not here.
    pub fn evict(&mut self, key: &[u8], hash: u64) -> Option<(Box<Entry>, usize)> {
        let before = self.mem();
        let e = self.remove_entry(key, hash)?;
        self.evicted += 1;
        // Volatile policies draw from the TTL index: keep its stale pairs
        // (the evicted keys') a minority, so draws keep finding keys.
        if e.expire().is_some() && self.ttl_heap.len() > 2 * self.volatile + 64 {
            let (table, hasher) = (&self.table, self.table.hasher());
            self.ttl_heap.retain(|&Reverse((w, h))| table.find_by(h, |e| e.expire().is_some_and(|d| d >= w) && tern_table::hash_key(hasher, e.key()) == h).is_some());
        }
        self.wrote_as(key, hash, || Some(event::EVICTED), || Effect::Del { key: key.into() });
        Some((e, before.saturating_sub(self.mem())))
    }

    /// Calls `f` with up to `n` entries drawn at random, and their hashes:
    /// from the whole table, or with `volatile` from the keys with a TTL
    /// (drawn from the TTL index, whose stale pairs are skipped). Expired
    /// entries are included: evicting one only frees memory sooner.
    pub fn sample(&self, n: usize, volatile: bool, overlap: bool, rng: &mut impl rand::Rng, mut f: impl FnMut(&Entry, u64)) {
        let hasher = self.table.hasher();
        if !volatile && overlap && n > 1 {
            // The draws' bucket and item misses overlapped, a run at a time.
            let mut got = [None; 16];
            let mut left = n;
            while left > 0 {
                let run = &mut got[..left.min(16)];
                self.table.random_many(&mut || rng.gen::<u64>(), run);
                for e in run.iter().flatten() {
                    f(e, tern_table::hash_key(hasher, e.key()));
                }
                left -= run.len();
            }
            return;
        }
        if !volatile {
            for _ in 0..n {
                let Some(e) = self.table.random(&mut || rng.gen::<u64>()) else { return };
                f(e, tern_table::hash_key(hasher, e.key()));
            }
            return;
        }
        let heap = self.ttl_heap.as_slice();
        if heap.is_empty() || self.volatile == 0 {
            return;
        }
        let live = |i: usize| {
            let Reverse((when, hash)) = heap[i % heap.len()];
            self.table.find_by(hash, |e| e.expire().is_some_and(|d| d >= when) && tern_table::hash_key(hasher, e.key()) == hash).map(|e| (e, hash))
        };
        let mut found = 0;
        for _ in 0..2 * n {
            if let Some((e, hash)) = live(rng.gen_range(0..heap.len())) {
                f(e, hash);
                found += 1;
                if found == n {
                    return;
                }
            }
        }
        // Random draws kept hitting stale pairs (a few live keys among
        // them): walk on from a random pair. Eviction keeps the stale
        // pairs under 2 per live key + 64, which bounds the walk.
        if found == 0 {
            let start = rng.gen_range(0..heap.len());
            for i in start..start + heap.len() {
                if let Some((e, hash)) = live(i) {
                    f(e, hash);
                    found += 1;
                    if found == n {
                        return;
                    }
                }
            }
        }
    }

    fn remove_entry(&mut self, key: &[u8], hash: u64) -> Option<Box<Entry>> {
        self.preserve(key, hash);
        let mut e = self.table.remove(key, hash)?;
        let m = Entry::take_mark_of(&mut e);
        if m != 0 {
            self.gone_marks |= m;
            self.sync_marks();
        }
        if let Some(w) = e.expire() {
            self.deadline_removed(w);
        }
        self.hfe_changed(e.next_field_deadline(), None);
        self.fifo.removed(&e);
        self.value_mem -= e.value_heap();
        Some(e)
    }

    /// Batch stage 1: asks for the cache line of `hash`'s bucket, so that a
    /// later lookup of it does not stall. Only a hint: nothing changes.
    #[inline]
    pub(crate) fn prefetch_bucket(&self, hash: u64) {
        self.table.prefetch_bucket(hash)
    }

    /// Batch stage 2a: the item `hash`'s bucket points at, for the engine
    /// to prefetch (see `tern_table::Table::item_hint`).
    #[inline]
    pub(crate) fn item_hint(&self, hash: u64) -> ItemHint {
        self.table.item_hint(hash)
    }

    /// Batch stage 3, for readers: reads the item of `hash` (prefetched by
    /// stage 2) and asks for the rest of its value: a string's further
    /// cache lines when its bytes are inline, the first line of its buffer
    /// when they live apart; the first lines a lookup in a set, hash or
    /// sorted set reads (its pack; in a table, the bucket of the member
    /// hashed to `member` if the command names one, else the table's
    /// struct). Only a hint: nothing changes, nothing expires. True when it
    /// asked for lines stage 2 did not (the stage's gate counts on it).
    #[inline]
    pub(crate) fn prefetch_value(&self, key: &[u8], hash: u64, member: Option<u64>) -> bool {
        let Some(e) = self.table.get(key, hash) else { return false };
        let p: *const u8 = match e.boxed() {
            None => {
                let start = (e as *const Entry).cast::<u8>();
                let size = std::mem::size_of_val(e);
                // Stage 2 brought the first ITEM_PREFETCH_SPAN bytes; ask
                // for the lines after them, up to the head's bound.
                let rest = size.min(tern_table::PREFETCH_HEAD).saturating_sub(ITEM_PREFETCH_SPAN);
                tern_table::prefetch_head(start.wrapping_add(ITEM_PREFETCH_SPAN), rest);
                return rest > 0;
            }
            Some(Value::Str(crate::value::StrValue::Raw(v))) => v.as_ptr(),
            Some(Value::Str(crate::value::StrValue::Shared(a))) => Arc::as_ptr(a).cast(),
            Some(Value::Str(crate::value::StrValue::Mc(m))) => m.buffer().as_ptr(),
            Some(Value::Str(crate::value::StrValue::Emb(b))) => b.as_ptr(),
            Some(Value::Set(s)) => {
                s.prefetch_head(member);
                return true;
            }
            Some(Value::Hash(h)) => {
                h.prefetch_head(member);
                return true;
            }
            Some(Value::ZSet(z)) => {
                z.prefetch_head(member);
                return true;
            }
            _ => return false,
        };
        tern_table::prefetch(p);
        true
    }

    /// Looks a live key up for reading.
    pub fn get(&mut self, key: &[u8], hash: u64, now: u64) -> Option<&Entry> {
        if self.expire_if_needed(key, hash, now, true) {
            return None;
        }
        self.table.get(key, hash)
    }

    /// Looks a live key up without removing it if expired (for callers that
    /// hold `&self`, e.g. a read-only walk).
    pub fn peek(&self, key: &[u8], hash: u64, now: u64) -> Option<&Entry> {
        self.table.get(key, hash).filter(|e| !is_expired(e, now))
    }

    /// Looks a live key up as a command's access: like [`Shard::get`],
    /// and records the access on the entry as `acc` says. To change the
    /// value, see [`Shard::modify`].
    ///
    /// A read that finds no key is a `keymiss` event (Redis's lookupKey:
    /// a command whose writes are no event, i.e. a read-only one).
    pub fn lookup(&mut self, key: &[u8], hash: u64, now: u64, acc: Access) -> Option<&Entry> {
        let expired = self.expire_if_needed(key, hash, now, true);
        let keymiss = self.notifying() && event::current().is_none();
        let reader = crate::tracked::reader();
        let found = if expired {
            None
        } else if reader != 0 {
            // A tracking client's read: its bit in the item's marks.
            match self.table.mark(key, hash, reader) {
                Some((e, before)) => {
                    if before == 0 {
                        self.marks_seen += 1;
                        self.marked.add(self.db as usize, 1);
                    }
                    crate::tracked::note_marked(hash);
                    Some(e)
                }
                None => None,
            }
        } else {
            self.table.get_mut(key, hash)
        };
        match found {
            Some(e) => {
                if let Access::Touch(lfu) = acc {
                    e.touch(now, lfu);
                }
                Some(e)
            }
            None => {
                if keymiss {
                    self.modified.push(crate::effect::Modified::new(self.db, key, Some(event::KEYMISS)));
                }
                None
            }
        }
    }

    /// [`Shard::lookup`] of a key a writing command reads (COPY's source,
    /// SORT's, the `*STORE` commands'): a miss is a `keymiss`, as Redis's
    /// read lookups make it whatever the command.
    pub fn lookup_source(&mut self, key: &[u8], hash: u64, now: u64, acc: Access) -> Option<&Entry> {
        let ev = event::current();
        event::set_current(None);
        let e = self.lookup(key, hash, now, acc);
        event::set_current(ev);
        e
    }

    /// Changes a live key's value in place (the only way to reach a value
    /// mutably): looks it up as [`Shard::lookup`] does, runs `f`, and then
    /// accounts what `f` did: the value's memory measured before and
    /// after, a hash's field deadlines, a hash left empty removed, and,
    /// when `f` reported a change through its [`Edit`], WATCHers and
    /// effects. None (and `f` not run) if the key is absent.
    pub fn modify<R>(
        &mut self,
        key: &[u8],
        hash: u64,
        now: u64,
        acc: Access,
        f: impl FnOnce(&mut Entry, &mut Edit) -> R,
    ) -> Option<R> {
        self.modify_or_create(key, hash, now, acc, || None, f)
    }

    /// [`Shard::modify`], and an absent key is first given the value
    /// `create` makes, if it makes one (a new key, not an access: no
    /// touch; called only for an absent key, so that a write to an
    /// existing one builds nothing it drops), as part of the
    /// same write: it is recorded only through what `f` reports, and
    /// removed again if `f` leaves a hash empty.
    pub fn modify_or_create<R>(
        &mut self,
        key: &[u8],
        hash: u64,
        now: u64,
        acc: Access,
        create: impl FnOnce() -> Option<Value>,
        f: impl FnOnce(&mut Entry, &mut Edit) -> R,
    ) -> Option<R> {
        self.expire_if_needed(key, hash, now, false);
        let mut edit = Edit { recording: self.is_recording(), changed: false, whole: false, effects: Vec::new(), replace: None, then: None, dirty: 0, counted: None };
        let mut acc = acc;
        // `f` may change the value in place: what it was is taken first
        // (a key about to be created has nothing to take).
        self.preserve(key, hash);
        // One lookup for a live key; a new one is looked up again once made.
        let e = match self.table.get_mut(key, hash) {
            Some(e) => e,
            None => {
                let v = create()?;
                let mut item = entry::build(key, NewValue::Value(v), None, now, self.lfu.load(Ordering::Relaxed));
                if let Some(s) = self.snap.as_deref_mut().filter(|s| s.ahead(hash)) {
                    // Born after the start: nothing of it to save.
                    item.set_snap_mark(true);
                    s.marked(hash);
                }
                self.value_mem += item.value_heap();
                self.table.insert_item(hash, item);
                if self.fifo_sync(now) {
                    self.fifo_stored(key, hash, None, now);
                }
                self.note_event(key, event::NEW);
                acc = Access::NoTouch;
                self.table.get_mut(key, hash)?
            }
        };
        if let Access::Touch(lfu) = acc {
            e.touch(now, lfu);
        }
        let (heap0, deadline0) = (e.value_heap(), e.next_field_deadline());
        let r = f(e, &mut edit);
        let e = match edit.replace.take() {
            // The old item goes; the new one has its key, deadline and
            // access word (and the table counts its size).
            Some(item) => {
                // The new form keeps the readers' marks, for the note below.
                let marks = self.table.upsert(hash, item).map_or(0, |o| o.mark());
                if marks != 0 {
                    self.table.mark(key, hash, marks);
                }
                self.table.get_mut(key, hash)?
            }
            None => e,
        };
        let (heap1, deadline1) = (e.value_heap(), e.next_field_deadline());
        let emptied = e.is_empty_aggregate();
        let whole = (edit.whole && edit.recording).then(|| e.to_value());
        self.value_mem = (self.value_mem + heap1).saturating_sub(heap0);
        self.field_deadline_changed(hash, deadline0, deadline1);
        self.hfe_changed(deadline0, deadline1);
        if edit.changed {
            self.changes += edit.counted.unwrap_or(edit.dirty);
            if !self.interest.is_empty() {
                self.notify(key, hash);
            }
            self.note(key, hash, event::current);
            if let Some(ev) = edit.then {
                self.note_event(key, ev);
            }
            for effect in edit.effects {
                self.stage(&effect);
            }
            match whole {
                // A whole value left empty is gone: its record is the removal.
                Some(_) if emptied => self.stage(&Effect::Del { key: key.into() }),
                Some(value) => self.stage(&Effect::Put { key: key.into(), value, ttl: Ttl::Keep }),
                None => {}
            }
        }
        if emptied {
            // The fields' removal was the record; the key goes with them.
            self.remove_entry(key, hash);
            self.note_event(key, event::DEL);
        }
        Some(r)
    }

    /// Stores `value` under `key`, replacing any old entry, with deadline
    /// `expire` (None: no TTL). Returns the old entry if there was a live one.
    pub fn set<'a>(
        &mut self,
        key: &[u8],
        hash: u64,
        value: impl Into<NewValue<'a>>,
        expire: Option<u64>,
        now: u64,
    ) -> Option<Box<Entry>> {
        let item = entry::build(key, value.into(), expire, now, self.lfu.load(Ordering::Relaxed));
        self.store(key, hash, item, Ttl::At(expire), now, true)
    }

    /// Gives a live key another value, keeping its TTL and access clock
    /// (APPEND, INCR of a non-integer, a memcached append). Returns the old
    /// entry, or None (and stores nothing) if the key is absent.
    pub fn replace_value<'a>(&mut self, key: &[u8], hash: u64, value: impl Into<NewValue<'a>>, now: u64) -> Option<Box<Entry>> {
        let item = entry::rebuild(self.get(key, hash, now)?, value.into());
        self.store(key, hash, item, Ttl::Keep, now, true)
    }

    /// Gives a live key another form of the same value (a RESP string
    /// first seen by memcached becomes an item with flags 0 and a CAS id),
    /// keeping its TTL and access clock. Recorded like any write, so that a
    /// replay has the same CAS, but no WATCHer or blocked client is told:
    /// nothing they can read changed. None (nothing stored) if absent.
    pub fn restamp<'a>(&mut self, key: &[u8], hash: u64, value: impl Into<NewValue<'a>>, now: u64) -> Option<Box<Entry>> {
        let item = entry::rebuild(self.get(key, hash, now)?, value.into());
        self.store(key, hash, item, Ttl::Keep, now, false)
    }

    /// Puts a built item in the table, replacing the one under the same
    /// key; keeps the counts and makes the write known (its record: the
    /// whole value, with `ttl`; those interested are told if `tell`).
    /// Returns the old entry if it was live.
    fn store(&mut self, key: &[u8], hash: u64, item: Box<Entry>, ttl: Ttl, now: u64, tell: bool) -> Option<Box<Entry>> {
        let mut item = item;
        // The new item is born after the start: ahead of the walk it is
        // marked so (and the old one is taken first); behind it, or with
        // no snapshot, it carries no mark (a renamed or rebuilt item may
        // bring one).
        let ahead = self.snap.as_deref().is_some_and(|s| s.ahead(hash));
        if ahead || item.snap_mark() {
            item.set_snap_mark(ahead);
        }
        if ahead {
            self.snap_replacing(key, hash);
        }
        if self.notifying() {
            match self.table.get(key, hash) {
                None => self.note_event(key, event::NEW),
                Some(old) if is_expired(old, now) => {
                    self.note_event(key, event::EXPIRED);
                    self.note_event(key, event::NEW);
                }
                Some(_) => {}
            }
        }
        // A string's record is written from the item itself: nothing is
        // built for it (a memcached item, or any other value, is).
        let db = self.db;
        let enc = |out: &mut Vec<u8>| match item.value() {
            ValueRef::Str(s) if !matches!(s, StrRef::Mc(_)) => s.with_bytes(|v| encode_set(out, key, v, ttl)),
            _ => Effect::Put { key: key.into(), value: item.to_value(), ttl }.encode(out, db),
        };
        if tell {
            self.wrote_with(key, hash, event::current, enc);
        } else {
            self.record_with(enc);
        }
        self.value_mem += item.value_heap();
        if let Some(d) = item.next_field_deadline() {
            self.field_heap.push(Reverse((d, hash)));
            self.hfe_hashes += 1;
        }
        let when = item.expire();
        let fifo = self.fifo_sync(now);
        let old = self.table.upsert(hash, item);
        // A told write took the old item's marks in its note; a form
        // change that is no write (`restamp`) keeps them.
        if let Some(m) = old.as_ref().map(|o| o.mark()).filter(|&m| m != 0) {
            self.table.mark(key, hash, m);
        }
        if let Some(w) = when {
            self.deadline_added(w, hash, old.as_ref().and_then(|o| o.expire()));
            self.note_local_deadline(key, w);
        }
        if fifo {
            self.fifo_stored(key, hash, old.as_deref(), now);
        }
        let old = old?;
        if let Some(w) = old.expire() {
            self.deadline_removed(w);
        }
        self.hfe_changed(old.next_field_deadline(), None);
        self.value_mem -= old.value_heap();
        if is_expired(&old, now) {
            self.expired += 1;
            return None;
        }
        Some(old)
    }

    /// Stores a whole entry taken from elsewhere (RENAME, MOVE, SWAPDB),
    /// keeping its TTL, access time and counter. Returns the old entry if
    /// there was a live one.
    pub fn insert_entry(&mut self, key: &[u8], hash: u64, entry: Box<Entry>, now: u64) -> Option<Box<Entry>> {
        // Same name (MOVE, SWAPDB-like moves): the allocation moves as is.
        let item = if entry.key() == key { entry } else { entry::rekey(entry, key) };
        let ttl = Ttl::At(item.expire());
        self.store(key, hash, item, ttl, now, true)
    }

    /// Removes a live key, returning its entry: a `del` event, whatever
    /// the command (a store command's empty result, GETEX's past deadline).
    pub fn remove(&mut self, key: &[u8], hash: u64, now: u64) -> Option<Box<Entry>> {
        self.take_live(key, hash, now, event::DEL)
    }

    /// [`Shard::remove`] of a key that lives on elsewhere, as event `ev`
    /// (RENAME's `rename_from`, MOVE's `move_from`): the move counts as one
    /// change, at its destination, as in Redis.
    pub fn remove_as(&mut self, key: &[u8], hash: u64, now: u64, ev: Event) -> Option<Box<Entry>> {
        let e = self.take_live(key, hash, now, ev)?;
        self.changes -= 1;
        Some(e)
    }

    /// Removes a live key as a write of event `ev`.
    fn take_live(&mut self, key: &[u8], hash: u64, now: u64, ev: Event) -> Option<Box<Entry>> {
        if self.expire_if_needed(key, hash, now, false) {
            return None;
        }
        let e = self.remove_entry(key, hash)?;
        self.wrote_as(key, hash, || Some(ev), || Effect::Del { key: key.into() });
        Some(e)
    }

    /// Detaches every entry, leaving the shard empty; the caller decides
    /// where the returned data is dropped.
    pub fn take_data(&mut self) -> Detached {
        let fresh = Table::with_hasher(*self.table.hasher());
        let mut d = Detached { table: std::mem::replace(&mut self.table, fresh) };
        // A snapshot still walking the table takes it whole, to walk and
        // then drop; the caller gets nothing to free.
        if let Some(s) = self.snap.take() {
            s.orphan(std::mem::take(&mut d.table));
        }
        // The heap is one flat allocation: freeing it inline costs nothing.
        self.ttl_heap = BinaryHeap::new();
        self.field_heap = BinaryHeap::new();
        self.volatile = 0;
        self.deadline_sum = 0;
        self.hfe_hashes = 0;
        self.value_mem = 0;
        self.fifo.clear();
        self.gone_marks = 0;
        self.sync_marks();
        d
    }

    /// FLUSHDB's and FLUSHALL's write: tells the WATCHers of live keys,
    /// records the flush (once per database) and detaches every entry, for
    /// the caller to drop where it does not stall a worker.
    pub fn flush(&mut self, now: u64) -> Detached {
        self.wrote_db(Effect::FlushDb);
        self.empty(now)
    }

    /// Empties the shard as a flush that is no write (DEBUG RELOAD's,
    /// Redis's emptyData): the WATCHers of live keys are told, nothing is
    /// recorded for the AOF or replicas.
    pub fn empty(&mut self, now: u64) -> Detached {
        self.signal_live(None, now);
        self.take_data()
    }

    /// SWAPDB's write for one pair of shards (the same index in two
    /// databases): tells the WATCHers of keys live on either side,
    /// exchanges the data (the watches stay on their database) and records
    /// the swap once.
    pub fn swap_with(&mut self, other: &mut Shard, now: u64) {
        self.signal_live(Some(other), now);
        other.signal_live(Some(self), now);
        self.swap_data(other);
        // Keys clients block on that hold a value now are ready for them.
        self.ready_if_live(now);
        other.ready_if_live(now);
        let other_db = other.db;
        self.wrote_db(Effect::SwapDb { other: other_db });
    }

    /// One SCAN step that also removes the expired entries it meets (as
    /// Redis's SCAN does). Calls `f` on each live entry of the step's bucket
    /// and returns the next cursor and how many entries were visited.
    pub fn scan_live(&mut self, cursor: u64, now: u64, mut f: impl FnMut(&Entry)) -> (u64, usize) {
        let mut visited = 0;
        let mut expired: Vec<Vec<u8>> = Vec::new();
        let next = self.table.scan(cursor, |e| {
            visited += 1;
            if is_expired(e, now) {
                expired.push(e.key().to_vec());
            } else {
                f(e)
            }
        });
        // A replica leaves them for its master's DEL.
        if !self.replica.load(Ordering::Relaxed) {
            for k in expired {
                let h = self.hash_key(&k);
                self.expire_key(&k, h);
            }
        }
        (next, visited)
    }

    /// Live entries, in table order (KEYS, FLUSH bookkeeping, tests).
    pub fn iter(&self, now: u64) -> impl Iterator<Item = &Entry> {
        self.table.iter().filter(move |e| !is_expired(e, now))
    }

    /// One SCAN step over this shard's table; see [`Table::scan`].
    pub fn scan(&self, cursor: u64, now: u64, mut f: impl FnMut(&Entry)) -> u64 {
        self.table.scan(cursor, |e| {
            if !is_expired(e, now) {
                f(e)
            }
        })
    }

    /// A random live entry, or None if the shard has none. Tries random
    /// buckets first and falls back to a walk when the table is sparse.
    pub fn random(&mut self, now: u64, rng: &mut impl rand::Rng) -> Option<&Entry> {
        for _ in 0..16 {
            let e = self.table.random(&mut || rng.gen::<u64>())?;
            if !is_expired(e, now) {
                return Some(e);
            }
        }
        let live = self.iter(now).count();
        if live == 0 {
            return None;
        }
        let i = rng.gen_range(0..live);
        self.iter(now).nth(i)
    }

    /// A random entry, expired or not: RANDOMKEY removes the expired ones it
    /// draws and draws again, as Redis does. None if the shard is empty.
    pub fn random_any(&self, rng: &mut impl rand::Rng) -> Option<&Entry> {
        self.table.random(&mut || rng.gen::<u64>())
    }

    /// Exchanges the data (not the watches) of two shards.
    fn swap_data(&mut self, other: &mut Shard) {
        std::mem::swap(&mut self.table, &mut other.table);
        std::mem::swap(&mut self.ttl_heap, &mut other.ttl_heap);
        std::mem::swap(&mut self.local_ttl, &mut other.local_ttl);
        std::mem::swap(&mut self.field_heap, &mut other.field_heap);
        std::mem::swap(&mut self.volatile, &mut other.volatile);
        std::mem::swap(&mut self.deadline_sum, &mut other.deadline_sum);
        std::mem::swap(&mut self.hfe_hashes, &mut other.hfe_hashes);
        std::mem::swap(&mut self.value_mem, &mut other.value_mem);
        std::mem::swap(&mut self.fifo, &mut other.fifo);
        // A snapshot's part describes its table: it goes where the table goes.
        std::mem::swap(&mut self.snap, &mut other.snap);
        for s in [&*self, &*other] {
            if let Some(p) = s.snap.as_deref() {
                p.moved_to(s.db);
            }
        }
        self.sync_marks();
        other.sync_marks();
    }
}

#[cfg(test)]
pub(crate) mod tests;
