//! The "locate" step per key: the seeded hash alone (what picking the shard
//! from the hash's high bits cost) against `Keyspace::locate` (hash plus the
//! cluster slot's CRC16 and hash-tag scan), for 10-, 32- and 100-byte keys.
//!
//! cargo bench -p tern-store --bench locate

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tern_store::{key_slot, Keyspace};

/// Keys per measured iteration, distinct so the loop is not one key cached.
const KEYS: usize = 1024;

fn keys(len: usize) -> Vec<Vec<u8>> {
    (0..KEYS)
        .map(|i| {
            let mut k = format!("key:{i:06}:").into_bytes();
            k.resize(len, b'x');
            k
        })
        .collect()
}

fn locate(c: &mut Criterion) {
    let ks = Keyspace::new(16, 64);
    let mut g = c.benchmark_group("locate");
    g.throughput(Throughput::Elements(KEYS as u64));
    for len in [10usize, 32, 100] {
        let keys = keys(len);
        g.bench_with_input(BenchmarkId::new("hash_only", len), &keys, |b, keys| {
            b.iter(|| keys.iter().fold(0u64, |acc, k| acc ^ ks.hash(black_box(k))))
        });
        g.bench_with_input(BenchmarkId::new("key_slot", len), &keys, |b, keys| {
            b.iter(|| keys.iter().fold(0u16, |acc, k| acc ^ key_slot(black_box(k))))
        });
        g.bench_with_input(BenchmarkId::new("crc16", len), &keys, |b, keys| {
            b.iter(|| keys.iter().fold(0u16, |acc, k| acc ^ tern_store::slot::crc16(black_box(k))))
        });
        g.bench_with_input(BenchmarkId::new("hash_tag", len), &keys, |b, keys| {
            b.iter(|| keys.iter().fold(0usize, |acc, k| acc ^ tern_store::slot::hash_tag(black_box(k)).len()))
        });
        g.bench_with_input(BenchmarkId::new("locate", len), &keys, |b, keys| {
            b.iter(|| keys.iter().fold(0u64, |acc, k| {
                let l = ks.locate(3, black_box(k));
                acc ^ l.hash ^ l.gid as u64
            }))
        });
    }
    g.finish();
}

criterion_group!(benches, locate);
criterion_main!(benches);
