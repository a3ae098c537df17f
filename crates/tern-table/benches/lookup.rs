//! Random hits over 5M keys of 16 bytes with 100-byte values: one `get` at a
//! time, `get_batch` in calls of 16 and of 100 keys and in one call of 4096,
//! and `hashbrown::HashMap` for scale.
//! Also prints bytes per key: the table's own `mem_bytes` and jemalloc's
//! `stats.allocated` around building the table.
//!
//! cargo bench -p tern-table --bench lookup
//! TERN_BENCH_KEYS=1000000 cargo bench -p tern-table --bench lookup   (smaller)

use std::hash::BuildHasher;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use tern_table::{DefaultHashBuilder, Table};
use tikv_jemalloc_ctl::{epoch, stats};

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const VALUE_LEN: usize = 100;
/// Lookups per measured iteration (a multiple of the batch size).
const PER_ITER: usize = 4096;

fn n_keys() -> usize {
    std::env::var("TERN_BENCH_KEYS").ok().and_then(|s| s.parse().ok()).unwrap_or(5_000_000)
}

fn key(i: usize) -> Vec<u8> {
    format!("key:{i:012}").into_bytes()
}

fn allocated() -> usize {
    epoch::advance().expect("jemalloc epoch");
    stats::allocated::read().expect("jemalloc stats.allocated")
}

fn lookup(c: &mut Criterion) {
    let n = n_keys();
    let hasher = DefaultHashBuilder::default();
    let keys: Vec<Vec<u8>> = (0..n).map(key).collect();
    let hashes: Vec<u64> = keys.iter().map(|k| hasher.hash_one(&k[..])).collect();
    let payload = vec![b'v'; VALUE_LEN];

    // The value lives in the item's extra bytes (how Tern stores strings
    // written whole); T is a 4-byte word standing for tern-store's `Meta`.
    let before = allocated();
    let mut t: Table<u32> = Table::with_hasher(hasher);
    for (i, k) in keys.iter().enumerate() {
        t.insert_with_extra(k, hashes[i], i as u32, None, &payload);
    }
    while t.rehash_step(1 << 20) {}
    let after = allocated();
    let payload_bytes = n * (16 + VALUE_LEN);
    println!(
        "tern-table {n} keys: mem_bytes {} = {:.1} B/key; jemalloc stats.allocated delta {} = {:.1} B/key; \
         beyond key+value: {:.1} B/key (mem_bytes) {:.1} B/key (jemalloc); buckets {}",
        t.mem_bytes(),
        t.mem_bytes() as f64 / n as f64,
        after - before,
        (after - before) as f64 / n as f64,
        (t.mem_bytes() - payload_bytes) as f64 / n as f64,
        (after - before) as f64 / n as f64 - (16 + VALUE_LEN) as f64,
        t.bucket_count(),
    );

    let items: usize = t.iter().map(|e| e.alloc_size()).sum();
    let exact: usize = t.iter().map(std::mem::size_of_val).sum();
    println!(
        "  per key: buckets and chains {:.1} B, item header 8 B, T {} B, size-class rounding {:.1} B",
        (t.mem_bytes() - items) as f64 / n as f64,
        std::mem::size_of::<u32>(),
        (items - exact) as f64 / n as f64,
    );

    let before = allocated();
    let mut hb: hashbrown::HashMap<Box<[u8]>, Box<[u8]>, DefaultHashBuilder> =
        hashbrown::HashMap::with_hasher(hasher);
    for k in &keys {
        hb.insert(k.clone().into_boxed_slice(), payload.clone().into_boxed_slice());
    }
    let after = allocated();
    println!(
        "hashbrown {n} keys: jemalloc stats.allocated delta {} = {:.1} B/key, beyond key+value: {:.1} B/key",
        after - before,
        (after - before) as f64 / n as f64,
        (after - before) as f64 / n as f64 - (16 + VALUE_LEN) as f64,
    );

    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let order: Vec<usize> = (0..PER_ITER * 64).map(|_| rng.gen_range(0..n)).collect();
    // The queried keys sit together, as they do in a request buffer: the
    // misses measured are the table's, not the key list's.
    let qbuf: Vec<u8> = order.iter().flat_map(|&i| keys[i].iter().copied()).collect();
    let key_len = keys[0].len();
    let queries: Vec<(&[u8], u64)> =
        order.iter().enumerate().map(|(j, &i)| (&qbuf[j * key_len..(j + 1) * key_len], hashes[i])).collect();

    let mut g = c.benchmark_group(format!("lookup_{n}_keys"));
    g.sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(PER_ITER as u64));
    let mut round = 0usize;
    g.bench_function(BenchmarkId::new("tern_get", "one_at_a_time"), |b| {
        b.iter(|| {
            round = (round + 1) % 64;
            let mut sum = 0usize;
            for &(k, h) in &queries[round * PER_ITER..(round + 1) * PER_ITER] {
                let e = t.get(k, h).expect("hit");
                sum += e.extra()[0] as usize;
            }
            black_box(sum)
        })
    });
    // Calls of 16 keys (one group) and of 100 (an MGET of 100: four groups
    // of 32, staggered), each call's results read before the next.
    let mut out = Vec::with_capacity(100);
    for per_call in [16, 100] {
        g.bench_function(BenchmarkId::new("tern_get_batch", per_call), |b| {
            b.iter(|| {
                round = (round + 1) % 64;
                let mut sum = 0usize;
                for chunk in queries[round * PER_ITER..(round + 1) * PER_ITER].chunks(per_call) {
                    out.clear();
                    t.get_batch(chunk, &mut out);
                    for e in &out {
                        sum += e.expect("hit").extra()[0] as usize;
                    }
                }
                black_box(sum)
            })
        });
    }
    // One call for the whole round: groups of 32 staggered, the results
    // read only at the end (by then most items have left L1 and L2).
    let mut all = Vec::with_capacity(PER_ITER);
    g.bench_function(BenchmarkId::new("tern_get_batch", "4096_in_one_call"), |b| {
        b.iter(|| {
            round = (round + 1) % 64;
            all.clear();
            t.get_batch(&queries[round * PER_ITER..(round + 1) * PER_ITER], &mut all);
            black_box(all.iter().map(|e| e.expect("hit").extra()[0] as usize).sum::<usize>())
        })
    });
    g.bench_function(BenchmarkId::new("hashbrown_get", "one_at_a_time"), |b| {
        b.iter(|| {
            round = (round + 1) % 64;
            let mut sum = 0usize;
            for &(k, _) in &queries[round * PER_ITER..(round + 1) * PER_ITER] {
                sum += hb.get(k).expect("hit")[0] as usize;
            }
            black_box(sum)
        })
    });
    g.finish();
}

criterion_group!(benches, lookup);
criterion_main!(benches);
