//! What this machine's memory gives a lookup at best: random cache lines
//! read over a large array, one after another (each address from the line
//! before: the latency of one miss) and independently with software
//! prefetches `D` lines ahead (the most lines a core keeps in flight). A
//! staged lookup cannot do better than the second figure per line it
//! misses, so an MGET of 100 keys whose bucket and two item lines all miss
//! costs at least 300 times it.
//!
//! cargo run --release -p tern-table --example mlp [-- MiB [LINES]]
//!
//! Defaults: 700 MiB (about the items and buckets of 5M keys of 100 B) and
//! 20M lines per pass; each figure is the median of 3 passes.

use std::hint::black_box;
use std::time::Instant;

use rand::{Rng, SeedableRng};

const LINE: usize = 64;

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mib = arg(1, 700);
    let n = arg(2, 20_000_000);
    let lines = mib * 1024 * 1024 / LINE;
    // Every page touched before timing; each line holds the next line of
    // a random cycle through all of them (for the dependent walk).
    let mut next = vec![0u32; lines * (LINE / 4)];
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.gen_range(0..=i));
    }
    for w in 0..lines {
        next[order[w] as usize * (LINE / 4)] = order[(w + 1) % lines];
    }
    let idx: Vec<u32> = (0..n).map(|_| rng.gen_range(0..lines as u32)).collect();
    println!("{mib} MiB, {n} lines per pass, ns per line (median of 3):");

    let dep: Vec<f64> = (0..3)
        .map(|_| {
            let steps = n / 10;
            let (mut at, t) = (0u32, Instant::now());
            for _ in 0..steps {
                at = next[at as usize * (LINE / 4)];
            }
            black_box(at);
            t.elapsed().as_nanos() as f64 / steps as f64
        })
        .collect();
    println!("  dependent (one miss at a time): {:.1}", median(dep));

    for dist in [0usize, 8, 16, 32, 64] {
        let per: Vec<f64> = (0..3)
            .map(|_| {
                let (mut sum, t) = (0u64, Instant::now());
                for i in 0..n {
                    if dist > 0 && i + dist < n {
                        tern_table::prefetch(next.as_ptr().wrapping_add(idx[i + dist] as usize * (LINE / 4)) as *const u8);
                    }
                    sum = sum.wrapping_add(u64::from(next[idx[i] as usize * (LINE / 4)]));
                }
                black_box(sum);
                t.elapsed().as_nanos() as f64 / n as f64
            })
            .collect();
        println!("  independent, prefetched {dist:>2} ahead: {:.2}", median(per));
    }
}
