//! S3-FIFO (Yang et al., SOSP'23) and SIEVE (Zhang et al., NSDI'24), one
//! instance per shard.
//!
//! ```text
//!  S3-FIFO   insert ─► small FIFO (S) ──tail: accessed?──yes──► main FIFO (M) head
//!              │ (hash in ghost G)           └─no──► evicted, its hash to G
//!              └──────────────────────────► M    M tail: counter > 0 ─► M head, counter - 1
//!                                                         else evicted
//!  SIEVE     insert ─► head of one FIFO; the hand walks from the tail towards the head,
//!            clearing visited bits, and evicts the first key not visited; it stays
//!            where it stopped and wraps from the head back to the tail
//! ```
//!
//! What each key carries lives in the word its item already has
//! ([`crate::Meta`]): a 2-bit access counter (SIEVE's visited bit is
//! "non-zero"), S3-FIFO's small/main bit and, in the clock's 24 bits, the
//! position of the key's slot in its queue. A read only increments that
//! counter, in the item the lookup already touched.
//!
//! # Bytes per key
//! Under `maxmemory` every byte of eviction metadata is a byte less for
//! keys, and a cache that holds fewer keys misses more, so the queues are
//! built to cost as little as the algorithms allow:
//! - A queue slot is 6 bytes: the low 48 bits of the key's hash, all the
//!   table needs to find the item (its position and fingerprint; see
//!   `tern_table`'s hashing contract). A slot does not store which
//!   incarnation of the key it names: every push onto a queue gets the
//!   next position of that queue, the item keeps that position (24 bits)
//!   and its queue bit, and a slot is live only while the item its hash
//!   finds has both. A key deleted, re-created or renamed, or pushed
//!   again further on, leaves a dead slot that is skipped when met, so
//!   deletions cost the queues nothing; a queue is compacted (and its
//!   live keys renumbered) once dead slots exceed half the live ones.
//! - Queues are rings of 128-slot chunks (768 bytes, an allocator size
//!   class): memory follows the queue's length within a chunk, where a
//!   doubling `VecDeque` held up to twice its length.
//! - The ghost is a table of 16-bit entries, 32 to a 64-byte bucket, 3/4
//!   full: 2.7 bytes per remembered hash (see [`Ghost`]).
//!
//! One shard of 20k keys under eviction holds 8.6 bytes per key under
//! S3-FIFO (slots 6, ghost 2.4) and 7.3 under SIEVE (its victims' dead
//! slots wait for compaction); at `bench/hit_ratio.py`'s 16 MB (about
//! 108k keys over 16 shards) a key costs 10 bytes more than under LRU with
//! S3-FIFO and 8 with SIEVE, where 12-byte slots in `VecDeque`s and a
//! `HashMap` ghost cost 29 and 16, and S3-FIFO holds 12% more keys than
//! before (see bench/RESULTS.md).
//!
//! # Faithfulness, and where it is bounded
//! - Per shard the S and M queues and SIEVE's list and hand behave as the
//!   papers' pseudocode exactly; the tests replay random traces through
//!   this and through a direct model of each paper's algorithm
//!   (`VecDeque`s and a `HashMap`, the S3-FIFO model with the same ghost)
//!   and require the same evictions. Eviction picks a shard in proportion
//!   to its keys (see `crate::evict`), so across shards the cache is S
//!   instances each seeing a uniform sample of the keys, not one global
//!   queue (`cargo run --release -p tern-store --example evict_sim`
//!   compares the miss ratio with one global model with an exact ghost at
//!   the same size in keys: within 0.0004 on the bench's three traces).
//! - Sizes are in keys, not bytes: S holds 10% of the shard's tracked
//!   keys, the ghost remembers as many hashes as M's share (90%), the
//!   paper's sizes. "M full" on a promotion is never true (the limit is in
//!   bytes, enforced by eviction itself), so a promotion does not evict
//!   from M.
//! - The ghost is a FIFO at a grain of 1/15 of its size, of 12-bit
//!   fingerprints within a bucket (see [`Ghost`] for what that changes).
//! - A key moves from S to M when accessed at least once while in S (the
//!   paper's "if it has been accessed", counter > 0), its counter reset.
//! - Positions are 24 bits in the item: a dead slot could be taken for a
//!   live one only if its queue spanned 2^24 slots, which compaction keeps
//!   from happening below 11M keys in one shard.
//! - Overwriting a key (SET on an existing key) keeps its place and counts
//!   as an access, as a hit would.

