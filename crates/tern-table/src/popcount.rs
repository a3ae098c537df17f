//! Population count of a byte slice (BITCOUNT), with the kernel picked
//! once at run time from what the CPU has.
//!
//! The workspace is built for baseline x86-64, which has neither the POPCNT
//! instruction nor AVX2, so `u64::count_ones` compiles to a dozen shifts,
//! masks and a multiply per word. Three kernels, all equal to that count:
//!
//! - [`Kernel::Avx2`]: Harley-Seal over 256-bit vectors (Lemire, Kurz and
//!   Muła, "Faster Population Counts using AVX2 Instructions", 2016,
//!   arXiv:1611.07612). Sixteen vectors at a time go through a tree of
//!   carry-save adders (`ones`, `twos`, `fours`, `eights` carried between
//!   rounds), so only the `sixteens` of each round is counted, by Muła's
//!   method: each nibble looks up its count in a 16-entry table with one
//!   byte shuffle, and `vpsadbw` sums the bytes into four 64-bit lanes.
//! - [`Kernel::Avx512`]: AVX-512's VPOPCNTQ, which counts the bits of each
//!   64-bit lane of a 512-bit vector in one instruction: four vectors (256
//!   bytes) a step into four sums, then single vectors, then the bytes left
//!   with POPCNT. Where the CPU has it (Ice Lake, Zen 4 and later), it
//!   needs no carry-save tree.
//! - [`Kernel::Popcnt`]: the POPCNT instruction, four words at a time.
//! - [`Kernel::Portable`]: `count_ones` on whole words as the target
//!   allows; the only kernel under Miri and on other architectures.
//!
//! `cargo bench -p tern-table --bench popcount` compares them. On the
//! 2-core AMD EPYC KVM guest (shared, noisy), 1 MiB of random bytes took
//! 131 µs portable, 38 µs with POPCNT and 24 µs with AVX2; 4 KiB 481, 196
//! and 97 ns. Below one Harley-Seal round (512 bytes) the AVX2 kernel
//! hands the bytes to POPCNT, faster there. On a later guest whose CPU has
//! AVX-512 VPOPCNTDQ, BITCOUNT of a 1 MB bitmap at pipeline 16 cost 19.5
//! µs of server CPU with AVX2 and 8.3 with AVX-512 (`bench/datatypes.py
//! --family bits --workloads bitcount-1mb`), at the speed the bytes come
//! from the cache: redis-server-unstable, with its own AVX-512 count, 9.0.

/// The order in which the vector kernels read the bytes; the count is the
/// same either way.
///
/// A bitmap about as large as the core's L2 (1 MB) read front to back
/// twice in a row finds none of itself left in the cache the second time:
/// each line it wants was pushed out by the lines after it. Read back to
/// front the second time, it starts with the lines the first read loaded
/// last, still in L2. Counting one 1 MB bitmap again and again on a Zen 4
/// core, alternating the order took the server's CPU per BITCOUNT from 7.4
/// to 6.1 µs (`bitcount-alternate-scan`; bench/RESULTS.md).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scan {
    /// From the first byte to the last.
    Forward,
    /// The vector body from its last block to its first.
    Backward,
}

/// Counts shorter than this neither turn [`alternate`]'s order nor read
/// backward: they fit in L2 with room to spare, in either order.
pub const ALTERNATE_FROM: usize = 256 << 10;

/// The order for counting `len` bytes on this thread: of `len` at least
/// [`ALTERNATE_FROM`], the other one from this thread's last such count
/// (whatever bytes it read: the cache it warmed is this core's);
/// forward below.
pub fn alternate(len: usize) -> Scan {
    use std::cell::Cell;
    thread_local!(static LAST: Cell<Scan> = const { Cell::new(Scan::Backward) });
    if len < ALTERNATE_FROM {
        return Scan::Forward;
    }
    LAST.with(|last| {
        let next = match last.get() {
            Scan::Forward => Scan::Backward,
            Scan::Backward => Scan::Forward,
        };
        last.set(next);
        next
    })
}

/// A way of counting bits; [`Kernel::best`] is the fastest this CPU runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kernel {
    /// `u64::count_ones` as compiled for the target.
    Portable,
    /// x86-64's POPCNT instruction.
    Popcnt,
    /// Harley-Seal carry-save adders over AVX2 vectors.
    Avx2,
    /// VPOPCNTQ over AVX-512 vectors (`avx512f` and `avx512vpopcntdq`).
    Avx512,
}

impl Kernel {
    /// Every kernel, slowest first.
    pub const ALL: [Kernel; 4] = [Kernel::Portable, Kernel::Popcnt, Kernel::Avx2, Kernel::Avx512];

