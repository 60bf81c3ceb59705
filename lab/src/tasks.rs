//! Task-trace experiments and the task replay under them.
//!
//! An experiment whose `[workload]` names a recorded task trace (`trace`,
//! `machine`, `workers`, optional `arrivals` and `mlp`) and whose rows
//! differ in `scheduler`, `placement` and `prefetch`: every row × seed
//! replays the trace on workers pinned to cores, through the timing model
//! ([`replay`], which the line-level mapping uses too).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use analysis::compare::RunResult;
use serde::Deserialize;

use crate::custom::CustomPolicies;
use crate::experiment::Meta;
use crate::{InputLog, LabError};

fn d_first_touch() -> String {
    "first-touch".into()
}

/// `[workload]` of a task-trace experiment.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceWorkload {
    /// The task trace (CSV or native), relative to the experiment file.
    pub trace: PathBuf,
    pub machine: String,
    /// A count or a core list ([`crate::workers::cores`]).
    pub workers: String,
    /// `poisson:QPS` re-times the arrivals, per seed; `log:FILE` by a
    /// request log (relative to the experiment file); without it the
    /// trace's own arrivals are used by every seed.
    pub arrivals: Option<String>,
    pub mlp: Option<u32>,
}

/// A row: how the trace's tasks are dispatched, placed and prefetched.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRowSpec {
    pub name: String,
    pub scheduler: String,
    #[serde(default = "d_first_touch")]
    pub placement: String,
    #[serde(default)]
    pub prefetch: Vec<String>,
}

/// A task-trace experiment.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskExperiment {
    pub experiment: Meta,
    pub workload: TraceWorkload,
    pub row: Vec<TaskRowSpec>,
    /// Directory the trace's path is resolved against.
    #[serde(skip)]
    pub base: PathBuf,
    /// What runs of this experiment read (trace, machine, models).
    #[serde(skip)]
    pub inputs: InputLog,
    /// Schedulers a front end supplies beside the registry.
    #[serde(skip)]
    pub custom: Option<Arc<dyn CustomPolicies>>,
    /// The arrivals spec as last parsed (a log is read once, not per run).
    #[serde(skip)]
    pub retime: RetimeCache,
}

/// A parsed arrivals spec, kept with the spec and directory it came from.
pub type RetimeCache =
    Arc<std::sync::Mutex<Option<(String, PathBuf, Arc<crate::request_logs::Retime>)>>>;

/// `exp`'s arrivals spec `spec`, parsed once.
fn retime_of(
    exp: &TaskExperiment,
    spec: &str,
    log: &InputLog,
) -> Result<Arc<crate::request_logs::Retime>, crate::errors::RetimeError> {
    // The first run parses under the lock; the others wait, then reuse it.
    let mut cache = exp.retime.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((s, base, r)) = cache.as_ref()
        && s == spec
        && *base == exp.base
    {
        if let crate::request_logs::Retime::Log { input, .. } = &**r {
            // Noted among this run's inputs too.
            log.note(input.clone());
        }
        return Ok(r.clone());
    }
    let r = Arc::new(crate::request_logs::Retime::parse(spec, &exp.base, log)?);
    *cache = Some((spec.to_string(), exp.base.clone(), r.clone()));
    Ok(r)
}

/// Reads a task trace (CSV or native, a compression layer unwrapped),
/// noted in `log` as the run's trace.
pub fn read(path: &Path, log: &InputLog) -> Result<traces::tasks::TaskTrace, LabError> {
    let io = |error| LabError::Read {
        path: path.display().to_string(),
        what: "task trace",
        error,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let (trace, _) =
        traces::task_native::read_task_trace(Box::new(f)).map_err(|error| LabError::TaskTrace {
            path: path.display().to_string(),
            error,
        })?;
    let checksum = crate::inputs::checksum_file(path).map_err(io)?;
    log.note(crate::Input {
        role: "trace".into(),
        path: Some(path.display().to_string()),
        preset: None,
        checksum,
    });
    Ok(trace)
}

pub use crate::errors::TaskRunError;

/// How one row replays: its name (for errors), scheduler, prefetchers,
/// the cores' MLP and the seed.
pub struct Replay<'a> {
    pub row: &'a str,
    pub scheduler: &'a str,
    pub prefetch: &'a [String],
    pub mlp: Option<u32>,
    pub seed: u64,
    /// Where model files its prefetchers read are noted.
    pub log: &'a InputLog,
    /// Schedulers supplied beside the registry, asked first.
    pub custom: Option<&'a dyn CustomPolicies>,
    /// Tasks a worker takes at once and a batch's fixed cost (ps):
    /// `(1, 0)` for a recorded trace, the request model's batch at line
    /// level.
    pub batching: (usize, u64),
    /// The engine's state after the trace's warm-up, run once for the rows
    /// that share it ([`warm_state`]); `None` runs the warm-up.
    pub warmed: Option<&'a [u8]>,
}

