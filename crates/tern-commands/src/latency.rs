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
        self.event(event).map(|e| e.samples).unwrap_or_default()
    }

    /// The event named `event` exactly (HISTORY and GRAPH compare case
    /// and all, as Redis does), if it has samples.
    pub fn event(&self, event: &[u8]) -> Option<Event> {
        self.0.lock().iter().find(|(e, _)| e.as_bytes() == event).map(|(e, s)| Event::of(e, s))
    }

    /// Every event, by name.
    pub fn events(&self) -> Vec<Event> {
        self.0.lock().iter().map(|(e, s)| Event::of(e, s)).collect()
    }

    /// Forgets the named events (all when none are named), names compared
    /// without case as Redis's RESET does; returns how many had samples.
    pub fn reset(&self, events: &[&[u8]]) -> usize {
        let mut all = self.0.lock();
        let before = all.len();
        if events.is_empty() {
            all.clear();
        } else {
            all.retain(|e, _| !events.iter().any(|n| n.eq_ignore_ascii_case(e.as_bytes())));
        }
        before - all.len()
    }
}

/// One event of the monitor as LATENCY DOCTOR and GRAPH read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub name: &'static str,
    /// Oldest first.
    pub samples: Vec<Sample>,
    /// The worst sample ever, also of samples no longer kept.
    pub max: u64,
}

impl Event {
    fn of(name: &'static str, s: &Series) -> Event {
        Event { name, samples: s.samples.iter().copied().collect(), max: s.max }
    }

    /// (count, average, mean absolute deviation from the average, seconds
    /// since the oldest sample, at least 1), all in whole units as Redis's
    /// `analyzeLatencyForEvent` computes them.
    fn analyze(&self, now_s: u64) -> (u64, u64, u64, u64) {
        let n = self.samples.len() as u64;
        if n == 0 {
            return (0, 0, 0, 0);
        }
        let avg = self.samples.iter().map(|s| s.ms).sum::<u64>() / n;
        let mad = self.samples.iter().map(|s| s.ms.abs_diff(avg)).sum::<u64>() / n;
        let oldest = self.samples.iter().map(|s| s.time_s).min().unwrap_or(now_s);
        (n, avg, mad, now_s.saturating_sub(oldest).max(1))
    }
}

/// What LATENCY DOCTOR's advice depends on besides the events.
#[derive(Clone, Copy, Debug)]
pub struct DoctorSettings {
    /// `latency-monitor-threshold` (ms).
    pub threshold: i64,
    /// `slowlog-log-slower-than` (µs; negative: off).
    pub slowlog_slower_than: i64,
    pub hz: u32,
    /// The process has transparent huge pages (smaps' AnonHugePages).
    pub anon_huge_pages: bool,
}

/// The pieces of advice LATENCY DOCTOR may give for Tern's events, in the
/// order Redis 8.4 prints them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Advice {
    SlowlogEnable,
    SlowlogTune,
    SlowlogInspect,
    Scheduler,
    Hz,
    LargeObjects,
    MassEviction,
    DisableThp,
}

