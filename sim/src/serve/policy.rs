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

/// Batches of history in the default features (the seed's "last 10 windows").
pub const HISTORY: usize = 10;

/// Per-batch feature groups, in their column order.
pub const GROUPS: [&str; 3] = ["hit_rate", "read_mb", "addr_delta_mb"];

/// Which decision features a dataset records and a preload model reads:
/// whether the request's shard lives on another node, the worker's
/// outstanding requests, then for each of the worker's last `history`
/// batches (most recent first) the chosen groups — its feature-cache hit
/// rate, the MB it read, the mean item-address delta from the batch before
/// it (MB). Everything a dispatcher could have logged; nothing about the
/// future.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureSet {
    pub history: usize,
    /// Which of [`GROUPS`] are in.
    pub groups: [bool; 3],
}

impl Default for FeatureSet {
    fn default() -> Self {
        FeatureSet {
            history: HISTORY,
            groups: [true; 3],
        }
    }
}

impl FeatureSet {
    /// `groups`: a comma-separated subset of [`GROUPS`].
    pub fn parse(history: usize, groups: &str) -> Result<FeatureSet, String> {
        let mut g = [false; 3];
        for name in groups.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let Some(i) = GROUPS.iter().position(|x| *x == name) else {
                return Err(format!(
                    "unknown feature group {name:?}; expected some of {}",
                    GROUPS.join(",")
                ));
            };
            g[i] = true;
        }
        if history > 1000 {
            return Err(format!("history {history} is more than 1000 batches"));
        }
        Ok(FeatureSet { history, groups: g })
    }

    /// Column names, in order.
    pub fn names(&self) -> Vec<String> {
        let mut v = vec!["remote_shard".to_string(), "outstanding".to_string()];
        for k in 0..self.history {
            for (g, on) in GROUPS.iter().zip(self.groups) {
                if on {
                    v.push(format!("{g}_{k}"));
                }
            }
        }
        v
    }

    /// The set whose names are exactly `names` (a model's), if any.
    pub fn from_names(names: &[String]) -> Option<FeatureSet> {
        let groups = GROUPS.map(|g| names.iter().any(|n| n == &format!("{g}_0")));
        let per = groups.iter().filter(|&&x| x).count();
        let history = names.len().checked_sub(2)?.checked_div(per).unwrap_or(0);
        let fs = FeatureSet { history, groups };
        (fs.names() == names).then_some(fs)
    }
}

/// The default feature names (see [`FeatureSet`]).
pub fn feature_names() -> Vec<String> {
    FeatureSet::default().names()
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
    /// `features` are named by [`Preload::features`]' names.
    fn decide(&mut self, features: &[f64]) -> PreloadDecision;
    /// The features this policy reads (a model's are fixed by its file).
    fn features(&self) -> FeatureSet {
        FeatureSet::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_sets_name_their_columns_and_are_recovered_from_names() {
        let d = FeatureSet::default();
        assert_eq!(d.names().len(), 2 + 3 * HISTORY);
        assert_eq!(
            &d.names()[2..5],
            ["hit_rate_0", "read_mb_0", "addr_delta_mb_0"]
        );
        let fs = FeatureSet::parse(3, "addr_delta_mb, hit_rate").unwrap();
        assert_eq!(
            fs.names(),
            [
                "remote_shard",
                "outstanding",
                "hit_rate_0",
                "addr_delta_mb_0",
                "hit_rate_1",
                "addr_delta_mb_1",
                "hit_rate_2",
                "addr_delta_mb_2"
            ]
        );
        for f in [d, fs, FeatureSet::parse(0, "").unwrap()] {
            assert_eq!(FeatureSet::from_names(&f.names()), Some(f));
        }
        let mut odd = FeatureSet::default().names();
        odd.swap(2, 3);
        assert_eq!(FeatureSet::from_names(&odd), None, "order matters");
        assert!(FeatureSet::parse(2, "hit_rate,latency").is_err());
    }
}
