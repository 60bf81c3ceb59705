//! The time-stamp counter as a clock: `lfence; rdtsc` to start an interval,
//! `rdtscp; lfence` to end it (loads before it complete before it reads the
//! counter, nothing after it starts early), converted to ns with a rate
//! measured against the monotonic clock — TSC ticks are not core cycles.
//! Used around ≥ 10⁵ operations, never around a single load.
//! On other architectures the monotonic clock stands in.

use std::sync::OnceLock;
use std::time::Instant;

/// A timestamp in TSC ticks (or ns where there is no TSC).
#[inline(always)]
pub fn start() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: lfence and rdtsc have no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    fallback_ns()
}

/// The end of an interval: waits for earlier instructions (`rdtscp`).
#[inline(always)]
pub fn stop() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtscp and lfence have no preconditions on x86_64 CPUs that
    // have rdtscp (every x86_64 CPU since 2006; checked in `rate`).
    unsafe {
        let mut aux = 0u32;
        let t = core::arch::x86_64::__rdtscp(&mut aux);
        core::arch::x86_64::_mm_lfence();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    fallback_ns()
}

#[cfg(not(target_arch = "x86_64"))]
fn fallback_ns() -> u64 {
    static T0: OnceLock<Instant> = OnceLock::new();
    T0.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The clock behind [`start`]/[`stop`]: its rate and how it was measured.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Rate {
    /// Ticks per ns.
    pub ghz: f64,
    /// `"rdtscp"` or `"monotonic"`.
    pub source: &'static str,
    /// Spread of the five 20 ms measurements: (max − min) / median.
    pub spread: f64,
}

/// The TSC rate, measured once per process: the median of five 20 ms
/// windows of ticks against the monotonic clock.
pub fn rate() -> Rate {
    static RATE: OnceLock<Rate> = OnceLock::new();
    *RATE.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("sse2") && has_rdtscp() {
            let mut r: Vec<f64> = (0..5)
                .map(|_| {
                    let (t0, c0) = (Instant::now(), start());
                    while t0.elapsed().as_millis() < 20 {
                        std::hint::spin_loop();
                    }
                    let (c1, t1) = (stop(), t0.elapsed());
                    (c1 - c0) as f64 / t1.as_nanos() as f64
                })
                .collect();
            r.sort_by(f64::total_cmp);
            return Rate {
                ghz: r[2],
                source: "rdtscp",
                spread: (r[4] - r[0]) / r[2],
            };
        }
        Rate {
            ghz: 1.0,
            source: "monotonic",
            spread: 0.0,
        }
    })
}

#[cfg(target_arch = "x86_64")]
fn has_rdtscp() -> bool {
    // CPUID leaf 0x8000_0001, EDX bit 27 (cpuid is safe on every x86_64 CPU).
    let max = core::arch::x86_64::__cpuid(0x8000_0000).eax;
    max >= 0x8000_0001 && core::arch::x86_64::__cpuid(0x8000_0001).edx & (1 << 27) != 0
}

/// ns between two timestamps.
pub fn ns(t0: u64, t1: u64) -> f64 {
    t1.saturating_sub(t0) as f64 / rate().ghz
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tsc_clock_agrees_with_the_monotonic_clock() {
        let r = rate();
        assert!(r.ghz > 0.1 && r.ghz < 10.0, "{r:?}");
        let (i0, t0) = (Instant::now(), start());
        while i0.elapsed().as_millis() < 30 {
            std::hint::spin_loop();
        }
        let (t1, wall) = (stop(), i0.elapsed().as_nanos() as f64);
        let ours = ns(t0, t1);
        // Loose: a VM may deschedule us between the two reads.
        assert!(
            (ours / wall - 1.0).abs() < 0.2,
            "tsc {ours} ns vs {wall} ns"
        );
    }
}
