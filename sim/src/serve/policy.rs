//! Scheduling and warm-up policy interfaces of the request-level model.
//!
//! ⚑ A scheduler sees only what a dispatcher could observe at that instant:
//! each worker's queue length, whether it is busy, its recent utilisation
//! and the memory stall of its recent batches — never future requests.

/// What a scheduler may know about a worker.
#[derive(Clone, Copy, Debug)]
pub struct WorkerView {
    pub id: usize,
    /// NUMA node of the worker's core (and accelerator).
    pub node: u32,
    /// Requests waiting in its queue.
    pub queued: usize,
    /// Running a batch now.
    pub busy: bool,
    /// Requests assigned and not finished: queued + in the running batch —
    /// the worker's instantaneous load (what a run-queue length shows).
    pub outstanding: usize,
    /// Share of a batch's slots free: max(0, 1 − outstanding / batch) — the
    /// "CPU idle fraction" the seed's dispatcher weighs.
    pub idle_fraction: f64,
    /// Busy fraction, exponentially averaged (time constant 100 ms), as a
    /// monitoring system would plot it. It lags: a dispatcher that balances on
    /// it sends every request of a window to one worker.
    pub utilization: f64,
    /// Data stall per request of its last batch (ms): the "recent memory
    /// access latency" of the seed's dispatcher.
    pub mem_latency_ms: f64,
    /// The same, exponentially averaged over batches (α = 0.2).
    pub mem_latency_ewma_ms: f64,
}

/// What a scheduler may know about the request being dispatched.
#[derive(Clone, Copy, Debug)]
pub struct RequestView {
    pub id: u64,
    pub shard: u32,
    /// Node holding the shard's data now.
    pub shard_node: u32,
    /// The shard's static worker (where static sharding binds it).
    pub shard_worker: usize,
    pub now_ns: u64,
}

/// Chooses a worker for each request.
pub trait Scheduler: Send {
    fn name(&self) -> String;
    /// Index into `workers` of the chosen worker.
    fn pick(&mut self, req: &RequestView, workers: &[WorkerView]) -> usize;
}

/// What to do before a moved shard takes traffic on its new worker.
pub trait Warmup: Send {
    fn name(&self) -> String;
    /// True: read the shard's state sequentially on the new node first, and
    /// switch traffic only when it is resident. False: switch at once; the
    /// first request pays the cold fetch.
    fn prefetch_before_traffic(&self) -> bool;
}

/// Number of features a [`Preload`] policy sees per decision (see
/// [`feature_names`]).
pub const FEATURES: usize = 2 + 3 * HISTORY;
/// Batches of history in the features (the seed's "last 10 windows").
pub const HISTORY: usize = 10;

/// Names of the decision features, in order: whether the request's shard
/// lives on another node, the worker's outstanding requests, then for each of
/// the worker's last 10 batches (most recent first) its feature-cache hit
/// rate, the MB it read, and the mean item-address delta from the batch
/// before it (MB). Everything a dispatcher could have logged; nothing about
/// the future.
pub fn feature_names() -> Vec<String> {
    let mut v = vec!["remote_shard".to_string(), "outstanding".to_string()];
    for k in 0..HISTORY {
        v.push(format!("hit_rate_{k}"));
        v.push(format!("read_mb_{k}"));
        v.push(format!("addr_delta_mb_{k}"));
    }
    v
}

/// What a preload policy decided for one request.
#[derive(Clone, Copy, Debug, Default)]
pub struct PreloadDecision {
    /// Bring the request's data to the worker's node ahead of its batch.
    pub preload: bool,
    /// Simulated cost of deciding, charged to the worker (ns).
    pub cost_ns: u64,
    /// The decision fell back to "no preload" (e.g. the predictor's cost
    /// exceeded its budget).
    pub fallback: bool,
    /// The predicted probability that the request would miss locally.
    pub probability: f64,
}

/// Decides, per request at dispatch, whether to preload its data (the
/// seed's "model-triggered preload").
pub trait Preload: Send {
    fn name(&self) -> String;
    /// Preload fires this long before the batch is expected to start (ns).
    fn window_ns(&self) -> u64;
    /// `features` has [`FEATURES`] entries named by [`feature_names`].
    fn decide(&mut self, features: &[f64]) -> PreloadDecision;
}
