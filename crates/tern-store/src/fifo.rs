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
//! "non-zero"), S3-FIFO's small/main bit and the key's insertion number in
//! the clock's 24 bits. A read only increments that counter, in the item
//! the lookup already touched. The queues are per shard: rings of
//! (hash, insertion number) slots, 12 bytes each, plus the ghost's 32-bit
//! fingerprints of hashes (8 bytes in its ring, about 9 to 18 in its map).
//! A slot whose key was deleted, re-created or renamed no longer matches
//! an item (no tracked item of that hash has that number) and is skipped
//! when met, so deletions cost the queues nothing; rings are compacted
//! when dead slots outnumber the live ones.
//!
//! Faithfulness, and where it is bounded:
//! - Per shard the eviction order is the algorithm's exactly; the tests
//!   replay random traces through this and through a direct model of
//!   each paper's pseudocode (`VecDeque`s and a `HashMap`) and require
//!   the same evictions. Eviction picks a shard in proportion to its keys
//!   (see `crate::evict`), so across shards the cache is S instances each
//!   seeing a uniform sample of the keys, not one global queue.
//! - Sizes are in keys, not bytes: S holds 10% of the shard's tracked
//!   keys, the ghost remembers as many hashes as M's share (90% of the
//!   tracked keys: the paper's sizes, as fingerprints of 32 bits). "M full" on a promotion is never true (the limit is in bytes,
//!   enforced by eviction itself), so a promotion does not evict from M.
//! - A key moves from S to M when accessed at least once while in S (the
//!   paper's "if it has been accessed", counter > 0), its counter reset.
//! - Insertion numbers are 24 bits: a slot could be mistaken for a key
//!   re-created exactly 2^24 insertions later in the same shard while the
//!   old slot is still queued (compaction drops such slots long before).
//! - Overwriting a key (SET on an existing key) keeps its place and counts
//!   as an access, as a hit would.

use std::collections::{HashMap, VecDeque};

use crate::entry::Entry;
use crate::shard::Table;

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

/// The insertion number's range (the clock's 24 bits).
const SEQ_MASK: u32 = (1 << 24) - 1;

/// S's share of the tracked keys, in tenths (the paper's 10%).
const SMALL_TENTHS: usize = 1;

/// A queue entry: the key's hash in two halves and its insertion number,
/// 12 bytes with 4-byte alignment (a `u64` field would pad it to 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    hash_lo: u32,
    hash_hi: u32,
    seq: u32,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 12);

impl Slot {
    fn new(hash: u64, seq: u32) -> Slot {
        Slot { hash_lo: hash as u32, hash_hi: (hash >> 32) as u32, seq }
    }

    fn hash(self) -> u64 {
        u64::from(self.hash_hi) << 32 | u64::from(self.hash_lo)
    }
}

