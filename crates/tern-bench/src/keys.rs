//! Key index generation with memtier's patterns.
//!
//! - `R` uniform random over [min, max];
//! - `G` Gaussian around the median (default: the middle) with a standard
//!   deviation (default: a sixth of the range), clamped to the range;
//! - `S` sequential over the whole range, wrapping;
//! - `P` sequential over this client's share of the range, wrapping: the
//!   range is cut into one contiguous slice per client, so the clients
//!   together cover every key exactly once per pass (the preload pattern);
//! - `Z` Zipf over the range (Tern's own, for cache hit ratios): the key
//!   of rank r (the minimum is rank 1) is drawn in proportion to
//!   r^-alpha (`--zipf-alpha`), by rand_distr's rejection-inversion.

use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng};
use rand_distr::{StandardNormal, Zipf};

/// A load thread's random source: rand's `SmallRng`, fast and seedable; a
/// benchmark needs speed and reproducibility, not cryptographic quality.
/// Nearby seeds give unrelated streams (the seed is expanded, not used raw).
#[derive(Clone, Debug)]
pub struct Rng(SmallRng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SmallRng::seed_from_u64(seed))
    }

    /// The raw stream, by which tests compare seeds.
    #[cfg(test)]
    pub fn next_u64(&mut self) -> u64 {
        rand::RngCore::next_u64(&mut self.0)
    }

    /// Uniform in [0, n) (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.gen_range(0..n)
    }

    /// Standard normal.
    pub fn normal(&mut self) -> f64 {
        self.0.sample(StandardNormal)
    }

    /// A draw of `z`: a rank in [1, n].
    pub fn zipf(&mut self, z: &Zipf<f64>) -> u64 {
        self.0.sample(z) as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Random,
    Gaussian,
    Sequential,
    Parallel,
    Zipf,
}

impl Pattern {
    pub fn from_letter(s: &str) -> Option<Pattern> {
        Some(match s {
            "R" => Pattern::Random,
            "G" => Pattern::Gaussian,
            "S" => Pattern::Sequential,
            "P" => Pattern::Parallel,
            "Z" => Pattern::Zipf,
            _ => return None,
        })
    }
}

/// The slice of [min, max] that client `index` of `count` owns under `P`.
pub fn share(min: u64, max: u64, index: u64, count: u64) -> (u64, u64) {
    let total = (max - min) as u128 + 1;
    let lo = min as u128 + total * index as u128 / count as u128;
    let hi = min as u128 + total * (index as u128 + 1) / count as u128;
    // An empty share (more clients than keys) is represented as lo > hi.
    (lo as u64, (hi as u64).wrapping_sub(1))
}

#[derive(Clone, Debug)]
pub struct KeyGen {
    pattern: Pattern,
    min: u64,
    max: u64,
    next: u64,
    median: f64,
    stddev: f64,
    zipf: Option<Zipf<f64>>,
}

impl KeyGen {
    /// A generator for client `index` of `count` over [min, max].
    pub fn new(
        pattern: Pattern,
        min: u64,
        max: u64,
        index: u64,
        count: u64,
        median: Option<f64>,
        stddev: Option<f64>,
        zipf_alpha: f64,
    ) -> KeyGen {
        let (lo, hi) = if pattern == Pattern::Parallel {
            share(min, max, index, count)
        } else {
            (min, max)
        };
        let median = median.unwrap_or((min as f64 + max as f64) / 2.0);
        let stddev = stddev.unwrap_or((max - min) as f64 / 6.0);
        // Options check alpha; a bad one here draws uniformly instead.
        let zipf = (pattern == Pattern::Zipf).then(|| Zipf::new(max - min + 1, zipf_alpha).ok()).flatten();
        KeyGen {
            pattern,
            min: lo,
            max: hi,
            next: lo,
            median,
            stddev,
            zipf,
        }
    }

