//! Choosing keys to evict when `maxmemory` is reached, with Redis's
//! policies: the caller (the server's memory check, before a command that
//! may grow memory, and its background cycle) says how many bytes to free
//! and how many keys it may evict at most; [`crate::Keyspace::evict`]
//! picks victims and deletes each through its shard's one write path
//! ([`crate::Shard::evict`]: WATCHers told, a `DEL` effect, the memory
//! delta), so an evicted key is gone whole, fields and TTL with it.
//!
//! ```text
//!  evict(need, max_keys)
//!   └─ loop while freed < need && keys < max_keys
//!       ├─ random policies: a shard drawn in proportion to its (volatile)
//!       │   keys, a random (volatile) key of it, evicted under that lock
//!       └─ sampled policies (LRU, LFU, TTL): a shard drawn the same way,
//!           `maxmemory-samples` keys of it scored into the pool of the 16
//!           best candidates (Redis's eviction pool), then the best one
//!           that is still there is evicted
//! ```
//!
//! Shards are drawn from the counts they publish when their lock is
//! released ([`crate::Keyspace::publish_hint`]), so choosing one locks
//! nothing; every lock is taken alone, with no other held. The loop is
//! the keyspace's (`keyspace/evict.rs`); the policies, the pool the
//! keyspace keeps and the scores are here.

use crate::entry::Entry;
use crate::fifo::FifoKind;

/// What eviction removes, by Redis's `maxmemory-policy` meanings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Nothing: writes over the limit are refused.
    NoEviction,
    AllkeysLru,
    AllkeysLfu,
    AllkeysRandom,
    VolatileLru,
    VolatileLfu,
    VolatileRandom,
    /// The key with a TTL that expires soonest (among those sampled).
    VolatileTtl,
    /// S3-FIFO (see [`crate::fifo`]) over all keys, or keys with a TTL.
    AllkeysS3Fifo,
    VolatileS3Fifo,
    /// SIEVE (see [`crate::fifo`]) over all keys, or keys with a TTL.
    AllkeysSieve,
    VolatileSieve,
}

impl Policy {
    /// Only keys with a TTL may be evicted.
    pub fn volatile(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru | Policy::VolatileLfu | Policy::VolatileRandom | Policy::VolatileTtl | Policy::VolatileS3Fifo | Policy::VolatileSieve
        )
    }

    /// The FIFO algorithm the policy runs, if any, and whether over keys
    /// with a TTL only.
    pub fn fifo(self) -> (FifoKind, bool) {
        let kind = match self {
            Policy::AllkeysS3Fifo | Policy::VolatileS3Fifo => FifoKind::S3Fifo,
            Policy::AllkeysSieve | Policy::VolatileSieve => FifoKind::Sieve,
            _ => FifoKind::Off,
        };
        (kind, self.volatile())
    }

    fn random(self) -> bool {
        matches!(self, Policy::AllkeysRandom | Policy::VolatileRandom)
    }
}

/// How eviction runs: the policy and its tuning.
#[derive(Clone, Copy, Debug)]
pub struct EvictConfig {
    pub policy: Policy,
    /// Keys sampled per shard visit (`maxmemory-samples`).
    pub samples: usize,
    /// `lfu-decay-time`, minutes per counter step down (0: no decay).
    pub lfu_decay_minutes: u32,
    /// `lazyfree-lazy-eviction`: evicted values that own a box (hashes,
    /// large strings) are freed by the background thread.
    pub lazy: bool,
    /// A visit's samples are drawn with their cache misses overlapped
    /// (`prefetch-batch-max-size` above 0), rather than one after another.
    pub overlap: bool,
}

/// What one call to [`crate::Keyspace::evict`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evicted {
    pub keys: usize,
    /// Bytes the shards' counts went down by.
    pub freed: usize,
}

/// Candidates the pool keeps between calls (Redis's `EVPOOL_SIZE`).
pub const POOL_SIZE: usize = 16;

/// A sampled key waiting in the pool: the higher `score`, the better a
/// victim (idle time, inverted frequency, or inverted deadline).
#[derive(Debug)]
pub(crate) struct Candidate {
    pub score: u64,
    pub gid: u32,
    pub hash: u64,
    pub key: Box<[u8]>,
}

/// The eviction pool, kept across calls so that good candidates seen once
/// are not forgotten (Redis's approximated LRU); cleared when the policy
/// changes, since scores of another policy do not compare.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    pub policy: Option<Policy>,
    /// Ascending by score: the best victim is last.
    pub cands: Vec<Candidate>,
    pub draw: Draw,
}

/// The shards eviction draws from, with their (volatile) key counts, as
/// read at (millisecond, volatile) `at`.
#[derive(Debug, Default)]
pub(crate) struct Draw {
    pub counts: Vec<(u32, usize)>,
    pub total: usize,
    pub at: Option<(u64, bool)>,
}

