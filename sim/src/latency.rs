//! The data-access latency histogram of a timing run, recorded through a
//! small cache of pending `(value, count)` pairs: most accesses repeat one
//! of a few latencies (each cache level's, each cache-to-cache route's), so
//! most records add one to a pending count instead of locating an
//! `hdrhistogram` bucket. Counts are order-free, so the histogram is the
//! one recording every value in turn would give.

use std::borrow::Cow;

use hdrhistogram::Histogram;

/// Pending pairs (a power of two).
const SLOTS: usize = 32;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(into = "Vec<(u64, u64)>", from = "Vec<(u64, u64)>")]
pub(crate) struct Latencies {
    hist: Histogram<u64>,
    /// Direct-mapped by value; count 0 = empty.
    pending: [(u64, u64); SLOTS],
}

impl Latencies {
    /// Values 1 ps .. 2^63 ps, three significant digits: every latency
    /// within the time horizon (`traces::horizon`, 2^53 ns) is counted (an
    /// upper bound of 2^50 ps, 19 minutes, once dropped a flooded queue's
    /// latencies from the histogram but not from the mean).
    pub fn new() -> Latencies {
        Latencies {
            hist: Histogram::new_with_bounds(1, u64::MAX / 2, 3).expect("valid histogram bounds"),
            pending: [(0, 0); SLOTS],
        }
    }

    /// Counts `n` accesses of latency `v` (ps, at least 1).
    #[inline(always)]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let i = (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize;
        let slot = &mut self.pending[i];
        if slot.0 == v {
            slot.1 += n;
        } else {
            let (old, count) = std::mem::replace(slot, (v, n));
            if count > 0 {
                let _ = self.hist.record_n(old, count);
            }
        }
    }

    /// The histogram, pending counts included.
    pub fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        if self.pending.iter().all(|&(_, n)| n == 0) {
            return Cow::Borrowed(&self.hist);
        }
        let mut h = self.hist.clone();
        for &(v, n) in self.pending.iter().filter(|p| p.1 > 0) {
            let _ = h.record_n(v, n);
        }
        Cow::Owned(h)
    }

    pub fn reset(&mut self) {
        self.hist.reset();
        self.pending = [(0, 0); SLOTS];
    }
}

/// A checkpoint's form of the histogram: each recorded bucket's highest
/// equivalent value and count. Recorded again, every value lands in its
/// bucket, so counts, quantiles, mean, min and max are the original's.
impl From<Latencies> for Vec<(u64, u64)> {
    fn from(l: Latencies) -> Self {
        l.histogram()
            .iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value()))
            .collect()
    }
}

impl From<Vec<(u64, u64)>> for Latencies {
    fn from(buckets: Vec<(u64, u64)>) -> Self {
        let mut l = Latencies::new();
        for (v, n) in buckets {
            let _ = l.hist.record_n(v, n);
        }
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every latency up to the time horizon is counted: a flooded queue's
    /// 2^52 ps (75 minutes) and the horizon itself (2^53 ns in ps). With
    /// the old bound of 2^50 ps both were dropped, and the histogram's max
    /// fell below the mean of the same accesses.
    #[test]
    fn latencies_up_to_the_horizon_are_counted() {
        let mut l = Latencies::new();
        let horizon_ps = traces::horizon::HORIZON_PS;
        for v in [1000, 1 << 52, horizon_ps] {
            l.record_n(v, 1);
        }
        let h = l.histogram();
        assert_eq!(h.len(), 3);
        let mean = (1000 + (1u64 << 52) + horizon_ps) as f64 / 3.0;
        assert!(h.min() as f64 <= mean && mean <= h.max() as f64);
        assert!(h.max() >= horizon_ps);
    }

    /// A checkpoint's bucket list gives back the same histogram: counts,
    /// quantiles, mean, min and max (values inside a bucket, pending and
    /// recorded ones).
    #[test]
    fn the_checkpoint_form_gives_the_same_histogram() {
        let mut l = Latencies::new();
        for (i, v) in [1u64, 999, 1001, 1_234_567, 1_234_599, 5 << 40]
            .iter()
            .enumerate()
        {
            l.record_n(*v, i as u64 + 1);
        }
        let h = l.histogram().into_owned();
        let back = Latencies::from(Vec::<(u64, u64)>::from(l));
        let g = back.histogram();
        assert_eq!(g.len(), h.len());
        assert_eq!((g.min(), g.max(), g.mean()), (h.min(), h.max(), h.mean()));
        for q in [0.0, 0.2, 0.5, 0.7, 0.9, 1.0] {
            assert_eq!(g.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
        }
    }

    /// The same histogram as recording each value directly, for values that
    /// repeat, collide in the cache and come once.
    #[test]
    fn pending_counts_change_nothing() {
        let mut l = Latencies::new();
        let mut direct = Histogram::<u64>::new_with_bounds(1, u64::MAX / 2, 3).unwrap();
        let mut x = 99u64;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match x % 4 {
                0 => 1500,
                1 => 20_000 + (x >> 8) % 3,
                2 => 1 + (x >> 8) % 1_000_000_000,
                _ => 81_000 + i % 97,
            };
            let n = 1 + (x >> 40) % 3;
            l.record_n(v, n);
            direct.record_n(v, n).unwrap();
        }
        let h = l.histogram();
        assert_eq!(h.len(), direct.len());
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(h.value_at_quantile(q), direct.value_at_quantile(q), "q {q}");
        }
        assert_eq!(h.mean(), direct.mean());
        assert_eq!((h.min(), h.max()), (direct.min(), direct.max()));
        let buckets = |h: &Histogram<u64>| {
            h.iter_recorded()
                .map(|b| (b.value_iterated_to(), b.count_at_value()))
                .collect::<Vec<_>>()
        };
        assert_eq!(buckets(&h), buckets(&direct));
    }
}
