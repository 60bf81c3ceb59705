//! The accounting of what cache prefetches were worth, and [`Offline`]
//! prefetch generation over a load stream.
//!
//! A prefetcher sees each demand access of a core as it happens — its PC
//! (from the trace's PC column, or the preceding instruction fetch in a
//! lackey trace), address, and whether it hit the prefetcher's level — and
//! returns line addresses to bring in. ⚑ It sees nothing of the future.
//! Implementations live in `policies::prefetch`, one file each.
//!
//! The trait and what it sees are in [`crate::policy`].
//!
//! Metrics (formulas also in docs/prefetch.md):
//! - `issued`: prefetches sent (a line already cached at the prefetch level
//!   or in flight is not re-issued); one that a lower private level holds is
//!   copied up at that level's latency; one that must go to the LLC or memory
//!   takes a slot of the core's prefetch queue (`Config::prefetch_queue`,
//!   one for all the core's prefetchers) and is `dropped` (counted for the
//!   prefetcher refused) when the queue is full;
//! - `useful`: prefetched lines a demand access used; `late` of them were
//!   used before their fill completed (the demand waited for the rest);
//! - `useless`: prefetched lines evicted (`early`) or still unused at the end;
//! - accuracy = useful / (useful + useless); coverage = useful / (useful +
//!   demand misses that remained); `useful + useless = issued` always;
//! - `extra_bytes`: line size × prefetches served by the LLC or memory (the
//!   bandwidth prefetching costs);
//! - `predict_cost_ps`: simulated decision time charged to the cores.

use crate::policy::{AccessView, Prefetcher};

/// Prefetch outcome counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrefetchStats {
    pub issued: u64,
    pub useful: u64,
    pub late: u64,
    pub useless: u64,
    /// Useless because evicted before use.
    pub early: u64,
    pub extra_bytes: u64,
    /// Demand misses at the prefetch level that no prefetch covered.
    pub demand_misses: u64,
    /// Prefetches not sent because the core's prefetch queue was full.
    #[serde(default)]
    pub dropped: u64,
    /// Simulated time the prefetcher's decisions cost the cores (ps).
    #[serde(default)]
    pub predict_cost_ps: u64,
}

impl PrefetchStats {
    /// useful / (useful + useless).
    pub fn accuracy(&self) -> f64 {
        let d = self.useful + self.useless;
        if d == 0 {
            0.0
        } else {
            self.useful as f64 / d as f64
        }
    }
    /// useful / (useful + demand misses left).
    pub fn coverage(&self) -> f64 {
        let d = self.useful + self.demand_misses;
        if d == 0 {
            0.0
        } else {
            self.useful as f64 / d as f64
        }
    }
}

/// Prefetches generated offline over a stream of loads — the ML Prefetching
/// Competition workflow: a prefetcher reads a load trace and writes the
/// prefetches ChampSim will replay — with a timing-free estimate of their
/// worth.
///
/// Per load: the prefetcher sees it (PC, address, the trace's LLC miss flag,
/// whether it is the first use of a line prefetched earlier); of the lines it
/// proposes, those already pending (prefetched within the last `window`
/// loads and not yet used) or equal to the demanded line are dropped, and at
/// most `max_per_load` are issued. A prefetched line is *useful* if a load
/// touches it within `window` loads of its prefetch, else *useless*; an LLC
/// miss is *covered* if a useful prefetch brought its line. Accuracy =
/// useful / issued; coverage = covered / LLC misses.
pub struct Offline {
    pf: Box<dyn Prefetcher>,
    line_bits: u32,
    max_per_load: usize,
    window: u64,
    /// Pending prefetched lines → index of the load that issued them.
    pending: crate::directory::U64Map<u64>,
    loads: u64,
    buf: Vec<u64>,
    pub stats: OfflineStats,
}

/// Counts of an [`Offline`] run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct OfflineStats {
    pub loads: u64,
    pub llc_misses: u64,
    pub issued: u64,
    pub useful: u64,
    pub covered: u64,
}

impl OfflineStats {
    /// useful / issued.
    pub fn accuracy(&self) -> f64 {
        if self.issued == 0 {
            0.0
        } else {
            self.useful as f64 / self.issued as f64
        }
    }
    /// covered / LLC misses.
    pub fn coverage(&self) -> f64 {
        if self.llc_misses == 0 {
            0.0
        } else {
            self.covered as f64 / self.llc_misses as f64
        }
    }
}

