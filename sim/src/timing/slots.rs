//! Prefetch slots: one per attached prefetcher — the prefetcher, the
//! private level it fills and watches, and its books.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::directory::U64Map;
use crate::policy::Prefetcher;
use crate::prefetch::PrefetchStats;

/// One attached prefetcher: the private level it fills and watches, and
/// its books.
pub(super) struct PfSlot {
    pub p: Box<dyn Prefetcher>,
    pub level: usize,
    pub stats: PrefetchStats,
    /// Lines it prefetched, not yet used or lost: (fill completion, core).
    pub lines: U64Map<(u64, u16)>,
    /// Per core: completion times of its fills in flight beyond the private levels.
    pub inflight: Vec<BinaryHeap<Reverse<u64>>>,
    /// Lines evicted from its level while their fill was still in flight:
    /// (fill completion, core). The copy below is in flight too, so a
    /// demand that finds it there waits for the fill.
    pub evicted_inflight: U64Map<(u64, u16)>,
}