/// What the ghost remembers of a hash: 32 of its bits. Two keys the ghost
/// confuses (one pair in 2^32) only send a new key to M instead of S.
fn ghost_print(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// One shard's queues.
#[derive(Debug, Default)]
pub(crate) struct Fifo {
    pub kind: FifoKind,
    /// Only keys with a TTL are tracked (`volatile-s3fifo`, `volatile-sieve`).
    pub volatile: bool,
    seq: u32,
    /// S3-FIFO's small queue, oldest first.
    small: VecDeque<Slot>,
    small_live: usize,
    /// S3-FIFO's main queue, or SIEVE's one list; oldest first.
    main: VecDeque<Slot>,
    main_live: usize,
    /// SIEVE's hand: the index in `main` it examines next.
    hand: usize,
    /// S3-FIFO's ghost: hashes of keys evicted from S, oldest first, each
    /// with the generation `ghost_at` holds for it while it counts (an
    /// entry whose key came back is forgotten there and skipped here).
    ghost: VecDeque<(u32, u32)>,
    ghost_at: HashMap<u32, u32>,
    ghost_gen: u32,
}

/// The tracked item a slot names, if it still exists.
fn resolve(table: &mut Table, s: Slot) -> Option<&mut Entry> {
    table.find_by_mut(s.hash(), |e| e.fifo_seq() == Some(s.seq))
}

impl Fifo {
    pub fn new(kind: FifoKind, volatile: bool) -> Self {
        Fifo { kind, volatile, ..Fifo::default() }
    }

    /// Bytes the queues hold (part of the shard's memory).
    pub fn mem_bytes(&self) -> usize {
        let slot = std::mem::size_of::<Slot>();
        (self.small.capacity() + self.main.capacity()) * slot
            + self.ghost.capacity() * std::mem::size_of::<(u32, u32)>()
            + self.ghost_at.capacity() * (std::mem::size_of::<(u32, u32)>() + 1)
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
        self.seq = (self.seq + 1) & SEQ_MASK;
        let slot = Slot::new(hash, self.seq);
        let main = self.kind == FifoKind::Sieve || self.ghost_at.remove(&ghost_print(hash)).is_some();
        e.set_fifo(slot.seq, main, 0);
        if main {
            self.main.push_back(slot);
            self.main_live += 1;
        } else {
            self.small.push_back(slot);
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

    /// The next key to evict, as (hash, insertion number), after the
    /// algorithm's moves on the way (promotions, counter decrements,
    /// SIEVE's hand). The caller evicts that key, which calls
    /// [`Fifo::removed`]. None when nothing is tracked.
    pub fn victim(&mut self, table: &mut Table) -> Option<(u64, u32)> {
        let v = match self.kind {
            FifoKind::Off => None,
            FifoKind::Sieve => self.sieve_victim(table),
            FifoKind::S3Fifo => self.s3_victim(table),
        };
        self.compact(table);
        v
    }

    fn sieve_victim(&mut self, table: &mut Table) -> Option<(u64, u32)> {
        if self.main_live == 0 {
            return None;
        }
        if self.hand >= self.main.len() {
            self.hand = 0;
        }
        // Two passes at most: the first may only clear visited bits.
        for _ in 0..2 * self.main.len() + 2 {
            let s = self.main[self.hand];
            self.advance();
            let Some(e) = resolve(table, s) else { continue };
            if e.fifo_freq() > 0 {
                e.set_fifo_freq(0);
                continue;
            }
            // The hand moves on to the next live key towards the head, or
            // past the head back to the tail, as if the victim's node were
            // unlinked now: a key inserted before the next eviction must
            // not be seen before the tail.
            while self.hand != 0 {
                let n = self.main[self.hand];
                if n != s && resolve(table, n).is_some() {
                    break;
                }
                self.advance();
            }
            return Some((s.hash(), s.seq));
        }
        None
    }

    /// SIEVE's hand one slot towards the head, wrapping to the tail.
    fn advance(&mut self) {
        self.hand += 1;
        if self.hand >= self.main.len() {
            self.hand = 0;
        }
    }

    fn s3_victim(&mut self, table: &mut Table) -> Option<(u64, u32)> {
        // Each slot is passed at most once from S and, with its counter
        // at most 3, four times through M.
        for _ in 0..self.small.len() + 4 * self.main.len() + 4 {
            let from_small = self.small_live > 0 && (self.small_live * 10 >= self.live() * SMALL_TENTHS || self.main_live == 0);
            if from_small {
                let s = self.small.pop_front()?;
                let Some(e) = resolve(table, s) else { continue };
                if e.fifo_freq() > 0 {
                    e.set_fifo_main();
                    e.set_fifo_freq(0);
                    self.small_live -= 1;
                    self.main_live += 1;
                    self.main.push_back(s);
                    continue;
                }
                self.remember(s.hash());
                return Some((s.hash(), s.seq));
            }
            let s = self.main.pop_front()?;
            let Some(e) = resolve(table, s) else { continue };
            let f = e.fifo_freq();
            if f > 0 {
                e.set_fifo_freq(f - 1);
                self.main.push_back(s);
                continue;
            }
            return Some((s.hash(), s.seq));
        }
        None
    }

    /// Puts a hash evicted from S in the ghost, which remembers as many
    /// as M's share of the shard (90% of its tracked keys).
    fn remember(&mut self, hash: u64) {
        self.ghost_gen = self.ghost_gen.wrapping_add(1);
        let print = ghost_print(hash);
        self.ghost.push_back((print, self.ghost_gen));
        self.ghost_at.insert(print, self.ghost_gen);
        let cap = self.live() * (10 - SMALL_TENTHS) / 10;
        while self.ghost_at.len() > cap {
            let Some((h, g)) = self.ghost.pop_front() else { break };
            if self.ghost_at.get(&h) == Some(&g) {
                self.ghost_at.remove(&h);
            }
        }
        if self.ghost.len() > 2 * self.ghost_at.len() + 64 {
            let at = &self.ghost_at;
            self.ghost.retain(|(h, g)| at.get(h) == Some(g));
        }
    }

    /// Drops dead slots once they outnumber the live ones (SIEVE's hand
    /// keeps its place among the live), and gives back the room of queues
    /// that shrank, so that evicting keys frees their slots' memory too.
    fn compact(&mut self, table: &mut Table) {
        fn shrink<T>(q: &mut VecDeque<T>) {
            if q.capacity() > 2 * q.len() + 64 {
                q.shrink_to(q.len() + q.len() / 2);
            }
        }
        if self.small.len() > 2 * self.small_live + 64 {
            self.small.retain(|&s| resolve(table, s).is_some());
        }
        shrink(&mut self.small);
        shrink(&mut self.ghost);
        if self.ghost_at.capacity() > 2 * self.ghost_at.len() + 64 {
            self.ghost_at.shrink_to(self.ghost_at.len() + self.ghost_at.len() / 2);
        }
        if self.main.len() > 2 * self.main_live + 64 {
            let mut kept = 0;
            let mut hand = 0;
            let old_hand = self.hand;
            let mut i = 0;
            self.main.retain(|&s| {
                let live = resolve(table, s).is_some();
                if live {
                    kept += 1;
                    if i < old_hand {
                        hand = kept;
                    }
                }
                i += 1;
                live
            });
            self.hand = hand;
        }
        shrink(&mut self.main);
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

    use super::{encode, FifoKind};
    use crate::shard::{Access, Shard};
    use crate::NewValue;

    /// S3-FIFO as the paper writes it, sizes in keys.
    #[derive(Default)]
    struct S3Model {
        s: VecDeque<u32>,
        m: VecDeque<u32>,
        g: VecDeque<u32>,
        freq: HashMap<u32, u8>,
    }

    impl S3Model {
        fn access(&mut self, k: u32) -> bool {
            if let Some(f) = self.freq.get_mut(&k) {
                *f = (*f + 1).min(3);
                return true;
            }
            self.freq.insert(k, 0);
            if let Some(i) = self.g.iter().position(|&x| x == k) {
                self.g.remove(i);
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
                    self.g.push_back(t);
                    let cap = live * 9 / 10;
                    while self.g.len() > cap {
                        self.g.pop_front();
                    }
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
        let mut sh = Shard::new();
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
}
