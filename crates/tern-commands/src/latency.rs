//! Latency: per-command histograms (INFO latencystats, LATENCY HISTOGRAM,
//! `latency-tracking`) and the events of the latency monitor (LATENCY
//! LATEST/HISTORY/RESET, `latency-monitor-threshold`).
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

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

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
        let (counts, total) = self.summed(cmd)?;
        Some(percentiles.iter().map(|&p| value_at(&counts, total, p) as f64 / 1000.0).collect())
    }

    /// Command `cmd`'s bucket counts summed over the workers, and their
    /// total; None when it has no record.
    fn summed(&self, cmd: usize) -> Option<(Vec<u64>, u64)> {
        let mut counts = vec![0u64; BUCKETS];
        for w in self.workers.iter() {
            if let Some(h) = w.0.get(cmd).and_then(|s| s.get()) {
                for (t, c) in counts.iter_mut().zip(h.0.iter()) {
                    *t += c.load(Ordering::Relaxed);
                }
            }
        }
        let total: u64 = counts.iter().sum();
        (total > 0).then_some((counts, total))
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

/// The values at Redis's LATENCY HISTOGRAM reporting levels (1024 ns
/// doubling) where the cumulative count grows, as (µs, count so far).
fn cumulative(counts: &[u64]) -> Vec<(u64, u64)> {
    let total: u64 = counts.iter().sum();
    let mut out = Vec::new();
    let (mut seen, mut i, mut level) = (0u64, 0usize, 1024u64);
    while seen < total {
        // Past the largest level, the last bucket takes the rest.
        let last = if level > MAX_NS { BUCKETS - 1 } else { index_of(level) };
        let before = seen;
        while i <= last && i < counts.len() {
            seen += counts[i];
            i += 1;
        }
        if seen > before {
            out.push((range_of(last).1 / 1000, seen));
        }
        if last == BUCKETS - 1 {
            break;
        }
        level <<= 1;
    }
    out
}

/// A command's calls and its cumulative distribution, as (µs, count so
/// far) at each reporting level.
pub type Distribution = (u64, Vec<(u64, u64)>);

impl CommandLatency {
    /// Command `cmd`'s calls and cumulative distribution over all workers
    /// (LATENCY HISTOGRAM); None when it has no record.
    pub fn distribution(&self, cmd: usize) -> Option<Distribution> {
        let (counts, total) = self.summed(cmd)?;
        Some((total, cumulative(&counts)))
    }
}

/// Samples an event keeps.
pub const HISTORY_LEN: usize = 160;

/// One latency monitor sample: when (s since the epoch) and how long (ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub time_s: u64,
    pub ms: u64,
}

#[derive(Default)]
struct Series {
    samples: VecDeque<Sample>,
    max: u64,
}

/// The latency monitor's events (`command`, `fast-command`,
/// `expire-cycle`), each with its last [`HISTORY_LEN`] samples (one per
/// second: the worst) and its worst ever. One lock for all: it is taken
/// only by something that already took `latency-monitor-threshold`
/// milliseconds, and by LATENCY.
#[derive(Default)]
pub struct LatencyMonitor(Mutex<BTreeMap<&'static str, Series>>);

impl LatencyMonitor {
    /// Adds a sample of `ms` at `now_ms` if it reached `threshold` (ms;
    /// 0: the monitor is off).
    #[inline]
    pub fn note(&self, threshold: i64, event: &'static str, now_ms: u64, ms: u64) {
        if threshold > 0 && ms >= threshold as u64 {
            self.add(event, now_ms / 1000, ms);
        }
    }

    pub fn add(&self, event: &'static str, time_s: u64, ms: u64) {
        let mut all = self.0.lock();
        let s = all.entry(event).or_default();
        s.max = s.max.max(ms);
        match s.samples.back_mut() {
            Some(last) if last.time_s == time_s => last.ms = last.ms.max(ms),
            _ => {
                if s.samples.len() == HISTORY_LEN {
                    s.samples.pop_front();
                }
                s.samples.push_back(Sample { time_s, ms });
            }
        }
    }

    /// Every event with its latest sample and its worst ever.
    pub fn latest(&self) -> Vec<(&'static str, Sample, u64)> {
        self.0.lock().iter().filter_map(|(e, s)| s.samples.back().map(|l| (*e, *l, s.max))).collect()
    }

    /// An event's samples, oldest first (none for an unknown event).
    pub fn history(&self, event: &[u8]) -> Vec<Sample> {
        self.0.lock().iter().find(|(e, _)| e.as_bytes() == event).map(|(_, s)| s.samples.iter().copied().collect()).unwrap_or_default()
    }

    /// Forgets the named events (all when none are named); returns how
    /// many had samples.
    pub fn reset(&self, events: &[&[u8]]) -> usize {
        let mut all = self.0.lock();
        let before = all.len();
        if events.is_empty() {
            all.clear();
        } else {
            all.retain(|e, _| !events.contains(&e.as_bytes()));
        }
        before - all.len()
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

    #[test]
    fn histogram_levels_as_redis_reports_them() {
        // 15 µs and 30 µs: Redis reports 16 -> 1, 33 -> 2.
        let mut counts = vec![0u64; BUCKETS];
        counts[index_of(15_000)] += 1;
        counts[index_of(30_000)] += 1;
        assert_eq!(cumulative(&counts), [(16, 1), (33, 2)]);
        counts[index_of(10)] += 1;
        assert_eq!(cumulative(&counts), [(1, 1), (16, 2), (33, 3)]);
        counts[index_of(MAX_NS)] += 1;
        assert_eq!(cumulative(&counts).last().map(|x| x.1), Some(4));
    }

    #[test]
    fn monitor_keeps_the_worst_per_second_and_a_bounded_history() {
        let m = LatencyMonitor::default();
        m.add("command", 10, 5);
        m.add("command", 10, 3);
        m.add("command", 11, 2);
        assert_eq!(m.history(b"command"), [Sample { time_s: 10, ms: 5 }, Sample { time_s: 11, ms: 2 }]);
        assert_eq!(m.latest(), [("command", Sample { time_s: 11, ms: 2 }, 5)]);
        for t in 0..500 {
            m.add("expire-cycle", 100 + t, 1);
        }
        assert_eq!(m.history(b"expire-cycle").len(), HISTORY_LEN);
        assert_eq!(m.history(b"expire-cycle")[0].time_s, 100 + 500 - HISTORY_LEN as u64);
        assert!(m.history(b"nosuch").is_empty());
        assert_eq!(m.reset(&[b"command", b"nosuch"]), 1);
        assert_eq!(m.reset(&[]), 1);
        assert!(m.latest().is_empty());
    }
}
