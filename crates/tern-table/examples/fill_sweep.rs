//! Bytes of bucket per key as a table grows: from 100k keys to 12M, every
//! 50k, with any resize finished first. Prints the lowest and highest (the
//! fill moves between the grow threshold and what a resize leaves).
//!
//! cargo run --release -p tern-table --example fill_sweep

use std::hash::BuildHasher;

use tern_table::Table;

fn main() {
    let n = 12_000_000usize;
    let mut t: Table<u32> = Table::new();
    let mut items = 0usize;
    let (mut lo, mut hi) = (f64::MAX, 0f64);
    let mut next = 100_000;
    for i in 0..n {
        let k = format!("key:{i:012}");
        let h = t.hasher().hash_one(k.as_bytes());
        items += t.insert(k.as_bytes(), h, i as u32, None).alloc_size();
        if i + 1 == next {
            while t.rehash_step(1 << 20) {}
            let per = (t.mem_bytes() - items) as f64 / (i + 1) as f64;
            lo = lo.min(per);
            hi = hi.max(per);
            next += 50_000;
        }
    }
    println!("bytes of bucket per key, 100k to {n} keys every 50k: {lo:.2} to {hi:.2}");
}
