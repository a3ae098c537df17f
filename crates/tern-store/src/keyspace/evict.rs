//! The keyspace's side of eviction (see [`crate::evict`] for the
//! policies, the pool and the scores): the loop that draws shards from
//! their published counts, picks victims and evicts them, one shard lock
//! at a time.

use rand::Rng;

use super::Keyspace;
use crate::effect::Effects;
use crate::evict::{is_random, score, Draw, EvictConfig, Evicted, Policy};
use crate::fifo::FifoKind;

impl Keyspace {
    /// Evicts keys under `cfg` until `need` bytes are freed or `max_keys`
    /// keys are gone, whichever comes first. Takes one shard lock at a
    /// time and must be called with none held. Each eviction's `DEL`
    /// record goes to `fx`. Returns what was evicted: no keys when the
    /// policy is `noeviction` or nothing is eligible.
    pub fn evict(&self, cfg: &EvictConfig, now: u64, need: usize, max_keys: usize, fx: &Effects) -> Evicted {
        let mut done = Evicted::default();
        if cfg.policy == Policy::NoEviction {
            return done;
        }
        let volatile = cfg.policy.volatile();
        let mut rng = rand::thread_rng();
        let mut pool = self.pool.lock();
        pool.reset_for(cfg.policy);
        // Eligible shards with their published key counts, read at most
        // once per millisecond (kept up to date by the draws in between):
        // a shard is drawn in proportion to its keys, so that every key is
        // as likely to be sampled as in one table.
        let mut draw = std::mem::take(&mut pool.draw);
        if draw.at != Some((now, volatile)) || draw.total == 0 {
            draw.counts.clear();
            draw.total = 0;
            for gid in 0..self.total_shards() as u32 {
                let n = self.published_keys(gid, volatile);
                if n > 0 {
                    draw.counts.push((gid, n));
                    draw.total += n;
                }
            }
            draw.at = Some((now, volatile));
        }
        let Draw { counts, total, .. } = &mut draw;
        let mut misses = 0;
        while done.freed < need && done.keys < max_keys && *total > 0 && misses < MAX_MISSES {
            let mut r = rng.gen_range(0..*total);
            let at = counts.iter().position(|(_, n)| r < *n || { r -= n; false }).unwrap_or(0);
            let gid = counts[at].0;
            let mut shard = self.lock(gid);
            // A shard not written since a policy switch leaves the FIFO
            // policy's state (or takes up the new one's) before it is judged.
            shard.fifo_sync(now);
            let victim = if cfg.policy.fifo().0 != FifoKind::Off {
                let v = shard.fifo_victim(now).map(|(key, hash)| (gid, hash, key));
                drop(shard);
                v
            } else if is_random(cfg.policy) {
                let mut v = None;
                shard.sample(1, volatile, false, &mut rng, |e, h| v = Some((gid, h, Box::<[u8]>::from(e.key()))));
                drop(shard);
                v
            } else {
                shard.sample(cfg.samples.max(1), volatile, cfg.overlap, &mut rng, |e, h| {
                    pool.offer(score(cfg, e, now), gid, h, e.key())
                });
                drop(shard);
                pool.pop_best().map(|c| (c.gid, c.hash, c.key))
            };
            let Some((vgid, hash, key)) = victim else {
                // Nothing left to draw here: stop drawing this shard.
                *total -= counts[at].1;
                counts[at].1 = 0;
                misses += 1;
                continue;
            };
            let mut shard = self.lock(vgid);
            // A candidate may have been deleted, or lost its TTL, since it
            // was sampled.
            let eligible = shard.peek(&key, hash, 0).is_some_and(|e| !volatile || e.expire().is_some());
            let gone = if eligible { shard.evict(&key, hash) } else { None };
            shard.drain_effects(fx);
            self.publish_hint(vgid, &shard);
            drop(shard);
            match gone {
                Some((entry, freed)) => {
                    if let Some(c) = counts.iter_mut().find(|c| c.0 == vgid && c.1 > 0) {
                        c.1 -= 1;
                        *total -= 1;
                    }
                    done.keys += 1;
                    done.freed += freed;
                    if cfg.lazy && entry.boxed().is_some() {
                        self.lazyfree.free(entry);
                    }
                }
                None => misses += 1,
            }
        }
        pool.draw = draw;
        done
    }
}

/// Draws that find nothing to evict (an empty sample, a candidate gone
/// meanwhile) before a call gives up: the published counts it drew from
/// are stale, or every remaining key is ineligible.
const MAX_MISSES: usize = 64;
