//! Per-command latency histograms (INFO latencystats, `latency-tracking`).
//!
//! Each worker has one histogram per command it has run, created the first
//! time it runs it, written only by that worker (a plain load and store per
//! record) and summed over workers when read. The buckets are those of an
//! HdrHistogram with two significant digits and 1 ns units, as Redis's, so
//! that the percentiles read alike (9000 ns reads as 9.023 µs):
//!
//! ```text
//!  value v (ns) < 256:       index v                               width 1
//!  else, b = log2(v) - 7:    index (b + 1) * 128 + (v >> b) - 128  width 2^b
//! ```
//!
//! Values above [`MAX_NS`] count as [`MAX_NS`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The largest latency told apart: about 4.3 seconds.
pub const MAX_NS: u64 = (1 << 32) - 1;
const HALF: u64 = 128;
const BUCKETS: usize = index_of(MAX_NS) + 1;

const fn index_of(v: u64) -> usize {
    let pow = 63 - (v | 255).leading_zeros() as u64;
    let b = pow - 7;
    (((b + 1) * HALF) + (v >> b) - HALF) as usize
}

/// The lowest and highest values that fall in bucket `i`.
fn range_of(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * HALF {
        return (i, i);
    }
    let b = i / HALF - 1;
    let sub = i % HALF + HALF;
    (sub << b, (sub << b) + (1 << b) - 1)
}

/// One command's latencies on one worker.
struct Histogram(Box<[AtomicU64]>);

impl Histogram {
    fn new() -> Self {
        Histogram((0..BUCKETS).map(|_| AtomicU64::new(0)).collect())
    }
}

/// One worker's histograms, by command id.
#[repr(align(128))]
struct WorkerLatency(Box<[OnceLock<Histogram>]>);

/// Every worker's histograms.
pub struct CommandLatency {
    workers: Box<[WorkerLatency]>,
}

impl CommandLatency {
    pub fn new(workers: usize, commands: usize) -> Self {
        CommandLatency { workers: (0..workers.max(1)).map(|_| WorkerLatency((0..commands).map(|_| OnceLock::new()).collect())).collect() }
    }

    /// Records that command `cmd` took `ns` on `worker`. Only that worker
    /// may call this.
    #[inline]
    pub fn record(&self, worker: usize, cmd: usize, ns: u64) {
        let w = &self.workers[worker.min(self.workers.len() - 1)];
        let Some(slot) = w.0.get(cmd) else { return };
        let c = &slot.get_or_init(Histogram::new).0[index_of(ns.min(MAX_NS))];
        c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// The values at `percentiles` (0..=100) of command `cmd` over all
    /// workers, in µs; None when it has no record.
    pub fn percentiles(&self, cmd: usize, percentiles: &[f64]) -> Option<Vec<f64>> {
        let mut counts = vec![0u64; BUCKETS];
        let mut any = false;
        for w in self.workers.iter() {
            if let Some(h) = w.0.get(cmd).and_then(|s| s.get()) {
                any = true;
                for (t, c) in counts.iter_mut().zip(h.0.iter()) {
                    *t += c.load(Ordering::Relaxed);
                }
            }
        }
        let total: u64 = counts.iter().sum();
        if !any || total == 0 {
            return None;
        }
        Some(percentiles.iter().map(|&p| value_at(&counts, total, p) as f64 / 1000.0).collect())
    }

    /// CONFIG RESETSTAT: every count back to zero (racy with the workers by
    /// design, as the other counters).
    pub fn reset(&self) {
        for w in self.workers.iter() {
            for h in w.0.iter().filter_map(|s| s.get()) {
                for c in h.0.iter() {
                    c.store(0, Ordering::Relaxed);
                }
            }
        }
    }
}

/// HdrHistogram's value at a percentile: the highest value of the bucket
/// where the count reaches it (the lowest for percentile 0).
fn value_at(counts: &[u64], total: u64, p: f64) -> u64 {
    let p = p.clamp(0.0, 100.0);
    let want = ((p / 100.0 * total as f64 + 0.5) as u64).max(1);
    let mut seen = 0;
    let mut at = 0;
    for (i, &c) in counts.iter().enumerate() {
        seen += c;
        if c > 0 {
            at = i;
        }
        if seen >= want {
            break;
        }
    }
    let (lo, hi) = range_of(at);
    if p == 0.0 {
        lo
    } else {
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_as_hdr_two_digits() {
        assert_eq!(index_of(0), 0);
        assert_eq!(index_of(255), 255);
        assert_eq!(range_of(index_of(256)), (256, 257));
        assert_eq!(range_of(index_of(9000)), (8960, 9023));
        assert_eq!(range_of(index_of(MAX_NS)).1, MAX_NS);
        for v in [1u64, 300, 9000, 123_456, 1 << 30] {
            let (lo, hi) = range_of(index_of(v));
            assert!(lo <= v && v <= hi && (hi - lo) * 100 <= v.max(100), "{v}: {lo}..{hi}");
        }
    }

    #[test]
    fn percentiles_over_workers() {
        let l = CommandLatency::new(2, 3);
        assert_eq!(l.percentiles(1, &[50.0]), None);
        for i in 0..100u64 {
            l.record((i % 2) as usize, 1, (i + 1) * 1000);
        }
        let p = l.percentiles(1, &[0.0, 50.0, 99.0, 100.0]).unwrap();
        assert_eq!(p[0], 1.0, "p0 is the lowest of the smallest's bucket");
        assert!((49.0..=50.5).contains(&p[1]), "{p:?}");
        assert!((98.0..=99.5).contains(&p[2]), "{p:?}");
        assert!((99.5..=100.5).contains(&p[3]), "{p:?}");
        assert_eq!(l.percentiles(0, &[50.0]), None);
        l.reset();
        assert_eq!(l.percentiles(1, &[50.0]), None);
        l.record(5, 9, 1);
    }
}
