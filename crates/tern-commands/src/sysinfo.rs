//! What the process and the machine report about themselves, for INFO:
//! resident memory and CPU times from /proc, jemalloc's counters, and the
//! samples the instantaneous rates and the memory peak are derived from.
//! No command code: `cmd/info.rs` formats these.

use std::sync::atomic::Ordering;

use parking_lot::Mutex;

/// The last sample of the traffic counters, for the instantaneous rates.
struct RateSample {
    at: std::time::Instant,
    totals: Totals,
    rates: Rates,
}

/// The running totals INFO's instantaneous rates are derived from.
#[derive(Clone, Copy, Default)]
pub struct Totals {
    pub ops: u64,
    pub input: u64,
    pub output: u64,
    /// Event-loop turns, and the microseconds they took.
    pub cycles: u64,
    pub cycle_us: u64,
}

/// INFO's instantaneous figures over the last window.
#[derive(Clone, Copy, Default)]
pub struct Rates {
    pub ops_per_sec: u64,
    pub input_kbps: f64,
    pub output_kbps: f64,
    pub cycles_per_sec: u64,
    /// Mean microseconds per event-loop turn.
    pub cycle_us: u64,
}

/// Rates are measured between INFO calls: a sample at least this old is
/// replaced, a younger one is reused, so that rapid INFO calls do not
/// divide by nearly nothing.
const RATE_WINDOW: std::time::Duration = std::time::Duration::from_millis(100);

static RATES: Mutex<Option<RateSample>> = Mutex::new(None);

/// The highest `used_memory` INFO has seen (Redis samples it in cron).
static PEAK_MEMORY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Notes `used` bytes of memory; returns the highest seen (with `used`).
pub fn peak_memory(used: u64) -> u64 {
    PEAK_MEMORY.fetch_max(used, Ordering::Relaxed).max(used)
}

/// Forgets the samples INFO derives rates and the memory peak from
/// (CONFIG RESETSTAT).
pub fn reset_samples() {
    *RATES.lock() = None;
    PEAK_MEMORY.store(0, Ordering::Relaxed);
}

/// The rates of the totals given since the last sample (a sample is
/// taken when the last is at least a window old).
pub fn rates(t: Totals) -> Rates {
    let now = std::time::Instant::now();
    let mut r = RATES.lock();
    match r.as_mut() {
        None => {
            *r = Some(RateSample { at: now, totals: t, rates: Rates::default() });
            Rates::default()
        }
        Some(s) => {
            let dt = now.duration_since(s.at);
            if dt >= RATE_WINDOW {
                let secs = dt.as_secs_f64();
                let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
                let cycles = d(t.cycles, s.totals.cycles);
                s.rates = Rates {
                    ops_per_sec: (d(t.ops, s.totals.ops) / secs).round() as u64,
                    input_kbps: d(t.input, s.totals.input) / secs / 1024.0,
                    output_kbps: d(t.output, s.totals.output) / secs / 1024.0,
                    cycles_per_sec: (cycles / secs).round() as u64,
                    cycle_us: if cycles > 0.0 { (d(t.cycle_us, s.totals.cycle_us) / cycles).round() as u64 } else { 0 },
                };
                s.at = now;
                s.totals = t;
            }
            s.rates
        }
    }
}

/// (user, system) CPU seconds of the calling thread.
pub fn thread_cpu_times() -> (f64, f64) {
    let t = stat_seconds("/proc/thread-self/stat");
    (t[0], t[1])
}

/// jemalloc's view: (allocated, active, resident). Reading the stats
/// needs the epoch advanced first, or they are stale.
pub fn jemalloc_stats() -> (u64, u64, u64) {
    use tikv_jemalloc_ctl::{epoch, stats};
    let _ = epoch::advance();
    let a = stats::allocated::read().unwrap_or(0) as u64;
    let act = stats::active::read().unwrap_or(0) as u64;
    let r = stats::resident::read().unwrap_or(0) as u64;
    (a, act, r)
}

/// A /proc file's text, empty if it cannot be read.
pub fn read_proc(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Resident set size from /proc/self/statm, which counts pages of the
/// system's size (4 KiB on most x86, 16 or 64 KiB on some arm64 and ppc64).
/// rustix reads the size from the auxiliary vector once per process.
pub fn rss_bytes() -> u64 {
    let pages = read_proc("/proc/self/statm").split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok());
    pages.unwrap_or(0) * rustix::param::page_size() as u64
}

/// Bytes of the process's memory in transparent huge pages (the
/// `AnonHugePages:` lines of its smaps, summed by the kernel in
/// smaps_rollup), 0 when unknown.
pub fn anon_huge_pages_bytes() -> u64 {
    read_proc("/proc/self/smaps_rollup")
        .lines()
        .filter_map(|l| l.strip_prefix("AnonHugePages:"))
        .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

/// The machine's memory in bytes, from /proc/meminfo.
pub fn total_system_memory() -> u64 {
    read_proc("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// (user, system, children user, children system) CPU seconds from
/// /proc/self/stat, whose times are in clock ticks: `sysconf(_SC_CLK_TCK)`,
/// which rustix reads from the auxiliary vector once per process.
pub fn cpu_times() -> (f64, f64, f64, f64) {
    let t = stat_seconds("/proc/self/stat");
    (t[0], t[1], t[2], t[3])
}

/// utime, stime, cutime and cstime of a `/proc/.../stat` file, in seconds.
fn stat_seconds(path: &str) -> [f64; 4] {
    let stat = read_proc(path);
    // The command name may contain spaces; fields resume after its ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse::<f64>().unwrap_or(0.0)).collect();
    let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
    let tick = |i: usize| f.get(i).copied().unwrap_or(0.0) / hz;
    // After ')': state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    [tick(11), tick(12), tick(13), tick(14)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_is_the_kernels_vmrss() {
        // VmRSS is in kB whatever the page size; statm counts pages.
        let status = read_proc("/proc/self/status");
        let kb = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        let vmrss = kb.expect("VmRSS in /proc/self/status") * 1024;
        let rss = rss_bytes();
        assert!(rss.abs_diff(vmrss) <= vmrss / 10, "statm {rss} B, VmRSS {vmrss} B");
    }

    #[test]
    fn cpu_times_are_seconds() {
        // This thread's run time in nanoseconds (schedstat) bounds the
        // process's CPU time from below; wall time on every core from above.
        let thread_ns = || read_proc("/proc/thread-self/schedstat").split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let process = || {
            let (u, s, _, _) = cpu_times();
            u + s
        };
        let (t0, p0, w0) = (thread_ns(), process(), std::time::Instant::now());
        let mut x = 1u64;
        while thread_ns() - t0 < 300_000_000 {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        let (busy, spent, wall) = ((thread_ns() - t0) as f64 / 1e9, process() - p0, w0.elapsed().as_secs_f64());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        // Two ticks of slack at either end for the counters' granularity.
        let slack = 2.0 / rustix::param::clock_ticks_per_second() as f64;
        assert!(spent >= busy * 0.8 - slack, "process {spent} s, thread {busy} s");
        assert!(spent <= wall * cores + slack, "process {spent} s in {wall} s on {cores} cores");
    }
}
