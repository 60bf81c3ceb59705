//! Statistics over request latencies: percentiles, spikes and their
//! period, bimodality, and paired bootstrap confidence intervals.
//!
//! All functions are deterministic: resampling uses a seeded SplitMix64
//! (replicates in parallel, each from its own point of one stream).

use rayon::prelude::*;
use traces::workload::{SPLITMIX_GAMMA, splitmix};

/// The value at quantile `q` (0..=1) of `sorted` by the nearest-rank method
/// (the smallest value with at least q·n values ≤ it).
pub fn quantile_sorted(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// TP50/90/99/99.9/max and mean of latencies counted in ticks, each in
/// millions of ticks: the unit a caller shows (ms of ns ticks; µs of ps
/// ticks, `crate::compare::Unit`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Percentiles {
    pub n: usize,
    pub mean: f64,
    pub tp50: f64,
    pub tp90: f64,
    pub tp99: f64,
    pub tp999: f64,
    pub max: f64,
}

pub fn percentiles(ticks: &[u64]) -> Percentiles {
    let mut s = ticks.to_vec();
    s.sort_unstable();
    percentiles_sorted(&s)
}

/// [`percentiles`] of ticks already sorted (no copy).
pub fn percentiles_sorted(s: &[u64]) -> Percentiles {
    debug_assert!(s.is_sorted());
    let ms = |t: u64| t as f64 / 1e6;
    Percentiles {
        n: s.len(),
        mean: if s.is_empty() {
            0.0
        } else {
            s.iter().map(|&x| x as f64).sum::<f64>() / s.len() as f64 / 1e6
        },
        tp50: ms(quantile_sorted(s, 0.5)),
        tp90: ms(quantile_sorted(s, 0.9)),
        tp99: ms(quantile_sorted(s, 0.99)),
        tp999: ms(quantile_sorted(s, 0.999)),
        max: ms(s.last().copied().unwrap_or(0)),
    }
}

