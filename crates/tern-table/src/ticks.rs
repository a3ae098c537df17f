//! A counter for timing short intervals, such as one command's run: the
//! CPU's time-stamp counter where it runs at a constant rate (`RDTSC`, a
//! few nanoseconds), where a reading of the monotonic clock is a vDSO call
//! of tens. Its rate is measured against the monotonic clock as the
//! process runs ([`ns_per_tick`]), so nothing is calibrated at start-up.
//!
//! Elsewhere (another architecture, a TSC that may stop or change rate,
//! Miri) [`rate_known`] is false and callers read the monotonic clock.

use std::sync::OnceLock;
use std::time::Instant;

/// The counter now. Only differences between readings mean anything, and
/// only once [`ns_per_tick`] gives their rate.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: RDTSC only reads the time-stamp counter, which every x86_64
    // CPU has; it touches no memory.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    0
}

/// Whether the counter runs at one rate in every power state and on every
/// CPU of the machine: the invariant TSC of CPUID leaf 0x80000007 (EDX bit
/// 8), which Linux reports as `nonstop_tsc`. Read once.
pub fn rate_known() -> bool {
    static KNOWN: OnceLock<bool> = OnceLock::new();
    *KNOWN.get_or_init(|| {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            // Leaf 0x80000000 says how far the extended leaves go before
            // 0x80000007 is asked.
            let max = core::arch::x86_64::__cpuid(0x8000_0000).eax;
            max >= 0x8000_0007 && core::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        false
    })
}

/// The first pair of readings, counter and monotonic clock, that every
/// later rate is measured from.
fn origin() -> (Instant, u64) {
    static ORIGIN: OnceLock<(Instant, u64)> = OnceLock::new();
    *ORIGIN.get_or_init(|| (Instant::now(), now()))
}

/// Nanoseconds per tick, from the counter `ticks` read at monotonic time
/// `at` (read together by the caller) and the first pair any thread read:
/// None while less than [`MIN_BASELINE_NS`] lies between them (the rate
/// would be coarse), when the counter's rate is not known to be constant,
/// or when the readings make no sense (the counter went back).
pub fn ns_per_tick(at: Instant, ticks: u64) -> Option<f64> {
    if !rate_known() {
        return None;
    }
    let (t0, c0) = origin();
    let ns = at.checked_duration_since(t0)?.as_nanos() as f64;
    let dt = ticks.checked_sub(c0)? as f64;
    (ns >= MIN_BASELINE_NS && dt > 0.0).then(|| ns / dt)
}

/// The shortest baseline a rate is taken from: 10 ms, over which the two
/// readings' own jitter (well under a microsecond) is below 0.01%.
pub const MIN_BASELINE_NS: f64 = 10_000_000.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// With a constant-rate counter, intervals measured in ticks agree with
    /// the monotonic clock's (within 1% plus the readings' jitter) once a
    /// baseline exists; without one there is no rate.
    #[test]
    fn the_rate_follows_the_monotonic_clock() {
        let _ = origin();
        if !rate_known() {
            assert_eq!(ns_per_tick(Instant::now(), now()), None);
            return;
        }
        let start = Instant::now();
        while start.elapsed().as_nanos() < 2 * MIN_BASELINE_NS as u128 {
            std::hint::spin_loop();
        }
        let (a, ca) = (Instant::now(), now());
        let rate = ns_per_tick(a, ca).expect("a rate after the baseline");
        while a.elapsed().as_millis() < 5 {
            std::hint::spin_loop();
        }
        let (b, cb) = (Instant::now(), now());
        let by_clock = b.duration_since(a).as_nanos() as f64;
        let by_ticks = (cb - ca) as f64 * rate;
        assert!((by_ticks - by_clock).abs() < by_clock * 0.01 + 20_000.0, "{by_ticks} vs {by_clock}");
        // The counter going back gives no rate, never a negative one.
        assert_eq!(ns_per_tick(b, 0), None);
    }
}
