//! Calibration microbenchmarks in the manner of lmbench's `lat_mem_rd`,
//! Intel MLC and core-to-core-latency:
//!
//! - **pointer chase**: one random cycle through every 64-byte line of a
//!   working set (Sattolo's algorithm, so hardware prefetchers cannot follow
//!   it), dependent loads, ≥ the given count per point, the median of
//!   repeats; latency vs working-set size and the sizes where it steps;
//! - **core-to-core**: two pinned threads bouncing one cache line with
//!   compare-and-swap; half a round trip is one transfer;
//! - **bandwidth**: streaming reads of a large buffer by 1..N pinned threads.
//!
//! Timing uses the monotonic clock (`std::time::Instant`) around at least
//! 10⁵ operations, never around single loads; medians absorb preemption.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::LiveError;
use crate::os::{PageBuf, pin_current_thread};

/// Latency (ns per dependent load) for one working-set size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    pub bytes: u64,
    pub ns: f64,
    /// Spread of the repeats: (max − min) / median.
    pub spread: f64,
}

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// ns per load of a pointer chase over `bytes`, median of `repeats` runs of `loads` loads.
pub fn chase(bytes: u64, loads: u64, repeats: usize, seed: u64) -> Result<Point, LiveError> {
    const LINE: usize = 64;
    let lines = (bytes as usize / LINE).max(2);
    let mut buf = PageBuf::new(lines * LINE)?;
    let words = buf.as_slice_u64();
    // Sattolo: a single random cycle over all lines.
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut s = seed;
    for i in (1..lines).rev() {
        let j = (splitmix(&mut s) % i as u64) as usize;
        order.swap(i, j);
    }
    let stride = LINE / 8;
    for k in 0..lines {
        let from = order[k] as usize;
        let to = order[(k + 1) % lines] as usize;
        words[from * stride] = (to * stride) as u64;
    }
    let mut times = Vec::with_capacity(repeats);
    let mut p = 0usize;
    // Warm: one pass over the cycle.
    for _ in 0..lines.min(loads as usize) {
        p = words[p] as usize;
    }
    for _ in 0..repeats {
        let t = Instant::now();
        for _ in 0..loads {
            // SAFETY: every stored index is a valid word index of `words`.
            p = unsafe { *words.get_unchecked(p) } as usize;
        }
        times.push(t.elapsed().as_nanos() as f64 / loads as f64);
    }
    std::hint::black_box(p);
    times.sort_by(f64::total_cmp);
    let med = times[times.len() / 2];
    Ok(Point {
        bytes,
        ns: med,
        spread: (times[times.len() - 1] - times[0]) / med,
    })
}

/// The default sweep: 8 KiB to `max` bytes, four points per doubling.
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = 8192f64;
    while s <= max as f64 {
        v.push((s as u64) / 64 * 64);
        s *= 2f64.powf(0.25);
    }
    v
}

/// A plateau of the latency curve: a cache level or memory.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Level {
    /// Median latency of the plateau (ns).
    pub ns: f64,
    /// The largest working set still on this plateau (its effective capacity).
    pub capacity: u64,
    /// Curve points on the plateau.
    pub points: usize,
}

/// Fewest points a plateau needs (with four sizes per doubling a real level
/// spans several; two points at a transition are a ramp).
pub const MIN_PLATEAU: usize = 3;

/// Splits the curve into plateaus. A point within `jump` (e.g. 0.4 = 40%)
/// of the current plateau's median so far joins it (plateaus drift up a
/// little as a level fills); a point above that starts
/// a new plateau only if the next point is within `jump` of it too (a flat
/// region); otherwise it is on the ramp between levels and is skipped.
pub fn levels(curve: &[Point], jump: f64) -> Vec<Level> {
    fn close(cur: &[&Point]) -> Level {
        let mut ns: Vec<f64> = cur.iter().map(|q| q.ns).collect();
        ns.sort_by(f64::total_cmp);
        Level {
            ns: ns[ns.len() / 2],
            capacity: cur.last().map_or(0, |q| q.bytes),
            points: cur.len(),
        }
    }
    let mut out: Vec<Level> = Vec::new();
    let mut cur: Vec<&Point> = Vec::new();
    for (i, p) in curve.iter().enumerate() {
        if cur.is_empty() {
            cur.push(p);
            continue;
        }
        let b = close(&cur).ns;
        if p.ns <= b * (1.0 + jump) {
            cur.push(p);
            continue;
        }
        let flat_next = curve
            .get(i + 1)
            .is_none_or(|q| q.ns <= p.ns * (1.0 + jump) && q.ns * (1.0 + jump) >= p.ns);
        if flat_next {
            out.push(close(&cur));
            cur = vec![p];
        }
    }
    if !cur.is_empty() {
        out.push(close(&cur));
    }
    // Short plateaus between longer ones are ramps; the last (memory) stays.
    let last = out.len().saturating_sub(1);
    out.into_iter()
        .enumerate()
        .filter(|&(i, l)| l.points >= MIN_PLATEAU || i == last || i == 0)
        .map(|(_, l)| l)
        .collect()
}

