//! S3-FIFO and SIEVE as Tern runs them (a [`Keyspace`] of 16 shards, the
//! server's count for one worker, evicting through [`Keyspace::evict`])
//! beside a direct model of each paper's algorithm and an exact LRU, on
//! the hit-ratio traces of `bench/hit_ratio.py`, with the cache's size in
//! keys: what Tern loses to its per-shard queues and compact ghost at the
//! same number of keys (the memory a key costs is the other half of a
//! hit ratio under `maxmemory`, measured by the bench itself).
//!
//! `cargo run --release -p tern-store --example evict_sim -- [requests] [capacity] [traces]`
//! (defaults 4000000 105000 zipf0.9,zipf1.1,scan; 1M distinct keys).

use std::collections::{BTreeMap, HashMap, VecDeque};

use rand::{Rng, SeedableRng};
use rand_distr::Zipf;
use tern_store::{Access, Effects, EvictConfig, Keyspace, NewValue, Policy};

/// One trace: Zipf reads over 1M keys (key = rank), and for `scan` a read
/// of a fresh key between every two.
fn trace(kind: &str, requests: usize) -> Vec<u32> {
    let alpha = if kind == "zipf1.1" { 1.1 } else { 0.9 };
    let z = Zipf::new(1_000_000, alpha).expect("zipf");
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut fresh = 2_000_000u32;
    (0..requests)
        .map(|i| {
            if kind == "scan" && i % 2 == 1 {
                fresh += 1;
                fresh
            } else {
                rng.sample(z) as u32
            }
        })
        .collect()
}

trait Cache {
    /// True on a hit; a miss inserts the key (evicting down to capacity).
    fn access(&mut self, k: u32) -> bool;
}

struct Lru {
    cap: usize,
    at: HashMap<u32, u64>,
    order: BTreeMap<u64, u32>,
    t: u64,
}

impl Cache for Lru {
    fn access(&mut self, k: u32) -> bool {
        self.t += 1;
        if let Some(old) = self.at.insert(k, self.t) {
            self.order.remove(&old);
            self.order.insert(self.t, k);
            return true;
        }
        self.order.insert(self.t, k);
        while self.at.len() > self.cap {
            let (_, v) = self.order.pop_first().unwrap();
            self.at.remove(&v);
        }
        false
    }
}

/// S3-FIFO as the paper writes it: S holds `small_pct`% of the keys, the
/// ghost as many keys as M, counters capped at 3, promotion on one access.
struct S3 {
    cap: usize,
    small_pct: usize,
    s: VecDeque<u32>,
    m: VecDeque<u32>,
    g: VecDeque<(u32, u64)>,
    g_at: HashMap<u32, u64>,
    gen: u64,
    freq: HashMap<u32, u8>,
}

impl S3 {
    fn new(cap: usize, small_pct: usize) -> S3 {
        S3 { cap, small_pct, s: VecDeque::new(), m: VecDeque::new(), g: VecDeque::new(), g_at: HashMap::new(), gen: 0, freq: HashMap::new() }
    }

    fn evict(&mut self) {
        loop {
            if !self.s.is_empty() && (self.s.len() * 100 >= self.cap * self.small_pct || self.m.is_empty()) {
                let t = self.s.pop_front().unwrap();
                if self.freq[&t] > 0 {
                    self.freq.insert(t, 0);
                    self.m.push_back(t);
                    continue;
                }
                self.freq.remove(&t);
                self.gen += 1;
                self.g.push_back((t, self.gen));
                self.g_at.insert(t, self.gen);
                let gcap = self.cap * (100 - self.small_pct) / 100 * ghost_x() / 100;
                while self.g_at.len() > gcap {
                    let (h, g) = self.g.pop_front().unwrap();
                    if self.g_at.get(&h) == Some(&g) {
                        self.g_at.remove(&h);
                    }
                }
                return;
            }
            let t = self.m.pop_front().unwrap();
            let f = self.freq[&t];
            if f > 0 {
                self.freq.insert(t, f - 1);
                self.m.push_back(t);
                continue;
            }
            self.freq.remove(&t);
            return;
        }
    }
}

