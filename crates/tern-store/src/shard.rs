//! One shard: its entries, its TTL index, and the WATCH flags on its keys.
//!
//! Every operation takes `now` (milliseconds since the Unix epoch) from the
//! caller: the server reads the clock once per command, and tests inject it.
//! An entry whose deadline has passed is invisible to every read and is
//! removed by the first access (lazy expiry) or by [`Shard::expire_cycle`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use std::hash::BuildHasher;

use hashbrown::DefaultHashBuilder;

use crate::entry::{self, is_expired, Entry, EntryExt, Lfu, Meta, NewValue};
use crate::table::{Keyed, Table as Chained};
use crate::value::Value;

type Table = tern_table::Table<Meta, DefaultHashBuilder, Value>;

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

/// Set when a watched key is modified; the watching client checks it at EXEC.
#[derive(Debug, Default)]
pub struct WatchFlag(AtomicBool);

impl WatchFlag {
    pub fn new() -> Arc<Self> {
        Arc::new(WatchFlag(AtomicBool::new(false)))
    }
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
    pub fn set(&self) {
        self.0.store(true, Ordering::Release)
    }
}

#[derive(Debug)]
struct Watch {
    hash: u64,
    key: Box<[u8]>,
    flags: Vec<Arc<WatchFlag>>,
}

impl Keyed for Watch {
    fn hash(&self) -> u64 {
        self.hash
    }
}

/// The most keys one prefetch group keeps in flight together: the upper
/// bound of `prefetch-batch-max-size` (Redis 8's range for it) and the
/// length of the on-stack arrays a group's stages fill.
pub const MAX_PREFETCH_GROUP: usize = 128;

/// Bytes of an item stage 2 asks for when the value is wanted too: two
/// cache lines, the second being where a value of more than a few dozen
/// bytes kept in the item continues.
pub const ITEM_PREFETCH_SPAN: usize = 128;

#[derive(Debug, Default)]
pub struct Shard {
    table: Table,
    /// (deadline, hash) of keys with a TTL; stale pairs (TTL changed or key
    /// gone) are skipped when popped and dropped by a rebuild when too many.
    ttl_heap: BinaryHeap<Reverse<(u64, u64)>>,
    volatile: usize,
    /// (next field deadline, hash) of hashes with field TTLs. A pair is
    /// pushed whenever a hash's earliest deadline moves earlier; a popped
    /// pair that turns out stale re-queues the hash's real deadline.
    field_heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// Hash fields removed because their TTL passed (INFO `expired_subkeys`).
    pub expired_fields: u64,
    watches: Chained<Watch>,
    /// Heap bytes of the values (the table counts itself and the items).
    value_mem: usize,
    /// Keys removed because their TTL passed (INFO `expired_keys`).
    pub expired: u64,
    /// New keys start an LFU counter rather than an LRU time; shared by
    /// all shards of a keyspace so that a policy change needs no lock.
    lfu: Arc<AtomicBool>,
}

impl Shard {
    pub fn new() -> Self {
        Self::default()
    }

    /// A shard whose table re-hashes keys with `hasher` when it resizes: it
    /// must be the keyspace's, which computed the hashes the shard is given.
    pub fn with_hasher(hasher: DefaultHashBuilder) -> Self {
        Shard { table: Table::with_hasher(hasher), ..Self::default() }
    }