use std::collections::VecDeque;

use tern_table::size_class;

use crate::entry::{Entry, Table};

/// Which FIFO policy tracks keys, if any, and whether only keys with a TTL
/// (the `volatile-` forms).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FifoKind {
    #[default]
    Off,
    Sieve,
    S3Fifo,
}

/// The keyspace-wide FIFO policy as one byte (shared by the shards).
pub(crate) fn encode(kind: FifoKind, volatile: bool) -> u8 {
    let k = match kind {
        FifoKind::Off => 0,
        FifoKind::Sieve => 1,
        FifoKind::S3Fifo => 2,
    };
    k | if volatile { 4 } else { 0 }
}

pub(crate) fn decode(b: u8) -> (FifoKind, bool) {
    let kind = match b & 3 {
        1 => FifoKind::Sieve,
        2 => FifoKind::S3Fifo,
        _ => FifoKind::Off,
    };
    (kind, b & 4 != 0)
}

/// The position range an item records (the clock's 24 bits).
const SEQ_MASK: u64 = (1 << 24) - 1;

/// S's share of the tracked keys, in tenths (the paper's 10%).
const SMALL_TENTHS: usize = 1;

/// A queue entry: the low 48 bits of the key's hash, 6 bytes with 2-byte
/// alignment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot([u16; 3]);

const _: () = assert!(std::mem::size_of::<Slot>() == 6);

impl Slot {
    fn new(hash: u64) -> Slot {
        Slot([hash as u16, (hash >> 16) as u16, (hash >> 32) as u16])
    }

    /// The hash as far as the table looks at it (position and
    /// fingerprint); bits 48..64 are zero.
    fn hash(self) -> u64 {
        u64::from(self.0[0]) | u64::from(self.0[1]) << 16 | u64::from(self.0[2]) << 32
    }
}

/// Slots per chunk of a [`Ring`]: 768 bytes, a jemalloc size class.
const CHUNK: usize = 128;

type Chunk = [Slot; CHUNK];

/// A FIFO of slots numbered by position: the n-th push gets position n
/// (counted from the ring's creation), and a slot is read back by its
/// position while it is between `head` (the oldest) and `tail`.
#[derive(Debug, Default)]
struct Ring {
    chunks: VecDeque<Box<Chunk>>,
    /// The position of `chunks[0][0]`.
    start: u64,
    head: u64,
    tail: u64,
}

impl Ring {
    /// An empty ring whose first push gets position `at`.
    fn starting_at(at: u64) -> Ring {
        Ring { start: at, head: at, tail: at, ..Ring::default() }
    }

    fn len(&self) -> usize {
        (self.tail - self.head) as usize
    }

    fn push(&mut self, s: Slot) -> u64 {
        let off = (self.tail - self.start) as usize;
        if off == self.chunks.len() * CHUNK {
            self.chunks.push_back(Box::new([Slot::default(); CHUNK]));
        }
        self.chunks[off / CHUNK][off % CHUNK] = s;
        self.tail += 1;
        self.tail - 1
    }

    /// The slot at `pos`, which is in `head..tail`.
    fn get(&self, pos: u64) -> Slot {
        let off = (pos - self.start) as usize;
        self.chunks[off / CHUNK][off % CHUNK]
    }

    fn pop(&mut self) -> Option<(u64, Slot)> {
        if self.head == self.tail {
            return None;
        }
        let p = self.head;
        let s = self.get(p);
        self.head += 1;
        if self.head - self.start == CHUNK as u64 {
            self.chunks.pop_front();
            self.start += CHUNK as u64;
        }
        Some((p, s))
    }

    /// Bytes allocated: the chunks and the chunk list.
    fn mem_bytes(&self) -> usize {
        let chunks = self.chunks.len();
        let list = self.chunks.capacity() * std::mem::size_of::<Box<Chunk>>();
        chunks * size_class(std::mem::size_of::<Chunk>()) + if list > 0 { size_class(list) } else { 0 }
    }

    fn shrink(&mut self) {
        if self.chunks.capacity() > 2 * self.chunks.len() + 8 {
            self.chunks.shrink_to(self.chunks.len() + 4);
        }
    }
}

/// The position an item keeps for its slot at `pos`.
fn seq(pos: u64) -> u32 {
    (pos & SEQ_MASK) as u32
}