impl Pool {
    pub fn reset_for(&mut self, policy: Policy) {
        if self.policy != Some(policy) {
            self.cands.clear();
            self.policy = Some(policy);
        }
    }

    /// Adds a candidate, keeping the best [`POOL_SIZE`]; a key already in
    /// the pool gets its newer score. The key is copied only if it is kept.
    pub fn offer(&mut self, score: u64, gid: u32, hash: u64, key: &[u8]) {
        if let Some(i) = self.cands.iter().position(|o| o.hash == hash && o.gid == gid && *o.key == *key) {
            self.cands.remove(i);
        }
        if self.cands.len() >= POOL_SIZE {
            if self.cands[0].score >= score {
                return;
            }
            self.cands.remove(0);
        }
        let at = self.cands.partition_point(|o| o.score <= score);
        self.cands.insert(at, Candidate { score, gid, hash, key: key.into() });
    }

    pub fn pop_best(&mut self) -> Option<Candidate> {
        self.cands.pop()
    }
}

/// How good a victim `e` is under `cfg.policy` (higher: evict sooner).
pub(crate) fn score(cfg: &EvictConfig, e: &Entry, now: u64) -> u64 {
    match cfg.policy {
        Policy::AllkeysLfu | Policy::VolatileLfu => 255 - u64::from(e.lfu_count(now, cfg.lfu_decay_minutes)),
        Policy::VolatileTtl => u64::MAX - e.expire().unwrap_or(u64::MAX),
        _ => e.idle_secs(now),
    }
}