    /// `key`'s hash as this shard's table computes it when resizing: what
    /// callers that built the shard themselves (tests, tools) must pass.
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.table.hasher().hash_one(key)
    }

    /// The table's bucket array address and bucket count, for lock-free prefetch
    /// hints (see [`crate::Keyspace::prefetch_hint`]).
    pub fn hint(&self) -> (usize, u64) {
        self.table.hint()
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

    /// Bytes held by this shard's table, items and values, rounded to the
    /// allocator's size classes for the table and items.
    pub fn mem(&self) -> usize {
        self.table.mem_bytes() + self.value_mem
    }

    /// Removes the entry if it has expired. Returns true if it was removed.
    fn expire_if_needed(&mut self, key: &[u8], hash: u64, now: u64) -> bool {
        // No key here has a TTL and no hash a field TTL: nothing can be due,
        // and the caller's own lookup is the only probe.
        if !self.has_deadlines() {
            return false;
        }
        let (expired, fields_due) = match self.table.get(key, hash) {
            Some(e) => (is_expired(e, now), e.next_field_deadline().is_some_and(|d| d <= now)),
            None => (false, false),
        };
        // A hash's due fields go on any access, so every command sees it as
        // active expiry would leave it.
        if fields_due && !expired {
            self.expire_hash_fields(key, hash, now);
        }
        if expired {
            self.remove_entry(key, hash);
            self.expired += 1;
            self.signal(key, hash);
        }
        expired
    }

    fn remove_entry(&mut self, key: &[u8], hash: u64) -> Option<Box<Entry>> {
        let e = self.table.remove(key, hash)?;
        if e.expire().is_some() {
            self.volatile -= 1;
        }
        self.value_mem -= e.value_heap();
        Some(e)
    }

    /// Batch stage 1: asks for the cache line of `hash`'s bucket, so that a
    /// later lookup of it does not stall. Only a hint: nothing changes.
    #[inline]
    pub fn prefetch_bucket(&self, hash: u64) {
        self.table.prefetch_bucket(hash)
    }

    /// Batch stage 2, first half: the address of the item `hash`'s bucket
    /// points at (null when none), for [`Shard::prefetch_item_at`]. Reading
    /// a whole group's buckets first and then prefetching their items back
    /// to back overlaps the items' page walks (see `tern_table::Table::item_hint`).
    #[inline]
    pub fn item_hint(&self, hash: u64) -> *const u8 {
        self.table.item_hint(hash)
    }

    /// Batch stage 2, second half: asks for the item at `p` (from
    /// [`Shard::item_hint`]; null asks for nothing) with a key of `key_len`
    /// bytes, and with `value` its second line too, where a value of more
    /// than a few dozen bytes kept in the item continues. Never
    /// dereferences `p`.
    #[inline]
    pub fn prefetch_item_at(p: *const u8, key_len: usize, value: bool) {
        Table::prefetch_item_at(p, key_len, if value { ITEM_PREFETCH_SPAN } else { 0 })
    }

    /// Batch stage 3, for readers of string values: reads the item of
    /// `hash` (prefetched by stage 2) and asks for the rest of its string:
    /// the item's further cache lines when the bytes are inline, the first
    /// line of the buffer when they live apart. Only a hint: nothing
    /// changes, nothing expires.
    #[inline]
    pub fn prefetch_value(&self, key: &[u8], hash: u64) {
        let Some(e) = self.table.get(key, hash) else { return };
        let p: *const u8 = match e.boxed() {
            None => {
                let start = (e as *const Entry).cast::<u8>();
                let size = std::mem::size_of_val(e);
                // Stage 2 brought the first ITEM_PREFETCH_SPAN bytes; ask
                // for up to two more lines.
                let mut off = ITEM_PREFETCH_SPAN;
                while off < size && off < 256 {
                    tern_table::prefetch(start.wrapping_add(off));
                    off += 64;
                }
                return;
            }
            Some(Value::Str(crate::StrValue::Raw(v))) => v.as_ptr(),
            Some(Value::Str(crate::StrValue::Shared(a))) => Arc::as_ptr(a).cast(),
            Some(Value::Str(crate::StrValue::Mc(m))) => m.buffer().as_ptr(),
            Some(Value::Str(crate::StrValue::Emb(b))) => b.as_ptr(),
            _ => return,
        };
        tern_table::prefetch(p);
    }

    /// Looks a live key up for reading.
    pub fn get(&mut self, key: &[u8], hash: u64, now: u64) -> Option<&Entry> {
        self.expire_if_needed(key, hash, now);
        self.table.get(key, hash)
    }

    /// Looks a live key up without removing it if expired (for callers that
    /// hold `&self`, e.g. a read-only walk).
    pub fn peek(&self, key: &[u8], hash: u64, now: u64) -> Option<&Entry> {
        self.table.get(key, hash).filter(|e| !is_expired(e, now))
    }

    /// Looks a live key up for changing its value in place. Call
    /// [`Shard::value_resized`] afterwards if the value's size changed.
    pub fn get_mut(&mut self, key: &[u8], hash: u64, now: u64) -> Option<&mut Entry> {
        self.expire_if_needed(key, hash, now);
        self.table.get_mut(key, hash)
    }

    /// Looks a live key up as a command's access: like [`Shard::get_mut`],
    /// and records the access on the entry as `acc` says.
    pub fn lookup(&mut self, key: &[u8], hash: u64, now: u64, acc: Access) -> Option<&mut Entry> {
        let e = self.get_mut(key, hash, now)?;
        if let Access::Touch(lfu) = acc {
            e.touch(now, lfu);
        }
        Some(e)
    }

    /// Re-measures the memory of a value changed through [`Shard::get_mut`].
    pub fn value_resized(&mut self, old_heap: usize, new_heap: usize) {
        self.value_mem = (self.value_mem + new_heap).saturating_sub(old_heap);
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
        self.store(hash, item, now)
    }

    /// Gives a live key another value, keeping its TTL and access clock
    /// (APPEND, INCR of a non-integer, a memcached append). Returns the old
    /// entry, or None (and stores nothing) if the key is absent.
    pub fn replace_value<'a>(&mut self, key: &[u8], hash: u64, value: impl Into<NewValue<'a>>, now: u64) -> Option<Box<Entry>> {
        let item = entry::rebuild(self.get(key, hash, now)?, value.into());
        self.store(hash, item, now)
    }

    /// Puts a built item in the table, replacing the one under the same
    /// key; keeps the counts. Returns the old entry if it was live.
    fn store(&mut self, hash: u64, item: Box<Entry>, now: u64) -> Option<Box<Entry>> {
        self.value_mem += item.value_heap();
        if let Some(d) = item.next_field_deadline() {
            self.field_heap.push(Reverse((d, hash)));
        }
        let when = item.expire();
        let old = self.table.upsert(hash, item);
        if let Some(w) = when {
            self.deadline_added(w, hash);
        }
        let old = old?;
        if old.expire().is_some() {
            self.volatile -= 1;
        }
        self.value_mem -= old.value_heap();
        if is_expired(&old, now) {
            self.expired += 1;
            return None;
        }
        Some(old)
    }

    fn deadline_added(&mut self, when: u64, hash: u64) {
        self.volatile += 1;
        self.ttl_heap.push(Reverse((when, hash)));
        if self.ttl_heap.len() > 2 * self.volatile + 1024 {
            self.rebuild_ttl_heap();
        }
    }

    /// Stores a whole entry taken from elsewhere (RENAME, MOVE, SWAPDB),
    /// keeping its TTL, access time and counter. Returns the old entry if
    /// there was a live one.
    pub fn insert_entry(&mut self, key: &[u8], hash: u64, entry: Box<Entry>, now: u64) -> Option<Box<Entry>> {
        // Same name (MOVE, SWAPDB-like moves): the allocation moves as is.
        let item = if entry.key() == key { entry } else { entry.with_key(key) };
        self.store(hash, item, now)
    }

    /// Removes a live key, returning its entry.
    pub fn remove(&mut self, key: &[u8], hash: u64, now: u64) -> Option<Box<Entry>> {
        if self.expire_if_needed(key, hash, now) {
            return None;
        }
        self.remove_entry(key, hash)
    }

    /// Sets or clears the deadline of an existing key. Returns false if the
    /// key does not exist (expired or not). A deadline in the past is kept
    /// as is: the key becomes invisible at once.
    pub fn set_expire(&mut self, key: &[u8], hash: u64, when: Option<u64>) -> bool {
        let Some(previous) = self.table.swap_expire(key, hash, when) else { return false };
        if previous.is_some() {
            self.volatile -= 1;
        }
        if let Some(w) = when {
            self.deadline_added(w, hash);
        }
        true
    }

    /// Tells the shard that the hash at `hash` changed its earliest field
    /// deadline from `old` to `new` (None: no field TTL).
    pub fn field_deadline_changed(&mut self, hash: u64, old: Option<u64>, new: Option<u64>) {
        if let Some(n) = new {
            if old.is_none_or(|o| n < o) {
                self.field_heap.push(Reverse((n, hash)));
                if self.field_heap.len() > 2 * self.table.len() + 1024 {
                    let h = self.table.hasher();
                    self.field_heap = self
                        .table
                        .iter()
                        .filter_map(|e| e.next_field_deadline().map(|d| Reverse((d, h.hash_one(e.key())))))
                        .collect();
                }
            }
        }
    }

    /// Whether active expiry has anything to look at here.
    pub fn has_deadlines(&self) -> bool {
        self.volatile > 0 || !self.field_heap.is_empty()
    }

    /// Removes the due fields of the hash stored under `key`, keeping the
    /// memory count right; removes the key if no field is left. Returns the
    /// fields removed.
    pub fn expire_hash_fields(&mut self, key: &[u8], hash: u64, now: u64) -> usize {
        let Some(e) = self.table.get_mut(key, hash) else { return 0 };
        let Some(h) = e.hash_mut() else { return 0 };
        if h.next_deadline().is_none_or(|d| d > now) {
            return 0;
        }
        let before = h.heap_size();
        let n = h.expire_fields(now);
        let (after, empty) = (h.heap_size(), h.is_empty());
        self.value_resized(before, after);
        self.expired_fields += n as u64;
        if empty {
            self.remove_entry(key, hash);
            self.expired += 1;
        }
        self.signal(key, hash);
        n
    }

    fn rebuild_ttl_heap(&mut self) {
        let h = self.table.hasher();
        self.ttl_heap = self.table.iter().filter_map(|e| e.expire().map(|w| Reverse((w, h.hash_one(e.key()))))).collect();
    }

    /// Active expiry: removes up to `budget` keys whose deadline has passed,
    /// found from the TTL heap without looking at live keys. Returns the
    /// keys removed.
    pub fn expire_cycle(&mut self, now: u64, budget: usize) -> usize {
        let mut removed = 0;
        let mut steps = 0;
        while steps < budget {
            let Some(&Reverse((when, hash))) = self.ttl_heap.peek() else { break };
            if when > now {
                break;
            }
            self.ttl_heap.pop();
            steps += 1;
            // Several keys may share the hash; collect the expired ones.
            while let Some(key) = self.table.find_by(hash, |e| is_expired(e, now)).map(|e| e.key().to_vec()) {
                self.remove_entry(&key, hash);
                self.expired += 1;
                self.signal(&key, hash);
                removed += 1;
            }
        }
        while steps < budget {
            let Some(&Reverse((when, hash))) = self.field_heap.peek() else { break };
            if when > now {
                break;
            }
            self.field_heap.pop();
            steps += 1;
            let keys: Vec<Vec<u8>> = self
                .table
                .iter_hash(hash)
                .filter(|e| e.next_field_deadline().is_some())
                .map(|e| e.key().to_vec())
                .collect();
            for key in keys {
                let before = self.len();
                self.expire_hash_fields(&key, hash, now);
                removed += before - self.len();
                let next = self.table.get(&key, hash).and_then(|e| e.next_field_deadline());
                if let Some(d) = next {
                    self.field_heap.push(Reverse((d, hash)));
                }
            }
        }
        removed
    }

    /// Removes every entry, returning how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.table.len();
        self.table.clear();
        self.ttl_heap.clear();
        self.field_heap.clear();
        self.volatile = 0;
        self.value_mem = 0;
        n
    }

    /// Detaches every entry, leaving the shard empty; the caller decides
    /// where the returned data is dropped.
    pub fn take_data(&mut self) -> Detached {
        let fresh = Table::with_hasher(*self.table.hasher());
        let d = Detached { table: std::mem::replace(&mut self.table, fresh) };
        // The heap is one flat allocation: freeing it inline costs nothing.
        self.ttl_heap = BinaryHeap::new();
        self.field_heap = BinaryHeap::new();
        self.volatile = 0;
        self.value_mem = 0;
        d
    }

    /// Marks modified the watched keys that are live here or in `other`:
    /// what FLUSHDB (`other` None) and SWAPDB (`other` the shard swapped in)
    /// change. Keys absent or expired on both sides stay untouched, as in
    /// Redis's `touchAllWatchedKeysInDb`.
    pub fn signal_live(&mut self, other: Option<&Shard>, now: u64) {
        if self.watches.is_empty() {
            return;
        }
        for w in self.watches.iter() {
            let live = self.peek(&w.key, w.hash, now).is_some() || other.is_some_and(|o| o.peek(&w.key, w.hash, now).is_some());
            if live {
                for f in &w.flags {
                    f.set();
                }
            }
        }
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
        for k in expired {
            let h = self.hash_key(&k);
            self.remove_entry(&k, h);
            self.expired += 1;
            self.signal(&k, h);
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

    /// Registers `flag` to be set when `key` is next modified.
    pub fn watch(&mut self, key: &[u8], hash: u64, flag: &Arc<WatchFlag>) {
        if let Some(w) = self.watches.find_mut(hash, |w| *w.key == *key) {
            if !w.flags.iter().any(|f| Arc::ptr_eq(f, flag)) {
                w.flags.push(flag.clone());
            }
        } else {
            self.watches.insert_new(Watch { hash, key: key.into(), flags: vec![flag.clone()] });
        }
    }

    /// Removes a registration made by [`Shard::watch`].
    pub fn unwatch(&mut self, key: &[u8], hash: u64, flag: &Arc<WatchFlag>) {
        let mut now_empty = false;
        if let Some(w) = self.watches.find_mut(hash, |w| *w.key == *key) {
            w.flags.retain(|f| !Arc::ptr_eq(f, flag));
            now_empty = w.flags.is_empty();
        }
        if now_empty {
            self.watches.remove(hash, |w| *w.key == *key);
        }
    }

    /// Marks `key` modified for every client watching it. Cheap when no one
    /// watches anything in this shard.
    #[inline]
    pub fn signal(&mut self, key: &[u8], hash: u64) {
        if self.watches.is_empty() {
            return;
        }
        if let Some(w) = self.watches.find(hash, |w| *w.key == *key) {
            for f in &w.flags {
                f.set();
            }
        }
    }

    /// Marks every watched key of this shard modified (FLUSHDB, SWAPDB).
    pub fn signal_all(&mut self) {
        for w in self.watches.iter() {
            for f in &w.flags {
                f.set();
            }
        }
    }

    /// Exchanges the data (not the watches) of two shards (SWAPDB).
    pub fn swap_data(&mut self, other: &mut Shard) {
        std::mem::swap(&mut self.table, &mut other.table);
        std::mem::swap(&mut self.ttl_heap, &mut other.ttl_heap);
        std::mem::swap(&mut self.field_heap, &mut other.field_heap);
        std::mem::swap(&mut self.volatile, &mut other.volatile);
        std::mem::swap(&mut self.value_mem, &mut other.value_mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::StrValue;
    use crate::{EntryExt, NewValue};

    fn s(b: &str) -> Value {
        Value::Str(StrValue::from_slice(b.as_bytes()))
    }

    #[test]
    fn lazy_expiry() {
        let mut sh = Shard::new();
        sh.set(b"k", 1, s("v"), Some(1000), 0);
        assert!(sh.get(b"k", 1, 999).is_some());
        assert_eq!(sh.volatile_count(), 1);
        assert!(sh.get(b"k", 1, 1000).is_none());
        assert_eq!(sh.len(), 0);
        assert_eq!(sh.volatile_count(), 0);
        assert_eq!(sh.expired, 1);
        // Only the empty table's smallest bucket array is left.
        assert_eq!(sh.mem(), sh.table.mem_bytes());
        assert_eq!(sh.value_mem, 0);
    }

    #[test]
    fn active_expiry_uses_heap_and_skips_stale() {
        let mut sh = Shard::new();
        for i in 0..100u64 {
            let k = format!("k{i}");
            let h = sh.hash_key(k.as_bytes());
            sh.set(k.as_bytes(), h, s("v"), Some(100 + i), 0);
        }
        // Extending a TTL leaves a stale heap pair that must not delete it.
        let h0 = sh.hash_key(b"k0");
        sh.set_expire(b"k0", h0, Some(10_000));
        assert_eq!(sh.expire_cycle(150, 1000), 50);
        assert_eq!(sh.len(), 50);
        assert!(sh.get(b"k0", h0, 150).is_some());
        assert_eq!(sh.expire_cycle(10_000, 1000), 50);
        assert_eq!(sh.len(), 0);
    }

    #[test]
    fn watch_signal() {
        let mut sh = Shard::new();
        let f = WatchFlag::new();
        sh.watch(b"a", 7, &f);
        sh.signal(b"b", 8);
        assert!(!f.is_set());
        sh.signal(b"a", 7);
        assert!(f.is_set());
        sh.unwatch(b"a", 7, &f);
        assert!(sh.watches.is_empty());
    }

    #[test]
    fn take_data_empties_and_keeps_watches() {
        let mut sh = Shard::new();
        let f = WatchFlag::new();
        sh.watch(b"a", 1, &f);
        sh.set(b"a", 1, s("v"), Some(100), 0);
        sh.set(b"b", 2, s("v"), None, 0);
        let d = sh.take_data();
        assert_eq!(d.len(), 2);
        assert!(sh.is_empty());
        assert_eq!((sh.volatile_count(), sh.mem()), (0, 0));
        assert_eq!(sh.expire_cycle(1_000, 100), 0);
        assert!(!f.is_set());
        sh.signal(b"a", 1);
        assert!(f.is_set());
    }

    #[test]
    fn signal_live_skips_absent_and_expired_keys() {
        let mut a = Shard::new();
        let mut b = Shard::new();
        let (fa, fb, fc, fd) = (WatchFlag::new(), WatchFlag::new(), WatchFlag::new(), WatchFlag::new());
        a.watch(b"here", 1, &fa);
        a.watch(b"there", 2, &fb);
        a.watch(b"nowhere", 3, &fc);
        a.watch(b"stale", 4, &fd);
        a.set(b"here", 1, s("v"), None, 0);
        b.set(b"there", 2, s("v"), None, 0);
        a.set(b"stale", 4, s("v"), Some(10), 0);
        b.set(b"stale", 4, s("v"), Some(10), 0);
        a.signal_live(Some(&b), 20);
        assert!(fa.is_set() && fb.is_set());
        assert!(!fc.is_set() && !fd.is_set());
    }

    #[test]
    fn random_any_draws_every_entry() {
        let mut sh = Shard::new();
        for i in 0..20u64 {
            let k = format!("k{i}");
            let h = sh.hash_key(k.as_bytes());
            sh.set(k.as_bytes(), h, s("v"), (i < 10).then_some(5), 0);
        }
        let mut rng = rand::thread_rng();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2000 {
            seen.insert(sh.random_any(&mut rng).unwrap().key().to_vec());
        }
        assert_eq!(seen.len(), 20);
        assert!(Shard::new().random_any(&mut rng).is_none());
    }

    #[test]
    fn scan_live_removes_expired_it_meets() {
        let mut sh = Shard::new();
        for i in 0..8u64 {
            let k = format!("k{i}");
            let h = sh.hash_key(k.as_bytes());
            sh.set(k.as_bytes(), h, s("v"), (i % 2 == 0).then_some(50), 0);
        }
        let mut live = Vec::new();
        let mut cursor = 0;
        let mut visited = 0;
        loop {
            let (next, v) = sh.scan_live(cursor, 100, |e| live.push(e.key().to_vec()));
            visited += v;
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(visited, 8);
        assert_eq!(live.len(), 4);
        assert_eq!(sh.len(), 4);
        assert_eq!(sh.expired, 4);
        assert_eq!(sh.volatile_count(), 0);
    }

    /// The value bytes the shard counts match what its entries hold.
    fn assert_accounted(sh: &Shard) {
        let held: usize = sh.table.iter().map(|e| e.value_heap()).sum();
        assert_eq!(sh.value_mem, held);
        assert_eq!(sh.mem(), sh.table.mem_bytes() + held);
    }

    #[test]
    fn values_in_the_item_and_boxed_are_accounted_through_replacements() {
        let mut sh = Shard::new();
        let h = sh.hash_key(b"k");
        assert!(sh.set(b"k", h, NewValue::Bytes(&[7; 100]), Some(50_000), 0).is_none());
        assert_eq!(sh.value_mem, 0);
        let old = sh.replace_value(b"k", h, Value::Str(StrValue::Raw(vec![1; 300])), 10).unwrap();
        assert_eq!(old.str().unwrap().bytes(), Some(&[7u8; 100][..]));
        assert!(sh.value_mem > 300);
        assert_accounted(&sh);
        let e = sh.get(b"k", h, 10).unwrap();
        assert_eq!((e.expire(), e.str().unwrap().len(), e.value().encoding()), (Some(50_000), 300, "raw"));
        // In-place growth of the boxed buffer, reported by the caller.
        let e = sh.get_mut(b"k", h, 10).unwrap();
        let Some(Value::Str(sv)) = e.boxed_value_mut() else { panic!("boxed") };
        let before = sv.heap_size();
        sv.make_raw().extend_from_slice(&[2; 1000]);
        let after = sv.heap_size();
        sh.value_resized(before, after);
        assert_accounted(&sh);
        // Back to an integer in the item; the TTL stays.
        sh.replace_value(b"k", h, NewValue::Int(5), 10);
        assert_accounted(&sh);
        assert_eq!(sh.value_mem, 0);
        assert_eq!(sh.volatile_count(), 1);
        assert!(sh.get_mut(b"k", h, 10).unwrap().set_int(6));
        assert_eq!(sh.get(b"k", h, 10).unwrap().str().unwrap().int(), Some(6));
        // Absent and expired keys are not given a value.
        assert!(sh.replace_value(b"zz", sh.hash_key(b"zz"), NewValue::Int(1), 10).is_none());
        assert!(sh.replace_value(b"k", h, NewValue::Int(1), 60_000).is_none());
        assert!(sh.is_empty());
        assert_eq!((sh.volatile_count(), sh.expired), (0, 1));
        // Overwriting an expired key counts it expired and returns nothing.
        sh.set(b"a", 1, NewValue::Bytes(b"x"), Some(5), 0);
        assert!(sh.set(b"a", 1, NewValue::Bytes(b"y"), None, 10).is_none());
        assert_eq!((sh.volatile_count(), sh.expired), (0, 2));
        // A renamed entry keeps its box.
        sh.set(b"h", 2, Value::Hash(crate::Hash::default()), None, 0);
        let e = sh.remove(b"h", 2, 0).unwrap();
        sh.insert_entry(b"h2", 3, e, 0);
        assert!(sh.get(b"h2", 3, 0).unwrap().hash().is_some());
        assert_accounted(&sh);
    }
}