/// The tracked item the slot at `pos` of queue `main` (M, or SIEVE's
/// list; else S) names, if the slot is live.
fn resolve(table: &mut Table, s: Slot, pos: u64, main: bool) -> Option<&mut Entry> {
    table.find_by_mut(s.hash(), |e| e.fifo_seq() == Some(seq(pos)) && e.fifo_in_main() == main)
}

/// S3-FIFO's ghost: hashes of keys evicted from S, forgotten first in
/// first out once more than its capacity were added after them.
///
/// ```text
///  bucket (64 bytes) = 32 entries of 16 bits:  | fingerprint: 12 | epoch: 4 |   (0: empty)
///  bucket = position bits of the hash (multiply and shift), fingerprint = hash bits 32..44
/// ```
///
/// Insertions are counted in epochs of capacity/15; an entry stamped in
/// one of the last 15 epochs (the current one included) is remembered,
/// so the ghost holds between 14/15 and all of its capacity's last
/// hashes. A sweep clears one or more buckets per insertion, so each is
/// cleared of expired entries once per epoch, before their 4-bit stamp
/// comes round again. What this changes from an exact FIFO of hashes:
/// the last 1/15 of the capacity may be forgotten early; a bucket with
/// no free entry (rare at 3/4 load) forgets its oldest early; two hashes
/// sharing a bucket and 12 fingerprint bits are confused (a new key then
/// goes to M instead of S, about one insertion in 170 at full load);
/// resizing, when the capacity moved past 7/8 or under 3/8 of the
/// table's room, forgets everything.
#[derive(Debug, Default)]
pub(crate) struct Ghost {
    buckets: Vec<[u16; GHOST_WAYS]>,
    epoch: u16,
    in_epoch: usize,
    sweep: usize,
}

const GHOST_WAYS: usize = 32;
const EPOCH_MASK: u16 = 0xf;
/// Entries of this age in epochs or more are forgotten.
const GHOST_AGES: u16 = 15;

impl Ghost {
    fn bucket(&self, hash: u64) -> usize {
        ((u64::from(hash as u32) * self.buckets.len() as u64) >> 32) as usize
    }

    fn print(hash: u64) -> u16 {
        (((hash >> 32) & 0xfff) as u16).max(1) << 4
    }

    fn age(&self, x: u16) -> u16 {
        self.epoch.wrapping_sub(x) & EPOCH_MASK
    }

    fn live(&self, x: u16) -> bool {
        x != 0 && self.age(x) < GHOST_AGES
    }

    /// Remembers `hash`, as the newest of at most `cap` hashes.
    pub fn remember(&mut self, hash: u64, cap: usize) {
        let nb = self.buckets.len();
        if cap * 8 > nb * GHOST_WAYS * 7 || cap * 8 < nb * GHOST_WAYS * 3 {
            let want = cap.div_ceil(GHOST_WAYS * 3 / 4).max(1);
            self.buckets = vec![[0; GHOST_WAYS]; want];
            self.sweep = 0;
        }
        let epoch_len = (cap / GHOST_AGES as usize).max(1);
        self.in_epoch += 1;
        if self.in_epoch >= epoch_len {
            self.in_epoch = 0;
            self.epoch = self.epoch.wrapping_add(1) & EPOCH_MASK;
        }
        let nb = self.buckets.len();
        for _ in 0..nb.div_ceil(epoch_len) {
            let b = self.sweep;
            for i in 0..GHOST_WAYS {
                let x = self.buckets[b][i];
                if x != 0 && !self.live(x) {
                    self.buckets[b][i] = 0;
                }
            }
            self.sweep = if b + 1 == nb { 0 } else { b + 1 };
        }
        let b = self.bucket(hash);
        let p = Self::print(hash);
        let entry = p | self.epoch;
        // The same hash again, else a free entry, else the oldest.
        let mut at = 0;
        let mut best = 0;
        for (i, &x) in self.buckets[b].iter().enumerate() {
            let rank = if x & !EPOCH_MASK == p && self.live(x) {
                u16::MAX
            } else if !self.live(x) {
                u16::MAX - 1
            } else {
                self.age(x)
            };
            if rank > best || i == 0 {
                best = rank;
                at = i;
            }
        }
        self.buckets[b][at] = entry;
    }

