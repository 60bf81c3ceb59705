//! Inverse-transform sampling of a discrete distribution (the request
//! model's Zipf feature popularity, 32 draws a request): the one hot table
//! of the request model besides its caches, kept exact and small.

use crate::hint::prefetch;

/// Cumulative Zipf weights over `n` ranks (rank 0 most popular), for
/// inverse-transform sampling.
pub fn zipf_cdf(n: u32, s: f64) -> Vec<f64> {
    let mut c = Vec::with_capacity(n as usize);
    let mut acc = 0.0;
    for k in 1..=n {
        acc += 1.0 / (k as f64).powf(s);
        c.push(acc);
    }
    for v in &mut c {
        *v /= acc;
    }
    c
}

/// Inverse-transform sampling from a CDF with a guide table (Chen and Asau,
/// 1974): bucket k of `2^bits` remembers where the ranks for uniforms in
/// [k/2^bits, (k+1)/2^bits) start and end, so a draw searches a few entries
/// instead of the whole CDF (a 100 000-rank binary search is 17 dependent
/// cache misses). Returns the first rank whose CDF exceeds `u` (the last
/// rank if none does), exactly as a binary search over the CDF would:
/// `u · 2^bits` and `k / 2^bits` are exact in floating point, so the rank for
/// `u` always lies between its bucket's two bounds.
#[derive(Clone, Debug)]
pub struct CdfSampler {
    cdf: Vec<f64>,
    /// `key(cdf[i])`: what the searches read, half the CDF's bytes (fewer
    /// host cache misses). A search reads `cdf` itself only when `u` and
    /// an entry it compares share a key (about n / 2^32 of the draws, one
    /// in 43 000 for 100 000 ranks), and then it compares exactly.
    keys: Vec<u32>,
    /// guide[k] = first rank whose CDF exceeds k / 2^bits (k = 0..=2^bits).
    guide: Vec<u32>,
    scale: f64,
}

impl CdfSampler {
    pub fn new(cdf: Vec<f64>) -> CdfSampler {
        assert!(!cdf.is_empty(), "a CDF over no ranks");
        // Two to four buckets a rank up to 2^17 ranks, then 2^18 buckets
        // (1 MiB of guide, the most): more
        // draws land in a bucket inside one rank and need no search. For
        // the seed's 100 000 ranks, 2^18 buckets ran the request model 5%
        // faster than 2^17 and 9% faster than 2^16; 2^20 (4 MiB, past this
        // host's L2) 5% slower (`AB=… bench/serve_speed.sh 30`, 2026-12-04).
        let bits = (cdf.len().min(1 << 17) * 2)
            .next_power_of_two()
            .trailing_zeros();
        let buckets = 1usize << bits;
        let scale = buckets as f64;
        let guide = (0..=buckets)
            .map(|k| cdf.partition_point(|&c| c <= k as f64 / scale) as u32)
            .collect();
        let keys = cdf.iter().map(|&c| key(c)).collect();
        CdfSampler {
            cdf,
            keys,
            guide,
            scale,
        }
    }

    /// The first rank in `lo..hi` whose CDF exceeds `u` (`hi` if none):
    /// a binary search on the keys, exact because `key` is monotone and
    /// keys that differ order their CDF values the same way.
    #[inline(always)]
    fn search(&self, lo: usize, hi: usize, u: f64) -> usize {
        let ku = key(u);
        let (mut base, mut size) = (lo, hi - lo);
        while size > 0 {
            let half = size / 2;
            let mid = base + half;
            let k = self.keys[mid];
            if k < ku || (k == ku && self.cdf[mid] <= u) {
                base = mid + 1;
                size -= half + 1;
            } else {
                size = half;
            }
        }
        base
    }

    /// The ranks for several uniforms, each exactly [`CdfSampler::sample`]'s,
    /// in chunks of [`CHUNK`] as a three-stage pipeline: while chunk c is
    /// searched, chunk c + 1's guide entries are read and its keys
    /// prefetched, and chunk c + 2's guide entries are prefetched — so the
    /// host overlaps the tables' cache misses (a 100 000-rank CDF's are
    /// about 1.4 MB: a 1 MiB guide and 400 KB of keys) with the searches
    /// instead of taking them one after another. `out` has one slot per
    /// uniform.
    #[inline]
    pub fn sample_many(&self, us: &[f64], out: &mut [u32]) {
        assert_eq!(us.len(), out.len(), "a rank for every uniform");
        let chunks = us.len().div_ceil(CHUNK);
        let chunk = |c: usize| &us[(c * CHUNK).min(us.len())..((c + 1) * CHUNK).min(us.len())];
        let mut bounds = [[(0u32, 0u32); CHUNK]; 2];
        if chunks > 0 {
            self.prefetch_guide(chunk(1));
            self.bounds(chunk(0), &mut bounds[0]);
        }
        for c in 0..chunks {
            self.prefetch_guide(chunk(c + 2));
            let (now, next) = bounds.split_at_mut(1);
            let (now, next) = if c % 2 == 0 {
                (&now[0], &mut next[0])
            } else {
                (&next[0], &mut now[0])
            };
            self.bounds(chunk(c + 1), next);
            let outs = &mut out[c * CHUNK..(c * CHUNK + CHUNK).min(us.len())];
            for ((o, &u), &(lo, hi)) in outs.iter_mut().zip(chunk(c)).zip(now) {
                let at = self.search(lo as usize, hi as usize, u);
                *o = at.min(self.cdf.len() - 1) as u32;
            }
        }
    }

