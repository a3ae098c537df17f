//! The keys' deadlines: the TTL index (a heap of (deadline, hash)
//! pairs, lazily kept), a key's expiry when it is read or written, the
//! hash fields' deadlines, and the active expiry cycle.

use std::cmp::Reverse;
use std::sync::atomic::Ordering;

use super::Shard;
use crate::effect::Effect;
use crate::entry::{self, is_expired, Entry, EntryExt};
use crate::event;

impl Shard {
    /// A deadline `w` given to `key` on a writable replica by one of its
    /// own clients (Redis's `slaveKeysWithExpire`): a replica expires no
    /// key itself, but its master will send no DEL for this one.
    #[inline]
    pub(super) fn note_local_deadline(&mut self, key: &[u8], w: u64) {
        if self.replica.load(Ordering::Relaxed) && !entry::applying_masters_stream() {
            self.local_ttl.push(Reverse((w, key.into())));
        }
    }

    /// A writable replica's expiry: the keys its own clients gave a
    /// deadline (see [`Shard::note_local_deadline`]) that have reached it
    /// are removed, as Redis's `expireSlaveKeys` removes them, whoever set
    /// the deadline they have now; up to `budget` of them. A key whose
    /// deadline moved later is looked at again then; one that lost it, or
    /// is gone, is forgotten. Returns the keys removed.
    pub fn expire_local(&mut self, now: u64, budget: usize) -> usize {
        let mut removed = 0;
        let hasher = *self.table.hasher();
        while removed < budget {
            match self.local_ttl.peek() {
                Some(Reverse((w, _))) if *w <= now => {}
                _ => break,
            }
            let Some(Reverse((_, key))) = self.local_ttl.pop() else { break };
            let hash = tern_table::hash_key(&hasher, &key);
            match self.table.get(&key, hash).and_then(|e| e.expire()) {
                Some(d) if d <= now => {
                    self.expire_key(&key, hash);
                    removed += 1;
                }
                Some(d) => self.local_ttl.push(Reverse((d, key))),
                None => {}
            }
        }
        removed
    }

    /// Forgets the writable replica's own deadlines (promoted, its keys
    /// expire as any master's).
    #[inline]
    pub fn forget_local_deadlines(&mut self) {
        if !self.local_ttl.is_empty() {
            self.local_ttl = Default::default();
        }
    }

    /// A value's field deadlines went from `old` to `new`: counts the
    /// hashes that have some.
    pub(super) fn hfe_changed(&mut self, old: Option<u64>, new: Option<u64>) {
        match (old.is_some(), new.is_some()) {
            (false, true) => self.hfe_hashes += 1,
            (true, false) => self.hfe_hashes -= 1,
            _ => {}
        }
    }

    /// A key's deadline `w` is gone.
    pub(super) fn deadline_removed(&mut self, w: u64) {
        self.volatile -= 1;
        self.deadline_sum -= u128::from(w);
    }

    /// Removes the entry if it has expired. Returns true if it has (then
    /// removed, or, for a `read` on a replica, left for its master's DEL).
    pub(super) fn expire_if_needed(&mut self, key: &[u8], hash: u64, now: u64, read: bool) -> bool {
        // No key here has a TTL and no hash a field TTL: nothing can be due,
        // and the caller's own lookup is the only probe.
        if !self.has_deadlines() {
            return false;
        }
        let (expired, fields_due) = match self.table.get(key, hash) {
            Some(e) => (is_expired(e, now), e.next_field_deadline().is_some_and(|d| d <= now)),
            None => (false, false),
        };
        if read && (expired || fields_due) && self.replica.load(Ordering::Relaxed) {
            return expired;
        }
        // A hash's due fields go on any access, so every command sees it as
        // active expiry would leave it.
        if fields_due && !expired {
            self.expire_hash_fields(key, hash, now);
        }
        if expired {
            self.expire_key(key, hash);
        }
        expired
    }

    /// Removes an expired key and makes it known as a deletion.
    pub(super) fn expire_key(&mut self, key: &[u8], hash: u64) {
        self.remove_entry(key, hash);
        self.expired += 1;
        self.wrote_as(key, hash, || Some(event::EXPIRED), || Effect::Del { key: key.into() });
    }

    /// A key at `hash` has the deadline `when`, where it had `previous`:
    /// the TTL index needs a pair for it only if it had none as early.
    pub(super) fn deadline_added(&mut self, when: u64, hash: u64, previous: Option<u64>) {
        self.volatile += 1;
        self.deadline_sum += u128::from(when);
        if previous.is_some_and(|p| p <= when) {
            return;
        }
        self.ttl_heap.push(Reverse((when, hash)));
        if self.ttl_heap.len() > 2 * self.volatile + 1024 {
            self.rebuild_ttl_heap();
        }
    }

