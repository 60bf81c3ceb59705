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
//! latencies get Woodruff's interval, through the same ratio estimator.
//! Pure functions, no state.

use std::collections::BTreeMap;

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
/// unit's values sorted), with Woodruff's interval (1952): the pooled
/// distribution function at the estimate is a ratio over the units
/// (values ≤ it over values), its interval at `z` is [`ratio`]'s, and the
/// quantile's interval is the pooled quantiles at that interval's ends.
/// `cv` is the coefficient of variation that interval implies
/// (half-width / z · √units), so `units_for_3pct` is the units that would
/// shrink it to ±3%. No values: all zeros.
pub fn quantile(units: &[&[u64]], q: f64, z: f64) -> Estimate {
    if units.iter().all(|u| u.is_empty()) {
        return Estimate::default();
    }
    let estimate = pooled_quantile(units, q);
    let pairs: Vec<(f64, f64)> = units
        .iter()
        .map(|u| (u.partition_point(|&x| x <= estimate) as f64, u.len() as f64))
        .collect();
    let f = ratio(&pairs, z);
    let lo = pooled_quantile(units, f.ci_low.clamp(0.0, 1.0)).min(estimate) as f64;
    let hi = pooled_quantile(units, f.ci_high.clamp(0.0, 1.0)).max(estimate) as f64;
    let estimate = estimate as f64;
    let half = (hi - lo) / 2.0 / estimate.max(f64::MIN_POSITIVE);
    Estimate {
        estimate,
        ci_low: lo,
        ci_high: hi,
        cv: half / z * (units.len() as f64).sqrt(),
        units_for_3pct: (units.len() as f64 * (half / TARGET_REL).powi(2)).ceil() as u64,
    }
}

/// The nearest-rank `q` quantile of the pooled values of `units`: a
/// binary search over the values for the least `v` with at least
/// `ceil(q·N)` values ≤ `v`.
fn pooled_quantile(units: &[&[u64]], q: f64) -> u64 {
    let total: u64 = units.iter().map(|u| u.len() as u64).sum();
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total.max(1));
    let count_le = |v: u64| -> u64 {
        units
            .iter()
            .map(|u| u.partition_point(|&x| x <= v) as u64)
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

/// The ratio estimate over `units` of `f`'s `(y, x)` at 99.7%, or `None`
/// when no unit has a denominator (not estimable, not 0).
pub fn ratio_over<U>(units: &[U], f: impl Fn(&U) -> (f64, f64)) -> Option<Estimate> {
    let pairs: Vec<(f64, f64)> = units.iter().map(f).collect();
    let any = pairs.iter().any(|p| p.1 > 0.0);
    any.then(|| ratio(&pairs, Z_997))
}

/// A sampled run's metrics: `named` ratio estimates (`None`: no unit has a
/// denominator, so not estimable rather than 0) and the pooled p50 and p99
/// of the measured latencies `lats` (unit index, ps) over `units` (the
/// indices of the units counted, ascending; a unit without latencies adds
/// an empty slice), in ns, at 99.7%. Returns the estimates and the names
/// not estimated, sorted (the quantiles too when no latency was measured).
pub fn sampled_metrics(
    named: Vec<(String, Option<Estimate>)>,
    lats: &[(u64, u64)],
    units: &[u64],
) -> (BTreeMap<String, Estimate>, Vec<String>) {
    let mut metrics = BTreeMap::new();
    let mut not_estimated = Vec::new();
    for (name, e) in named {
        match e {
            Some(e) => {
                metrics.insert(name, e);
            }
            None => not_estimated.push(name),
        }
    }
    let mut lats = lats.to_vec();
    lats.sort_unstable();
    let values: Vec<u64> = lats.iter().map(|x| x.1).collect();
    let mut slices: Vec<&[u64]> = Vec::with_capacity(units.len());
    let mut i = 0;
    for &k in units {
        while i < lats.len() && lats[i].0 < k {
            i += 1;
        }
        let start = i;
        while i < lats.len() && lats[i].0 == k {
            i += 1;
        }
        slices.push(&values[start..i]);
    }
    for (name, q) in [("latency_p50_ns", 0.5), ("latency_p99_ns", 0.99)] {
        if values.is_empty() {
            not_estimated.push(name.to_string());
            continue;
        }
        let mut e = quantile(&slices, q, Z_997);
        for x in [&mut e.estimate, &mut e.ci_low, &mut e.ci_high] {
            *x /= 1000.0;
        }
        metrics.insert(name.into(), e);
    }
    not_estimated.sort();
    (metrics, not_estimated)
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

    /// The pooled quantile is the nearest-rank one of all values.
    #[test]
    fn quantile_is_nearest_rank_of_the_pool() {
        let units: Vec<&[u64]> = vec![&[1, 2, 3, 4], &[10, 20, 30, 40], &[5, 6, 7, 8]];
        let mut pool: Vec<u64> = units.iter().flat_map(|u| u.iter()).copied().collect();
        pool.sort_unstable();
        for q in [0.1, 0.5, 0.9, 0.99] {
            let rank = (q * pool.len() as f64).ceil() as usize;
            let e = quantile(&units, q, 3.0);
            assert_eq!(e.estimate, pool[rank - 1] as f64, "q {q}");
            assert!(e.ci_low <= e.estimate && e.estimate <= e.ci_high);
        }
    }

    /// Woodruff by hand: the median of the pool above is 6; values ≤ 6 per
    /// unit (4, 0, 2) of 4 each: F = 0.5, residuals (2, −2, 0), sd 2,
    /// SE = 2/√3/4 = 0.2887. At z = 1, F in [0.2113, 0.7887]: pooled
    /// ranks ceil(2.54) = 3 and ceil(9.46) = 10 of 12, values 3 and 20.
    /// At z = 3 the interval covers F = 0..1: the least and greatest values.
    #[test]
    fn woodruff_interval_by_hand() {
        let units: Vec<&[u64]> = vec![&[1, 2, 3, 4], &[10, 20, 30, 40], &[5, 6, 7, 8]];
        let e = quantile(&units, 0.5, 1.0);
        assert_eq!((e.estimate, e.ci_low, e.ci_high), (6.0, 3.0, 20.0));
        let half = (20.0 - 3.0) / 2.0 / 6.0;
        assert!((e.cv - half * 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(
            e.units_for_3pct,
            (3.0 * (half / 0.03f64).powi(2)).ceil() as u64
        );
        let e = quantile(&units, 0.5, 3.0);
        assert_eq!((e.ci_low, e.ci_high), (1.0, 40.0));
    }
}
