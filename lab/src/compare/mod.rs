//! Comparisons: every row × seed of an experiment on the same workload,
//! paired, as one value ([`Comparison`]) — what the front ends print and
//! write. One runner ([`rows_by_seeds`]) runs every kind: the request
//! model ([`flow`]), a recorded task trace ([`tasks`]) and a request-model
//! experiment at line level ([`lines`]).

pub mod files;

use analysis::compare::{Row, RunResult, Unit};
use rayon::prelude::*;
use sim::Machine;
use sim::serve::{RequestRecord, ServeTotals};

use crate::LabError;
use crate::experiment::{Experiment, RowSpec, run_row};
use crate::tasks::TaskExperiment;

/// How a comparison runs (nothing here changes its results).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads for rows × seeds (default: every core).
    pub threads: Option<usize>,
    /// Keep every row's first-seed requests (for `requests-<row>.csv`).
    pub keep_records: bool,
    /// Keep row `.0`'s first-seed requests and per-node bandwidth up to
    /// `.1` ps (for a timeline).
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
    /// The unit its latencies are shown in (the kind's: ms for requests,
    /// µs for tasks).
    pub unit: Unit,
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

/// A pool of `threads` worker threads (default: every core).
fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, LabError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(LabError::Threads)
}

/// The one rows × seeds runner: `run(row, seed index)` for every pair,
/// in parallel on `threads` threads (default: every core); the results by
/// row, each in seed order, whatever the thread count. `progress` is
/// called after each run with (runs done, runs in all). The first error,
/// in row-then-seed order, is returned.
pub fn rows_by_seeds<R: Send>(
    rows: usize,
    seeds: usize,
    threads: Option<usize>,
    progress: &(dyn Fn(usize, usize) + Sync),
    run: impl Fn(usize, usize) -> Result<R, LabError> + Sync,
) -> Result<Vec<Vec<R>>, LabError> {
    let pool = pool(threads)?;
    let jobs: Vec<(usize, usize)> = (0..rows)
        .flat_map(|r| (0..seeds).map(move |s| (r, s)))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<R, LabError>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(r, s)| {
                let out = run(r, s);
                let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(d, jobs.len());
                out
            })
            .collect()
    });
    let mut by_row: Vec<Vec<R>> = (0..rows).map(|_| Vec::with_capacity(seeds)).collect();
    for (&(r, _), res) in jobs.iter().zip(results) {
        by_row[r].push(res?);
    }
    Ok(by_row)
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
    let seeds = &exp.experiment.seeds;
    let runs = rows_by_seeds(
        exp.row.len(),
        seeds.len(),
        opts.threads,
        progress,
        |r, s| {
            let shown = opts.timeline.filter(|t| t.0 == r && s == 0);
            let keep = (opts.keep_records || shown.is_some()) && s == 0;
            run_row(
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
            })
        },
    )?;
    let mut simulated = 0u64;
    let rows: Vec<RowRuns> = exp
        .row
        .iter()
        .zip(runs)
        .map(|(spec, runs)| {
            let mut row = RowRuns {
                name: spec.name.clone(),
                runs: Vec::new(),
                first_records: Vec::new(),
                first_totals: ServeTotals::default(),
                predict_wall_ns: Vec::new(),
            };
            for (s, run) in runs.into_iter().enumerate() {
                simulated += run.totals.requests;
                row.runs.push(run.result);
                row.predict_wall_ns.extend(run.predict_wall_ns);
                if s == 0 {
                    row.first_records = run.records;
                    row.first_totals = run.totals;
                }
            }
            row
        })
        .collect();
    // Requests simulated, not the sample the statistics came from.
    let mut c = finish(
        rows,
        Unit::Ms,
        exp.experiment.spike_k,
        exp.experiment.bootstrap,
    );
    c.simulated = simulated;
    Ok(c)
}

