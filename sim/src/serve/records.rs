//! What the request-level model reports: one record per served request,
//! run totals, per-second monitoring windows, dataset rows, and errors.
//! Plain data; [`super::ServeEngine`] fills them.

/// One served request, as written to `requests.csv` (times in ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RequestRecord {
    pub id: u64,
    pub shard: u32,
    pub worker: u32,
    pub node: u32,
    /// Times and durations (ps, whole ns: the model's resolution).
    pub arrival_ps: u64,
    pub start_ps: u64,
    pub end_ps: u64,
    pub queue_ps: u64,
    pub stall_ps: u64,
    pub compute_ps: u64,
    pub transfer_ps: u64,
    /// Paid a cold-state fetch.
    pub cold: bool,
}

impl RequestRecord {
    pub fn latency_ps(&self) -> u64 {
        self.end_ps - self.arrival_ps
    }
}

/// Written in whole ns under an `_ns` name (the engine keeps ps; a
/// summary shows the request model's resolution).
fn as_ns<S: serde::Serializer>(ps: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(ps / 1000)
}

/// Shard moves as (shard, switch time, first latency), times in ns.
fn moves_as_ns<S: serde::Serializer>(m: &[(u32, u64, u64)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(m.len()))?;
    for &(shard, at, lat) in m {
        seq.serialize_element(&(shard, at / 1000, lat / 1000))?;
    }
    seq.end()
}

/// Totals of a run (serialized with its times in ns, as summaries show them).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ServeTotals {
    pub requests: u64,
    pub batches: u64,
    /// Last completion (ps).
    #[serde(rename = "end_ns", serialize_with = "as_ns")]
    pub end_ps: u64,
    /// Bytes read from each node's memory (features, state, sweeps).
    pub node_bytes: Vec<u64>,
    pub link_bytes: Vec<u64>,
    pub far_bytes: u64,
    pub pcie_bytes: u64,
    pub background_jobs: u64,
    pub feature_hits: u64,
    pub feature_misses: u64,
    pub cold_fetches: u64,
    /// Accelerator time: stall + transfer (bubble) and compute (ps).
    #[serde(rename = "bubble_ns", serialize_with = "as_ns")]
    pub bubble_ps: u64,
    #[serde(rename = "compute_ns", serialize_with = "as_ns")]
    pub compute_ps: u64,
    /// Per shard move: (shard, time traffic switched, latency of the first
    /// request of that shard arriving after it, ps).
    #[serde(serialize_with = "moves_as_ns")]
    pub first_after_move: Vec<(u32, u64, u64)>,
    /// Preload: decisions taken, preloads fired, items brought in, of those
    /// still cached when their batch ran, fallbacks, simulated decision cost (ps).
    pub preload_decisions: u64,
    pub preloads: u64,
    pub preload_items: u64,
    pub preload_item_hits: u64,
    pub preload_fallbacks: u64,
    #[serde(rename = "predict_cost_ns", serialize_with = "as_ns")]
    pub predict_cost_ps: u64,
    /// Decisions whose "will miss" prediction (p > 0.5) matched the outcome.
    pub predictions_correct: u64,
    /// Every judged call: confusion matrix and probabilities by outcome.
    pub judged: super::judged::Judged,
    /// Bytes preloads read (from the shards' home memories and the far tier).
    pub preload_bytes: u64,
    /// The same counters per [`MONITOR_WINDOW_PS`] of simulated time (the
    /// monitoring chart), each counted when it happened.
    pub windows: Vec<WindowTotals>,
    /// With [`ServeTotals::bin_bandwidth`]: the background jobs that start
    /// within the bins, as (node, start, end of its sweep through the
    /// node's memory), ps — bounded by the timeline's window.
    #[serde(skip)]
    pub background: Vec<(u32, u64, u64)>,
    /// With [`ServeTotals::bin_bandwidth`]: bytes each node's memory
    /// served per bin, spread over each transfer's service time.
    #[serde(skip)]
    pub node_bins: Vec<Vec<u64>>,
    #[serde(skip)]
    pub bin_ps: u64,
}

impl ServeTotals {
    /// The byte and time counters kept below 2^64 − 1: they add
    /// saturating, so one at the limit is a count that did not fit (an
    /// error, not a wrong total).
    pub fn check_counters(&self) -> Result<(), ServeError> {
        let full = |x: &u64| *x == u64::MAX;
        for (name, hit) in [
            ("memory bytes", self.node_bytes.iter().any(full)),
            ("link bytes", self.link_bytes.iter().any(full)),
            ("far-tier bytes", full(&self.far_bytes)),
            ("PCIe bytes", full(&self.pcie_bytes)),
            ("preload bytes", full(&self.preload_bytes)),
            ("compute time", full(&self.compute_ps)),
            ("bubble time", full(&self.bubble_ps)),
            ("prediction time", full(&self.predict_cost_ps)),
        ] {
            if hit {
                return Err(ServeError::CounterOverflow(name));
            }
        }
        Ok(())
    }