impl Offline {
    /// `line` must be a power of two; `window` ≥ 1 load.
    pub fn new(pf: Box<dyn Prefetcher>, line: u64, max_per_load: usize, window: u64) -> Offline {
        Offline {
            pf,
            line_bits: line.trailing_zeros(),
            max_per_load,
            window: window.max(1),
            pending: Default::default(),
            loads: 0,
            buf: Vec::new(),
            stats: OfflineStats::default(),
        }
    }

    /// Observes one load; returns the line-aligned byte addresses to prefetch.
    pub fn load(&mut self, pc: u64, addr: u64, llc_miss: bool) -> &[u64] {
        let i = self.loads;
        self.loads += 1;
        self.stats.loads += 1;
        self.stats.llc_misses += llc_miss as u64;
        let line = addr >> self.line_bits;
        let mut prefetch_hit = false;
        if let Some(at) = self.pending.remove(&line)
            && i - at <= self.window
        {
            prefetch_hit = true;
            self.stats.useful += 1;
            self.stats.covered += llc_miss as u64;
        }
        // Forget what expired, once per window (amortised O(1) per load).
        if i > 0 && i.is_multiple_of(self.window) {
            let w = self.window;
            self.pending.retain(|_, at| i - *at <= w);
        }
        let seen = AccessView {
            from_memory: false,
            core: 0,
            pc: Some(pc),
            addr,
            miss: llc_miss,
            prefetch_hit,
            write: false,
        };
        let mut proposed = std::mem::take(&mut self.buf);
        proposed.clear();
        self.pf.on_access(seen, line, &mut proposed);
        let mut issued = 0;
        proposed.retain(|&l| {
            let live = self
                .pending
                .get(&l)
                .is_some_and(|&at| i - at <= self.window);
            if issued >= self.max_per_load || l == line || live {
                return false;
            }
            issued += 1;
            self.pending.insert(l, i);
            true
        });
        self.stats.issued += issued as u64;
        for l in proposed.iter_mut() {
            *l <<= self.line_bits;
        }
        self.buf = proposed;
        &self.buf
    }
}

#[cfg(test)]
mod offline_tests {
    use super::*;

    /// Proposes the next `k` lines on every access.
    struct NextK(u64);
    impl Prefetcher for NextK {
        fn name(&self) -> String {
            "next-k".into()
        }
        fn on_access(&mut self, _: AccessView, line: u64, out: &mut Vec<u64>) {
            out.extend((1..=self.0).map(|d| line + d));
        }
    }

    #[test]
    fn sequential_loads_are_covered_after_the_first() {
        // 100 loads walking lines 0..100, all LLC misses; next-2, at most 2
        // per load. Load 0 issues lines 1, 2; load i ≥ 1 finds line i+1
        // pending and issues only line i+2. Every line 1..=99 is used (99
        // useful); lines 100 and 101 are not.
        let mut o = Offline::new(Box::new(NextK(2)), 64, 2, 1000);
        let mut issued = Vec::new();
        for i in 0..100u64 {
            issued.extend_from_slice(o.load(0x400, i * 64 + 8, true));
        }
        assert_eq!(issued.len(), 101);
        assert_eq!(&issued[..3], &[64, 128, 192]);
        let s = o.stats;
        assert_eq!(
            (s.issued, s.useful, s.covered, s.llc_misses),
            (101, 99, 99, 100)
        );
        assert!((s.accuracy() - 99.0 / 101.0).abs() < 1e-12);
        assert!((s.coverage() - 0.99).abs() < 1e-12);
    }

    #[test]
    fn caps_and_windows() {
        // At most one per load; a prefetch used after the window is useless.
        let mut o = Offline::new(Box::new(NextK(4)), 64, 1, 2);
        assert_eq!(o.load(0, 0, true), &[64]);
        o.load(0, 64 * 50, false); // issues line 51
        o.load(0, 64 * 90, false); // issues line 91
        o.load(0, 64, true); // line 1 prefetched 3 loads ago: too late for window 2
        assert_eq!(o.stats.useful, 0);
        assert_eq!(o.stats.issued, 4);
        o.load(0, 64 * 91, true); // prefetched 1 load ago: useful, covered
        assert_eq!((o.stats.useful, o.stats.covered), (1, 1));
    }
}