/// LATENCY DOCTOR's report, worded as Redis 8.4's (`events` in the order
/// they are reported, `now_s` the current Unix time).
pub fn doctor(events: &[Event], now_s: u64, cfg: &DoctorSettings) -> String {
    use std::fmt::Write as _;
    if events.is_empty() && cfg.threshold == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency-monitor.\n".to_string();
    }
    let mut out = String::new();
    let mut advice = std::collections::BTreeSet::new();
    // Redis counts a piece of advice each time an event calls for it, and
    // counts the `hz` one even when `hz` is already high enough to print
    // nothing: only whether the count is zero shows.
    let mut advices = 0;
    for (i, e) in events.iter().enumerate() {
        if i == 0 {
            out.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        }
        let (n, avg, mad, period) = e.analyze(now_s);
        let _ = write!(
            out,
            "{}. {}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.",
            i + 1,
            e.name,
            n,
            avg,
            mad,
            period as f64 / n.max(1) as f64,
            e.max
        );
        let wanted: &[Advice] = match e.name {
            "command" => {
                if cfg.slowlog_slower_than < 0 {
                    advice.insert(Advice::SlowlogEnable);
                    advices += 1;
                } else if cfg.slowlog_slower_than / 1000 > cfg.threshold {
                    advice.insert(Advice::SlowlogTune);
                    advices += 1;
                }
                &[Advice::SlowlogInspect, Advice::LargeObjects]
            }
            "fast-command" => &[Advice::Scheduler],
            "expire-cycle" => &[Advice::Hz, Advice::LargeObjects],
            "eviction-cycle" => &[Advice::MassEviction],
            _ => &[],
        };
        advice.extend(wanted.iter().copied());
        advices += wanted.len();
        out.push('\n');
    }
    if cfg.anon_huge_pages {
        advice.insert(Advice::DisableThp);
        advices += 1;
    }
    if events.is_empty() && advices == 0 {
        out.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
        return out;
    }
    if advices == 0 {
        out.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
        return out;
    }
    out.push_str("\nI have a few advices for you:\n\n");
    let suggested = cfg.threshold.max(0) as u64 * 1000;
    for a in advice {
        match a {
            Advice::SlowlogEnable => {
                let _ = writeln!(out, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than {suggested}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.");
            }
            Advice::SlowlogTune => {
                let _ = writeln!(out, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {suggested}'.");
            }
            Advice::SlowlogInspect => out.push_str("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n"),
            Advice::Scheduler => out.push_str(
                "- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n\
                 \x20 1) Lower the system load.\n\
                 \x20 2) Use a computer / VM just for Redis if you are running other software in the same system.\n\
                 \x20 3) Check if you have a \"noisy neighbour\" problem.\n\
                 \x20 4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n\
                 \x20 5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n",
            ),
            Advice::Hz if cfg.hz < 100 => out.push_str("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n"),
            Advice::Hz => {}
            Advice::LargeObjects => out.push_str("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"),
            Advice::MassEviction => out.push_str("- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n"),
            Advice::DisableThp => out.push_str("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n"),
        }
    }
    out
}

/// Columns of LATENCY GRAPH's plot; a longer history wraps.
const GRAPH_COLS: usize = 80;
/// Rows of the plot (each of three levels: `_`, `o`, `#`; `|` below).
const GRAPH_ROWS: usize = 4;
const GRAPH_LEVELS: &[u8] = b"_o#";

/// LATENCY GRAPH's text for `e`: a title line, a rule, and the samples as
/// Redis's filled sparkline, each column labelled with how long ago
/// (`12s`, `5m`, `3h`, `2d`) written downwards below a blank row.
pub fn graph(e: &Event, now_s: u64) -> String {
    let lo = e.samples.iter().map(|s| s.ms).min().unwrap_or(0);
    let hi = e.samples.iter().map(|s| s.ms).max().unwrap_or(0);
    let mut out = format!("{} - high {} ms, low {} ms (all time high {} ms)\n", e.name, hi, lo, e.max);
    out.push_str(&"-".repeat(GRAPH_COLS));
    out.push('\n');
    let labels: Vec<String> = e
        .samples
        .iter()
        .map(|s| {
            let ago = now_s as i64 - s.time_s as i64;
            match ago {
                a if a < 60 => format!("{a}s"),
                a if a < 3600 => format!("{}m", a / 60),
                a if a < 86_400 => format!("{}h", a / 3600),
                a => format!("{}d", a / 86_400),
            }
        })
        .collect();
    let values: Vec<u64> = e.samples.iter().map(|s| s.ms).collect();
    for (i, (vals, labs)) in values.chunks(GRAPH_COLS).zip(labels.chunks(GRAPH_COLS)).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        plot(&mut out, vals, labs, lo as f64, hi as f64);
    }
    out
}

