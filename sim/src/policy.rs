//! Every policy interface of numasim, and what each policy is shown.
//!
//! One module, one naming scheme: a trait per kind of decision, and a
//! `*View` struct per thing a policy observes.
//!
//! | kind | trait | sees | decides |
//! |---|---|---|---|
//! | page placement | [`Placement`] | [`PageView`] | a page's home node; migrations |
//! | cache prefetch | [`Prefetcher`] | [`AccessView`] | lines to bring into a private level |
//! | scheduling | [`Scheduler`] | [`RequestView`], [`WorkerView`] | the worker a request or task runs on |
//! | warm-up | [`Warmup`] | — | whether a moved shard is pre-read before traffic |
//! | preload | [`Preload`] | decision features ([`FeatureSet`]) | whether to bring a request's data ahead |
//!
//! Implementations live in the `policies` crate, one file each, registered
//! by name. The scheduler interface is the same for the request-level model
//! ([`crate::serve`]: a request's key is its shard) and for tasks on the
//! line-level model (a task's affinity key).
//!
//! ⚑ A policy sees only what a real system could observe at that moment —
//! counters, queue lengths, past latencies — never future records. Oracle
//! policies exist only as named upper bounds.

use crate::checkpoint::CheckpointError;
use crate::machine::Machine;

// ---- page placement ----

/// What a policy sees of a memory access.
#[derive(Clone, Copy, Debug)]
pub struct PageView {
    /// Page number (virtual address / page size, whatever the machine's
    /// `frames`).
    pub page: u64,
    /// Node of the core that accessed it.
    pub from: u32,
    /// Node whose memory holds the page now.
    pub home: u32,
    /// Simulated time (ps).
    pub now_ps: u64,
}

/// A page-placement policy.
pub trait Placement: Send {
    /// Name as it appears in results (`first-touch`, `bind:1`, ...).
    fn name(&self) -> String;

    /// Home node of `page`, first touched by a core on node `from`.
    fn place(&mut self, page: u64, from: u32, machine: &Machine) -> u32;

    /// Called for every access served by memory. Returning `Some(node)`
    /// migrates the page there now (the copy is charged to channels and links).
    fn on_memory_access(&mut self, _seen: PageView, _machine: &Machine) -> Option<u32> {
        None
    }

    /// The policy's mutable state for a checkpoint
    /// ([`crate::checkpoint::encode`] of it); nothing for a stateless one.
    fn save_state(&self) -> Vec<u8> {
        Vec::new()
    }

    /// Takes back what [`Placement::save_state`] gave.
    fn load_state(&mut self, state: &[u8]) -> Result<(), CheckpointError> {
        stateless(&self.name(), state)
    }
}

/// A stateless policy's [`Placement::load_state`]: only an empty state.
pub fn stateless(name: &str, state: &[u8]) -> Result<(), CheckpointError> {
    if state.is_empty() {
        Ok(())
    } else {
        Err(CheckpointError::PolicyState(name.to_string()))
    }
}

// ---- cache prefetch ----

/// What the prefetcher sees of one demand access.
#[derive(Clone, Copy, Debug)]
pub struct AccessView {
    pub core: usize,
    /// Program counter, if the trace gives one.
    pub pc: Option<u64>,
    pub addr: u64,
    /// The access missed the prefetcher's level.
    pub miss: bool,
    /// The access was served by memory (it missed every cache).
    pub from_memory: bool,
    /// The access is the first use of a line this prefetcher brought in (the
    /// trigger of "tagged" prefetching).
    pub prefetch_hit: bool,
    pub write: bool,
}

/// A prefetcher, one instance per machine (index its tables by `core`).
pub trait Prefetcher: Send {
    /// Name as reported (`ip-stride:2:1`, ...).
    fn name(&self) -> String;
    /// Observes a demand access to line number `line` (address / line
    /// size); pushes the line numbers to prefetch.
    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>);
    /// Simulated time (ps) the prefetcher spent deciding since the last
    /// call; the engine adds it to the access's latency (the core stalls).
    fn take_cost_ps(&mut self) -> u64 {
        0
    }
    /// How many fills from the cache level named `from` (a private level
    /// below the prefetcher's, or the LLC), of the lines the last
    /// [`Prefetcher::on_access`] named, may be in flight at once for one
    /// core (`None`: no limit; fills from the LLC are still bounded by the
    /// prefetch queue): such a fill waits for the earliest of them to
    /// finish. A host runs a stride
    /// less far ahead from its caches than from memory (issue 29); this is
    /// the model's reading of that, by Little's law.
    fn fills_from(&self, from: &str) -> Option<usize> {
        let _ = from;
        None
    }

    /// The prefetcher's tables for a checkpoint (see [`Placement::save_state`]).
    fn save_state(&self) -> Vec<u8> {
        Vec::new()
    }

    /// Takes back what [`Prefetcher::save_state`] gave.
    fn load_state(&mut self, state: &[u8]) -> Result<(), CheckpointError> {
        stateless(&self.name(), state)
    }
}

// ---- scheduling, warm-up, preload ----
//
// These traits are an edge of the engines' time: a policy is told and
// answers in ns (`now_ns`, `window_ns`, `cost_ns`) and ms (stalls), as its
// parameters are written; the engine converts to and from its ps once,
// where it calls the policy.