    /// Whether this CPU (and this build: not under Miri) runs `self`.
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Kernel::Popcnt => std::arch::is_x86_feature_detected!("popcnt"),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Kernel::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
                    && std::arch::is_x86_feature_detected!("popcnt")
            }
            #[cfg(not(all(target_arch = "x86_64", not(miri))))]
            Kernel::Popcnt | Kernel::Avx2 | Kernel::Avx512 => false,
        }
    }

    /// The fastest supported kernel, detected on the first call.
    pub fn best() -> Kernel {
        use std::sync::atomic::{AtomicU8, Ordering};
        // 0: not detected yet; otherwise the index in ALL plus one. Two
        // threads racing here both detect the same answer.
        static BEST: AtomicU8 = AtomicU8::new(0);
        match BEST.load(Ordering::Relaxed) {
            0 => {
                let k = Kernel::ALL.into_iter().rev().find(|k| k.is_supported()).unwrap_or(Kernel::Portable);
                let i = Kernel::ALL.iter().position(|&x| x == k).unwrap_or(0);
                BEST.store(i as u8 + 1, Ordering::Relaxed);
                k
            }
            i => Kernel::ALL[usize::from(i - 1).min(Kernel::ALL.len() - 1)],
        }
    }
}

/// Set bits in `bytes`, by the fastest kernel this CPU runs.
pub fn popcount(bytes: &[u8]) -> u64 {
    popcount_with(Kernel::best(), bytes, Scan::Forward)
}