/// Share of requests slower than `k` × TP50.
pub fn spike_share(lat_ns: &[u64], k: f64) -> f64 {
    if lat_ns.is_empty() {
        return 0.0;
    }
    // The median by selection: the element a sort would put at TP50's
    // rank (`quantile_sorted`), without sorting the rest.
    let mut s = lat_ns.to_vec();
    let rank = ((0.5 * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1;
    let cut = k * *s.select_nth_unstable(rank).1 as f64;
    lat_ns.iter().filter(|&&x| x as f64 > cut).count() as f64 / lat_ns.len() as f64
}

/// [`spike_share`] of latencies already sorted (no copy).
pub fn spike_share_sorted(sorted: &[u64], k: f64) -> f64 {
    debug_assert!(sorted.is_sorted());
    if sorted.is_empty() {
        return 0.0;
    }
    let cut = k * quantile_sorted(sorted, 0.5) as f64;
    // Those above the cut are the sorted tail (none if the cut is NaN).
    let above = sorted.iter().rev().take_while(|&&x| x as f64 > cut).count();
    above as f64 / sorted.len() as f64
}

/// Autocorrelation of the spike indicator x (latency > k × TP50) by lag.
///
/// For an indicator, sum (x_i - m)(x_{i+l} - m) over i < n - l is
/// S_l - m (A_l + B_l) + (n - l) m², with S_l the spikes l apart (the
/// popcount of x AND x shifted by l), A_l the spikes in 0..n-l and B_l those
/// in l..n. One lag costs n/64 word operations, not n floating-point steps,
/// and S, A, B are exact integers.
struct SpikeAcf {
    bits: Vec<u64>,
    /// prefix[i] = spikes among the first i requests.
    prefix: Vec<usize>,
    mean: f64,
    var: f64,
}

impl SpikeAcf {
    /// None when there is no variance (no spike, or nothing but spikes).
    fn new(lat_ns: &[u64], k: f64) -> Option<SpikeAcf> {
        let n = lat_ns.len();
        let mut s = lat_ns.to_vec();
        s.sort_unstable();
        let cut = k * quantile_sorted(&s, 0.5) as f64;
        let mut bits = vec![0u64; n.div_ceil(64) + 1];
        let mut prefix = Vec::with_capacity(n + 1);
        prefix.push(0usize);
        for (i, &v) in lat_ns.iter().enumerate() {
            let b = v as f64 > cut;
            bits[i / 64] |= u64::from(b) << (i % 64);
            prefix.push(prefix[i] + usize::from(b));
        }
        let mean = prefix[n] as f64 / n as f64;
        let var =
            prefix[n] as f64 * (1.0 - mean) * (1.0 - mean) + (n - prefix[n]) as f64 * mean * mean;
        (var > 0.0).then_some(SpikeAcf {
            bits,
            prefix,
            mean,
            var,
        })
    }

    /// The autocorrelation at `lag` (1 ≤ lag < n).
    fn at(&self, lag: usize) -> f64 {
        let (bits, n) = (&self.bits, self.prefix.len() - 1);
        let (ws, bs) = (lag / 64, lag % 64);
        let mut both = 0u64;
        for w in 0..bits.len() - ws {
            let hi = if bs == 0 || w + ws + 1 >= bits.len() {
                0
            } else {
                bits[w + ws + 1] << (64 - bs)
            };
            both += u64::from((bits[w] & (bits[w + ws] >> bs | hi)).count_ones());
        }
        let a = self.prefix[n - lag] as f64;
        let b = (self.prefix[n] - self.prefix[lag]) as f64;
        let m = self.mean;
        (both as f64 - m * (a + b) + (n - lag) as f64 * m * m) / self.var
    }
}

/// The period of spikes in request order ("every N requests"): the lag in
/// `2..=max_lag` with the highest autocorrelation of the spike indicator
/// (latency > k × TP50), if that correlation is at least `min_corr`.
/// `lat_ns` must be in request (arrival) order.
pub fn spike_period(lat_ns: &[u64], k: f64, max_lag: usize, min_corr: f64) -> Option<(usize, f64)> {
    let n = lat_ns.len();
    if n < 4 {
        return None;
    }
    let acf = SpikeAcf::new(lat_ns, k)?;
    let acf = |lag| acf.at(lag);
    // Spikes come in bursts, so the autocorrelation is high at small lags
    // whatever the period. Skip the burst: search from the first lag where
    // it has fallen below half its lag-1 value, and take the highest local
    // peak after that.
    let max_lag = max_lag.min(n / 2);
    let a1 = acf(1);
    let mut start = 2;
    while start <= max_lag && acf(start) >= 0.5 * a1 {
        start += 1;
    }
    let vals: Vec<f64> = (start..=max_lag + 1)
        .map(|l| if l <= max_lag { acf(l) } else { f64::MIN })
        .collect();
    let mut best: Option<(usize, f64)> = None;
    for i in 1..vals.len().saturating_sub(1) {
        let (a, lag) = (vals[i], start + i);
        let peak = a >= vals[i - 1] && a >= vals[i + 1];
        if peak && best.is_none_or(|(_, b)| a > b) {
            best = Some((lag, a));
        }
    }
    best.filter(|&(_, a)| a >= min_corr)
}

/// Sarle's bimodality coefficient b = (γ² + 1) / (κ + 3(n−1)²/((n−2)(n−3)))
/// with sample skewness γ and excess kurtosis κ; b > 5/9 ≈ 0.555 suggests
/// a bimodal (or very skewed) distribution. 5/9 for a uniform distribution.
pub fn bimodality(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if n < 4.0 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / n;
    let m2 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let m3 = x.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / n;
    let m4 = x.iter().map(|v| (v - mean).powi(4)).sum::<f64>() / n;
    if m2 == 0.0 {
        return 0.0;
    }
    // Bias-corrected sample skewness and excess kurtosis.
    let g1 = m3 / m2.powf(1.5);
    let skew = g1 * (n * (n - 1.0)).sqrt() / (n - 2.0);
    let g2 = m4 / (m2 * m2) - 3.0;
    let kurt = (n - 1.0) / ((n - 2.0) * (n - 3.0)) * ((n + 1.0) * g2 + 6.0);
    (skew * skew + 1.0) / (kurt + 3.0 * (n - 1.0).powi(2) / ((n - 2.0) * (n - 3.0)))
}

/// Quantile by selection (no full sort), nearest-rank, of a scratch vector.
fn select_quantile(v: &mut [u64], q: f64) -> u64 {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    *v.select_nth_unstable(rank).1
}

/// 95% percentile-bootstrap CI (ms) of the paired difference in quantile `q`
/// between `b` and `a`, whose entries are paired by index (the same request
/// under two policies): resample indices with replacement `reps` times.
/// Returns (point estimate, low, high).
pub fn paired_bootstrap_diff(
    a: &[u64],
    b: &[u64],
    q: f64,
    reps: usize,
    seed: u64,
) -> (f64, f64, f64) {
    assert_eq!(a.len(), b.len(), "paired samples");
    let n = a.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let point = {
        let (mut x, mut y) = (a.to_vec(), b.to_vec());
        (select_quantile(&mut y, q) as f64 - select_quantile(&mut x, q) as f64) / 1e6
    };
    // A resample is a multiplicity per request (the same draws as indexing
    // a[j], b[j] for n random j). Its k-th smallest value is found by walking
    // the requests from the largest value down, adding multiplicities, until
    // n - k + 1 are passed: a few hundred steps for a tail quantile, where
    // gathering and selecting would touch all n twice. Replicate r's draws
    // start where a sequential stream would be after r·n draws (splitmix
    // steps its state by a constant), so replicates run in parallel and give
    // the same numbers as one after another.
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    let from_top = n - rank + 1;
    let desc = |v: &[u64]| {
        let mut o: Vec<u32> = (0..n as u32).collect();
        o.sort_unstable_by_key(|&i| std::cmp::Reverse(v[i as usize]));
        o
    };
    let (oa, ob) = (desc(a), desc(b));
    let walk = |order: &[u32], v: &[u64], counts: &[u32]| -> u64 {
        let mut seen = 0usize;
        for &i in order {
            seen += counts[i as usize] as usize;
            if seen >= from_top {
                return v[i as usize];
            }
        }
        v[order[n - 1] as usize]
    };
    let mut diffs: Vec<f64> = (0..reps)
        .into_par_iter()
        .map_init(
            || vec![0u32; n],
            |counts, r| {
                counts.fill(0);
                let mut state = seed
                    .wrapping_add(SPLITMIX_GAMMA.wrapping_mul((r as u64).wrapping_mul(n as u64)));
                for _ in 0..n {
                    counts[(splitmix(&mut state) % n as u64) as usize] += 1;
                }
                (walk(&ob, b, counts) as f64 - walk(&oa, a, counts) as f64) / 1e6
            },
        )
        .collect();
    diffs.sort_by(f64::total_cmp);
    let at = |p: f64| diffs[((p * reps as f64) as usize).min(reps - 1)];
    (point, at(0.025), at(0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile_sorted(&v, 0.5), 50);
        assert_eq!(quantile_sorted(&v, 0.99), 99);
        assert_eq!(quantile_sorted(&v, 1.0), 100);
        assert_eq!(quantile_sorted(&v, 0.001), 1);
        let p = percentiles(&(1..=1000).map(|x| x * 1_000_000).collect::<Vec<_>>());
        assert_eq!(
            (p.tp50, p.tp99, p.tp999, p.max),
            (500.0, 990.0, 999.0, 1000.0)
        );
        assert_eq!(p.mean, 500.5);
    }

    /// The share above k × TP50 counted by hand against the sorted
    /// median, on lengths odd and even and with ties at the median.
    #[test]
    fn spike_share_counts_above_k_times_the_sorted_median() {
        for n in [1usize, 2, 3, 10, 11, 1000, 1001] {
            let lat: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 97 + 1).collect();
            let mut s = lat.clone();
            s.sort_unstable();
            let median = quantile_sorted(&s, 0.5) as f64;
            let above = lat.iter().filter(|&&x| x as f64 > 1.5 * median).count();
            assert_eq!(spike_share(&lat, 1.5), above as f64 / n as f64, "n = {n}");
            assert_eq!(
                spike_share_sorted(&s, 1.5),
                above as f64 / n as f64,
                "n = {n}"
            );
        }
        // [1, 2, 9, 10]: TP50 is the 2nd smallest, 2; above 2 × 2 are 9 and 10.
        assert_eq!(spike_share(&[10, 1, 9, 2], 2.0), 0.5);
        // [1, 2, 4, 4]: TP50 is the 2nd smallest, 2, so the cut 2 × 2 = 4
        // equals the two 4s, which are not above it (strictly above).
        assert_eq!(spike_share(&[4, 1, 4, 2], 2.0), 0.0);
        assert_eq!(spike_share_sorted(&[1, 2, 4, 4], 2.0), 0.0);
        assert_eq!(spike_share_sorted(&[1, 2, 4, 5], 2.0), 0.25);
        // A NaN cut counts nothing, as the comparison says.
        assert_eq!(spike_share(&[1, 2, 3], f64::NAN), 0.0);
        assert_eq!(spike_share_sorted(&[1, 2, 3], f64::NAN), 0.0);
        assert_eq!(spike_share(&[], 2.0), 0.0);
        assert_eq!(spike_share_sorted(&[], 2.0), 0.0);
    }

    #[test]
    fn spikes_every_n_requests_are_found_with_their_period() {
        // 20 000 requests of 10 ms; every 250th starts a 3-request burst of 100 ms.
        let lat: Vec<u64> = (0..20_000)
            .map(|i| if i % 250 < 3 { 100_000_000 } else { 10_000_000 })
            .collect();
        assert!((spike_share(&lat, 3.0) - 3.0 / 250.0).abs() < 1e-9);
        let (period, corr) = spike_period(&lat, 3.0, 2000, 0.2).unwrap();
        assert_eq!(period, 250);
        assert!(corr > 0.9, "{corr}");
        // No period in noise-free flat latency, none in random spikes.
        assert_eq!(spike_period(&vec![5u64; 1000], 3.0, 400, 0.2), None);
        let mut s = 7u64;
        let noise: Vec<u64> = (0..20_000)
            .map(|_| {
                if splitmix(&mut s).is_multiple_of(100) {
                    100
                } else {
                    10
                }
            })
            .collect();
        assert_eq!(spike_period(&noise, 3.0, 2000, 0.2), None);
    }

    #[test]
    fn bimodality_coefficient_separates_one_hump_from_two() {
        let mut s = 11u64;
        let u = |s: &mut u64| (splitmix(s) >> 11) as f64 / (1u64 << 53) as f64;
        let normal: Vec<f64> = (0..20_000)
            .map(|_| {
                let (a, b) = (u(&mut s).max(1e-12), u(&mut s));
                (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
            })
            .collect();
        assert!(bimodality(&normal) < 0.4, "normal: {}", bimodality(&normal));
        let two: Vec<f64> = normal
            .iter()
            .enumerate()
            .map(|(i, x)| x + if i % 2 == 0 { 0.0 } else { 6.0 })
            .collect();
        assert!(bimodality(&two) > 0.555, "two humps: {}", bimodality(&two));
        let uniform: Vec<f64> = (0..20_000).map(|_| u(&mut s)).collect();
        assert!((bimodality(&uniform) - 5.0 / 9.0).abs() < 0.02);
    }

    #[test]
    fn paired_bootstrap_brackets_a_known_shift() {
        // b = a + 5 ms exactly: every resample's difference is 5 ms.
        let mut s = 3u64;
        let a: Vec<u64> = (0..5000)
            .map(|_| 10_000_000 + splitmix(&mut s) % 50_000_000)
            .collect();
        let b: Vec<u64> = a.iter().map(|x| x + 5_000_000).collect();
        let (p, lo, hi) = paired_bootstrap_diff(&a, &b, 0.99, 200, 1);
        assert_eq!((p, lo, hi), (5.0, 5.0, 5.0));
        // Identical samples: zero.
        assert_eq!(paired_bootstrap_diff(&a, &a, 0.99, 100, 1), (0.0, 0.0, 0.0));
        // Noisy shift: the CI contains the true shift of the TP99 and is narrow.
        let c: Vec<u64> = a
            .iter()
            .map(|x| x + 5_000_000 + splitmix(&mut s) % 2_000_000)
            .collect();
        let (p, lo, hi) = paired_bootstrap_diff(&a, &c, 0.99, 300, 2);
        assert!(
            lo <= p && p <= hi && lo > 4.0 && hi < 7.5,
            "{p} [{lo}, {hi}]"
        );
    }

    /// The resampling the counting bootstrap replaces, written out: gather
    /// n random indices from one sequential SplitMix64 stream, select the
    /// quantile of each side.
    fn gather_bootstrap(a: &[u64], b: &[u64], q: f64, reps: usize, seed: u64) -> Vec<f64> {
        let n = a.len();
        let mut state = seed;
        let (mut ra, mut rb) = (vec![0u64; n], vec![0u64; n]);
        let mut diffs = Vec::new();
        for _ in 0..reps {
            for i in 0..n {
                let j = (splitmix(&mut state) % n as u64) as usize;
                ra[i] = a[j];
                rb[i] = b[j];
            }
            diffs.push(
                (select_quantile(&mut rb, q) as f64 - select_quantile(&mut ra, q) as f64) / 1e6,
            );
        }
        diffs.sort_by(f64::total_cmp);
        diffs
    }

    #[test]
    fn counting_bootstrap_equals_gathering_and_selecting() {
        let mut x = 7u64;
        for (n, q, levels) in [
            (1000, 0.99, 50),
            (777, 0.5, 5),
            (64, 0.999, 1000),
            (1, 0.9, 3),
        ] {
            // Few distinct levels: many ties.
            let a: Vec<u64> = (0..n)
                .map(|_| splitmix(&mut x) % levels * 1_000_000)
                .collect();
            let b: Vec<u64> = (0..n)
                .map(|_| splitmix(&mut x) % levels * 1_000_000)
                .collect();
            let reps = 101;
            let want = gather_bootstrap(&a, &b, q, reps, 42);
            let at = |p: f64| want[((p * reps as f64) as usize).min(reps - 1)];
            let (_, lo, hi) = paired_bootstrap_diff(&a, &b, q, reps, 42);
            assert_eq!((lo, hi), (at(0.025), at(0.975)), "n {n} q {q}");
        }
    }

    /// The autocorrelation as first written: floating point, lag by lag.
    fn naive_acf(lat: &[u64], k: f64, lag: usize) -> f64 {
        let mut s = lat.to_vec();
        s.sort_unstable();
        let cut = k * quantile_sorted(&s, 0.5) as f64;
        let x: Vec<f64> = lat
            .iter()
            .map(|&v| f64::from(u8::from(v as f64 > cut)))
            .collect();
        let n = x.len();
        let mean = x.iter().sum::<f64>() / n as f64;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>();
        (0..n - lag)
            .map(|i| (x[i] - mean) * (x[i + lag] - mean))
            .sum::<f64>()
            / var
    }

    #[test]
    fn bitset_autocorrelation_matches_the_floating_point_sum() {
        // Random spikes plus a planted period of 137: every lag (word-aligned
        // or not) agrees with the plain sum, and the period is found.
        let mut x = 3u64;
        let lat: Vec<u64> = (0..5000u64)
            .map(|i| {
                if i.is_multiple_of(137) || splitmix(&mut x).is_multiple_of(40) {
                    100
                } else {
                    10
                }
            })
            .collect();
        let acf = SpikeAcf::new(&lat, 3.0).expect("spikes");
        for l in 1..2500 {
            let (fast, naive) = (acf.at(l), naive_acf(&lat, 3.0, l));
            assert!((fast - naive).abs() < 1e-9, "lag {l}: {fast} vs {naive}");
        }
        let (lag, _) = spike_period(&lat, 3.0, 1000, 0.1).expect("a period");
        assert_eq!(lag, 137);
        assert!(
            SpikeAcf::new(&[10; 100], 3.0).is_none(),
            "no spike, no variance"
        );
    }
}