    /// Whether `hash` is remembered; if so it is forgotten (its key comes
    /// back, to M).
    pub fn take(&mut self, hash: u64) -> bool {
        if self.buckets.is_empty() {
            return false;
        }
        let b = self.bucket(hash);
        let p = Self::print(hash);
        for i in 0..GHOST_WAYS {
            let x = self.buckets[b][i];
            if x & !EPOCH_MASK == p && self.live(x) {
                self.buckets[b][i] = 0;
                return true;
            }
        }
        false
    }

    #[cfg(test)]
    fn contains(&self, hash: u64) -> bool {
        !self.buckets.is_empty() && self.buckets[self.bucket(hash)].iter().any(|&x| x & !EPOCH_MASK == Self::print(hash) && self.live(x))
    }

    fn mem_bytes(&self) -> usize {
        let n = self.buckets.capacity() * std::mem::size_of::<[u16; GHOST_WAYS]>();
        if n > 0 { size_class(n) } else { 0 }
    }
}

/// One shard's queues.
#[derive(Debug, Default)]
pub(crate) struct Fifo {
    pub kind: FifoKind,
    /// Only keys with a TTL are tracked (`volatile-s3fifo`, `volatile-sieve`).
    pub volatile: bool,
    /// S3-FIFO's small queue.
    small: Ring,
    small_live: usize,
    /// S3-FIFO's main queue, or SIEVE's one list.
    main: Ring,
    main_live: usize,
    /// SIEVE's hand: the position in `main` it examines next.
    hand: u64,
    ghost: Ghost,
}

impl Fifo {
    pub fn new(kind: FifoKind, volatile: bool) -> Self {
        Fifo { kind, volatile, ..Fifo::default() }
    }

    /// Bytes the queues hold (part of the shard's memory).
    pub fn mem_bytes(&self) -> usize {
        self.small.mem_bytes() + self.main.mem_bytes() + self.ghost.mem_bytes()
    }

    /// Whether a key being stored, with or without a TTL, is one this
    /// policy tracks.
    #[inline]
    pub fn wants(&self, has_ttl: bool) -> bool {
        self.kind != FifoKind::Off && (!self.volatile || has_ttl)
    }

    /// Starts tracking a new key: S3-FIFO puts it in S, or in M when its
    /// hash is in the ghost; SIEVE at the head of its list.
    pub fn insert(&mut self, e: &mut Entry, hash: u64) {
        if self.kind == FifoKind::Off {
            return;
        }
        let main = self.kind == FifoKind::Sieve || self.ghost.take(hash);
        if main {
            let p = self.main.push(Slot::new(hash));
            e.set_fifo(seq(p), true, 0);
            self.main_live += 1;
        } else {
            let p = self.small.push(Slot::new(hash));
            e.set_fifo(seq(p), false, 0);
            self.small_live += 1;
        }
    }

    /// A tracked key left the shard (deleted, expired, evicted, renamed,
    /// or no longer wanted): its slot is dead from now on.
    pub fn removed(&mut self, e: &Entry) {
        if !e.fifo_tracked() || self.kind == FifoKind::Off {
            return;
        }
        if e.fifo_in_main() {
            self.main_live = self.main_live.saturating_sub(1);
        } else {
            self.small_live = self.small_live.saturating_sub(1);
        }
    }

    /// Keys tracked.
    pub fn live(&self) -> usize {
        self.small_live + self.main_live
    }

    /// The next key to evict, after the algorithm's moves on the way
    /// (promotions, counter decrements, SIEVE's hand). The caller evicts
    /// that key, which calls [`Fifo::removed`]. None when nothing is
    /// tracked.
    pub fn victim(&mut self, table: &mut Table) -> Option<Box<[u8]>> {
        let v = match self.kind {
            FifoKind::Off => None,
            FifoKind::Sieve => self.sieve_victim(table),
            FifoKind::S3Fifo => self.s3_victim(table),
        };
        self.compact(table);
        v
    }

    fn sieve_victim(&mut self, table: &mut Table) -> Option<Box<[u8]>> {
        if self.main_live == 0 {
            return None;
        }
        if self.hand < self.main.head || self.hand >= self.main.tail {
            self.hand = self.main.head;
        }
        // Two passes at most: the first may only clear visited bits.
        for _ in 0..2 * self.main.len() + 2 {
            let p = self.hand;
            let s = self.main.get(p);
            self.advance();
            let Some(e) = resolve(table, s, p, true) else { continue };
            if e.fifo_freq() > 0 {
                e.set_fifo_freq(0);
                continue;
            }
            let key = Box::from(e.key());
            // The hand moves on to the next live key towards the head, or
            // past the head back to the tail, as if the victim's node were
            // unlinked now: a key inserted before the next eviction must
            // not be seen before the tail.
            while self.hand != self.main.head {
                let n = self.hand;
                if n != p && resolve(table, self.main.get(n), n, true).is_some() {
                    break;
                }
                self.advance();
            }
            return Some(key);
        }
        None
    }