/// What a scheduler may know about a worker. "Requests" are requests in
/// the request-level model and tasks on the line-level model. Both engines
/// build it with `crate::signals::Signals::view`, whose module doc defines
/// every signal once; the notes here say what each is for.
#[derive(Clone, Copy, Debug)]
pub struct WorkerView {
    pub id: usize,
    /// NUMA node of the worker's core (and accelerator).
    pub node: u32,
    /// Requests waiting in its queue.
    pub queued: usize,
    /// Running now.
    pub busy: bool,
    /// Requests assigned and not finished: queued + running —
    /// the worker's instantaneous load (what a run-queue length shows).
    pub outstanding: usize,
    /// Share of its slots free — the "CPU idle fraction" the seed's
    /// dispatcher weighs.
    pub idle_fraction: f64,
    /// Busy fraction, averaged as a monitoring system would plot it. It
    /// lags: a dispatcher that balances on it sends every request of a
    /// window to one worker.
    pub utilization: f64,
    /// Memory stall of its last batch or task (ms): the "recent memory
    /// access latency" of the seed's dispatcher.
    pub stall_ms: f64,
    /// The same, averaged over batches or tasks.
    pub stall_ewma_ms: f64,
}

/// What a scheduler may know about the request (or task) being dispatched.
#[derive(Clone, Copy, Debug)]
pub struct RequestView {
    pub id: u64,
    /// Affinity key: the request's model shard, or a task's key (shard,
    /// tenant, ...).
    pub key: u32,
    /// Node holding the key's data now.
    pub data_node: u32,
    /// The key's static worker (where static sharding binds it).
    pub home_worker: usize,
    pub now_ns: u64,
}

/// Chooses a worker for each request or task.
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

/// Longest history a feature set may ask for (batches).
pub const MAX_HISTORY: usize = 1000;

/// A feature set that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    #[error(
        "unknown feature group {0:?}; expected some of cached_share,hit_rate,read_mb,addr_delta_mb"
    )]
    UnknownGroup(String),
    #[error("history {0} is more than {MAX_HISTORY} batches")]
    History(usize),
}

/// The per-request feature: share of the request's lookups cached at dispatch.
pub const CACHED: &str = "cached_share";

/// Per-batch feature groups, in their column order.
pub const GROUPS: [&str; 3] = ["hit_rate", "read_mb", "addr_delta_mb"];

/// Which decision features a dataset records and a preload model reads:
/// whether the request's shard lives on another node, the worker's
/// outstanding requests, optionally the share of the request's own lookups
/// whose items are in the worker node's feature cache at dispatch
/// (`cached_share`: a request carries its keys, and the cache is the
/// service's own, so a dispatcher can ask), then for each of the worker's last `history`
/// batches (most recent first) the chosen groups — its feature-cache hit
/// rate, the MB it read, the mean item-address delta from the batch before
/// it (MB). Everything a dispatcher could have logged; nothing about the
/// future.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureSet {
    /// `cached_share` is in.
    pub cached: bool,
    pub history: usize,
    /// Which of [`GROUPS`] are in.
    pub groups: [bool; 3],
}

impl Default for FeatureSet {
    fn default() -> Self {
        FeatureSet {
            cached: true,
            history: HISTORY,
            groups: [true; 3],
        }
    }
}

impl FeatureSet {
    /// `groups`: a comma-separated subset of [`GROUPS`] and [`CACHED`].
    pub fn parse(history: usize, groups: &str) -> Result<FeatureSet, FeatureError> {
        let mut g = [false; 3];
        let mut cached = false;
        for name in groups.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            if name == CACHED {
                cached = true;
                continue;
            }
            let Some(i) = GROUPS.iter().position(|x| *x == name) else {
                return Err(FeatureError::UnknownGroup(name.to_string()));
            };
            g[i] = true;
        }
        if history > MAX_HISTORY {
            return Err(FeatureError::History(history));
        }
        Ok(FeatureSet {
            cached,
            history,
            groups: g,
        })
    }

    /// Column names, in order.
    pub fn names(&self) -> Vec<String> {
        let mut v = vec!["remote_shard".to_string(), "outstanding".to_string()];
        if self.cached {
            v.push(CACHED.to_string());
        }
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
        let cached = names.iter().any(|n| n == CACHED);
        let per = groups.iter().filter(|&&x| x).count();
        let history = names
            .len()
            .checked_sub(2 + cached as usize)?
            .checked_div(per)
            .unwrap_or(0);
        let fs = FeatureSet {
            cached,
            history,
            groups,
        };
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
    /// `features` are named by [`Preload::features`]' names. `truth` is
    /// `None` — except for an [`Preload::oracle`], which is handed whether
    /// the request will miss.
    fn decide(&mut self, features: &[f64], truth: Option<bool>) -> PreloadDecision;
    /// An upper bound, not a policy a real system could run: it is told
    /// the outcome it predicts (from a paired run of the same seed without
    /// preload), and every table flags its row.
    fn oracle(&self) -> bool {
        false
    }
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
        assert_eq!(d.names().len(), 3 + 3 * HISTORY);
        assert_eq!(
            &d.names()[2..6],
            ["cached_share", "hit_rate_0", "read_mb_0", "addr_delta_mb_0"]
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
        let with_cached = FeatureSet::parse(2, "hit_rate,cached_share").unwrap();
        assert_eq!(
            with_cached.names(),
            [
                "remote_shard",
                "outstanding",
                "cached_share",
                "hit_rate_0",
                "hit_rate_1"
            ]
        );
        for f in [d, fs, with_cached, FeatureSet::parse(0, "").unwrap()] {
            assert_eq!(FeatureSet::from_names(&f.names()), Some(f));
        }
        let mut odd = FeatureSet::default().names();
        odd.swap(3, 4);
        assert_eq!(FeatureSet::from_names(&odd), None, "order matters");
        assert!(FeatureSet::parse(2, "hit_rate,latency").is_err());
    }
}
