//! Prefetch slots: one per attached prefetcher — the prefetcher, the
//! private level it fills and watches, and its books.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::checkpoint::CheckpointError;
use crate::directory::U64Map;
use crate::policy::Prefetcher;
use crate::prefetch::PrefetchStats;

/// [`PfSlot`]'s state in a checkpoint: the books and the prefetcher's tables.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct PfSlotState {
    name: String,
    level: usize,
    stats: PrefetchStats,
    lines: U64Map<(u64, u16)>,
    inflight: Vec<BinaryHeap<Reverse<u64>>>,
    evicted_inflight: U64Map<(u64, u16)>,
    fill_free: Vec<Vec<Vec<u64>>>,
    tables: Vec<u8>,
}

impl PfSlot {
    /// What a checkpoint keeps.
    pub fn state(&self) -> PfSlotState {
        PfSlotState {
            name: self.p.name(),
            level: self.level,
            stats: self.stats,
            lines: self.lines.clone(),
            inflight: self.inflight.clone(),
            evicted_inflight: self.evicted_inflight.clone(),
            fill_free: self.fill_free.clone(),
            tables: self.p.save_state(),
        }
    }

    /// Takes back what [`PfSlot::state`] gave, if it is this prefetcher's.
    pub fn restore(&mut self, s: PfSlotState) -> Result<(), CheckpointError> {
        if s.name != self.p.name() || s.level != self.level {
            return Err(CheckpointError::Prefetcher {
                saved: [s.name, s.level.to_string()].join("@"),
                this: [self.p.name(), self.level.to_string()].join("@"),
            });
        }
        let cores = (s.inflight.len(), self.inflight.len());
        crate::checkpoint::same_len("cores with prefetches in flight", cores.0, cores.1)?;
        let fills = (s.fill_free.len(), self.fill_free.len());
        crate::checkpoint::same_len("cores with fills in flight", fills.0, fills.1)?;
        self.p.load_state(&s.tables)?;
        self.stats = s.stats;
        self.lines = s.lines;
        self.inflight = s.inflight;
        self.evicted_inflight = s.evicted_inflight;
        self.fill_free = s.fill_free;
        Ok(())
    }
}

/// One attached prefetcher: the private level it fills and watches, and
/// its books.
pub(super) struct PfSlot {
    pub p: Box<dyn Prefetcher>,
    pub level: usize,
    pub stats: PrefetchStats,
    /// Lines it prefetched, not yet used or lost: (fill completion, core).
    pub lines: U64Map<(u64, u16)>,
    /// Per core: completion times of its fills in flight beyond the private
    /// levels (the core's prefetch queue counts every prefetcher's).
    pub inflight: Vec<BinaryHeap<Reverse<u64>>>,
    /// Lines evicted from its level while their fill was still in flight:
    /// (fill completion, core). The copy below is in flight too, so a
    /// demand that finds it there waits for the fill.
    pub evicted_inflight: U64Map<(u64, u16)>,
    /// Per core, per level a fill comes from (the private levels, then
    /// the LLC): when each of its fill slots there is free (as many as
    /// [`Prefetcher::fills_from`] has asked for; none: no such limit).
    pub fill_free: Vec<Vec<Vec<u64>>>,
}
