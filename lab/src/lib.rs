//! # lab — numasim's experiments as values
//!
//! The library under every front end (the `numasim` command line; the
//! Python package to come): what a user asks for, as plain values, and
//! what a run read, returned with its result so a manifest is made from
//! that value and parallel runs never mix.
//!
//! - [`input`]: a trace file opened (mapped or streamed), with a tap that
//!   counts and checksums the bytes read;
//! - [`inputs`]: the inputs a run read (files and built-in presets, with
//!   checksums), gathered in an [`InputLog`] the run owns;
//! - [`loaded_latency`]: Intel MLC's loaded-latency curve of the model;
//! - [`machines`]: a machine by preset name or file, noted in the log;
//! - [`manifest`]: `manifest.json`, from the inputs a run returns;
//! - [`models`]: model files for learned policies, noted in the log;
//! - [`dataset`]: training rows for the learned predictors (dispatch
//!   decisions or a trace's candidate prefetches);
//! - [`experiment`]: request-model experiments — the schema, a row's
//!   policies, one row on one seed;
//! - [`kinds`]: one type for an experiment file of either kind, the
//!   schema deciding which;
//! - [`tasks`]: task-trace experiments and the task replay under them;
//! - [`lines`]: a request-model experiment mapped onto the line-level
//!   task engine;
//! - [`compare`]: every row × seed of an experiment (any kind), paired, as
//!   one value;
//! - [`bench`]: one row of the built-in seed experiment, its text and files;
//! - [`calibrate`]: a host's measurements and their mapping onto a
//!   calibrated machine description;
//! - [`npy`]: datasets as NumPy arrays with their column names;
//! - [`outputs`]: the files a run produces, as named bytes the front end
//!   writes (the explicit sink), and the renderers runs share;
//! - [`prefetchers`]: prefetchers by spec, attached at their levels;
//! - [`dependent`]: the model of a live replay (one thread, every miss
//!   blocking) and [`confirm_fit`], which fits a calibrated machine's
//!   prefetcher confirmation count with it;
//! - [`replay`]: a trace through the cache model or the timing model;
//! - [`reproduce`]: a result folder against its rerun, and its inputs
//!   against their recorded checksums;
//! - [`sweep`]: a sweep file's grid or points, each point an experiment's
//!   text with its overrides applied;
//! - [`timeline`]: Perfetto timelines of a run, from its records;
//! - [`train`]: a predictor trained on a dataset split by time, and scored;
//! - [`validate`]: a trace simulated as the live replay runs it, and
//!   replayed live on a pinned CPU;
//! - [`errors`]: error types several modules share (a leaf, against import
//!   circles);
//! - [`workers`]: a task replay's worker cores and arrival re-timing.
//!
//! **Invariant:** `lab` keeps no process-global state, prints nothing and
//! knows no command-line flag; errors are typed ([`LabError`]) and name
//! the problem, and the front end maps them to its own words.

pub mod bench;
pub mod calibrate;
pub mod checkpoints;
pub mod compare;
pub mod confirm_fit;
pub mod custom;
pub mod dataset;
pub mod dependent;
pub mod errors;
pub mod experiment;
pub mod fill_fit;
pub mod frames_fit;
pub mod input;
pub mod inputs;
pub mod kinds;
pub mod lines;
pub mod loaded_latency;
pub mod machines;
pub mod manifest;
pub mod models;
pub mod npy;
pub mod outputs;
pub mod parts;
pub mod prefetchers;
pub mod replay;
pub mod reproduce;
pub mod request_logs;
pub mod slurm;
pub mod sweep;
pub mod task_files;
pub mod tasks;
pub mod timeline;
pub mod tlb_fit;
pub mod train;
pub mod validate;
pub mod workers;

pub use inputs::{Input, InputLog};

