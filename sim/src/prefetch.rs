//! The cache-prefetcher interface of the line-level model, and the
//! accounting of what prefetches were worth.
//!
//! A prefetcher sees each demand access of a core as it happens — its PC
//! (from the trace's PC column, or the preceding instruction fetch in a
//! lackey trace), address, and whether it hit the prefetcher's level — and
//! returns line addresses to bring in. ⚑ It sees nothing of the future.
//! Implementations live in `policies::prefetch`, one file each.
//!
//! Metrics (formulas also in docs/prefetch.md):
//! - `issued`: prefetches sent to memory (a line already cached or in flight
//!   is not re-issued);
//! - `useful`: prefetched lines a demand access used; `late` of them were
//!   used before their fill completed (the demand waited for the rest);
//! - `useless`: prefetched lines evicted (`early`) or still unused at the end;
//! - accuracy = useful / (useful + useless); coverage = useful / (useful +
//!   demand misses that remained); `useful + useless = issued` always;
//! - `extra_bytes`: line size × issued (the bandwidth prefetching costs).

/// What the prefetcher sees of one demand access.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    pub core: usize,
    /// Program counter, if the trace gives one.
    pub pc: Option<u64>,
    pub addr: u64,
    /// The access missed the prefetcher's level.
    pub miss: bool,
    /// The access is the first use of a line this prefetcher brought in (the
    /// trigger of "tagged" prefetching).
    pub prefetch_hit: bool,
    pub write: bool,
}

/// A prefetcher, one instance per machine (index its tables by `core`).
pub trait Prefetcher: Send {
    /// Name as reported (`ip-stride:2:1`, ...).
    fn name(&self) -> String;
    /// Observes a demand access; pushes line-aligned addresses to prefetch.
    fn on_access(&mut self, seen: Seen, line: u64, out: &mut Vec<u64>);
}

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
