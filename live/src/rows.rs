//! Does a DRAM row left open pay on this host? A chase over a buffer far
//! larger than the caches, in huge pages, visits its lines in pairs: a
//! random line `x`, then `x ^ d` (`d` lines away, in the same `2d`-line
//! aligned block), then the next pair's random line. The pair's first load
//! opens a row; the second finds it open when the two share a row of the
//! same bank — a row hit, cheaper than the random load by the row's
//! activation (and precharge) when the memory controller keeps rows open.
//! Without that (rows closed after each access, other tenants' traffic
//! closing them, a hypervisor scattering the guest's pages), every `d`
//! costs what the random chase costs. The second load's cost is
//! `2 · pair mean − random` (the pair's first load is a random one). Each
//! pair walk runs right after a random chase of its own and is read as
//! the ratio to it: the host's memory latency drifts by tens of percent
//! over minutes, more than the effect sought. Without huge pages
//! (`RowWalks::huge_share` below 1) a pair closer than a 4 KiB page also
//! shares a TLB entry, and a cheaper second load may be that instead.
//!
//! Issue 29's item 2: a model of DRAM rows is worth building only where
//! this shows a difference the held-out patterns would feel.

use crate::LiveError;
use crate::calibrate::{random_cycle, walk_cycle};
use crate::os::PageBuf;

/// Pair distances walked (lines): 1 (the 128-byte pair the adjacent-line
/// prefetcher fetches together: the probe's own check), then 2 lines up to
/// 1 MiB.
pub const DISTANCES: [u32; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 1024, 16384];

/// What the probe measured (ns per load, medians of the repeats).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RowWalks {
    pub bytes: u64,
    /// Share of the buffer the kernel backed with huge pages.
    pub huge_share: f64,
    pub random_ns: f64,
    /// Per distance (lines): the median over the rounds of the second
    /// load's cost as a share of the random chase walked just before it,
    /// `(2 · pair mean − random) / random`, and the smallest and largest.
    pub pairs: Vec<(u32, f64, f64, f64)>,
}

/// The pairs order for distance `d` over `lines` lines (a power of two):
/// every line once, `x` then `x ^ d`, the pairs' first lines in a random
/// cycle of their own.
pub fn pair_order(lines: usize, d: u32, seed: u64) -> Vec<u32> {
    let d = d as usize;
    debug_assert!(lines.is_power_of_two() && d < lines);
    // The first line of each pair: the lines whose bit `d` is clear.
    let firsts: Vec<u32> = (0..lines)
        .filter(|x| x & d == 0)
        .map(|x| x as u32)
        .collect();
    let cycle = random_cycle(firsts.len(), seed);
    cycle
        .iter()
        .flat_map(|&i| {
            let x = firsts[i as usize];
            [x, x ^ d as u32]
        })
        .collect()
}

/// Walks the random chase and each pair distance shorter than the buffer
/// over `bytes` (rounded down to a power of two of lines), `loads` loads a
/// run, `repeats` runs, the orders alternated over `rounds` rounds.
pub fn row_walks(
    bytes: u64,
    loads: u64,
    repeats: usize,
    rounds: usize,
    seed: u64,
) -> Result<RowWalks, LiveError> {
    let lines = 1usize << (bytes / 64).max(2).ilog2();
    let mut buf = PageBuf::huge(lines * 64)?;
    let mut random = Vec::new();
    let distances: Vec<u32> = DISTANCES
        .into_iter()
        .filter(|&d| (d as usize) < lines)
        .collect();
    let mut ratios = vec![Vec::new(); distances.len()];
    for r in 0..rounds.max(1) {
        let s = seed.wrapping_add(r as u64);
        for (d, v) in distances.iter().zip(&mut ratios) {
            let base = walk_cycle(&mut buf, &random_cycle(lines, s), loads, repeats).0;
            let pair = walk_cycle(&mut buf, &pair_order(lines, *d, s), loads, repeats).0;
            random.push(base);
            v.push((2.0 * pair - base) / base);
        }
    }
    // Measured once the walks have touched every page.
    let huge_share = crate::os::anon_huge_bytes() as f64 / (lines * 64) as f64;
    Ok(RowWalks {
        bytes: (lines * 64) as u64,
        huge_share: huge_share.min(1.0),
        random_ns: crate::fingerprint::median(random),
        pairs: distances
            .iter()
            .zip(ratios)
            .map(|(&d, v)| {
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (d, crate::fingerprint::median(v), lo, hi)
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer shorter than the longest distances walks the rest.
    #[test]
    fn a_small_buffer_walks_only_the_distances_inside_it() {
        let w = row_walks(64 * 64, 1000, 1, 1, 3).unwrap();
        let ds: Vec<u32> = w.pairs.iter().map(|p| p.0).collect();
        assert_eq!(ds, [1, 2, 4, 8, 16, 32]);
    }

    #[test]
    fn pair_orders_visit_every_line_once_in_pairs_d_apart() {
        for d in [1u32, 2, 64, 512] {
            let o = pair_order(1024, d, 7);
            let mut seen = vec![false; 1024];
            for &x in &o {
                assert!(!seen[x as usize], "d {d}: line {x} twice");
                seen[x as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "d {d}");
            for p in o.chunks(2) {
                assert_eq!(p[0] ^ p[1], d, "d {d}");
                assert_eq!(p[0] & d, 0, "d {d}");
            }
        }
    }
}
