//! Typed errors of the task and prefetcher set-ups, in a leaf module: the
//! crate root's [`crate::LabError`] wraps them, so they must not import
//! the modules that import the root.

use policies::PolicyError;
use sim::tasks::TaskError;

use crate::workers::SpecError;

/// A prefetcher spec that does not attach.
#[derive(Debug, thiserror::Error)]
pub enum PrefetchError {
    #[error("{spec:?}: level {level:?} is neither a number nor one of {names}")]
    Level {
        spec: String,
        level: String,
        names: String,
    },
    #[error("{spec:?}: {error}")]
    Build { spec: String, error: PolicyError },
    /// The engine refused the prefetcher at its level: `from_spec` says
    /// whether the level came from the spec's `@LEVEL` (else it was the
    /// caller's default level).
    #[error("{spec:?}: {error}")]
    Engine {
        spec: String,
        error: sim::EngineError,
        from_spec: bool,
    },
}

/// A row's task replay that cannot be built or run.
#[derive(Debug, thiserror::Error)]
pub enum TaskRunError {
    #[error("row {row}: {error}")]
    Policy { row: String, error: PolicyError },
    #[error("row {row}: prefetch {error}")]
    Prefetch { row: String, error: PrefetchError },
    #[error("row {row}: {error}")]
    Engine {
        row: String,
        error: sim::EngineError,
    },
    #[error("workers {cores:?}: {error}")]
    Workers { cores: Vec<usize>, error: TaskError },
    #[error("row {row}: {error}")]
    Run { row: String, error: TaskError },
    /// A shared warm-up's state that the row's engine does not take.
    #[error("row {row}: the shared warm-up: {error}")]
    Warmed {
        row: String,
        error: sim::checkpoint::CheckpointError,
    },
    #[error("workload.arrivals {0}")]
    Arrivals(RetimeError),
    /// The workload's background jobs at line level.
    #[error("row {row}: {error}")]
    Jobs { row: String, error: JobsError },
    #[error("row {row}: {error}")]
    Preload {
        row: String,
        error: sim::tasks::PreloadError,
    },
}

/// A workload's background jobs that cannot run at line level.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    #[error("{0}")]
    Derive(#[from] traces::TraceError),
    #[error(
        "workload.background: a job on memory node {node} needs a core of that node that no worker holds"
    )]
    NoCore { node: u32 },
}

/// A request log that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LogReadError {
    #[error("{path}: cannot read request log: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Log {
        path: String,
        error: traces::TraceError,
    },
}

/// A task trace's arrivals that cannot be re-timed as asked (the caller
/// says where the spec came from: `--arrivals`, `workload.arrivals`).
#[derive(Debug, thiserror::Error)]
pub enum RetimeError {
    #[error("{0}")]
    Spec(SpecError),
    #[error("{spec}: {problem}")]
    Horizon {
        spec: String,
        problem: traces::Problem,
    },
    #[error("{0}")]
    Read(LogReadError),
    #[error(
        "{path}: the log has {requests} requests and the trace {tasks} tasks: task k arrives as the log's request k, so the log needs at least as many"
    )]
    Short {
        path: String,
        requests: usize,
        tasks: usize,
    },
    #[error(
        "{path}: request {index}: key {key} does not fit a task key (at most {})",
        u32::MAX
    )]
    Key {
        path: String,
        index: usize,
        key: u64,
    },
}
