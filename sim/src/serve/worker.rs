//! One worker of the request model: its queue, the batch it runs, and
//! what it lets a policy observe — stamped with when each value becomes
//! known (a batch's stall and features once its data has arrived, its
//! duration once it has ended).

use std::collections::VecDeque;

use traces::workload::Arrival;

use super::records::RequestRecord;
use crate::signals::Signals;

pub(super) struct Queued {
    pub a: Arrival,
    /// Its arrival (ps).
    pub arrival_ps: u64,
    /// Features at dispatch (when a preload policy or the dataset needs them).
    pub features: Option<Vec<f64>>,
    /// A preload for it completes at this time (0: none).
    pub preload_ready: u64,
    /// Items its preload brought in.
    pub preloaded: Vec<u64>,
    /// The "will miss" call and its probability, until judged.
    pub predicted: Option<(bool, f64)>,
}

/// What the running batch will tell an observer, and when: its data stall
/// and per-batch features once its data has arrived, its duration once it
/// has ended. Until then, policies see the batches before it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    /// When the batch's data arrived (its features are known; its stall,
    /// known then too, is in the worker's [`Signals`]).
    pub data_at: u64,
    /// (hit rate, MB read, mean item address delta in MB).
    pub history: (f64, f64, f64),
    /// When the batch ended (its duration is known).
    pub end_at: u64,
    pub batch_ps: u64,
}

pub(super) struct Worker {
    pub node: u32,
    pub queue: VecDeque<Queued>,
    /// Last batches, most recent first: (hit rate, MB read, mean item
    /// address delta in MB) — those observed; the running one is `pending`.
    pub history: VecDeque<(f64, f64, f64)>,
    /// Duration of the last batch that ended (ps).
    pub last_batch_ps: u64,
    /// The running batch's observations, stamped with when they become known.
    pub pending: Option<Pending>,
    /// Mean item address (MB) of the last batch.
    pub last_mean_addr: f64,
    /// Decision cost not yet charged (ps; delays the next batch).
    pub pending_cost_ps: u64,
    /// Busy or not, its averaged utilization and stalls: what a scheduler
    /// sees (`crate::signals`, shared with the task engine).
    pub signals: Signals,
    pub pcie_gbps: f64,
    pub running: Vec<RequestRecord>,
    /// When the running batch started.
    pub started_at: u64,
}

impl Worker {
    /// The duration of the last batch known to have ended by `t`.
    pub fn batch_ps_at(&self, t: u64) -> u64 {
        match self.pending {
            Some(p) if p.end_at <= t => p.batch_ps,
            _ => self.last_batch_ps,
        }
    }

    /// When a request joining the queue at `t` is expected to start, from
    /// what is known at `t`: the running batch ends after the last known
    /// batch duration (not before `t`), then one such duration per full
    /// batch queued ahead of it.
    pub fn start_estimate(&self, t: u64, batch: u32) -> u64 {
        if !self.signals.busy() {
            return t;
        }
        let d = self.batch_ps_at(t);
        let running_end = self.started_at.saturating_add(d).max(t);
        running_end
            .saturating_add((self.queue.len() as u64 / batch.max(1) as u64).saturating_mul(d))
    }

    /// Folds the ended batch's observations into the worker's history.
    pub fn observe_pending(&mut self, history: usize) {
        if let Some(p) = self.pending.take() {
            self.history.push_front(p.history);
            self.history.truncate(history);
            self.last_batch_ps = p.batch_ps;
        }
        self.signals.fold();
    }
}

/// The engine's reused buffers for one dispatch or batch start: allocated
/// once a run instead of seven times a batch (and once an arrival for the
/// workers' views). Contents are meaningless between uses.
#[derive(Default)]
pub(super) struct Scratch {
    /// Every worker's view at a dispatch.
    pub views: Vec<crate::policy::WorkerView>,
    /// The batch's requests, taken off the queue.
    pub queued: Vec<Queued>,
    /// Per memory node, the bytes the batch reads there.
    pub from_node: Vec<f64>,
    /// Per request of the batch: it fetched its shard's state.
    pub cold: Vec<bool>,
    /// Per request: the end of its items in `items` and its compute noise.
    pub spans: Vec<(usize, f64)>,
    /// The items of the batch's requests, one after another.
    pub items: Vec<u32>,
    /// The uniforms behind the items' draws.
    pub us: Vec<f64>,
}