    /// SIEVE's hand one slot towards the head, wrapping to the tail.
    fn advance(&mut self) {
        self.hand += 1;
        if self.hand >= self.main.tail {
            self.hand = self.main.head;
        }
    }

    fn s3_victim(&mut self, table: &mut Table) -> Option<Box<[u8]>> {
        // Each slot is passed at most once from S and, with its counter
        // at most 3, four times through M.
        for _ in 0..self.small.len() + 4 * self.main.len() + 4 {
            let from_small = self.small_live > 0 && (self.small_live * 10 >= self.live() * SMALL_TENTHS || self.main_live == 0);
            if from_small {
                let (p, s) = self.small.pop()?;
                let Some(e) = resolve(table, s, p, false) else { continue };
                if e.fifo_freq() > 0 {
                    let np = self.main.push(s);
                    e.set_fifo(seq(np), true, 0);
                    self.small_live -= 1;
                    self.main_live += 1;
                    continue;
                }
                let key = Box::from(e.key());
                let cap = self.live() * (10 - SMALL_TENTHS) / 10;
                self.ghost.remember(s.hash(), cap);
                return Some(key);
            }
            let (p, s) = self.main.pop()?;
            let Some(e) = resolve(table, s, p, true) else { continue };
            let f = e.fifo_freq();
            if f > 0 {
                let np = self.main.push(s);
                e.set_fifo(seq(np), true, f - 1);
                continue;
            }
            return Some(Box::from(e.key()));
        }
        None
    }

    /// Drops a queue's dead slots once they exceed half its live ones,
    /// renumbering the live keys from past the old positions (SIEVE's
    /// hand keeps its place among the live).
    fn compact(&mut self, table: &mut Table) {
        if self.small.len() > self.small_live + self.small_live / 2 + 64 {
            Self::compact_ring(&mut self.small, table, false, None);
        }
        if self.main.len() > self.main_live + self.main_live / 2 + 64 {
            let hand = (self.kind == FifoKind::Sieve).then_some(&mut self.hand);
            Self::compact_ring(&mut self.main, table, true, hand);
        }
        self.small.shrink();
        self.main.shrink();
    }

    fn compact_ring(ring: &mut Ring, table: &mut Table, main: bool, hand: Option<&mut u64>) {
        let mut kept = Ring::starting_at(ring.tail);
        let old_hand = hand.as_ref().map_or(0, |h| **h);
        let mut new_hand = None;
        while let Some((p, s)) = ring.pop() {
            if let Some(e) = resolve(table, s, p, main) {
                let np = kept.push(s);
                let (f, m) = (e.fifo_freq(), e.fifo_in_main());
                e.set_fifo(seq(np), m, f);
                if p >= old_hand && new_hand.is_none() {
                    new_hand = Some(np);
                }
            }
        }
        if let Some(h) = hand {
            *h = new_hand.unwrap_or(kept.head);
        }
        *ring = kept;
    }

    /// Forgets every queue (a flush, a policy switch).
    pub fn clear(&mut self) {
        *self = Fifo::new(self.kind, self.volatile);
    }
}

#[cfg(test)]
mod tests {
    //! Each algorithm against a direct model of its paper's pseudocode:
    //! the same trace of accesses (a hit is an access, a miss inserts the
    //! key, and over capacity one key is evicted) must evict the same keys
    //! in the same order.

    use std::collections::{HashMap, HashSet, VecDeque};
    use std::sync::atomic::AtomicU8;
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::{encode, FifoKind, Ghost};
    use crate::shard::{Access, Shard};
    use crate::NewValue;

    /// S3-FIFO as the paper writes it, sizes in keys, with Tern's ghost
    /// (fed the keys' hashes; `ghost_is_a_fifo_of_hashes` bounds how it
    /// differs from an exact FIFO).
    #[derive(Default)]
    struct S3Model {
        s: VecDeque<u32>,
        m: VecDeque<u32>,
        g: Ghost,
        freq: HashMap<u32, u8>,
    }

