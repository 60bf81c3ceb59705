//! Estimates from a systematic sample of measurement units (SMARTS,
//! Wunderlich et al., ISCA 2003): each metric is a ratio of sums over the
//! units (latency over accesses, misses over lookups, bytes over time), so
//! it is estimated by the ratio of the sample's sums, with the standard
//! error of a ratio estimator (Cochran, *Sampling Techniques*, §6.4):
//!
//! `R = Σy / Σx`, `SE(R)² = Σ(yᵢ − R·xᵢ)² / (n(n−1)·x̄²)`
//!
//! and its interval `R ± z·SE(R)`. The coefficient of variation is the
//! units' (`sd(y − R·x) / (x̄·R)`), and the units needed for `±rel` at `z`
//! are `(z·CV/rel)²` (SMARTS' sample-size rule). Quantiles of the pooled
//! latencies get a bootstrap interval over the units (resampled with a
//! fixed seed, so results repeat). Pure functions, no state.

use serde::{Deserialize, Serialize};

/// One metric's estimate from the units.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub estimate: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The units' coefficient of variation (0 when it cannot be computed).
    pub cv: f64,
    /// Units that would give ±3% at the stated confidence, from `cv`.
    pub units_for_3pct: u64,
}

/// `z` for 99.7% confidence: three standard errors, as SMARTS states it.
pub const Z_997: f64 = 3.0;

/// Relative half-width targeted by [`Estimate::units_for_3pct`].
const TARGET_REL: f64 = 0.03;

/// The ratio estimate of `Σy/Σx` over units `(y, x)` with its interval at
/// `z` standard errors. No units, or `Σx = 0`: all zeros.
pub fn ratio(units: &[(f64, f64)], z: f64) -> Estimate {
    let n = units.len();
    let sx: f64 = units.iter().map(|u| u.1).sum();
    let sy: f64 = units.iter().map(|u| u.0).sum();
    if n == 0 || sx <= 0.0 {
        return Estimate::default();
    }
    let r = sy / sx;
    if n < 2 {
        return Estimate {
            estimate: r,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            ..Estimate::default()
        };
    }
    let xbar = sx / n as f64;
    let ss: f64 = units.iter().map(|&(y, x)| (y - r * x).powi(2)).sum();
    let sd = (ss / (n as f64 - 1.0)).sqrt();
    let se = sd / (n as f64).sqrt() / xbar;
    let cv = if r != 0.0 { sd / xbar / r.abs() } else { 0.0 };
    Estimate {
        estimate: r,
        ci_low: r - z * se,
        ci_high: r + z * se,
        cv,
        units_for_3pct: ((z * cv / TARGET_REL).powi(2)).ceil() as u64,
    }
}

/// The `q` quantile (nearest rank) of the pooled values of `units` (each
/// unit's values sorted), with a bootstrap interval over units: `resamples`
/// draws of as many units with replacement (xorshift from `seed`), the
/// interval's ends the draws' quantiles at the two tails that `z` leaves
/// (99.7% for z = 3). No values: all zeros.
pub fn quantile(units: &[Vec<u64>], q: f64, z: f64, resamples: usize, seed: u64) -> Estimate {
    let all: usize = units.iter().map(Vec::len).sum();
    if all == 0 {
        return Estimate::default();
    }
    let weights = vec![1u32; units.len()];
    let estimate = weighted_quantile(units, &weights, q) as f64;
    let mut draws = Vec::with_capacity(resamples);
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut w = vec![0u32; units.len()];
    for _ in 0..resamples {
        w.iter_mut().for_each(|x| *x = 0);
        for _ in 0..units.len() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            w[(state % units.len() as u64) as usize] += 1;
        }
        draws.push(weighted_quantile(units, &w, q));
    }
    draws.sort_unstable();
    // Two-sided tail mass outside ±z standard deviations of a normal.
    let tail = erfc(z / std::f64::consts::SQRT_2) / 2.0;
    let at = |p: f64| -> f64 {
        if draws.is_empty() {
            return estimate;
        }
        let i = ((p * draws.len() as f64).floor() as usize).min(draws.len() - 1);
        draws[i] as f64
    };
    Estimate {
        estimate,
        ci_low: at(tail).min(estimate),
        ci_high: at(1.0 - tail).max(estimate),
        ..Estimate::default()
    }
}