    /// Keys in one pass of this generator (this client's share for `P`).
    pub fn pass_len(&self) -> u64 {
        if self.min > self.max {
            0
        } else {
            self.max - self.min + 1
        }
    }

    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self.pattern {
            Pattern::Zipf => match &self.zipf {
                Some(z) => (self.min + rng.zipf(z) - 1).min(self.max),
                None => self.min + rng.below(self.max - self.min + 1),
            },
            Pattern::Random => self.min + rng.below(self.max - self.min + 1),
            Pattern::Gaussian => {
                let k = (self.median + rng.normal() * self.stddev).round();
                k.clamp(self.min as f64, self.max as f64) as u64
            }
            Pattern::Sequential | Pattern::Parallel => {
                let k = self.next;
                self.next = if k >= self.max { self.min } else { k + 1 };
                k
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(p: Pattern, min: u64, max: u64, i: u64, n: u64) -> KeyGen {
        KeyGen::new(p, min, max, i, n, None, None, 0.99)
    }

    #[test]
    fn zipf_ranks_follow_the_power_law() {
        let mut rng = Rng::new(5);
        let n = 200_000;
        for alpha in [0.9, 1.1] {
            let mut g = KeyGen::new(Pattern::Zipf, 10, 1_000_009, 0, 1, None, None, alpha);
            let mut count = [0u32; 3];
            for _ in 0..n {
                let k = g.next(&mut rng);
                assert!((10..=1_000_009).contains(&k));
                if k - 10 < 3 {
                    count[(k - 10) as usize] += 1;
                }
            }
            // P(rank 1) / P(rank 2) = 2^alpha, P(1) / P(3) = 3^alpha.
            let r2 = f64::from(count[0]) / f64::from(count[1]);
            let r3 = f64::from(count[0]) / f64::from(count[2]);
            assert!((r2 - 2f64.powf(alpha)).abs() < 0.1, "alpha {alpha}: {r2}");
            assert!((r3 - 3f64.powf(alpha)).abs() < 0.2, "alpha {alpha}: {r3}");
        }
    }

    #[test]
    fn random_stays_in_range_and_covers_it() {
        let mut rng = Rng::new(1);
        let mut g = gen(Pattern::Random, 5, 14, 0, 1);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let k = g.next(&mut rng);
            assert!((5..=14).contains(&k));
            seen[(k - 5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }

    #[test]
    fn sequential_wraps() {
        let mut rng = Rng::new(1);
        let mut g = gen(Pattern::Sequential, 1, 3, 7, 9);
        let ks: Vec<u64> = (0..7).map(|_| g.next(&mut rng)).collect();
        assert_eq!(ks, [1, 2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn parallel_shares_cover_every_key_once() {
        for (min, max, n) in [
            (1u64, 1_000_000u64, 4u64),
            (1, 100_001, 1),
            (0, 9, 3),
            (1, 2, 5),
        ] {
            let mut all = Vec::new();
            let mut rng = Rng::new(0);
            for i in 0..n {
                let mut g = gen(Pattern::Parallel, min, max, i, n);
                for _ in 0..g.pass_len() {
                    all.push(g.next(&mut rng));
                }
            }
            all.sort_unstable();
            let want: Vec<u64> = (min..=max).collect();
            assert_eq!(all, want, "{min}..{max} / {n}");
        }
    }

    #[test]
    fn gaussian_centres_on_the_median() {
        let mut rng = Rng::new(3);
        let mut g = gen(Pattern::Gaussian, 0, 600, 0, 1);
        let n = 20_000;
        let ks: Vec<u64> = (0..n).map(|_| g.next(&mut rng)).collect();
        let mean = ks.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 300.0).abs() < 5.0, "{mean}");
        let within = ks.iter().filter(|&&k| (200..=400).contains(&k)).count() as f64 / n as f64;
        assert!((within - 0.68).abs() < 0.03, "{within}");
        assert!(ks.iter().all(|&k| k <= 600));
    }

    #[test]
    fn seeds_are_reproducible_and_distinct() {
        let a: Vec<u64> = {
            let mut r = Rng::new(9);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(9);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(10);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
