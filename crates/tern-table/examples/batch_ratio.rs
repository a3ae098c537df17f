//! Batched vs one-at-a-time lookups, alternated round by round so that a
//! noisy machine slows both alike: 5M keys of 16 bytes with 100-byte values
//! kept in the item, random hits, `ROUNDS` rounds of 4096 lookups each way.
//! Prints the table's bytes per key beyond key and value (its own
//! `mem_bytes` and jemalloc's `stats.allocated` around the build), then the
//! median ns per lookup of each and the median of the per-round ratios (criterion's `benches/lookup.rs` runs each way in its own block of
//! time, which a busy neighbour can skew).
//!
//! `PER_CALL` keys go to each `get_batch` call (16 by default: one group;
//! 100 is an MGET of 100, whose groups are staggered), and each call's
//! results are read before the next.
//!
//! cargo run --release -p tern-table --example batch_ratio
//! PER_CALL=100 cargo run --release -p tern-table --example batch_ratio
//! TERN_BENCH_KEYS=1000000 ROUNDS=400 cargo run --release -p tern-table --example batch_ratio

use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use tern_table::{DefaultHashBuilder, Table};
use tikv_jemalloc_ctl::{epoch, stats};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const PER_ROUND: usize = 4096;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn allocated() -> usize {
    epoch::advance().expect("jemalloc epoch");
    stats::allocated::read().expect("jemalloc stats.allocated")
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let n = env("TERN_BENCH_KEYS", 5_000_000);
    let rounds = env("ROUNDS", 200);
    // Keys per `get_batch` call (it stages them in groups of 32).
    let per_call = env("PER_CALL", 16);
    let hasher = DefaultHashBuilder::default();
    let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("key:{i:012}").into_bytes()).collect();
    let hashes: Vec<u64> = keys.iter().map(|k| hasher.hash_one(&k[..])).collect();
    let payload = vec![b'v'; 100];
    let before = allocated();
    let mut t: Table<u32> = Table::with_hasher(hasher);
    for (i, k) in keys.iter().enumerate() {
        t.insert_with_extra(k, hashes[i], i as u32, None, &payload);
    }
    while t.rehash_step(1 << 20) {}
    let after = allocated();
    let kv = keys.iter().map(|k| k.len() + payload.len()).sum::<usize>();
    println!(
        "{n} keys: beyond key+value {:.1} B/key (mem_bytes), {:.1} B/key (jemalloc stats.allocated); {} buckets, {:.1}% of slots used",
        (t.mem_bytes() - kv) as f64 / n as f64,
        (after - before - kv) as f64 / n as f64,
        t.bucket_count(),
        100.0 * n as f64 / (t.bucket_count() * 9) as f64,
    );

    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut one = Vec::with_capacity(rounds);
    let mut batched = Vec::with_capacity(rounds);
    let mut ratios = Vec::with_capacity(rounds);
    let mut out = Vec::with_capacity(per_call);
    let mut qbuf = Vec::with_capacity(PER_ROUND * 16);
    for r in 0..rounds {
        // Fresh random keys per round and per way, laid out together as in
        // a request buffer; which way goes first alternates.
        let mut make = |rng: &mut rand::rngs::StdRng| {
            qbuf.clear();
            let idx: Vec<usize> = (0..PER_ROUND).map(|_| rng.gen_range(0..n)).collect();
            for &i in &idx {
                qbuf.extend_from_slice(&keys[i]);
            }
            let kl = keys[0].len();
            let q: Vec<(Vec<u8>, u64)> = idx.iter().enumerate().map(|(j, &i)| (qbuf[j * kl..(j + 1) * kl].to_vec(), hashes[i])).collect();
            q
        };
        let qa = make(&mut rng);
        let qb = make(&mut rng);
        let qa: Vec<(&[u8], u64)> = qa.iter().map(|(k, h)| (&k[..], *h)).collect();
        let qb: Vec<(&[u8], u64)> = qb.iter().map(|(k, h)| (&k[..], *h)).collect();
        let run_one = |q: &[(&[u8], u64)]| {
            let s = Instant::now();
            let mut sum = 0usize;
            for &(k, h) in q {
                sum += t.get(k, h).expect("hit").extra()[0] as usize;
            }
            black_box(sum);
            s.elapsed().as_nanos() as f64 / q.len() as f64
        };
        let mut run_batch = |q: &[(&[u8], u64)]| {
            let s = Instant::now();
            let mut sum = 0usize;
            for chunk in q.chunks(per_call) {
                out.clear();
                t.get_batch(chunk, &mut out);
                for e in &out {
                    sum += e.expect("hit").extra()[0] as usize;
                }
            }
            black_box(sum);
            s.elapsed().as_nanos() as f64 / q.len() as f64
        };
        let (a, b) = if r % 2 == 0 {
            let a = run_one(&qa);
            (a, run_batch(&qb))
        } else {
            let b = run_batch(&qb);
            (run_one(&qa), b)
        };
        one.push(a);
        batched.push(b);
        ratios.push(a / b);
    }
    println!(
        "{n} keys, {rounds} rounds of {PER_ROUND}: one at a time {:.1} ns, get_batch of {per_call} keys {:.1} ns per lookup (medians); \
         median per-round ratio {:.2}x",
        median(&mut one),
        median(&mut batched),
        median(&mut ratios)
    );
}