/// The nearest-rank `q` quantile of the values of `units` repeated
/// `weights` times: a binary search over the values for the least `v`
/// with at least `ceil(q·N)` values ≤ `v`.
fn weighted_quantile(units: &[Vec<u64>], weights: &[u32], q: f64) -> u64 {
    let total: u64 = units
        .iter()
        .zip(weights)
        .map(|(u, &w)| u.len() as u64 * w as u64)
        .sum();
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
    let count_le = |v: u64| -> u64 {
        units
            .iter()
            .zip(weights)
            .filter(|(_, w)| **w > 0)
            .map(|(u, &w)| u.partition_point(|&x| x <= v) as u64 * w as u64)
            .sum()
    };
    let (mut lo, mut hi) = (
        0u64,
        units
            .iter()
            .filter_map(|u| u.last())
            .copied()
            .max()
            .unwrap_or(0),
    );
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_le(mid) >= rank {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The complementary error function (Numerical Recipes' `erfcc`, relative
/// error below 1.2e-7): enough for a tail probability.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: y = (2, 4, 9), x = (1, 2, 3): R = 15/6 = 2.5;
    /// residuals (−0.5, −1, 1.5), Σd² = 3.5, sd = √1.75, x̄ = 2,
    /// SE = √1.75 / √3 / 2, CV = √1.75 / 2 / 2.5.
    #[test]
    fn ratio_matches_the_hand_computation() {
        let e = ratio(&[(2.0, 1.0), (4.0, 2.0), (9.0, 3.0)], 3.0);
        let se = 1.75f64.sqrt() / 3f64.sqrt() / 2.0;
        assert!((e.estimate - 2.5).abs() < 1e-12);
        assert!((e.ci_low - (2.5 - 3.0 * se)).abs() < 1e-12);
        assert!((e.ci_high - (2.5 + 3.0 * se)).abs() < 1e-12);
        let cv = 1.75f64.sqrt() / 2.0 / 2.5;
        assert!((e.cv - cv).abs() < 1e-12);
        assert_eq!(
            e.units_for_3pct,
            ((3.0 * cv / 0.03f64).powi(2)).ceil() as u64
        );
    }

    /// Units that agree exactly give a zero-width interval and need one unit.
    #[test]
    fn identical_units_give_no_spread() {
        let e = ratio(&[(5.0, 1.0); 4], 3.0);
        assert_eq!(
            (e.estimate, e.ci_low, e.ci_high, e.cv),
            (5.0, 5.0, 5.0, 0.0)
        );
        assert_eq!(e.units_for_3pct, 0);
    }

    /// One unit has no spread to measure: an unbounded interval, not a
    /// zero-width one.
    #[test]
    fn one_unit_is_unbounded() {
        let e = ratio(&[(5.0, 1.0)], 3.0);
        assert!(e.ci_low.is_infinite() && e.ci_high.is_infinite());
    }

    /// The pooled quantile is the nearest-rank one of all values; the
    /// bootstrap interval holds it and repeats for a seed.
    #[test]
    fn quantile_is_nearest_rank_of_the_pool() {
        let units = vec![vec![1, 2, 3, 4], vec![10, 20, 30, 40], vec![5, 6, 7, 8]];
        let mut pool: Vec<u64> = units.iter().flatten().copied().collect();
        pool.sort_unstable();
        for q in [0.1, 0.5, 0.9, 0.99] {
            let rank = (q * pool.len() as f64).ceil() as usize;
            let e = quantile(&units, q, 3.0, 50, 7);
            assert_eq!(e.estimate, pool[rank - 1] as f64, "q {q}");
            assert!(e.ci_low <= e.estimate && e.estimate <= e.ci_high);
            assert_eq!(e, quantile(&units, q, 3.0, 50, 7));
        }
    }

    /// erfc at known points: erfc(0) = 1, erfc(3/√2) = 0.0026998.
    #[test]
    fn erfc_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-6);
        assert!((erfc(3.0 / std::f64::consts::SQRT_2) - 0.002_699_8).abs() < 1e-6);
    }
}
