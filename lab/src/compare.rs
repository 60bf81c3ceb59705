//! Comparisons: every row × seed of an experiment on the same workload,
//! paired, as one value ([`Comparison`]) — what the front ends print and
//! write. The request model's runner is here ([`flow`]); the task-trace
//! and line-level runners are still the binary's (issue 26).

use analysis::compare::{Row, RunResult};
use rayon::prelude::*;
use sim::Machine;
use sim::serve::{RequestRecord, ServeTotals};

use crate::LabError;
use crate::experiment::{Experiment, RowRun, run_row};

/// How a comparison runs (nothing here changes its results).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads for rows × seeds (default: every core).
    pub threads: Option<usize>,
    /// Keep every row's first-seed requests (for `requests-<row>.csv`).
    pub keep_records: bool,
    /// Keep row `.0`'s first-seed requests and per-node bandwidth up to
    /// `.1` ns (for a timeline).
    pub timeline: Option<(usize, u64)>,
}

/// One row's runs.
pub struct RowRuns {
    pub name: String,
    /// One per seed, in the experiment's seed order.
    pub runs: Vec<RunResult>,
    /// The first seed's requests, when kept; and its totals.
    pub first_records: Vec<RequestRecord>,
    pub first_totals: ServeTotals,
    /// Real (wall-clock) prediction times of learned preloads, all seeds.
    pub predict_wall_ns: Vec<u64>,
}

/// A finished comparison.
pub struct Comparison {
    pub rows: Vec<RowRuns>,
    /// The paired table (`compare.csv`'s rows).
    pub table: Vec<Row>,
    /// Requests simulated over every row and seed.
    pub simulated: u64,
}

impl Comparison {
    /// Every row's runs, by row.
    pub fn by_row(&self) -> Vec<Vec<RunResult>> {
        self.rows.iter().map(|r| r.runs.clone()).collect()
    }

    /// The row names, in order.
    pub fn names(&self) -> Vec<String> {
        self.rows.iter().map(|r| r.name.clone()).collect()
    }
}

/// Every row × seed of `exp` on the request model (machine `m`), in
/// parallel; results do not depend on `opts.threads`. `progress` is called
/// after each run with (runs done, runs in all).
pub fn flow(
    exp: &Experiment,
    m: &Machine,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Comparison, LabError> {
    exp.check_size()?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(LabError::Threads)?;
    let seeds = &exp.experiment.seeds;
    let jobs: Vec<(usize, usize)> = (0..exp.row.len())
        .flat_map(|r| (0..seeds.len()).map(move |s| (r, s)))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<RowRun, LabError>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(r, s)| {
                let shown = opts.timeline.filter(|t| t.0 == r && s == 0);
                let keep = (opts.keep_records || shown.is_some()) && s == 0;
                let run = run_row(
                    m,
                    exp,
                    &exp.row[r],
                    seeds[s],
                    keep,
                    None,
                    shown.map(|t| t.1),
                )
                .map_err(|error| LabError::AtSeed {
                    seed: seeds[s],
                    error: Box::new(error),
                });
                let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(d, jobs.len());
                run
            })
            .collect()
    });
    let mut rows: Vec<RowRuns> = exp
        .row
        .iter()
        .map(|r| RowRuns {
            name: r.name.clone(),
            runs: Vec::new(),
            first_records: Vec::new(),
            first_totals: ServeTotals::default(),
            predict_wall_ns: Vec::new(),
        })
        .collect();
    let mut simulated = 0u64;
    for (&(r, s), res) in jobs.iter().zip(results) {
        let run = res?;
        simulated += run.totals.requests;
        let row = &mut rows[r];
        row.runs.push(run.result);
        row.predict_wall_ns.extend(run.predict_wall_ns);
        if s == 0 {
            row.first_records = run.records;
            row.first_totals = run.totals;
        }
    }
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let by_row: Vec<Vec<RunResult>> = rows.iter().map(|r| r.runs.clone()).collect();
    let table = analysis::compare::compare(
        &names,
        &by_row,
        exp.experiment.spike_k,
        exp.experiment.bootstrap,
    );
    Ok(Comparison {
        rows,
        table,
        simulated,
    })
}