    impl S3Model {
        fn access(&mut self, k: u32) -> bool {
            if let Some(f) = self.freq.get_mut(&k) {
                *f = (*f + 1).min(3);
                return true;
            }
            self.freq.insert(k, 0);
            if self.g.take(hash_of(k)) {
                self.m.push_back(k);
            } else {
                self.s.push_back(k);
            }
            false
        }

        fn evict(&mut self) -> u32 {
            loop {
                let live = self.s.len() + self.m.len();
                if !self.s.is_empty() && (self.s.len() * 10 >= live || self.m.is_empty()) {
                    let t = self.s.pop_front().unwrap();
                    if self.freq[&t] > 0 {
                        self.freq.insert(t, 0);
                        self.m.push_back(t);
                        continue;
                    }
                    self.g.remember(hash_of(t), live * 9 / 10);
                    self.freq.remove(&t);
                    return t;
                }
                let t = self.m.pop_front().unwrap();
                let f = self.freq[&t];
                if f > 0 {
                    self.freq.insert(t, f - 1);
                    self.m.push_back(t);
                    continue;
                }
                self.freq.remove(&t);
                return t;
            }
        }
    }

    thread_local! {
        /// The shards' hasher, for the model's ghost to see the hashes
        /// the shard's does.
        static HASHER: tern_table::DefaultHashBuilder = tern_table::DefaultHashBuilder::default();
    }

    fn hash_of(k: u32) -> u64 {
        use std::hash::BuildHasher;
        HASHER.with(|h| h.hash_one(&key(k)[..]))
    }

    /// SIEVE as the paper writes it: index 0 is the tail (oldest).
    #[derive(Default)]
    struct SieveModel {
        list: Vec<u32>,
        visited: HashSet<u32>,
        cached: HashSet<u32>,
        hand: usize,
    }

    impl SieveModel {
        fn access(&mut self, k: u32) -> bool {
            if self.cached.contains(&k) {
                self.visited.insert(k);
                return true;
            }
            self.cached.insert(k);
            self.list.push(k);
            false
        }

        fn evict(&mut self) -> u32 {
            if self.hand >= self.list.len() {
                self.hand = 0;
            }
            loop {
                let k = self.list[self.hand];
                if self.visited.remove(&k) {
                    self.hand += 1;
                    if self.hand >= self.list.len() {
                        self.hand = 0;
                    }
                    continue;
                }
                self.list.remove(self.hand);
                if self.hand >= self.list.len() {
                    self.hand = 0;
                }
                self.cached.remove(&k);
                return k;
            }
        }
    }

    fn key(k: u32) -> Vec<u8> {
        format!("key:{k}").into_bytes()
    }

    /// Replays `trace` through a shard under `kind` with room for `cap`
    /// keys; returns (hit or not per access, keys evicted in order).
    fn run_shard(kind: FifoKind, trace: &[u32], cap: usize) -> (Vec<bool>, Vec<u32>) {
        let mut sh = Shard::with_hasher(HASHER.with(|h| *h));
        sh.share_fifo_mode(Arc::new(AtomicU8::new(encode(kind, false))));
        let (mut hits, mut evicted) = (Vec::new(), Vec::new());
        for &k in trace {
            let kb = key(k);
            let h = sh.hash_key(&kb);
            let hit = sh.lookup(&kb, h, 0, Access::Touch(None)).is_some();
            if !hit {
                sh.set(&kb, h, NewValue::Bytes(b"v"), None, 0);
            }
            hits.push(hit);
            while sh.len() > cap {
                let (vk, vh) = sh.fifo_victim(0).expect("a victim");
                sh.evict(&vk, vh).expect("evicted");
                let name = std::str::from_utf8(&vk).unwrap();
                evicted.push(name["key:".len()..].parse().unwrap());
            }
            assert_eq!(sh.fifo_tracked(), sh.len());
        }
        (hits, evicted)
    }

    fn run_model(trace: &[u32], cap: usize, mut access: impl FnMut(u32) -> bool, mut evict: impl FnMut() -> u32) -> (Vec<bool>, Vec<u32>) {
        let (mut hits, mut evicted) = (Vec::new(), Vec::new());
        let mut len = 0;
        for &k in trace {
            let hit = access(k);
            if !hit {
                len += 1;
            }
            hits.push(hit);
            while len > cap {
                evicted.push(evict());
                len -= 1;
            }
        }
        (hits, evicted)
    }

