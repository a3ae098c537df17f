//! BITCOUNT's popcount kernels over seeded random bytes, from a small
//! string to the 1 MiB bitmap of bench/datatypes.py's `bitcount-1mb`, each
//! kernel the CPU runs (AVX-512 VPOPCNTQ, AVX2 Harley-Seal, POPCNT,
//! portable `count_ones`), at a 1-byte offset so no load is aligned; at
//! 1 MiB also with the order of reading alternating from count to count.
//!
//! cargo bench -p tern-table --bench popcount

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{RngCore, SeedableRng};
use tern_table::popcount::{popcount_with, Kernel, Scan};

fn kernels(c: &mut Criterion) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    let mut data = vec![0u8; (1 << 20) + 1];
    rng.fill_bytes(&mut data);
    let mut g = c.benchmark_group("popcount");
    for len in [64usize, 4096, 64 << 10, 1 << 20] {
        let bytes = &data[1..1 + len];
        g.throughput(Throughput::Bytes(len as u64));
        for k in Kernel::ALL.into_iter().filter(|k| k.is_supported()) {
            g.bench_with_input(BenchmarkId::new(format!("{k:?}"), len), bytes, |b, bytes| {
                b.iter(|| popcount_with(k, black_box(bytes), Scan::Forward))
            });
            if len == 1 << 20 {
                // BITCOUNT's `bitcount-alternate-scan`: each count reads in
                // the other order from the one before.
                let mut back = false;
                g.bench_with_input(BenchmarkId::new(format!("{k:?}-alternating"), len), bytes, |b, bytes| {
                    b.iter(|| {
                        back = !back;
                        popcount_with(k, black_box(bytes), if back { Scan::Backward } else { Scan::Forward })
                    })
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