/// One block of up to [`GRAPH_COLS`] columns of [`graph`], scaled to the
/// whole history's `lo..hi`.
fn plot(out: &mut String, vals: &[u64], labels: &[String], lo: f64, hi: f64) {
    let levels = GRAPH_LEVELS.len();
    let steps = (levels * GRAPH_ROWS) as i64;
    let span = if hi - lo == 0.0 { 1.0 } else { hi - lo };
    // Redis truncates the scaled value before dividing by the span.
    let step_of = |v: u64| ((((v as f64 - lo) * steps as f64) as i64 as f64 / span) as i64).clamp(0, steps - 1);
    let labelled = labels.iter().any(|l| !l.is_empty());
    let mut line = vec![b' '; vals.len()];
    for row in 0.. {
        line.fill(b' ');
        let mut more = false;
        for (j, (&v, label)) in vals.iter().zip(labels).enumerate() {
            if row < GRAPH_ROWS {
                more = true;
                let level = step_of(v) - ((GRAPH_ROWS - row - 1) * levels) as i64;
                if (0..levels as i64).contains(&level) {
                    line[j] = GRAPH_LEVELS[level as usize];
                } else if level >= levels as i64 {
                    line[j] = b'|';
                }
            } else if labelled && row == GRAPH_ROWS {
                // A blank row between the plot and the labels.
                more = true;
                break;
            } else if let Some(&c) = (row - GRAPH_ROWS).checked_sub(1).and_then(|k| label.as_bytes().get(k)) {
                more = true;
                line[j] = c;
            }
        }
        if !more {
            break;
        }
        out.push_str(&String::from_utf8_lossy(&line));
        out.push('\n');
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

    /// Five `command` samples and what redis-server 8.4 answered for them
    /// (LATENCY GRAPH and DOCTOR at Unix time 1795649831).
    fn five_samples() -> Event {
        let samples = [(1795649821, 27), (1795649824, 131), (1795649825, 77), (1795649828, 339), (1795649830, 15)];
        Event { name: "command", samples: samples.iter().map(|&(time_s, ms)| Sample { time_s, ms }).collect(), max: 339 }
    }

    #[test]
    fn graph_as_redis_draws_it() {
        let want = "command - high 339 ms, low 15 ms (all time high 339 ms)\n".to_string()
            + &"-".repeat(80)
            + "\n   # \n   | \n o | \n_|#|_\n     \n17631\n0ssss\ns    \n";
        assert_eq!(graph(&five_samples(), 1795649831), want);
        // One sample: the lowest level, labelled "0s".
        let one = Event { name: "command", samples: vec![Sample { time_s: 100, ms: 158 }], max: 158 };
        let want = "command - high 158 ms, low 158 ms (all time high 158 ms)\n".to_string() + &"-".repeat(80) + "\n \n \n \n_\n \n0\ns\n";
        assert_eq!(graph(&one, 100), want);
        // Minutes, hours and days ago; more than 80 samples wrap.
        let many = Event { name: "x", samples: (0..100).map(|i| Sample { time_s: 1_000_000 + i, ms: i }).collect(), max: 99 };
        let g = graph(&many, 1_000_000 + 100 + 2 * 86_400);
        let rows_of = |c: char, n: usize| g.lines().filter(|l| l.len() == n && l.chars().all(|x| x == c)).count();
        assert_eq!((rows_of('2', 80), rows_of('d', 80), rows_of('2', 20), rows_of('d', 20)), (1, 1, 1, 1), "{g}");
        assert_eq!(g.matches("\n\n").count(), 1, "one blank line between the two blocks: {g}");
        let ago = |s: u64| graph(&Event { name: "x", samples: vec![Sample { time_s: 0, ms: 1 }], max: 1 }, s);
        assert!(ago(59).ends_with("\n5\n9\ns\n") && ago(120).ends_with("\n2\nm\n") && ago(7200).ends_with("\n2\nh\n"));
    }

    #[test]
    fn doctor_as_redis_words_it() {
        let cfg = DoctorSettings { threshold: 1, slowlog_slower_than: 10_000, hz: 10, anon_huge_pages: false };
        let want = "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
1. command: 5 latency spikes (average 117ms, mean deviation 93ms, period 2.00 sec). Worst all time event 339ms.\n\n\
I have a few advices for you:\n\n\
- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 1000'.\n\
- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n";
        assert_eq!(doctor(&[five_samples()], 1795649831, &cfg), want);
        let off = DoctorSettings { threshold: 0, ..cfg };
        assert!(doctor(&[], 0, &off).starts_with("I'm sorry, Dave, I can't do that."));
        assert!(doctor(&[], 0, &cfg).starts_with("Dave, no latency spike was observed"));
        // THP alone is advice, without events.
        let thp = DoctorSettings { anon_huge_pages: true, ..cfg };
        let t = doctor(&[], 0, &thp);
        assert!(t.starts_with("\nI have a few advices for you:\n\n- I detected a non zero amount of anonymous huge pages"), "{t}");
        // The slow log off, and the other events' advice, in Redis's order;
        // `hz` is advised only below 100.
        let slowlog_off = DoctorSettings { slowlog_slower_than: -1, ..cfg };
        let ev = |name: &'static str| Event { name, samples: vec![Sample { time_s: 10, ms: 4 }], max: 4 };
        let t = doctor(&[ev("command"), ev("eviction-cycle"), ev("expire-cycle"), ev("fast-command")], 10, &slowlog_off);
        let order = ["Try to enable the Slow Log", "Check your Slow Log", "code paths not containing system calls", "'hz' configuration", "large objects is a blocking", "Sudden changes to the 'maxmemory'"];
        let at: Vec<usize> = order.iter().map(|p| t.find(p).unwrap_or_else(|| panic!("{p}: {t}"))).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{t}");
        assert!(t.contains("4. fast-command: 1 latency spikes (average 4ms, mean deviation 0ms, period 1.00 sec). Worst all time event 4ms.\n"));
        let fast_hz = DoctorSettings { hz: 100, ..cfg };
        assert!(!doctor(&[ev("expire-cycle")], 10, &fast_hz).contains("'hz'"));
    }

    #[test]
    fn events_read_exactly_reset_without_case() {
        let m = LatencyMonitor::default();
        m.add("command", 10, 5);
        assert!(m.event(b"COMMAND").is_none());
        assert_eq!(m.event(b"command").map(|e| e.max), Some(5));
        assert_eq!(m.reset(&[b"Command"]), 1);
        assert!(m.events().is_empty());
    }
}