    /// A skewed trace: key `i` of `n` drawn roughly in proportion to
    /// 1 / (i + 1) (Zipf, alpha 1), with one-time scans mixed in.
    fn trace(seeds: &[u32], n: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(seeds.len());
        for (i, &r) in seeds.iter().enumerate() {
            if r % 7 == 0 {
                // A key never seen again.
                out.push(n + i as u32);
            } else {
                let u = f64::from(r % 1_000_000) / 1_000_000.0;
                out.push(((f64::from(n)).powf(u) as u32).saturating_sub(1).min(n - 1));
            }
        }
        out
    }

    /// A paper's algorithm as the tests drive it: an access (true: a hit;
    /// a miss inserts), and one eviction.
    trait Model: Default {
        fn access(&mut self, k: u32) -> bool;
        fn evict(&mut self) -> u32;
    }

    impl Model for S3Model {
        fn access(&mut self, k: u32) -> bool {
            S3Model::access(self, k)
        }
        fn evict(&mut self) -> u32 {
            S3Model::evict(self)
        }
    }

    impl Model for SieveModel {
        fn access(&mut self, k: u32) -> bool {
            SieveModel::access(self, k)
        }
        fn evict(&mut self) -> u32 {
            SieveModel::evict(self)
        }
    }

    /// The shard under `kind` and model `M` replay the same trace.
    fn same_as_model<M: Model>(kind: FifoKind, seeds: &[u32], cap: usize) -> Result<(), TestCaseError> {
        let t = trace(seeds, 300);
        let real = run_shard(kind, &t, cap);
        let cell = std::cell::RefCell::new(M::default());
        let model = run_model(&t, cap, |k| cell.borrow_mut().access(k), || cell.borrow_mut().evict());
        prop_assert_eq!(real, model);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

        #[test]
        fn s3fifo_evicts_as_the_paper_model(seeds in prop::collection::vec(any::<u32>(), 1..2500), cap in 4usize..120) {
            same_as_model::<S3Model>(FifoKind::S3Fifo, &seeds, cap)?;
        }

        #[test]
        fn sieve_evicts_as_the_paper_model(seeds in prop::collection::vec(any::<u32>(), 1..2500), cap in 2usize..120) {
            same_as_model::<SieveModel>(FifoKind::Sieve, &seeds, cap)?;
        }
    }

    #[test]
    fn s3fifo_keeps_a_hot_set_through_a_scan_where_fifo_would_not() {
        // 20 hot keys hit again and again, then a scan of 1,000 new keys
        // through a cache of 100: the hot keys survive in M.
        let mut t: Vec<u32> = (0..20).cycle().take(200).collect();
        t.extend(1_000..2_000);
        let (_, evicted) = run_shard(FifoKind::S3Fifo, &t, 100);
        assert!(evicted.iter().all(|&k| k >= 1_000), "a hot key was evicted: {evicted:?}");
        let (_, evicted) = run_shard(FifoKind::Sieve, &t, 100);
        assert!(evicted.iter().all(|&k| k >= 1_000), "SIEVE evicted a visited key");
    }

    #[test]
    fn deleted_and_recreated_keys_leave_only_dead_slots() {
        let mut sh = Shard::new();
        sh.share_fifo_mode(Arc::new(AtomicU8::new(encode(FifoKind::S3Fifo, false))));
        for round in 0..50u64 {
            for k in 0..40u32 {
                let kb = key(k);
                let h = sh.hash_key(&kb);
                sh.set(&kb, h, NewValue::Bytes(b"v"), None, 0);
                if (k + round as u32) % 3 == 0 {
                    sh.remove(&kb, h, 0);
                }
            }
            assert_eq!(sh.fifo_tracked(), sh.len());
        }
        // Every victim is a live key, and all can be drained.
        let n = sh.len();
        for _ in 0..n {
            let (vk, vh) = sh.fifo_victim(0).unwrap();
            assert!(sh.evict(&vk, vh).is_some());
        }
        assert!(sh.is_empty() && sh.fifo_victim(0).is_none());
        assert_eq!(sh.fifo_tracked(), 0);
    }

