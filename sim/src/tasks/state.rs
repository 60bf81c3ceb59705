//! A sampled task replay's state: its shape, its units' sums, warming's
//! queues and the detailed stretches' books. Apart from `sampled.rs`,
//! which works on it, so that the engine can hold it without the two
//! files importing each other.

use std::collections::VecDeque;

/// One unit's sums (ps).
#[derive(Clone, Default)]
pub(super) struct Unit {
    pub(super) tasks: u64,
    pub(super) latency_ps: u128,
    pub(super) queue_ps: u128,
    pub(super) service_ps: u128,
    pub(super) accesses: u64,
    pub(super) memory_lines: u64,
}

/// A sampled task replay's shape and what it measured (`sampled.rs`).
pub(super) struct TaskSampling {
    pub(super) shape: crate::timing::Sample,
    pub(super) units: Vec<Unit>,
    /// Every measured task: (unit, latency ps).
    pub(super) latencies: Vec<(u64, u64)>,
    /// Tasks that ended in detail, and tasks warmed.
    pub(super) detailed: u64,
    pub(super) warmed: u64,
    pub(super) warming: bool,
    /// Warming's queues: per worker, the ends (ps) of its warmed tasks
    /// not yet over.
    pub(super) queues: Vec<VecDeque<u64>>,
    /// The detailed stretch under way: its start (ps).
    pub(super) stretch_from: Option<u64>,
    /// Measured tasks dispatched and not yet ended.
    pub(super) measuring: u64,
    /// Cool-down tasks left after the latest unit (see `sampled.rs`).
    pub(super) cooling: u64,
    /// The detailed stretches' total span (ps): what the summary's time
    /// averages (utilisation, queue length) are over.
    pub(super) span_ps: u64,
    /// Per worker, (busy ps in detailed stretches, end of its latest task).
    pub(super) busy: Vec<(u64, u64)>,
    /// The workers' busy ps summed: what a warmed task's time is made of.
    pub(super) busy_total: u128,
}
