//! Training data for the learned predictors, one row per decision point,
//! with the time (or access index) so users split by time:
//!
//! - [`requests`]: one row per dispatch decision of the request-level
//!   model — features at dispatch, label "the request's lookups missed the
//!   worker node's cache" (the preload model);
//! - [`trace`]: one row per line the base prefetcher proposes at each data
//!   access — the features of `learned:FILE`
//!   (`policies::prefetch::learned`), label "the line was accessed within
//!   `window` accesses" (the prefetch-filter model). An access's miss flag
//!   comes from an LRU model of the level the filter would sit at.
//!
//! The command line writes a [`Dataset`] as CSV or `.npy`; the Python
//! package returns it as arrays.

use policies::prefetch::learned::{self, RowBuilder};
use sim::cache::{Cache, Replacement};
use sim::geometry::Geometry;
use sim::policy::{FeatureSet, Prefetcher};
use traces::{Batch, Kind, RecordSource, TraceError};

use crate::experiment::{Experiment, RowSpec, run_row};
use crate::{InputLog, LabError};

/// Rows with their column names.
pub struct Dataset {
    /// The feature columns (without `time_ns`, `id` and `label`).
    pub features: Vec<String>,
    /// (time or access index, id, features, label), in time order.
    pub rows: Vec<(u64, u64, Vec<f64>, bool)>,
}

impl Dataset {
    /// Every column: `time_ns`, `id`, the features, `label`.
    pub fn columns(&self) -> Vec<String> {
        let mut h = vec!["time_ns".to_string(), "id".to_string()];
        h.extend(self.features.iter().cloned());
        h.push("label".into());
        h
    }

    /// The rows as float64 values in [`Dataset::columns`] order.
    pub fn matrix(&self) -> Vec<Vec<f64>> {
        self.rows
            .iter()
            .map(|(t, id, f, l)| {
                let mut v = vec![*t as f64, *id as f64];
                v.extend(f);
                v.push(*l as u8 as f64);
                v
            })
            .collect()
    }

    /// The rows as CSV fields in [`Dataset::columns`] order (integers as
    /// integers, features in Rust's shortest round-trip form).
    pub fn text_rows(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|(t, id, f, l)| {
                let mut v = vec![t.to_string(), id.to_string()];
                v.extend(f.iter().map(f64::to_string));
                v.push((*l as u8).to_string());
                v
            })
            .collect()
    }

    /// Rows with a positive label.
    pub fn positives(&self) -> usize {
        self.rows.iter().filter(|r| r.3).count()
    }
}

/// Dispatch decisions of `row` of the request-level experiment `exp` on
/// machine `m`, with the features of `fs`.
pub fn requests(
    m: &sim::Machine,
    exp: &Experiment,
    row: &RowSpec,
    seed: u64,
    fs: &FeatureSet,
) -> Result<Dataset, LabError> {
    exp.check_size()?;
    let run = run_row(m, exp, row, seed, false, Some(fs), None)?;
    let mut rows = run.dataset;
    rows.sort_by_key(|r| (r.time_ps, r.id));
    Ok(Dataset {
        features: fs.names(),
        rows: rows
            .into_iter()
            .map(|r| (r.time_ps / 1000, r.id, r.features, r.label))
            .collect(),
    })
}

/// What to record of a trace.
pub struct TraceAsk {
    /// The level whose misses the features see (LRU).
    pub level: Geometry,
    /// The base prefetcher whose proposals become rows.
    pub base: Box<dyn Prefetcher>,
    /// A proposed line is useful if accessed within this many accesses.
    pub window: u64,
    /// Rows kept at most (later accesses still label).
    pub max_rows: usize,
    /// Past accesses in the features.
    pub history: usize,
}

/// Candidate prefetches over the data accesses of `source` (an empty
/// dataset if the base prefetcher proposed nothing).
pub fn trace(source: &mut dyn RecordSource, ask: TraceAsk) -> Result<Dataset, TraceError> {
    let mut level = Cache::new(ask.level, Replacement::Lru, 0);
    let mut b = RowBuilder::new(ask.base, ask.window, ask.max_rows, ask.history);
    let mut batch = Batch::new(source.fields());
    loop {
        batch.clear();
        if source.fill(&mut batch)? == 0 {
            break;
        }
        for i in 0..batch.len() {
            let x = batch.acc[i];
            if x.kind == Kind::IFetch {
                continue;
            }
            let line = x.addr >> 6;
            let write = matches!(x.kind, Kind::Store | Kind::Modify);
            let miss = !level.probe(line, write);
            if miss {
                level.fill(line, write);
            }
            b.access(batch.pc_of(i), x.addr, line, miss, write);
        }
    }
    Ok(Dataset {
        features: learned::feature_names(ask.history),
        rows: b
            .finish()
            .into_iter()
            .map(|r| (r.index, r.index, r.features, r.label))
            .collect(),
    })
}