    /// The guide bucket of `u`.
    #[inline(always)]
    fn bucket(&self, u: f64) -> usize {
        ((u * self.scale) as usize).min(self.guide.len() - 2)
    }

    /// Hints the host to fetch the guide entries of `us`. Changes nothing.
    #[inline(always)]
    fn prefetch_guide(&self, us: &[f64]) {
        for &u in us {
            prefetch(&self.guide[self.bucket(u)]);
        }
    }

    /// Each uniform's search range from the guide; the keys where each
    /// search starts are prefetched.
    #[inline(always)]
    fn bounds(&self, us: &[f64], out: &mut [(u32, u32); CHUNK]) {
        for (b, &u) in out.iter_mut().zip(us) {
            let k = self.bucket(u);
            *b = (self.guide[k], self.guide[k + 1]);
        }
        for &(lo, _) in &out[..us.len()] {
            // `lo` indexes the keys or is their length: one past the end.
            if let Some(k) = self.keys.get(lo as usize) {
                prefetch(k);
            }
        }
    }

    /// The rank for a uniform `u` in [0, 1).
    #[inline]
    pub fn sample(&self, u: f64) -> u32 {
        let k = self.bucket(u);
        let at = self.search(self.guide[k] as usize, self.guide[k + 1] as usize, u);
        at.min(self.cdf.len() - 1) as u32
    }
}

/// A CDF value's search key: `floor(c · 2^32)`, at most `u32::MAX`.
/// Monotone in `c`, and exact (scaling by a power of two loses nothing;
/// the conversion truncates), so `key(a) < key(b)` implies `a < b`.
#[inline(always)]
fn key(c: f64) -> u32 {
    (c * 4_294_967_296.0) as u32
}

/// Draws whose table loads [`CdfSampler::sample_many`] overlaps.
pub(crate) const CHUNK: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{splitmix, unit};

    /// The plain inverse transform: a binary search over the whole CDF.
    fn sample_cdf(cdf: &[f64], u: f64) -> u32 {
        cdf.partition_point(|&c| c <= u).min(cdf.len() - 1) as u32
    }

    #[test]
    fn guide_table_sampling_equals_the_binary_search() {
        // 300 000 ranks: more than the guide's 2^18 buckets.
        for (n, z) in [
            (100_000, 0.9),
            (8, 0.25),
            (1, 1.0),
            (70_001, 1.2),
            (3, 0.0),
            (300_000, 0.8),
        ] {
            let cdf = zipf_cdf(n, z);
            let g = CdfSampler::new(cdf.clone());
            let mut x = 11u64;
            for i in 0..200_000u64 {
                let u = unit(splitmix(&mut x));
                assert_eq!(g.sample(u), sample_cdf(&cdf, u), "n {n} u {u}");
                // Bucket edges and the CDF's own values, where ties bite.
                let edge = (i % 1024) as f64 / 1024.0;
                assert_eq!(g.sample(edge), sample_cdf(&cdf, edge), "n {n} edge {edge}");
                // The CDF's own values and their neighbours, which share
                // the search's key with them (the exact comparison's case).
                let c = cdf[(i as usize * 7919) % cdf.len()];
                for u in [
                    c,
                    f64::from_bits(c.to_bits() - 1),
                    f64::from_bits(c.to_bits() + 1),
                ] {
                    if u < 1.0 {
                        assert_eq!(g.sample(u), sample_cdf(&cdf, u), "n {n} at {u}");
                    }
                }
            }
            let top = 1.0 - f64::EPSILON / 2.0;
            assert_eq!(g.sample(top), sample_cdf(&cdf, top));
            // Draws in chunks give the binary search's ranks too.
            let us: Vec<f64> = (0..1000).map(|_| unit(splitmix(&mut x))).collect();
            let mut got = vec![0u32; us.len()];
            g.sample_many(&us, &mut got);
            let want: Vec<u32> = us.iter().map(|&u| sample_cdf(&cdf, u)).collect();
            assert_eq!(got, want, "n {n}");
        }
    }

    #[test]
    fn zipf_cdf_sampling() {
        let c = zipf_cdf(4, 1.0);
        // Weights 1, 1/2, 1/3, 1/4 over 25/12.
        assert!((c[0] - 12.0 / 25.0).abs() < 1e-12);
        let g = CdfSampler::new(c);
        assert_eq!(g.sample(0.0), 0);
        assert_eq!(g.sample(0.5), 1);
        assert_eq!(g.sample(0.999_999), 3);
    }
}