    /// Sets or clears the deadline of an existing key. Returns false if the
    /// key does not exist (expired or not). A deadline in the past is kept
    /// as is: the key becomes invisible at once.
    pub fn set_expire(&mut self, key: &[u8], hash: u64, when: Option<u64>) -> bool {
        self.preserve(key, hash);
        let Some(previous) = self.table.swap_expire(key, hash, when) else { return false };
        if let Some(p) = previous {
            self.deadline_removed(p);
        }
        // Under a `volatile-` FIFO policy a key enters or leaves the
        // queues with its TTL.
        if self.fifo.volatile && previous.is_some() != when.is_some() {
            let lfu = self.lfu.load(Ordering::Relaxed);
            if let Some(e) = self.table.get_mut(key, hash) {
                if when.is_some() && !e.fifo_tracked() {
                    self.fifo.insert(e, hash);
                } else if when.is_none() && e.fifo_tracked() {
                    self.fifo.removed(e);
                    e.clear_fifo(0, lfu);
                }
            }
        }
        if let Some(w) = when {
            self.deadline_added(w, hash, previous);
            self.note_local_deadline(key, w);
        }
        self.wrote(key, hash, || Effect::Expire { key: key.into(), at: when });
        true
    }

    /// Tells the shard that the hash at `hash` changed its earliest field
    /// deadline from `old` to `new` (None: no field TTL).
    pub(super) fn field_deadline_changed(&mut self, hash: u64, old: Option<u64>, new: Option<u64>) {
        if let Some(n) = new {
            if old.is_none_or(|o| n < o) {
                self.field_heap.push(Reverse((n, hash)));
                if self.field_heap.len() > 2 * self.table.len() + 1024 {
                    let h = self.table.hasher();
                    self.field_heap = self
                        .table
                        .iter()
                        .filter_map(|e| e.next_field_deadline().map(|d| Reverse((d, tern_table::hash_key(h, e.key())))))
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
        if self.snap.is_some() && self.table.get(key, hash).and_then(|e| e.next_field_deadline()).is_some_and(|d| d <= now) {
            self.preserve(key, hash);
        }
        let recording = self.is_recording();
        let Some(e) = self.table.get_mut(key, hash) else { return 0 };
        let Some(h) = e.hash_mut() else { return 0 };
        if h.next_deadline().is_none_or(|d| d > now) {
            return 0;
        }
        let before = h.heap_size();
        let mut fields: Vec<Box<[u8]>> = Vec::new();
        let n = h.expire_fields_with(now, |f| {
            if recording {
                fields.push(f.into())
            }
        });
        let (after, empty, next) = (h.heap_size(), h.is_empty(), h.next_deadline());
        self.value_mem = (self.value_mem + after).saturating_sub(before);
        if next.is_none() {
            // Its last field with a TTL went (an emptied hash is then
            // removed with none left to count).
            self.hfe_hashes -= 1;
        }
        self.expired_fields += n as u64;
        if empty {
            self.remove_entry(key, hash);
            self.expired += 1;
        }
        self.wrote_as(key, hash, || Some(event::HEXPIRED), || Effect::HDel { key: key.into(), fields });
        if empty {
            self.note_event(key, event::DEL);
        }
        n
    }

    pub(super) fn rebuild_ttl_heap(&mut self) {
        let h = self.table.hasher();
        self.ttl_heap = self.table.iter().filter_map(|e| e.expire().map(|w| Reverse((w, tern_table::hash_key(h, e.key()))))).collect();
    }

    /// Active expiry: removes up to `budget` keys whose deadline has passed,
    /// found from the TTL heap without looking at live keys. Returns the
    /// keys removed.
    pub fn expire_cycle(&mut self, now: u64, budget: usize) -> usize {
        let mut removed = 0;
        let mut steps = 0;
        // A heap entry names a hash, and the table finds items by their
        // hash's bucket and fingerprint: other keys can match both. Each is
        // checked to have this very hash, or it would be removed as if it
        // lived at this hash's home, leaving that bucket's overflow count
        // wrong and a key there unreachable.
        let hasher = *self.table.hasher();
        let has = move |e: &Entry, hash: u64| tern_table::hash_key(&hasher, e.key()) == hash;
        while steps < budget {
            let Some(&Reverse((when, hash))) = self.ttl_heap.peek() else { break };
            if when > now {
                break;
            }
            self.ttl_heap.pop();
            steps += 1;
            // Several keys may share the hash; collect the expired ones.
            while let Some(key) = self.table.find_by(hash, |e| is_expired(e, now) && has(e, hash)).map(|e| e.key().to_vec()) {
                self.expire_key(&key, hash);
                removed += 1;
            }
            // A key here whose deadline moved later keeps a pair, at it.
            for e in self.table.iter_hash(hash) {
                if let Some(d) = e.expire().filter(|&d| d > now && has(e, hash)) {
                    self.ttl_heap.push(Reverse((d, hash)));
                }
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
                .filter(|e| e.next_field_deadline().is_some() && has(e, hash))
                .map(|e| e.key().to_vec())
                .collect();
            for key in keys {
                let before = self.len();
                self.expired_fields_active += self.expire_hash_fields(&key, hash, now) as u64;
                removed += before - self.len();
                let next = self.table.get(&key, hash).and_then(|e| e.next_field_deadline());
                if let Some(d) = next {
                    self.field_heap.push(Reverse((d, hash)));
                }
            }
        }
        removed
    }
}
