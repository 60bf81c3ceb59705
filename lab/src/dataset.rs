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

use crate::LabError;
use crate::experiment::{Experiment, RowSpec, run_row};

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
