//! The shard's write path with no snapshot running: what the snapshot's
//! hooks (one load of a field of the shard per write) cost a write.
//! Uses only APIs older than the hooks, so the same file measures the
//! tree before them: run it on both and compare (bench/RESULTS.md).
//!
//! 100k keys of 16 bytes in one shard, visited in a seeded random order:
//! overwriting a 32-byte string, deleting and re-inserting it, setting a
//! deadline, and an in-place integer change through `modify`.
//!
//! cargo bench -p tern-store --bench write_path

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use tern_store::{Access, EntryExt, NewValue, Shard};

const KEYS: usize = 100_000;

fn write_path(c: &mut Criterion) {
    let keys: Vec<Vec<u8>> = (0..KEYS).map(|i| format!("key:{i:012}").into_bytes()).collect();
    let mut sh = Shard::new();
    let hashes: Vec<u64> = keys.iter().map(|k| sh.hash_key(k)).collect();
    for (k, h) in keys.iter().zip(&hashes) {
        sh.set(k, *h, NewValue::Int(1), None, 0);
    }
    let mut order: Vec<usize> = (0..KEYS).collect();
    order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(7));
    let mut g = c.benchmark_group("write_path");
    let mut i = 0;
    let mut next = || {
        i = (i + 1) % KEYS;
        order[i]
    };
    g.bench_function("set_overwrite", |b| {
        b.iter(|| {
            let j = next();
            black_box(sh.set(&keys[j], hashes[j], NewValue::Bytes(&[b'v'; 32]), None, 0));
        })
    });
    g.bench_function("remove_and_set", |b| {
        b.iter(|| {
            let j = next();
            black_box(sh.remove(&keys[j], hashes[j], 0));
            black_box(sh.set(&keys[j], hashes[j], NewValue::Int(2), None, 0));
        })
    });
    g.bench_function("set_expire", |b| {
        b.iter(|| {
            let j = next();
            black_box(sh.set_expire(&keys[j], hashes[j], Some(1 << 50)));
        })
    });
    g.bench_function("modify_int", |b| {
        b.iter(|| {
            let j = next();
            black_box(sh.modify(&keys[j], hashes[j], 0, Access::NoTouch, |e, ed| {
                if e.set_int(3) {
                    ed.changed();
                }
            }));
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = write_path
}
criterion_main!(benches);
