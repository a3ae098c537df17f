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

use crate::table::{Keyed, Table};
use crate::value::Value;

/// Fixed bytes an entry costs beyond its key and value (for `used_memory`
/// style accounting of a shard).
const ENTRY_OVERHEAD: usize = std::mem::size_of::<Entry>() + 16;

#[derive(Debug)]
pub struct Entry {
    hash: u64,
    key: Box<[u8]>,
    pub value: Value,
    /// Absolute deadline in ms, 0 when the key has no TTL.
    expire: u64,
    /// Last access, in seconds since the Unix epoch (OBJECT IDLETIME).
    pub atime: u32,
    /// Logarithmic access counter (OBJECT FREQ).
    pub freq: u8,
}

impl Keyed for Entry {
    fn hash(&self) -> u64 {
        self.hash
    }
}

impl Entry {
    pub fn key(&self) -> &[u8] {
        &self.key
    }
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// The deadline in ms, if the key has one.
    pub fn expire(&self) -> Option<u64> {
        (self.expire != 0).then_some(self.expire)
    }
    fn is_expired(&self, now: u64) -> bool {
        self.expire != 0 && self.expire <= now
    }
    fn mem(&self) -> usize {
        ENTRY_OVERHEAD + self.key.len() + self.value.heap_size()
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

#[derive(Debug, Default)]
pub struct Shard {
    table: Table<Entry>,
    /// (deadline, hash) of keys with a TTL; stale pairs (TTL changed or key
    /// gone) are skipped when popped and dropped by a rebuild when too many.
    ttl_heap: BinaryHeap<Reverse<(u64, u64)>>,
    volatile: usize,
    watches: Table<Watch>,
    mem: usize,
    /// Keys removed because their TTL passed (INFO `expired_keys`).
    pub expired: u64,
}

impl Shard {
    pub fn new() -> Self {
        Self::default()
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

    /// Approximate bytes held by this shard's entries.
    pub fn mem(&self) -> usize {
        self.mem
    }

    /// Removes the entry if it has expired. Returns true if it was removed.
    fn expire_if_needed(&mut self, key: &[u8], hash: u64, now: u64) -> bool {
        let expired = matches!(self.table.find(hash, |e| *e.key == *key), Some(e) if e.is_expired(now));
        if expired {
            self.remove_entry(key, hash);
            self.expired += 1;
            self.signal(key, hash);
        }
        expired
    }

    fn remove_entry(&mut self, key: &[u8], hash: u64) -> Option<Entry> {
        let e = self.table.remove(hash, |e| *e.key == *key)?;
        if e.expire != 0 {
            self.volatile -= 1;
        }
        self.mem -= e.mem();
        Some(e)
    }

    /// Looks a live key up for reading.
    pub fn get(&mut self, key: &[u8], hash: u64, now: u64) -> Option<&Entry> {
        self.expire_if_needed(key, hash, now);
        self.table.find(hash, |e| *e.key == *key)
    }

    /// Looks a live key up without removing it if expired (for callers that
    /// hold `&self`, e.g. a read-only walk).
    pub fn peek(&self, key: &[u8], hash: u64, now: u64) -> Option<&Entry> {
        self.table.find(hash, |e| *e.key == *key).filter(|e| !e.is_expired(now))
    }

    /// Looks a live key up for changing its value in place. Call
    /// [`Shard::value_resized`] afterwards if the value's size changed.
    pub fn get_mut(&mut self, key: &[u8], hash: u64, now: u64) -> Option<&mut Entry> {
        self.expire_if_needed(key, hash, now);
        self.table.find_mut(hash, |e| *e.key == *key)
    }

    /// Re-measures the memory of a value changed through [`Shard::get_mut`].
    pub fn value_resized(&mut self, old_heap: usize, new_heap: usize) {
        self.mem = (self.mem + new_heap).saturating_sub(old_heap);
    }

    /// Stores `value` under `key`, replacing any old entry, with deadline
    /// `expire` (None: no TTL). Returns the old value if there was a live one.
    pub fn set(&mut self, key: &[u8], hash: u64, value: Value, expire: Option<u64>, now: u64) -> Option<Value> {
        let old = self.remove(key, hash, now).map(|e| e.value);
        let e = Entry { hash, key: key.into(), value, expire: 0, atime: (now / 1000) as u32, freq: 5 };
        self.mem += e.mem();
        self.table.insert_new(e);
        if let Some(when) = expire {
            self.set_expire(key, hash, Some(when));
        }
        old
    }

    /// Stores a whole entry taken from elsewhere (RENAME, MOVE, SWAPDB),
    /// keeping its TTL, access time and counter.
    pub fn insert_entry(&mut self, key: &[u8], hash: u64, mut entry: Entry, now: u64) -> Option<Value> {
        let old = self.remove(key, hash, now).map(|e| e.value);
        let when = std::mem::take(&mut entry.expire);
        entry.hash = hash;
        if *entry.key != *key {
            entry.key = key.into();
        }
        self.mem += entry.mem();
        self.table.insert_new(entry);
        if when != 0 {
            self.set_expire(key, hash, Some(when));
        }
        old
    }

    /// Removes a live key, returning its entry.
    pub fn remove(&mut self, key: &[u8], hash: u64, now: u64) -> Option<Entry> {
        if self.expire_if_needed(key, hash, now) {
            return None;
        }
        self.remove_entry(key, hash)
    }

    /// Sets or clears the deadline of an existing key. Returns false if the
    /// key does not exist (expired or not). A deadline in the past is kept
    /// as is: the key becomes invisible at once.
    pub fn set_expire(&mut self, key: &[u8], hash: u64, when: Option<u64>) -> bool {
        let Some(e) = self.table.find_mut(hash, |e| *e.key == *key) else { return false };
        let had = e.expire != 0;
        e.expire = when.unwrap_or(0);
        match (had, when) {
            (false, Some(_)) => self.volatile += 1,
            (true, None) => self.volatile -= 1,
            _ => {}
        }
        if let Some(w) = when {
            self.ttl_heap.push(Reverse((w, hash)));
            if self.ttl_heap.len() > 2 * self.volatile + 1024 {
                self.rebuild_ttl_heap();
            }
        }
        true
    }

    fn rebuild_ttl_heap(&mut self) {
        self.ttl_heap = self.table.iter().filter(|e| e.expire != 0).map(|e| Reverse((e.expire, e.hash))).collect();
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
            while let Some(key) =
                self.table.find(hash, |e| e.is_expired(now)).map(|e| e.key.clone())
            {
                self.remove_entry(&key, hash);
                self.expired += 1;
                self.signal(&key, hash);
                removed += 1;
            }
        }
        removed
    }

    /// Removes every entry, returning how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.table.len();
        self.table.clear();
        self.ttl_heap.clear();
        self.volatile = 0;
        self.mem = 0;
        n
    }

    /// Live entries, in table order (KEYS, FLUSH bookkeeping, tests).
    pub fn iter(&self, now: u64) -> impl Iterator<Item = &Entry> {
        self.table.iter().filter(move |e| !e.is_expired(now))
    }

    /// One SCAN step over this shard's table; see [`Table::scan`].
    pub fn scan(&self, cursor: u64, now: u64, mut f: impl FnMut(&Entry)) -> u64 {
        self.table.scan(cursor, |e| {
            if !e.is_expired(now) {
                f(e)
            }
        })
    }

    /// A random live entry, or None if the shard has none. Tries random
    /// buckets first and falls back to a walk when the table is sparse.
    pub fn random(&mut self, now: u64, rng: &mut impl rand::Rng) -> Option<&Entry> {
        if self.table.is_empty() {
            return None;
        }
        let nb = self.table.bucket_count();
        for _ in 0..16 {
            let b = self.table.bucket(rng.gen_range(0..nb));
            if !b.is_empty() {
                let e = &b[rng.gen_range(0..b.len())];
                if !e.is_expired(now) {
                    let (k, h) = (e.key.clone(), e.hash);
                    return self.table.find(h, |x| x.key == k);
                }
            }
        }
        let live = self.iter(now).count();
        if live == 0 {
            return None;
        }
        let i = rng.gen_range(0..live);
        self.iter(now).nth(i)
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
        std::mem::swap(&mut self.volatile, &mut other.volatile);
        std::mem::swap(&mut self.mem, &mut other.mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::StrValue;

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
        assert_eq!(sh.mem(), 0);
    }

    #[test]
    fn active_expiry_uses_heap_and_skips_stale() {
        let mut sh = Shard::new();
        for i in 0..100u64 {
            sh.set(format!("k{i}").as_bytes(), i, s("v"), Some(100 + i), 0);
        }
        // Extending a TTL leaves a stale heap pair that must not delete it.
        sh.set_expire(b"k0", 0, Some(10_000));
        assert_eq!(sh.expire_cycle(150, 1000), 50);
        assert_eq!(sh.len(), 50);
        assert!(sh.get(b"k0", 0, 150).is_some());
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
}