impl Cache for S3 {
    fn access(&mut self, k: u32) -> bool {
        if let Some(f) = self.freq.get_mut(&k) {
            *f = (*f + 1).min(3);
            return true;
        }
        if self.freq.len() >= self.cap {
            self.evict();
        }
        self.freq.insert(k, 0);
        if self.g_at.remove(&k).is_some() {
            self.m.push_back(k);
        } else {
            self.s.push_back(k);
        }
        false
    }
}

/// Tern's keyspace under a policy, evicting down to `cap` keys.
struct Tern {
    ks: Keyspace,
    cfg: EvictConfig,
    cap: usize,
    len: usize,
    fx: Effects,
    name: Vec<u8>,
}

impl Tern {
    fn new(policy: Policy, cap: usize) -> Tern {
        let ks = Keyspace::new(1, 16);
        ks.set_fifo(policy);
        Tern { ks, cfg: EvictConfig { policy, samples: 5, lfu_decay_minutes: 1, lazy: false, overlap: true }, cap, len: 0, fx: Effects::new(), name: Vec::new() }
    }
}

impl Cache for Tern {
    fn access(&mut self, k: u32) -> bool {
        self.name.clear();
        self.name.extend_from_slice(b"memtier-");
        self.name.extend_from_slice(k.to_string().as_bytes());
        let loc = self.ks.locate(0, &self.name);
        let mut sh = self.ks.lock(loc.gid);
        if sh.lookup(&self.name, loc.hash, 0, Access::Touch(None)).is_some() {
            return true;
        }
        sh.set(&self.name, loc.hash, NewValue::Bytes(b"v"), None, 0);
        self.ks.publish_hint(loc.gid, &sh);
        drop(sh);
        self.len += 1;
        while self.len > self.cap {
            let r = self.ks.evict(&self.cfg, 0, usize::MAX, 1, &self.fx);
            assert_eq!(r.keys, 1, "nothing to evict");
            self.len -= 1;
            self.fx.take();
        }
        false
    }
}

fn ghost_x() -> usize {
    std::env::var("GHOST_PCT").ok().and_then(|s| s.parse().ok()).unwrap_or(100)
}

fn run(c: &mut dyn Cache, t: &[u32]) -> f64 {
    let misses = t.iter().filter(|&&k| !c.access(k)).count();
    misses as f64 / t.len() as f64
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let requests = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(4_000_000);
    let cap: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(105_000);
    let traces = a.get(3).cloned().unwrap_or_else(|| "zipf0.9,zipf1.1,scan".into());
    let only = a.get(4).cloned().unwrap_or_default();
    println!("| trace | capacity (keys) | cache | miss ratio |");
    println!("|---|---:|---|---:|");
    for tr in traces.split(',') {
        let t = trace(tr, requests);
        let mut caches: Vec<(String, Box<dyn Cache>)> = Vec::new();
        let want = |n: &str| only.is_empty() || only.split(',').any(|o| n.starts_with(o));
        if want("lru") {
            caches.push(("lru (exact)".into(), Box::new(Lru { cap, at: HashMap::new(), order: BTreeMap::new(), t: 0 })));
        }
        for pct in [10, 5, 20] {
            if want(&format!("s3fifo-model-{pct}")) {
                caches.push((format!("s3fifo-model-{pct}"), Box::new(S3::new(cap, pct))));
            }
        }
        for (n, p) in [("tern-s3fifo", Policy::AllkeysS3Fifo), ("tern-sieve", Policy::AllkeysSieve)] {
            if want(n) {
                caches.push((n.into(), Box::new(Tern::new(p, cap))));
            }
        }
        for (n, c) in caches.iter_mut() {
            println!("| {tr} | {cap} | {n} | {:.4} |", run(c.as_mut(), &t));
        }
    }
}