/// Rows of plain runs (no request records) as a comparison's rows.
fn plain_rows(names: Vec<String>, by_row: Vec<Vec<RunResult>>) -> Vec<RowRuns> {
    names
        .into_iter()
        .zip(by_row)
        .map(|(name, runs)| RowRuns {
            name,
            runs,
            first_records: Vec::new(),
            first_totals: ServeTotals::default(),
            predict_wall_ns: Vec::new(),
        })
        .collect()
}

/// The paired table of `rows`, its latencies in `unit`.
fn finish(rows: Vec<RowRuns>, unit: Unit, spike_k: f64, bootstrap: usize) -> Comparison {
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let by_row: Vec<Vec<RunResult>> = rows.iter().map(|r| r.runs.clone()).collect();
    let table = analysis::compare::compare(&names, &by_row, unit, spike_k, bootstrap);
    let simulated = by_row.iter().flatten().map(|r| r.requests).sum();
    Comparison {
        rows,
        table,
        unit,
        simulated,
    }
}

/// A task-trace comparison: the rows' runs (latencies shown in µs) and
/// what ran.
pub struct TaskComparison {
    pub comparison: Comparison,
    /// The workers' cores.
    pub cores: Vec<usize>,
    /// The trace's tasks and keys.
    pub tasks: usize,
    pub keys: usize,
    /// Warm-ups run once for several rows: one per placement, prefetchers
    /// and seed that rows share ([`crate::tasks::warm_key`]), none without
    /// warm-up records (a row whose key no other row has warms itself).
    pub warmups: usize,
}