/// What can go wrong in `lab`.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A machine argument that is neither a preset nor a file.
    #[error("machine {arg:?}: no such preset ({presets}) and no such file")]
    NoMachine { arg: String, presets: String },
    /// A file that could not be read. (The cause is part of the message,
    /// not a separate source, so a chain of causes does not repeat it.)
    #[error("{path}: cannot read {what}: {error}")]
    Read {
        path: String,
        what: &'static str,
        error: std::io::Error,
    },
    /// A machine description that does not load.
    #[error("{origin}: {error}")]
    Machine {
        origin: String,
        error: sim::MachineError,
    },
    /// A model file that does not load.
    #[error("{path}: {error}")]
    Model {
        path: String,
        error: policies::PolicyError,
    },
    /// An experiment file that is not TOML of the schema.
    #[error("{origin}: {error}")]
    ExperimentToml {
        origin: String,
        error: traces::config::ConfigError,
    },
    #[error("{origin}: an experiment needs at least one [[row]]")]
    NoRows { origin: String },
    #[error("{origin}: no row {row:?} (rows: {rows})")]
    NoSuchRow {
        origin: String,
        row: String,
        rows: String,
    },
    /// One row kept out of an experiment's text.
    #[error("{origin}: {error}")]
    RowSelect {
        origin: String,
        error: toml::ser::Error,
    },
    #[error("{origin}: experiment.seeds is empty")]
    NoSeeds { origin: String },
    #[error("{origin}: workload: {problem}")]
    Workload {
        origin: String,
        problem: traces::Problem,
    },
    #[error("{origin}: row {row}: miss_share must be in (0, 1], found {value}")]
    MissShare {
        origin: String,
        row: String,
        value: f64,
    },
    /// A row's policies do not build.
    #[error("{origin}: row {row}: {error}")]
    RowPolicy {
        origin: String,
        row: String,
        error: policies::PolicyError,
    },
    /// A policy does not build.
    #[error("{0}")]
    Policy(#[from] policies::PolicyError),
    /// A run too long to simulate.
    #[error(
        "{rate} requests/s × {duration_s} s is about {per_run:.3e} requests per row and seed; numasim simulates at most {max} per run (about 10 minutes of wall time each): lower qps or duration_s"
    )]
    TooLarge {
        rate: f64,
        duration_s: f64,
        per_run: f64,
        max: u64,
    },
    /// The request model refused a row's run.
    #[error("row {row}: {error}")]
    Row {
        row: String,
        error: sim::serve::ServeError,
    },
    /// The paired run an oracle row is told the outcomes of.
    #[error("row {row} (its oracle's paired run): {error}")]
    Oracle {
        row: String,
        error: sim::serve::ServeError,
    },
    #[error("row {row}: its preload model reads other features than the dataset asks for")]
    FeatureMismatch { row: String },
    /// A run of one seed failed.
    #[error("seed {seed}: {error}")]
    AtSeed { seed: u64, error: Box<LabError> },
    /// A task-trace experiment without rows or seeds.
    #[error("{origin}: an experiment needs at least one [[row]] and one seed")]
    NoRowsOrSeeds { origin: String },
    /// A task-trace experiment's `workload.workers`.
    #[error("{origin}: workload.workers {error}")]
    Workers {
        origin: String,
        error: crate::workers::SpecError,
    },
    /// A request log that does not read.
    #[error(transparent)]
    RequestLog(#[from] crate::errors::LogReadError),
    /// A task trace that does not read.
    #[error("{path}: {error}")]
    TaskTrace {
        path: String,
        error: traces::TraceError,
    },
    /// A row's task replay.
    #[error(transparent)]
    Task(#[from] crate::errors::TaskRunError),
    /// A workload with no line-level mapping, or whose line-level trace
    /// cannot be derived.
    #[error("{origin}: {problem}")]
    LineWorkload {
        origin: String,
        problem: traces::Problem,
    },
    /// No row of the experiment has a line-level mapping.
    #[error("{origin}: no row runs at line level (every row moves shards or preloads)")]
    NoLineRows { origin: String },
    /// The worker threads could not start.
    #[error("thread pool: {0}")]
    Threads(rayon::ThreadPoolBuildError),
}
