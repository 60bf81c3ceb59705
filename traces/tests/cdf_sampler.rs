//! `CdfSampler::sample_many` (chunked, all table loads before any search)
//! gives, for every uniform, the rank a plain binary search over the CDF
//! gives, at every length (partial chunks included).

use traces::workload::{CdfSampler, splitmix, unit, zipf_cdf};

/// The oracle: the first rank whose CDF exceeds `u`, the last if none does.
fn binary_search(cdf: &[f64], u: f64) -> u32 {
    cdf.partition_point(|&c| c <= u).min(cdf.len() - 1) as u32
}

#[test]
fn sampling_many_at_once_equals_the_binary_search() {
    for (n, z) in [(100_000, 0.9), (8, 0.25), (1, 1.0)] {
        let cdf = zipf_cdf(n, z);
        let g = CdfSampler::new(cdf.clone());
        let mut x = 5u64;
        for len in [0, 1, 15, 16, 17, 32, 100] {
            let us: Vec<f64> = (0..len).map(|_| unit(splitmix(&mut x))).collect();
            let mut out = vec![u32::MAX; len];
            g.sample_many(&us, &mut out);
            let want: Vec<u32> = us.iter().map(|&u| binary_search(&cdf, u)).collect();
            assert_eq!(out, want, "n {n} len {len}");
        }
    }
}