/// Set bits in `bytes` by `kernel`, or by the portable one when this CPU
/// does not run `kernel` (so the answer is the same either way). The
/// vector kernels read in the order `scan` asks; the scalar ones, which
/// are slower than the cache, always forward.
pub fn popcount_with(kernel: Kernel, bytes: &[u8], scan: Scan) -> u64 {
    match kernel {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Kernel::Avx512 if Kernel::Avx512.is_supported() => {
            // SAFETY: the CPU has AVX-512F, VPOPCNTDQ and POPCNT (checked
            // just above).
            unsafe { x86::avx512(bytes, scan) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Kernel::Avx2 if Kernel::Avx2.is_supported() => {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { x86::avx2(bytes, scan) }
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Kernel::Popcnt if Kernel::Popcnt.is_supported() => {
            // SAFETY: the CPU has POPCNT (checked just above).
            unsafe { x86::popcnt(bytes) }
        }
        _ => portable(bytes),
    }
}

/// Whole 8-byte words with `count_ones`, then the bytes left over.
fn portable(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let mut n: u64 = words.by_ref().map(|w| u64::from(u64::from_ne_bytes(w.try_into().unwrap_or([0; 8])).count_ones())).sum();
    n += words.remainder().iter().map(|&b| u64::from(b.count_ones())).sum::<u64>();
    n
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod x86 {
    use super::Scan;
    use std::arch::x86_64::*;

    /// Block `q` of `n` in the order `scan` asks.
    #[inline]
    fn nth(scan: Scan, n: usize, q: usize) -> usize {
        match scan {
            Scan::Forward => q,
            Scan::Backward => n - 1 - q,
        }
    }

    /// POPCNT on four words per step (four sums, so the adds do not wait
    /// on one another), then the rest a word and a byte at a time.
    #[target_feature(enable = "popcnt")]
    pub(super) fn popcnt(bytes: &[u8]) -> u64 {
        let word = |w: &[u8]| u64::from(u64::from_ne_bytes(w.try_into().unwrap_or([0; 8])).count_ones());
        let mut blocks = bytes.chunks_exact(32);
        let mut sums = [0u64; 4];
        for b in blocks.by_ref() {
            for (k, s) in sums.iter_mut().enumerate() {
                *s += word(&b[8 * k..8 * k + 8]);
            }
        }
        let rest = blocks.remainder();
        let mut words = rest.chunks_exact(8);
        let mut n = sums.iter().sum::<u64>() + words.by_ref().map(word).sum::<u64>();
        n += words.remainder().iter().map(|&b| u64::from(b.count_ones())).sum::<u64>();
        n
    }

    /// One 32-byte vector of `bytes` from byte `at`.
    ///
    /// # Safety
    /// The CPU has AVX2, and `at + 32 <= bytes.len()`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(bytes: &[u8], at: usize) -> __m256i {
        debug_assert!(at + 32 <= bytes.len());
        // SAFETY: the 32 bytes from `at` are inside `bytes` (the caller's
        // contract); `loadu` takes any alignment.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().add(at).cast()) }
    }

    /// Set bits of each byte of `v` (Muła: a nibble's count looked up with
    /// a byte shuffle, low and high nibbles added), summed into four u64s.
    #[target_feature(enable = "avx2")]
    fn count_vector(v: __m256i) -> __m256i {
        let table = _mm256_setr_epi8(
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
        );
        let nibble = _mm256_set1_epi8(0x0f);
        let lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, nibble));
        let hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble));
        _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256())
    }

    /// A carry-save adder of three vectors, bit by bit: (carries, sums).
    #[target_feature(enable = "avx2")]
    fn csa(a: __m256i, b: __m256i, c: __m256i) -> (__m256i, __m256i) {
        let u = _mm256_xor_si256(a, b);
        let high = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u, c));
        (high, _mm256_xor_si256(u, c))
    }

    /// Harley-Seal over rounds of 16 vectors (512 bytes), then single
    /// vectors, then the last bytes with POPCNT (every AVX2 CPU has it).
    /// Shorter than one round, POPCNT alone is faster (64 bytes: 7 ns
    /// against 13 in the criterion bench).
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) fn avx2(bytes: &[u8], scan: Scan) -> u64 {
        const V: usize = 32;
        if bytes.len() < 16 * V {
            return popcnt(bytes);
        }
        let zero = _mm256_setzero_si256();
        let (mut total, mut ones, mut twos, mut fours, mut eights) = (zero, zero, zero, zero, zero);
        let rounds = bytes.len() / (16 * V);
        let mut d = [zero; 16];
        for q in 0..rounds {
            let r = nth(scan, rounds, q);
            for (k, x) in d.iter_mut().enumerate() {
                // SAFETY: AVX2 is on; round `r` reads bytes up to
                // `(r + 1) * 16 * V <= rounds * 16 * V <= bytes.len()`.
                *x = unsafe { load(bytes, (16 * r + k) * V) };
            }
            // Vectors in pairs into `ones`, their carries in pairs into
            // `twos`, and so on: one vector of sixteens per round.
            let (two_a, o) = csa(ones, d[0], d[1]);
            let (two_b, o) = csa(o, d[2], d[3]);
            let (four_a, t) = csa(twos, two_a, two_b);
            let (two_a, o) = csa(o, d[4], d[5]);
            let (two_b, o) = csa(o, d[6], d[7]);
            let (four_b, t) = csa(t, two_a, two_b);
            let (eight_a, f) = csa(fours, four_a, four_b);
            let (two_a, o) = csa(o, d[8], d[9]);
            let (two_b, o) = csa(o, d[10], d[11]);
            let (four_a, t) = csa(t, two_a, two_b);
            let (two_a, o) = csa(o, d[12], d[13]);
            let (two_b, o) = csa(o, d[14], d[15]);
            let (four_b, t) = csa(t, two_a, two_b);
            let (eight_b, f) = csa(f, four_a, four_b);
            let (sixteens, e) = csa(eights, eight_a, eight_b);
            (ones, twos, fours, eights) = (o, t, f, e);
            total = _mm256_add_epi64(total, count_vector(sixteens));
        }
        total = _mm256_slli_epi64::<4>(total);
        total = _mm256_add_epi64(total, _mm256_slli_epi64::<3>(count_vector(eights)));
        total = _mm256_add_epi64(total, _mm256_slli_epi64::<2>(count_vector(fours)));
        total = _mm256_add_epi64(total, _mm256_slli_epi64::<1>(count_vector(twos)));
        total = _mm256_add_epi64(total, count_vector(ones));
        let mut i = rounds * 16 * V;
        while i + V <= bytes.len() {
            // SAFETY: AVX2 is on, and `i + V <= bytes.len()`.
            total = _mm256_add_epi64(total, count_vector(unsafe { load(bytes, i) }));
            i += V;
        }
        let lanes = [
            _mm256_extract_epi64::<0>(total),
            _mm256_extract_epi64::<1>(total),
            _mm256_extract_epi64::<2>(total),
            _mm256_extract_epi64::<3>(total),
        ];
        lanes.iter().map(|&x| x as u64).sum::<u64>() + popcnt(&bytes[i..])
    }

    /// One 64-byte vector of `bytes` from byte `at`, its lanes' bit counts.
    ///
    /// # Safety
    /// The CPU has AVX-512F and VPOPCNTDQ, and `at + 64 <= bytes.len()`.
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    #[inline]
    unsafe fn count512(bytes: &[u8], at: usize) -> __m512i {
        debug_assert!(at + 64 <= bytes.len());
        // SAFETY: the 64 bytes from `at` are inside `bytes` (the caller's
        // contract); `loadu` takes any alignment.
        _mm512_popcnt_epi64(unsafe { _mm512_loadu_si512(bytes.as_ptr().add(at).cast()) })
    }

    /// VPOPCNTQ over four vectors (256 bytes) a step, each into its own
    /// sum so that the adds do not wait on one another, then single
    /// vectors, then the last bytes with POPCNT. Below one vector, POPCNT
    /// alone. The vectors start at the first 64-byte boundary (the bytes
    /// before it by POPCNT), so that no load spans two cache lines: 1 MiB
    /// at an odd address, 7.6 µs with loads across lines, 6.4 without.
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    pub(super) fn avx512(bytes: &[u8], scan: Scan) -> u64 {
        const V: usize = 64;
        if bytes.len() < V {
            return popcnt(bytes);
        }
        let head = bytes.as_ptr().align_offset(V).min(bytes.len());
        let lead = popcnt(&bytes[..head]);
        let bytes = &bytes[head..];
        let mut sums = [_mm512_setzero_si512(); 4];
        let steps = bytes.len() / (4 * V);
        for q in 0..steps {
            let r = nth(scan, steps, q);
            for (k, s) in sums.iter_mut().enumerate() {
                // SAFETY: the features are on; step `r` reads bytes up to
                // `(r + 1) * 4 * V <= steps * 4 * V <= bytes.len()`.
                *s = _mm512_add_epi64(*s, unsafe { count512(bytes, (4 * r + k) * V) });
            }
        }
        let mut total = _mm512_add_epi64(_mm512_add_epi64(sums[0], sums[1]), _mm512_add_epi64(sums[2], sums[3]));
        let mut i = steps * 4 * V;
        while i + V <= bytes.len() {
            // SAFETY: the features are on, and `i + V <= bytes.len()`.
            total = _mm512_add_epi64(total, unsafe { count512(bytes, i) });
            i += V;
        }
        lead + _mm512_reduce_add_epi64(total) as u64 + popcnt(&bytes[i..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(bytes: &[u8]) -> u64 {
        bytes.iter().map(|&b| (0..8).filter(|i| b >> i & 1 == 1).count() as u64).sum()
    }

    fn supported() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.is_supported())
    }

    #[test]
    fn best_is_supported_and_stays_the_same() {
        let k = Kernel::best();
        assert!(k.is_supported());
        assert_eq!(Kernel::best(), k);
        if cfg!(miri) || !cfg!(target_arch = "x86_64") {
            assert_eq!(k, Kernel::Portable);
        }
    }

    /// Every length around the kernels' block sizes (8, 32, 512 bytes), at
    /// every offset from an aligned start, all ones and a pattern.
    #[test]
    fn every_kernel_counts_every_length_and_offset() {
        let max = if cfg!(miri) { 80 } else { 1100 };
        let pattern: Vec<u8> = (0..max + 64).map(|i| (i * 131 % 256) as u8).collect();
        let ones = vec![0xffu8; max + 64];
        for k in supported() {
            for data in [&pattern, &ones] {
                for off in 0..if cfg!(miri) { 9 } else { 64 } {
                    for len in (0..max).filter(|l| cfg!(miri) || l % 8 < 3 || l % 32 > 29 || l % 512 < 40) {
                        let b = &data[off..off + len];
                        for scan in [Scan::Forward, Scan::Backward] {
                            assert_eq!(popcount_with(k, b, scan), naive(b), "{k:?} {scan:?} offset {off} length {len}");
                        }
                    }
                }
            }
        }
        // Twice 512 bytes of ones: every carry-save adder's carry is taken.
        assert_eq!(popcount(&[0xff; 2048]), 2048 * 8);
    }

    #[test]
    fn alternate_turns_only_on_long_counts() {
        assert_eq!(alternate(ALTERNATE_FROM - 1), Scan::Forward);
        let first = alternate(ALTERNATE_FROM);
        assert_eq!(alternate(100), Scan::Forward);
        let second = alternate(1 << 20);
        assert_ne!(first, second);
        assert_eq!(alternate(1 << 20), first);
    }

    /// The property the brief asks: random bytes, lengths 0..5000, any
    /// alignment offset; only the portable kernel runs under Miri.
    fn kernels_agree_with_naive(bytes: &[u8], off: usize) -> Result<(), TestCaseError> {
        let off = off.min(bytes.len());
        let b = &bytes[off..];
        for k in supported() {
            for scan in [Scan::Forward, Scan::Backward] {
                prop_assert_eq!(popcount_with(k, b, scan), naive(b), "{:?} {:?}", k, scan);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn every_kernel_equals_the_naive_count(bytes in proptest::collection::vec(any::<u8>(), 0..5032), off in 0usize..32) {
            kernels_agree_with_naive(&bytes, off)?;
        }

        /// Sparse and dense bitmaps (random bytes are half ones).
        #[test]
        fn every_kernel_counts_sparse_and_dense_bitmaps(len in 0usize..5000, off in 0usize..32, dense: bool, set in proptest::collection::vec(any::<u16>(), 0..64)) {
            let mut bytes = vec![if dense { 0xffu8 } else { 0 }; len + off];
            for s in set {
                if let Some(b) = bytes.get_mut(usize::from(s) % (len + off).max(1)) {
                    *b ^= 1 << (s % 8);
                }
            }
            kernels_agree_with_naive(&bytes, off)?;
        }
    }
}
