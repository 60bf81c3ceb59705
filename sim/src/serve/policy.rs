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
