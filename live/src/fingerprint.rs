//! Fingerprinting the host's hardware prefetchers, the way
//! microbenchmark papers do: dependent-load walks with a constant stride
//! through a working set far beyond the caches, against a random chase of
//! the same set. A walk a prefetcher follows costs a fraction of the
//! random chase's memory latency; one it cannot see costs the same.
//!
//! - **stride walks**: line *k·s mod p* for a prime line count *p* (every
//!   stride visits every line once per cycle), strides of −16…+4096 lines:
//!   within a 4 KiB page (|s| < 64) and across pages up to 256 KiB, odd
//!   strides included;
//! - **the verdict** ([`verdict`], a pure function of the measurements): a
//!   stride is *followed* when its walk costs under half the random
//!   chase's latency; from the followed strides, whether a prefetcher
//!   exists, follows descending walks, reaches beyond a page, and the
//!   largest stride it follows.

use crate::LiveError;
use crate::calibrate::walk_cycle;
use crate::os::PageBuf;

/// The strides walked (lines).
pub const STRIDES: [i64; 22] = [
    1, 2, 3, 4, 5, 8, 16, 17, 32, 63, 64, 65, 97, 128, 256, 512, 1024, 4096, -1, -2, -4, -16,
];

/// A walk is followed when it costs under this share of the random chase.
pub const FOLLOWED: f64 = 0.5;

/// What was measured: the random chase and each stride walk (ns per load).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    /// Working set (bytes).
    pub bytes: u64,
    /// Share of the walks' buffer the kernel backed with huge pages (the
    /// walks are asked for them so that TLB misses, which a random chase
    /// takes and a short-stride walk does not, do not pass for prefetching).
    pub huge_share: f64,
    pub random_ns: f64,
    /// (stride in lines, ns per load).
    pub walks: Vec<(i64, f64)>,
}

/// What the measurements say of the host's prefetchers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Some stride walk is followed.
    pub detected: bool,
    /// The strides followed (lines), in the order measured.
    pub followed: Vec<i64>,
    /// A descending walk is followed.
    pub backward: bool,
    /// A walk of a page (64 lines) or more per step is followed.
    pub crosses_pages: bool,
    /// The largest stride followed (lines; 0 when none).
    pub max_stride_lines: u64,
    /// The random chase's latency over the unit-stride walk's.
    pub unit_speedup: f64,
}

/// The largest prime ≤ n (n ≥ 2).
fn prime_at_most(n: usize) -> usize {
    let is_prime = |k: usize| {
        k >= 2
            && (2..)
                .take_while(|d| d * d <= k)
                .all(|d| !k.is_multiple_of(d))
    };
    (2..=n.max(2)).rev().find(|&k| is_prime(k)).unwrap_or(2)
}

/// The cyclic order of a stride-`s` walk over `p` lines (`p` prime, so
/// every stride not a multiple of `p` visits every line).
fn stride_order(p: usize, s: i64) -> Vec<u32> {
    let step = s.rem_euclid(p as i64) as usize;
    let mut at = 0usize;
    (0..p)
        .map(|_| {
            let here = at as u32;
            at = (at + step) % p;
            here
        })
        .collect()
}

/// Measures the walks of [`STRIDES`] and a random chase over `bytes`,
/// `loads` loads per run, the median of `repeats` runs each.
pub fn fingerprint(
    bytes: u64,
    loads: u64,
    repeats: usize,
    seed: u64,
) -> Result<Fingerprint, LiveError> {
    let p = prime_at_most((bytes / 64) as usize);
    let before = crate::os::anon_huge_bytes();
    let mut buf = PageBuf::huge(p * 64)?;
    let (random, _) = crate::calibrate::chase_huge(p as u64 * 64, loads, repeats, seed)?;
    let random = random.ns;
    let mut walks = Vec::new();
    for s in STRIDES {
        let (ns, _) = walk_cycle(&mut buf, &stride_order(p, s), loads, repeats);
        walks.push((s, ns));
    }
    let huge = crate::os::anon_huge_bytes().saturating_sub(before) as f64 / buf.len() as f64;
    Ok(Fingerprint {
        bytes: p as u64 * 64,
        huge_share: huge.min(1.0),
        random_ns: random,
        walks,
    })
}