/// Whether the policy draws victims at random (no pool, no scores).
pub(crate) fn is_random(p: Policy) -> bool {
    p.random()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::Effects;

    fn offer(p: &mut Pool, score: u64, hash: u64) {
        p.offer(score, 0, hash, &hash.to_le_bytes());
    }

    #[test]
    fn pool_keeps_the_best_sorted_and_refreshes_scores() {
        let mut p = Pool::default();
        p.reset_for(Policy::AllkeysLru);
        for i in 0..40u64 {
            offer(&mut p, (i * 7919) % 101, i);
        }
        assert_eq!(p.cands.len(), POOL_SIZE);
        assert!(p.cands.windows(2).all(|w| w[0].score <= w[1].score));
        let mut all: Vec<u64> = (0..40u64).map(|i| (i * 7919) % 101).collect();
        all.sort_unstable();
        assert_eq!(p.cands[0].score, all[40 - POOL_SIZE]);
        // The same key offered again replaces its old score.
        let best = p.cands.last().map(|c| c.hash).unwrap();
        offer(&mut p, 0, best);
        assert_eq!(p.cands.iter().filter(|c| c.hash == best).map(|c| c.score).collect::<Vec<_>>(), vec![0]);
        assert_eq!(p.cands[0].hash, best);
        offer(&mut p, 1000, 3);
        assert_eq!(p.pop_best().map(|c| c.hash), Some(3));
        // Another policy's scores do not compare: the pool empties.
        p.reset_for(Policy::AllkeysLfu);
        assert!(p.cands.is_empty());
    }

    use crate::{Keyspace, NewValue};

    fn put(ks: &Keyspace, key: &str, ttl: Option<u64>, now: u64) {
        let loc = ks.locate(0, key.as_bytes());
        let mut sh = ks.lock(loc.gid);
        sh.set(key.as_bytes(), loc.hash, NewValue::Bytes(&[b'v'; 100]), ttl, now);
        ks.publish_hint(loc.gid, &sh);
    }

    fn exists(ks: &Keyspace, key: &str) -> bool {
        let loc = ks.locate(0, key.as_bytes());
        let found = ks.lock(loc.gid).peek(key.as_bytes(), loc.hash, 0).is_some();
        found
    }

    fn cfg(policy: Policy) -> EvictConfig {
        EvictConfig { policy, samples: 5, lfu_decay_minutes: 1, lazy: false, overlap: true }
    }

    fn keys(ks: &Keyspace) -> usize {
        (0..ks.total_shards() as u32).map(|g| ks.lock(g).len()).sum()
    }

    #[test]
    fn evicts_up_to_the_bytes_or_keys_asked_and_counts_them() {
        let ks = Keyspace::new(2, 4);
        for i in 0..200 {
            put(&ks, &format!("k{i}"), None, 1_000);
        }
        let before = ks.used_memory_exact();
        let fx = Effects::new();
        let r = ks.evict(&cfg(Policy::AllkeysRandom), 1_000, usize::MAX, 10, &fx);
        assert_eq!(r.keys, 10);
        assert_eq!(keys(&ks), 190);
        assert_eq!(before - ks.used_memory_exact(), r.freed);
        // 128-byte items: two are enough for 200 bytes (one, if the
        // table shrank too).
        let r = ks.evict(&cfg(Policy::AllkeysLru), 1_000, 200, 100, &fx);
        assert!(r.freed >= 200 && (1..=2).contains(&r.keys), "{r:?}");
        let evicted: u64 = (0..ks.total_shards() as u32).map(|g| ks.lock(g).evicted).sum();
        assert_eq!(evicted, 10 + r.keys as u64);
        assert!((0..ks.total_shards() as u32).all(|g| ks.lock(g).counts_hold()));
        // noeviction evicts nothing.
        assert_eq!(ks.evict(&cfg(Policy::NoEviction), 1_000, usize::MAX, 100, &fx), Evicted::default());
    }

    #[test]
    fn volatile_policies_never_take_a_key_without_ttl() {
        for policy in [Policy::VolatileLru, Policy::VolatileLfu, Policy::VolatileRandom, Policy::VolatileTtl] {
            let ks = Keyspace::new(1, 4);
            for i in 0..100 {
                put(&ks, &format!("p{i}"), None, 0);
                put(&ks, &format!("v{i}"), Some(1_000_000 + i), 0);
            }
            let r = ks.evict(&cfg(policy), 0, usize::MAX, 1_000, &Effects::new());
            assert_eq!(r.keys, 100, "{policy:?}");
            assert!((0..100).all(|i| exists(&ks, &format!("p{i}"))), "{policy:?}");
            assert!((0..100).all(|i| !exists(&ks, &format!("v{i}"))), "{policy:?}");
        }
    }

    #[test]
    fn sampled_policies_prefer_their_victims() {
        // LRU: keys last used long ago go before keys used now.
        let ks = Keyspace::new(1, 4);
        for i in 0..100 {
            put(&ks, &format!("old{i}"), None, 0);
            put(&ks, &format!("new{i}"), None, 3_600_000);
        }
        ks.evict(&cfg(Policy::AllkeysLru), 3_600_000, usize::MAX, 50, &Effects::new());
        let new_gone = (0..100).filter(|i| !exists(&ks, &format!("new{i}"))).count();
        assert!(new_gone <= 5, "LRU evicted {new_gone} recent keys of 50");
        // TTL: the soonest deadlines go first.
        let ks = Keyspace::new(1, 4);
        for i in 0..100 {
            put(&ks, &format!("soon{i}"), Some(10_000 + i), 0);
            put(&ks, &format!("late{i}"), Some(1_000_000 + i), 0);
        }
        ks.evict(&cfg(Policy::VolatileTtl), 0, usize::MAX, 50, &Effects::new());
        let late_gone = (0..100).filter(|i| !exists(&ks, &format!("late{i}"))).count();
        assert!(late_gone <= 5, "volatile-ttl evicted {late_gone} late keys of 50");
    }

    #[test]
    fn eviction_is_a_write_watchers_and_effects_see() {
        let ks = Keyspace::new(1, 1);
        put(&ks, "w", None, 0);
        ks.attach_effects(true);
        let loc = ks.locate(0, b"w");
        let flag = crate::WatchFlag::new();
        ks.lock(loc.gid).watch(b"w", loc.hash, &flag);
        let fx = Effects::new();
        let r = ks.evict(&cfg(Policy::AllkeysLru), 0, 1, 1, &fx);
        assert_eq!(r.keys, 1);
        assert!(flag.is_set());
        let recs = crate::aof::records(&fx.take());
        assert!(matches!(&recs[..], [crate::Record { effect: crate::Effect::Del { key }, .. }] if **key == *b"w"));
    }

    #[test]
    fn a_hash_with_field_ttls_is_evicted_whole() {
        let ks = Keyspace::new(1, 1);
        let lim = crate::HashLimits::default();
        let loc = ks.locate(0, b"h");
        {
            let mut sh = ks.lock(loc.gid);
            sh.modify_or_create(b"h", loc.hash, 0, crate::Access::NoTouch, || Some(crate::Value::Hash(crate::Hash::default())), |e, _| {
                let h = crate::EntryExt::hash_mut(e).unwrap();
                for i in 0..1000 {
                    h.set(format!("f{i}").as_bytes(), b"v", lim);
                    h.set_field_expire(format!("f{i}").as_bytes(), 1_000_000 + i);
                }
            });
            ks.publish_hint(loc.gid, &sh);
        }
        let before = ks.used_memory_exact();
        // The hash is the only key, so the draw cannot miss it: beside a
        // second key, five samples drawn with replacement could all be
        // the other one (a clean-clone CI run saw it).
        let r = ks.evict(&cfg(Policy::AllkeysLru), 3_600_000, 1, 1, &Effects::new());
        assert_eq!(r.keys, 1);
        assert!(!exists(&ks, "h"));
        // Its fields' bytes went with it, and their deadlines expire nothing.
        assert!(before - ks.used_memory_exact() > 1000 * 2, "{r:?}");
        let mut sh = ks.lock(loc.gid);
        assert!(sh.counts_hold());
        assert_eq!(sh.expire_cycle(2_000_000, 10_000), 0);
        assert_eq!(sh.expired_fields, 0);
    }
}