/// What a request model's row adds to a task replay at line level
/// (`crate::lines`); none for a recorded trace.
#[derive(Default)]
pub struct Beside {
    /// Background jobs: (core, job).
    pub jobs: Vec<(usize, traces::tasks::Task)>,
    pub preload: Option<sim::tasks::TaskPreload>,
    pub moves: Option<sim::tasks::Moves>,
}

/// One replay's outcome.
pub struct Replayed {
    /// Every task's latency (ps), in trace order.
    pub latency_ps: Vec<u64>,
    /// The last task's end (ps).
    pub span_ps: u64,
    /// Bytes the memory channels moved.
    pub memory_bytes: u64,
    /// Every task's accesses memory served, in trace order.
    pub memory_lines: Vec<u64>,
    /// The preload's counts, if one ran.
    pub preload: Option<sim::tasks::PreloadStats>,
}

/// What a task engine is built from.
pub struct Build<'a> {
    pub scheduler: &'a str,
    pub placement: Box<dyn sim::Placement>,
    /// Prefetcher specs (`SPEC[@LEVEL]`, without a level at `cfg.prefetch_level`).
    pub prefetch: &'a [String],
    pub cfg: sim::Config,
    pub seed: u64,
    /// Where model files its policies read are noted.
    pub log: &'a InputLog,
    /// Schedulers supplied beside the registry, asked first.
    pub custom: Option<&'a dyn CustomPolicies>,
}

/// A task engine that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("scheduler: {0}")]
    Scheduler(policies::PolicyError),
    #[error(transparent)]
    Engine(sim::EngineError),
    #[error("prefetch {0}")]
    Prefetch(crate::errors::PrefetchError),
    #[error("workers: {0}")]
    Workers(sim::tasks::TaskError),
}

/// The task engine on `m` with workers at `cores`.
pub fn engine<'m>(
    m: &'m sim::Machine,
    cores: &[usize],
    b: Build,
) -> Result<sim::tasks::TaskEngine<'m>, BuildError> {
    let ctx = policies::registry::Ctx {
        seed: b.seed,
        ..policies::registry::Ctx::for_machine(m)
    };
    let sched = match b.custom.and_then(|c| c.scheduler(b.scheduler)) {
        Some(built) => built,
        None => policies::sched::SCHEDULERS.build(b.scheduler, &ctx),
    }
    .map_err(BuildError::Scheduler)?;
    let level = b.cfg.prefetch_level;
    let mut engine = sim::Engine::new(m, b.cfg, b.placement).map_err(BuildError::Engine)?;
    crate::prefetchers::attach(&mut engine, m, b.prefetch, level, b.log)
        .map_err(BuildError::Prefetch)?;
    sim::tasks::TaskEngine::new(engine, m, cores, sched).map_err(BuildError::Workers)
}

/// A row's task engine, as [`replay`] runs it (before its warm-up).
fn row_engine<'m>(
    m: &'m sim::Machine,
    cores: &[usize],
    placement: Box<dyn sim::Placement>,
    how: &Replay,
) -> Result<sim::tasks::TaskEngine<'m>, TaskRunError> {
    let row = || how.row.to_string();
    let build = Build {
        scheduler: how.scheduler,
        placement,
        prefetch: how.prefetch,
        cfg: sim::Config {
            mlp: how.mlp,
            prefetch_level: 1,
            ..sim::Config::default()
        },
        seed: how.seed,
        log: how.log,
        custom: how.custom,
    };
    let mut te = engine(m, cores, build).map_err(|e| match e {
        BuildError::Scheduler(error) => TaskRunError::Policy { row: row(), error },
        BuildError::Engine(error) => TaskRunError::Engine { row: row(), error },
        BuildError::Prefetch(error) => TaskRunError::Prefetch { row: row(), error },
        BuildError::Workers(error) => TaskRunError::Workers {
            cores: cores.to_vec(),
            error,
        },
    })?;
    te.set_batching(how.batching.0, how.batching.1);
    Ok(te)
}