/// The trace dataset as the command line's flags and Python's keywords
/// name it.
pub struct TraceSpec<'a> {
    /// The base prefetcher (a registry spec) whose proposals become rows.
    pub prefetcher: &'a str,
    /// A proposed line is useful if accessed within this many accesses.
    pub window: u64,
    /// The level whose misses the features see, `SIZE,ASSOC` (64-byte
    /// lines); without it and `machine`, 1M,16.
    pub level: Option<&'a str>,
    /// A machine (preset or file) whose private level `prefetch_level` is
    /// the level the features see.
    pub machine: Option<&'a str>,
    pub prefetch_level: usize,
    /// Rows kept at most (later accesses still label).
    pub max_rows: usize,
    /// Past accesses in the features (at most 1000).
    pub history: usize,
}

impl Default for TraceSpec<'_> {
    fn default() -> Self {
        TraceSpec {
            prefetcher: "delta:2",
            window: 2000,
            level: None,
            machine: None,
            prefetch_level: 1,
            max_rows: 2_000_000,
            history: 10,
        }
    }
}

/// Why a trace dataset is not made.
#[derive(Debug, thiserror::Error)]
pub enum TraceDatasetError {
    #[error("history {0}: at most 1000 past accesses")]
    History(usize),
    #[error("prefetch_level {level}: {machine} has {levels} private data levels")]
    PrivateLevels {
        level: usize,
        machine: String,
        levels: usize,
    },
    #[error("{machine} {cache}: {error}")]
    MachineLevel {
        machine: String,
        cache: String,
        error: sim::geometry::GeometryError,
    },
    #[error("level {0:?}: expected SIZE,ASSOC (e.g. 1M,16)")]
    LevelForm(String),
    #[error("level {text:?} (SIZE,ASSOC, e.g. 1M,16): {error}")]
    Level {
        text: String,
        error: sim::geometry::GeometryError,
    },
    #[error("level and machine: give one")]
    Both,
    #[error(transparent)]
    Machine(LabError),
    #[error(transparent)]
    Prefetcher(policies::PolicyError),
    #[error("the base prefetcher {0} proposed nothing on this trace")]
    Empty(String),
    /// The trace does not decode (the caller names the file).
    #[error(transparent)]
    Trace(TraceError),
}

/// The level `spec` names: `machine`'s private level `prefetch_level`, or
/// `level` (`SIZE,ASSOC`, 64-byte lines).
pub fn trace_level(spec: &TraceSpec, log: &InputLog) -> Result<Geometry, TraceDatasetError> {
    match (spec.machine, spec.level) {
        (Some(_), Some(_)) => Err(TraceDatasetError::Both),
        (Some(name), None) => {
            let m = crate::machines::load(name, log).map_err(TraceDatasetError::Machine)?;
            let caches = &m.spec.core.caches;
            let c = caches.get(spec.prefetch_level).ok_or_else(|| {
                TraceDatasetError::PrivateLevels {
                    level: spec.prefetch_level,
                    machine: name.to_string(),
                    levels: caches.len(),
                }
            })?;
            Geometry::new(c.size.0, c.assoc, 64).map_err(|error| TraceDatasetError::MachineLevel {
                machine: name.to_string(),
                cache: c.name.clone(),
                error,
            })
        }
        (None, text) => {
            // SIZE,ASSOC with 64-byte lines: the cachegrind syntax's parser.
            let text = text.unwrap_or("1M,16");
            if text.matches(',').count() != 1 {
                return Err(TraceDatasetError::LevelForm(text.to_string()));
            }
            format!("{text},64")
                .parse::<Geometry>()
                .map_err(|error| TraceDatasetError::Level {
                    text: text.to_string(),
                    error,
                })
        }
    }
}

/// Candidate prefetches over the data accesses of `source`, as `spec`
/// asks; an error if the base prefetcher proposed nothing.
pub fn trace_named(
    source: &mut dyn RecordSource,
    spec: &TraceSpec,
    log: &InputLog,
) -> Result<Dataset, TraceDatasetError> {
    if spec.history > 1000 {
        return Err(TraceDatasetError::History(spec.history));
    }
    let level = trace_level(spec, log)?;
    let base = crate::prefetchers::one(spec.prefetcher, 64, 1, log)
        .map_err(TraceDatasetError::Prefetcher)?;
    let ask = TraceAsk {
        level,
        base,
        window: spec.window,
        max_rows: spec.max_rows,
        history: spec.history,
    };
    let d = trace(source, ask).map_err(TraceDatasetError::Trace)?;
    if d.rows.is_empty() {
        return Err(TraceDatasetError::Empty(spec.prefetcher.to_string()));
    }
    Ok(d)
}