    /// Keeps per-node memory bytes in bins of `bin_ps` up to `until_ps`
    /// (a timeline's counter tracks; bounded by the window asked for).
    pub fn bin_bandwidth(&mut self, nodes: usize, bin_ps: u64, until_ps: u64) {
        let bins = until_ps.div_ceil(bin_ps.max(1)).min(1 << 20) as usize;
        self.bin_ps = bin_ps.max(1);
        self.node_bins = vec![vec![0; bins]; nodes];
    }

    /// Notes a background job's sweep, if it starts within the bins.
    pub fn add_background(&mut self, node: usize, from: u64, to: u64) {
        let bins = self.node_bins.get(node).map_or(0, Vec::len) as u64;
        if from < bins * self.bin_ps {
            self.background.push((node as u32, from, to));
        }
    }

    /// Counts `bytes` node `node` served during `[from, to)` ps, spread
    /// evenly over the bins it spans (nothing when bins are off).
    pub fn add_bandwidth(&mut self, node: usize, from: u64, to: u64, bytes: u64) {
        let Some(bins) = self.node_bins.get_mut(node) else {
            return;
        };
        let (b, to) = (self.bin_ps, to.max(from.saturating_add(1)));
        let (first, last) = ((from / b) as usize, ((to - 1) / b) as usize);
        if first >= bins.len() {
            return;
        }
        let per_ps = bytes as f64 / (to - from) as f64;
        let last = last.min(bins.len() - 1);
        for (i, bin) in bins.iter_mut().enumerate().take(last + 1).skip(first) {
            let lo = from.max(i as u64 * b);
            let hi = to.min((i as u64 + 1) * b);
            *bin += (per_ps * (hi - lo) as f64).round() as u64;
        }
    }
}

/// Width of the per-node bandwidth bins a timeline asks for (ps): 1 ms.
pub const BANDWIDTH_BIN_PS: u64 = 1_000_000_000;

/// Length of a monitoring window (ps): one second of simulated time.
pub const MONITOR_WINDOW_PS: u64 = 1_000_000_000_000;

/// Counters of one monitoring window. A prediction is judged when its truth
/// is known (its preload fires, or its batch runs); a preloaded item is
/// counted when brought in and, if still cached, when its batch runs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct WindowTotals {
    pub predictions_judged: u64,
    pub predictions_correct: u64,
    pub preload_items: u64,
    pub preload_item_hits: u64,
    pub feature_hits: u64,
    pub feature_misses: u64,
    /// Bytes read from all nodes' memories, and from the far tier.
    pub memory_bytes: u64,
    pub far_bytes: u64,
}

/// One row of a dataset: the features at dispatch and whether the request's
/// lookups then missed the worker node's cache (≥ half of them), observed
/// when its batch ran.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetRow {
    /// The request's arrival (ps).
    pub time_ps: u64,
    pub id: u64,
    pub features: Vec<f64>,
    pub label: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("workload: {0}")]
    Workload(traces::Problem),
    #[error("workload: the machine has no accelerators or cores to serve on")]
    NoWorkers,
    #[error("workload: move {index}: worker {worker} does not exist ({workers} workers)")]
    NoSuchWorker {
        index: usize,
        worker: u32,
        workers: usize,
    },
    /// The feature cache keeps 32-bit tags (half the bytes of the general
    /// cache's, for speed); a workload whose blocks need more is refused.
    #[error(
        "workload: a feature cache of {0} items per node cannot tell {1} item-shard blocks apart (at most 2^32 - 1 a set of 16): raise cache.items_per_node or lower request.features.items or shards.count"
    )]
    FeatureCacheTags(u32, u64),
    #[error(
        "preload {0} is an oracle: it needs the outcomes of a paired run without preload (ServeEngine::set_truth)"
    )]
    NoTruth(String),
    #[error("the scheduler {0} picked worker {1}, but there are {2}")]
    BadPick(String, usize, usize),
    /// An event past the horizon, at `.0` ps.
    #[error(
        "simulated time would pass {h} (an event at {when}: a transfer or queue that never ends within it)",
        h = traces::horizon::describe(),
        when = event_time(*.0)
    )]
    PastHorizon(u64),
    #[error("the run's {0} passed 2^64 - 1 (a workload too large to count exactly)")]
    CounterOverflow(&'static str),
}

/// An event's time (ps) in words: whole ns, or the clock's end where a
/// time saturated (a duration past what 64 bits of ps hold).
fn event_time(ps: u64) -> String {
    if ps == u64::MAX {
        "2^64 - 1 ps or later (the end of the clock)".into()
    } else {
        format!("{} ns", ps / 1000)
    }
}

/// One dispatch decision: where a request went, and whether (and when) its
/// data was to be preloaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// When it was taken, and when its preload was to fire (ps).
    pub at_ps: u64,
    pub request: u64,
    pub worker: u32,
    /// The preload policy's "will miss" call, if it made one.
    pub preload: Option<bool>,
    pub fire_at_ps: Option<u64>,
}