/// Replays `trace` on workers at `cores` through the timing model
/// (prefetchers at the first private level past L1).
pub fn replay(
    m: &sim::Machine,
    trace: &traces::tasks::TaskTrace,
    cores: &[usize],
    placement: Box<dyn sim::Placement>,
    how: &Replay,
    beside: Beside,
) -> Result<Replayed, TaskRunError> {
    let Beside {
        jobs,
        preload,
        moves,
    } = beside;
    let row = || how.row.to_string();
    let mut te = row_engine(m, cores, placement, how)?;
    if let Some(state) = how.warmed {
        te.start_warmed(state)
            .map_err(|error| TaskRunError::Warmed { row: row(), error })?;
    }
    te.set_jobs(m, jobs)
        .map_err(|error| TaskRunError::Workers {
            cores: cores.to_vec(),
            error,
        })?;
    if let Some(p) = preload {
        te.set_preload(p);
    }
    if let Some(mv) = moves {
        te.set_moves(mv)
            .map_err(|error| TaskRunError::Run { row: row(), error })?;
    }
    let mut lat = vec![0u64; trace.tasks.len()];
    let mut memory_lines = vec![0u64; trace.tasks.len()];
    let index: std::collections::HashMap<u32, usize> = trace
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    let mut span = 0u64;
    te.run(trace, |r| {
        lat[index[&r.task]] = r.latency_ps();
        memory_lines[index[&r.task]] = r.memory_lines;
        span = span.max(r.end_ps);
    })
    .map_err(|error| TaskRunError::Run { row: row(), error })?;
    Ok(Replayed {
        latency_ps: lat,
        span_ps: span,
        memory_bytes: te.engine.summary().memory.bytes,
        memory_lines,
        preload: te.preload_stats(),
    })
}

/// Runs every task of `trace` on `te`: the records in arrival order (ties
/// by task id), as `replay --workers` reports them.
pub fn records(
    te: &mut sim::tasks::TaskEngine,
    trace: &traces::tasks::TaskTrace,
) -> Result<Vec<sim::tasks::TaskRecord>, sim::tasks::TaskError> {
    let mut recs = Vec::with_capacity(trace.tasks.len());
    te.run(trace, |r| recs.push(*r))?;
    recs.sort_by_key(|r| (r.arrival_ps, r.task));
    Ok(recs)
}

/// Runs `trace` on `te`, sampled as `sample` if given (see
/// `sim::tasks::TaskEngine::set_sample`): the records [`records`] gives
/// (in a sampled run, the measured tasks') and the memory system's summary
/// (with the sampled estimates).
pub fn replay_summary(
    te: &mut sim::tasks::TaskEngine,
    trace: &traces::tasks::TaskTrace,
    sample: Option<sim::timing::Sample>,
) -> Result<(Vec<sim::tasks::TaskRecord>, sim::Summary), sim::tasks::TaskError> {
    if let Some(shape) = sample {
        te.set_sample(shape)?;
    }
    let recs = records(te, trace)?;
    Ok((recs, te.summary()?))
}

/// `summary.json` of a task replay: the memory system's `summary` with a
/// `tasks` section (count, workers' cores, scheduler, latency percentiles,
/// mean queueing and service, all in ms; over the measured tasks only in
/// a sampled run, then marked `measured_only`).
pub fn summary_json(
    summary: &sim::Summary,
    recs: &[sim::tasks::TaskRecord],
    cores: &[usize],
    scheduler: &str,
) -> Result<serde_json::Value, serde_json::Error> {
    let st = TaskStats::of(recs);
    let lat = &st.latency;
    let mut s = serde_json::to_value(summary)?;
    s["tasks"] = serde_json::json!({
        "count": recs.len(),
        "workers": cores,
        "scheduler": scheduler,
        "latency_ms": { "mean": lat.mean, "p50": lat.tp50, "p90": lat.tp90, "p99": lat.tp99, "p999": lat.tp999, "max": lat.max },
        "queue_ms": { "mean": st.queue_mean_ms },
        "service_ms": { "mean": st.service_mean_ms },
    });
    if summary.sampled.is_some() {
        // A sampled run's records are its measured tasks only.
        s["tasks"]["measured_only"] = true.into();
    }
    Ok(s)
}

/// `tasks.csv` of a task replay: one [`TaskRow`] per record.
pub fn tasks_csv(recs: &[sim::tasks::TaskRecord]) -> Result<String, analysis::table::TableError> {
    let rows: Vec<TaskRow> = recs.iter().map(Into::into).collect();
    analysis::table::to_csv(&rows)
}

/// One line of `tasks.csv` (times in ns).
#[derive(serde::Serialize, Default)]
pub struct TaskRow {
    pub task: u32,
    pub key: u32,
    pub worker: u32,
    pub core: u32,
    pub node: u32,
    pub arrival_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub queue_ns: u64,
    pub service_ns: u64,
    pub accesses: u64,
    pub misses: u64,
}

impl From<&sim::tasks::TaskRecord> for TaskRow {
    fn from(r: &sim::tasks::TaskRecord) -> TaskRow {
        TaskRow {
            task: r.task,
            key: r.key,
            worker: r.worker,
            core: r.core,
            node: r.node,
            arrival_ns: r.arrival_ps / 1000,
            start_ns: r.start_ps / 1000,
            end_ns: r.end_ps / 1000,
            queue_ns: r.queue_ps() / 1000,
            service_ns: r.service_ps() / 1000,
            accesses: r.accesses,
            misses: r.misses,
        }
    }
}