/// The verdict on a fingerprint (pure: the same measurements, the same
/// verdict).
pub fn verdict(f: &Fingerprint) -> Verdict {
    let followed: Vec<i64> = f
        .walks
        .iter()
        .filter(|(_, ns)| *ns < FOLLOWED * f.random_ns)
        .map(|&(s, _)| s)
        .collect();
    let unit = f
        .walks
        .iter()
        .find(|w| w.0 == 1)
        .map_or(f.random_ns, |w| w.1);
    Verdict {
        detected: !followed.is_empty(),
        backward: followed.iter().any(|&s| s < 0),
        crosses_pages: followed.iter().any(|&s| s.unsigned_abs() >= 64),
        max_stride_lines: followed.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0),
        unit_speedup: if unit > 0.0 { f.random_ns / unit } else { 0.0 },
        followed,
    }
}

/// Writes the verdict into a machine description (`core.prefetch`, the
/// measurements in the file `measured`); returns a note for its sources.
/// Pure, like [`crate::calibrate::apply`]: the same fingerprint gives the
/// same machine file.
pub fn apply(spec: &mut sim::machine::MachineSpec, f: &Fingerprint, measured: &str) -> String {
    let v = verdict(f);
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    spec.core.prefetch = Some(sim::machine::HostPrefetch {
        detected: v.detected,
        followed_strides: v.followed.clone(),
        backward: v.backward,
        crosses_pages: v.crosses_pages,
        max_stride_lines: v.max_stride_lines,
        unit_speedup: r2(v.unit_speedup),
        measured: measured.to_string(),
    });
    let unit = f
        .walks
        .iter()
        .find(|w| w.0 == 1)
        .map_or(f.random_ns, |w| w.1);
    format!(
        "Prefetchers (stride walks over {} B, {:.0}% huge pages): a random chase {:.1} ns, a unit-stride walk {:.1} ns; {} of {} strides followed (under {:.0}% of the random chase), up to {} lines{}{}; measurements in {measured}.",
        f.bytes,
        f.huge_share * 100.0,
        f.random_ns,
        unit,
        v.followed.len(),
        f.walks.len(),
        FOLLOWED * 100.0,
        v.max_stride_lines,
        if v.backward { ", descending too" } else { "" },
        if v.crosses_pages {
            ", across pages"
        } else {
            ""
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_orders_are_single_cycles_over_every_line() {
        let p = prime_at_most(1000);
        assert_eq!(p, 997);
        for s in STRIDES {
            let o = stride_order(p, s);
            let mut seen = vec![false; p];
            for &l in &o {
                assert!(
                    !std::mem::replace(&mut seen[l as usize], true),
                    "stride {s}"
                );
            }
            assert_eq!(
                (o[1] as i64 - o[0] as i64).rem_euclid(p as i64),
                s.rem_euclid(p as i64)
            );
        }
    }

    #[test]
    fn the_verdict_is_a_pure_function_of_the_measurements() {
        let f = Fingerprint {
            bytes: 1 << 26,
            huge_share: 1.0,
            random_ns: 100.0,
            walks: vec![
                (1, 5.0),
                (2, 6.0),
                (16, 30.0),
                (64, 49.0),
                (97, 80.0),
                (-1, 7.0),
                (-16, 90.0),
            ],
        };
        let v = verdict(&f);
        assert_eq!(v.followed, [1, 2, 16, 64, -1]);
        assert!(v.detected && v.backward && v.crosses_pages);
        assert_eq!(v.max_stride_lines, 64);
        assert!((v.unit_speedup - 20.0).abs() < 1e-9);
        assert_eq!(verdict(&f), v);
        let none = Fingerprint {
            walks: vec![(1, 95.0), (-1, 99.0)],
            ..f
        };
        let v = verdict(&none);
        assert!(!v.detected && !v.backward && !v.crosses_pages && v.max_stride_lines == 0);
    }
}