    #[test]
    fn a_policy_switch_tracks_the_keys_already_there() {
        let mode = Arc::new(AtomicU8::new(0));
        let mut sh = Shard::new();
        sh.share_fifo_mode(mode.clone());
        for k in 0..100 {
            let kb = key(k);
            let h = sh.hash_key(&kb);
            sh.set(&kb, h, NewValue::Bytes(b"v"), None, 0);
        }
        assert_eq!(sh.fifo_tracked(), 0);
        for kind in [FifoKind::S3Fifo, FifoKind::Sieve] {
            mode.store(encode(kind, false), std::sync::atomic::Ordering::Relaxed);
            let (vk, vh) = sh.fifo_victim(0).expect("a victim after the switch");
            assert_eq!(sh.fifo_tracked(), sh.len());
            sh.evict(&vk, vh).unwrap();
        }
        mode.store(0, std::sync::atomic::Ordering::Relaxed);
        assert!(sh.fifo_victim(0).is_none());
        assert!(sh.iter(0).all(|e| !e.fifo_tracked()));
    }

    #[test]
    fn ghost_is_a_fifo_of_hashes() {
        use rand::{Rng, SeedableRng};
        // Hashes remembered one after another under a fixed capacity are
        // remembered up to 14/15 of it back and forgotten past it, up to
        // a bucket's early forgetting and 12-bit fingerprint collisions.
        let cap = 20_000;
        let mut rng = rand::rngs::StdRng::seed_from_u64(15);
        let hashes: Vec<u64> = (0..10 * cap).map(|_| rng.gen()).collect();
        let mut g = Ghost::default();
        for &h in &hashes {
            g.remember(h, cap);
        }
        let n = hashes.len();
        let recent = (0..cap * 14 / 15).filter(|&a| g.contains(hashes[n - 1 - a])).count();
        let old = (cap..3 * cap).filter(|&a| g.contains(hashes[n - 1 - a])).count();
        let never = (0..cap).filter(|_| g.contains(rng.gen())).count();
        assert!(recent * 1000 >= cap * 14 / 15 * 995, "remembered {recent} of the last {}", cap * 14 / 15);
        assert!(old * 100 <= 2 * cap, "{old} hashes past the capacity still remembered");
        assert!(never * 100 <= cap, "{never} of {cap} hashes never seen taken for remembered");
        // Taking a hash forgets it.
        let h = hashes[n - 1];
        assert!(g.take(h) && !g.take(h) && !g.contains(h));
        // 64-byte buckets at 3/4 of 32 entries: under 3 bytes a hash.
        assert!(g.mem_bytes() * 10 <= cap * 30, "{} bytes for {cap}", g.mem_bytes());
    }

    #[test]
    fn rings_number_slots_and_free_chunks_as_they_drain() {
        let mut r = super::Ring::starting_at(5);
        for i in 0..1000u64 {
            assert_eq!(r.push(super::Slot::new(i)), 5 + i);
        }
        assert_eq!(r.len(), 1000);
        for i in 0..900u64 {
            let (p, s) = r.pop().unwrap();
            assert_eq!((p, s.hash()), (5 + i, i));
        }
        assert_eq!(r.get(5 + 950).hash(), 950);
        // 100 slots in at most two chunks.
        assert!(r.chunks.len() <= 2 && r.mem_bytes() <= 2 * 768 + 64, "{}", r.mem_bytes());
        while r.pop().is_some() {}
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn queues_cost_a_few_bytes_per_key() {
        // A shard at 20k keys under eviction: S3-FIFO's queues and ghost,
        // SIEVE's list with its dead slots, per key tracked.
        for (kind, most) in [(FifoKind::S3Fifo, 10.0), (FifoKind::Sieve, 9.5)] {
            let mut t: Vec<u32> = Vec::new();
            let mut x = 12345u32;
            for _ in 0..200_000 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let u = f64::from(x % 1_000_000) / 1_000_000.0;
                t.push((1_000_000f64.powf(u)) as u32);
            }
            let mut sh = Shard::new();
            sh.share_fifo_mode(Arc::new(AtomicU8::new(encode(kind, false))));
            for &k in &t {
                let kb = key(k);
                let h = sh.hash_key(&kb);
                if sh.lookup(&kb, h, 0, Access::Touch(None)).is_none() {
                    sh.set(&kb, h, NewValue::Bytes(b"v"), None, 0);
                }
                while sh.len() > 20_000 {
                    let (vk, vh) = sh.fifo_victim(0).unwrap();
                    sh.evict(&vk, vh).unwrap();
                }
            }
            let per_key = sh.fifo_mem() as f64 / sh.fifo_tracked() as f64;
            assert!(per_key <= most, "{kind:?}: {per_key:.1} bytes per key");
        }
    }
}