/// Task latency statistics of one replay (ms): the latency percentiles
/// and the mean queueing and service times.
pub struct TaskStats {
    pub latency: analysis::stats::Percentiles,
    pub queue_mean_ms: f64,
    pub service_mean_ms: f64,
}

impl TaskStats {
    pub fn of(recs: &[sim::tasks::TaskRecord]) -> TaskStats {
        let ns: Vec<u64> = recs.iter().map(|r| r.latency_ps() / 1000).collect();
        let mean = |f: fn(&sim::tasks::TaskRecord) -> u64| {
            if recs.is_empty() {
                0.0
            } else {
                recs.iter().map(|r| f(r) as f64).sum::<f64>() / recs.len() as f64 / 1e9
            }
        };
        TaskStats {
            latency: analysis::stats::percentiles(&ns),
            queue_mean_ms: mean(|r| r.queue_ps()),
            service_mean_ms: mean(|r| r.service_ps()),
        }
    }
}

/// A run's result from per-task latencies `lat` (ps).
pub fn run_result(seed: u64, lat: Vec<u64>, span_ps: u64, memory_bytes: u64) -> RunResult {
    RunResult {
        seed,
        requests: lat.len() as u64,
        latency_sum: lat.iter().map(|&x| x as u128).sum(),
        latency_max: lat.iter().copied().max().unwrap_or(0),
        latency: lat,
        memory_bytes,
        span_ps,
        ..RunResult::default()
    }
}

/// What a row's warm-up state depends on besides the experiment's machine,
/// workers and trace: its placement, its prefetchers and the seed. Rows
/// with the same key share one warm-up ([`warm_state`]).
pub fn warm_key(row: &TaskRowSpec, seed: u64) -> (String, Vec<String>, u64) {
    (row.placement.clone(), row.prefetch.clone(), seed)
}

/// The engine state after `trace`'s warm-up for `row` on `seed`, to give
/// [`run_one`] every row of the same [`warm_key`]: the warm-up runs once,
/// the rows fork from it, and their results are those of running it each.
pub fn warm_state(
    m: &sim::Machine,
    exp: &TaskExperiment,
    trace: &traces::tasks::TaskTrace,
    cores: &[usize],
    row: &TaskRowSpec,
    seed: u64,
    log: &InputLog,
) -> Result<Vec<u8>, TaskRunError> {
    let (placement, how) = row_setup(m, exp, row, seed, log)?;
    Ok(row_engine(m, cores, placement, &how)?.warm_state(trace))
}

/// One row of a task-trace experiment on one seed: every task's latency
/// in ps (the task engine's clock) in task order; from `warmed` (its
/// [`warm_state`]) if given, else running the trace's warm-up.
#[allow(clippy::too_many_arguments)]
pub fn run_one(
    m: &sim::Machine,
    exp: &TaskExperiment,
    trace: &traces::tasks::TaskTrace,
    cores: &[usize],
    row: &TaskRowSpec,
    seed: u64,
    log: &InputLog,
    warmed: Option<&[u8]>,
) -> Result<RunResult, TaskRunError> {
    let mut trace = trace.clone();
    if let Some(spec) = &exp.workload.arrivals {
        // The experiment's seed drives a Poisson re-timing (a seed in the
        // spec is ignored).
        retime_of(exp, spec, log)
            .and_then(|r| r.apply(&mut trace, Some(seed)))
            .map_err(TaskRunError::Arrivals)?;
    }
    let (placement, mut how) = row_setup(m, exp, row, seed, log)?;
    how.warmed = warmed;
    let r = replay(m, &trace, cores, placement, &how, Beside::default())?;
    Ok(run_result(seed, r.latency_ps, r.span_ps, r.memory_bytes))
}

/// A row's placement and replay settings on one seed.
fn row_setup<'a>(
    m: &sim::Machine,
    exp: &'a TaskExperiment,
    row: &'a TaskRowSpec,
    seed: u64,
    log: &'a InputLog,
) -> Result<(Box<dyn sim::Placement>, Replay<'a>), TaskRunError> {
    let ctx = policies::registry::Ctx {
        seed,
        ..policies::registry::Ctx::for_machine(m)
    };
    let placement = policies::placement::PLACEMENTS
        .build(&row.placement, &ctx)
        .map_err(|error| TaskRunError::Policy {
            row: row.name.clone(),
            error,
        })?;
    let how = Replay {
        row: &row.name,
        scheduler: &row.scheduler,
        prefetch: &row.prefetch,
        mlp: exp.workload.mlp,
        seed,
        log,
        custom: exp.custom.as_deref(),
        batching: (1, 0),
        warmed: None,
    };
    Ok((placement, how))
}