/// Every row × seed of a task-trace experiment (its trace's path relative
/// to `exp.base`); the trace and machine are noted in `exp.inputs`.
pub fn tasks(
    exp: &TaskExperiment,
    origin: &str,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<TaskComparison, LabError> {
    if exp.row.is_empty() || exp.experiment.seeds.is_empty() {
        return Err(LabError::NoRowsOrSeeds {
            origin: origin.to_string(),
        });
    }
    let log = &exp.inputs;
    let tpath = exp.base.join(&exp.workload.trace);
    let trace = crate::tasks::read(&tpath, log)?;
    let m = crate::machines::load(&exp.workload.machine, log)?;
    let cores =
        crate::workers::cores(&exp.workload.workers, &m).map_err(|error| LabError::Workers {
            origin: origin.to_string(),
            error,
        })?;
    let seeds = &exp.experiment.seeds;
    // Rows of one placement and prefetchers share the trace's warm-up on a
    // seed: it runs once (the first such row × seed), the rows fork from
    // its state, and each row's results are those of warming by itself. A
    // key only one row has warms in that row's own run.
    let key_of = |r: usize, s: usize| crate::tasks::warm_key(&exp.row[r], seeds[s]);
    let (mut keys, mut makers) = (Vec::new(), Vec::new());
    let shared = |r: usize, s: usize| {
        (0..exp.row.len())
            .filter(|&o| key_of(o, s) == key_of(r, s))
            .count()
            > 1
    };
    for (r, s) in (0..exp.row.len()).flat_map(|r| (0..seeds.len()).map(move |s| (r, s))) {
        if !trace.warmup.is_empty() && !keys.contains(&key_of(r, s)) && shared(r, s) {
            keys.push(key_of(r, s));
            makers.push((r, s));
        }
    }
    let states = rows_by_seeds(makers.len(), 1, opts.threads, &|_, _| {}, |i, _| {
        let (r, s) = makers[i];
        let row = &exp.row[r];
        Ok(crate::tasks::warm_state(
            &m, exp, &trace, &cores, row, seeds[s], log,
        )?)
    })?;
    let warmed = |r, s| {
        let i = keys.iter().position(|k| *k == key_of(r, s))?;
        Some(states[i][0].as_slice())
    };
    let by_row = rows_by_seeds(
        exp.row.len(),
        seeds.len(),
        opts.threads,
        progress,
        |r, s| {
            Ok(crate::tasks::run_one(
                &m,
                exp,
                &trace,
                &cores,
                &exp.row[r],
                seeds[s],
                log,
                warmed(r, s),
            )?)
        },
    )?;
    let names = exp.row.iter().map(|r| r.name.clone()).collect();
    Ok(TaskComparison {
        comparison: finish(
            plain_rows(names, by_row),
            Unit::Us,
            exp.experiment.spike_k,
            exp.experiment.bootstrap,
        ),
        cores,
        tasks: trace.tasks.len(),
        keys: trace.keys(),
        warmups: keys.len(),
    })
}

/// A line-level comparison: every row, in ns.
pub struct LineComparison {
    pub comparison: Comparison,
    pub cores: Vec<usize>,
    /// Line reads per feature item.
    pub lines_per_item: u64,
    /// How the workload was scaled to run ([`crate::lines::scale`]), and
    /// the workload that ran.
    pub scaled: Option<crate::lines::Scaling>,
    pub workload: traces::workload::WorkloadSpec,
}

/// Every row × seed of a request-model experiment at line level
/// (`crate::lines`), on the experiment's machine.
pub fn lines(
    exp: &Experiment,
    origin: &str,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<LineComparison, LabError> {
    crate::lines::check(exp, origin)?;
    let mut scaled_exp = exp.clone();
    let scaled = crate::lines::scale(&mut scaled_exp.workload);
    let exp = &scaled_exp;
    let m = crate::machines::load(&exp.workload.machine, &exp.inputs)?;
    let rows: Vec<&RowSpec> = exp.row.iter().collect();
    if rows.is_empty() {
        return Err(LabError::NoLineRows {
            origin: origin.to_string(),
        });
    }
    let map = crate::lines::Mapping::new(exp, &m);
    let seeds = &exp.experiment.seeds;
    let pool = pool(opts.threads)?;
    let traces: Vec<traces::tasks::TaskTrace> = pool
        .install(|| {
            seeds
                .par_iter()
                .map(|&s| map.trace(exp, s))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| LabError::LineWorkload {
            origin: origin.to_string(),
            problem: e.problem,
        })?;
    let by_row = rows_by_seeds(rows.len(), seeds.len(), opts.threads, progress, |r, s| {
        Ok(map.run(&m, exp, rows[r], seeds[s], &traces[s])?)
    })?;
    let names = rows.iter().map(|r| r.name.clone()).collect();
    Ok(LineComparison {
        comparison: finish(
            plain_rows(names, by_row),
            Unit::Ms,
            exp.experiment.spike_k,
            exp.experiment.bootstrap,
        ),
        cores: map.cores,
        lines_per_item: map.layout.lines_per_item,
        scaled,
        workload: exp.workload.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_returns_by_row_in_seed_order_whatever_the_threads() {
        let run = |r: usize, s: usize| -> Result<(usize, usize), LabError> { Ok((r, s)) };
        for threads in [1, 2, 5] {
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let by_row = rows_by_seeds(
                3,
                4,
                Some(threads),
                &|_, n| {
                    assert_eq!(n, 12);
                    calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                },
                run,
            )
            .unwrap();
            let want: Vec<Vec<(usize, usize)>> =
                (0..3).map(|r| (0..4).map(|s| (r, s)).collect()).collect();
            assert_eq!(by_row, want, "{threads} threads");
            assert_eq!(calls.into_inner(), 12, "progress after every run");
        }
    }

    #[test]
    fn the_runner_reports_the_first_failure_in_row_then_seed_order() {
        let e = rows_by_seeds(3, 3, Some(3), &|_, _| {}, |r, s| {
            if (r, s) == (1, 2) || (r, s) == (2, 0) {
                Err(LabError::NoRowsOrSeeds {
                    origin: format!("{r}/{s}"),
                })
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("1/2:"), "{e}");
    }
}