/// Core-to-core transfer latency (ns): two threads pinned to `a` and `b`
/// alternately CAS one line from odd to even and back, `rounds` times.
pub fn core_to_core(a: u32, b: u32, rounds: u64) -> Result<f64, LiveError> {
    #[repr(align(128))]
    struct Line(AtomicU64);
    let line = Arc::new(Line(AtomicU64::new(0)));
    let l2 = line.clone();
    // The allowed set must be known before this thread pins itself.
    crate::os::allowed_cpus()?;
    let other = std::thread::spawn(move || -> Result<(), LiveError> {
        pin_current_thread(b)?;
        for i in 0..rounds {
            while l2
                .0
                .compare_exchange(2 * i + 1, 2 * i + 2, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                std::hint::spin_loop();
            }
        }
        Ok(())
    });
    pin_current_thread(a)?;
    let t = Instant::now();
    let mut spins = 0u64;
    for i in 0..rounds {
        while line
            .0
            .compare_exchange(2 * i, 2 * i + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
            spins += 1;
            // The partner failed (e.g. could not pin): stop instead of spinning forever.
            if spins.is_multiple_of(1 << 20) && other.is_finished() {
                return other
                    .join()
                    .map_err(|_| LiveError::Invalid("ping-pong thread panicked".into()))?
                    .map(|_| f64::NAN);
            }
        }
    }
    while line.0.load(Ordering::Acquire) != 2 * rounds {
        std::hint::spin_loop();
    }
    let ns = t.elapsed().as_nanos() as f64;
    other
        .join()
        .map_err(|_| LiveError::Invalid("ping-pong thread panicked".into()))??;
    // Each round is two transfers of the line.
    Ok(ns / (2 * rounds) as f64)
}

/// Streaming read bandwidth (GB/s) of `threads` threads pinned to `cpus`,
/// each summing its own `bytes_per_thread` buffer `passes` times.
pub fn read_bandwidth(
    cpus: &[u32],
    bytes_per_thread: usize,
    passes: usize,
) -> Result<f64, LiveError> {
    let handles: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::spawn(move || -> Result<(f64, u64), LiveError> {
                pin_current_thread(cpu)?;
                let mut buf = PageBuf::new(bytes_per_thread)?;
                let w = buf.as_slice_u64();
                for (i, x) in w.iter_mut().enumerate() {
                    *x = i as u64;
                }
                let t = Instant::now();
                let mut sum = 0u64;
                for _ in 0..passes {
                    sum = sum.wrapping_add(
                        w.chunks_exact(8)
                            .map(|c| c[0] ^ c[4])
                            .fold(0u64, u64::wrapping_add),
                    );
                }
                std::hint::black_box(sum);
                Ok((t.elapsed().as_secs_f64(), (w.len() * 8 * passes) as u64))
            })
        })
        .collect();
    let mut secs = 0.0f64;
    let mut bytes = 0u64;
    for h in handles {
        let (s, b) = h
            .join()
            .map_err(|_| LiveError::Invalid("bandwidth thread panicked".into()))??;
        secs = secs.max(s);
        bytes += b;
    }
    Ok(bytes as f64 / secs / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plateaus_from_a_synthetic_curve() {
        let mk = |v: &[(u64, f64)]| {
            v.iter()
                .map(|&(bytes, ns)| Point {
                    bytes,
                    ns,
                    spread: 0.0,
                })
                .collect::<Vec<_>>()
        };
        // L1 to 32K at 1.5 ns, a ramp, L2 to 1M at 5, a two-point ramp, LLC to 16M at 20, DRAM 90.
        let c = mk(&[
            (8192, 1.5),
            (16384, 1.5),
            (32768, 1.6),
            (65536, 6.0),
            (131072, 5.0),
            (262144, 5.1),
            (1 << 20, 5.3),
            (3 << 19, 12.0),
            (2 << 20, 13.0),
            (4 << 20, 20.0),
            (8 << 20, 20.5),
            (16 << 20, 21.0),
            (32 << 20, 60.0),
            (64 << 20, 90.0),
            (128 << 20, 92.0),
        ]);
        let l = levels(&c, 0.4);
        let ns: Vec<f64> = l.iter().map(|x| x.ns).collect();
        let cap: Vec<u64> = l.iter().map(|x| x.capacity).collect();
        assert_eq!(cap, vec![32768, 1 << 20, 16 << 20, 128 << 20], "{l:?}");
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "{ns:?}");
    }
}
