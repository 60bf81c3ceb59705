//! `numasim compare` on a task trace: an experiment whose `[workload]`
//! names a recorded task trace (`trace`, `machine`, `workers`, optional
//! `arrivals`) and whose rows differ in `scheduler`, `placement` and
//! `prefetch`. Every row × seed replays the trace through the task engine;
//! latencies pair task by task, with the same table, `compare.csv`,
//! `compare.json` and plots as the request model's — in µs (tasks are
//! µs-scale): the statistics are fed latencies in ps, so every "ms" of the
//! shared code reads as µs, and the CSV's columns are named `_us`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::json;

use analysis::compare::{self, RunResult};

use crate::output::{ensure_dir, write_file, write_json};
use crate::task_runs::{Replay, replay_tasks};

fn d_first_touch() -> String {
    "first-touch".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceWorkload {
    /// The task trace (CSV or native), relative to the experiment file.
    trace: PathBuf,
    machine: String,
    /// `--workers` syntax: a count or a core list.
    workers: String,
    /// `poisson:QPS` re-times the arrivals, per seed; without it the
    /// trace's own arrivals are used by every seed.
    arrivals: Option<String>,
    mlp: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskRowSpec {
    name: String,
    scheduler: String,
    #[serde(default = "d_first_touch")]
    placement: String,
    #[serde(default)]
    prefetch: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskExperiment {
    experiment: crate::experiment::Meta,
    workload: TraceWorkload,
    row: Vec<TaskRowSpec>,
}

/// Whether an experiment file's workload is a task trace.
pub fn is_trace_experiment(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("workload")?.get("trace").cloned())
        .is_some()
}

/// One row on one seed: every task's latency (ps: read as µs by the
/// table) in task order.
fn run_one(
    m: &sim::Machine,
    exp: &TaskExperiment,
    trace: &traces::tasks::TaskTrace,
    cores: &[usize],
    row: &TaskRowSpec,
    seed: u64,
    log: &lab::InputLog,
) -> Result<RunResult> {
    let mut trace = trace.clone();
    if let Some(spec) = &exp.workload.arrivals {
        // The experiment's seed drives the arrivals (a seed in the spec is ignored).
        let (qps, _) = crate::workers::parse_arrivals(spec)?;
        trace
            .retime_poisson(qps, seed)
            .map_err(|p| anyhow::anyhow!("arrivals {spec}: {p}"))?;
    }
    let ctx = policies::registry::Ctx {
        seed,
        ..policies::registry::Ctx::for_machine(m)
    };
    let placement = policies::placement::PLACEMENTS
        .build(&row.placement, &ctx)
        .map_err(|e| anyhow::anyhow!("row {}: {e}", row.name))?;
    let how = Replay {
        row: &row.name,
        scheduler: &row.scheduler,
        prefetch: &row.prefetch,
        mlp: exp.workload.mlp,
        seed,
        log,
    };
    let (lat, span, memory_bytes) = replay_tasks(m, &trace, cores, placement, &how)?;
    Ok(RunResult {
        seed,
        requests: lat.len() as u64,
        latency_sum_ns: lat.iter().map(|&x| x as u128).sum(),
        latency_max_ns: lat.iter().copied().max().unwrap_or(0),
        latency_ns: lat,
        memory_bytes,
        span_ns: span,
        ..RunResult::default()
    })
}

pub fn run(
    path: &Path,
    text: &str,
    out: Option<&Path>,
    seeds: Option<&[u64]>,
    threads: Option<usize>,
    rec: &crate::manifest::Record,
) -> Result<()> {
    let origin = path.display().to_string();
    let mut exp: TaskExperiment =
        traces::config::parse_toml(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    if let Some(s) = seeds {
        exp.experiment.seeds = s.to_vec();
    }
    if exp.row.is_empty() || exp.experiment.seeds.is_empty() {
        bail!("{origin}: an experiment needs at least one [[row]] and one seed");
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let tpath = base.join(&exp.workload.trace);
    let (trace, _) = crate::task_io::load_tasks(&tpath)?;
    let log = lab::InputLog::default();
    let sum = crate::manifest::checksum_file(&tpath)
        .with_context(|| format!("{}: cannot read", tpath.display()))?;
    log.note(lab::Input {
        role: "trace".into(),
        path: Some(tpath.display().to_string()),
        preset: None,
        checksum: sum,
    });
    let m = crate::machines::load_machine(&exp.workload.machine, &log)?;
    let cores = crate::workers::worker_cores(&exp.workload.workers, &m)
        .with_context(|| format!("{origin}: workload.workers"))?;
    let jobs: Vec<(usize, u64)> = (0..exp.row.len())
        .flat_map(|r| exp.experiment.seeds.iter().map(move |&s| (r, s)))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("thread pool")?;
    let results: Vec<Result<RunResult>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(r, s)| run_one(&m, &exp, &trace, &cores, &exp.row[r], s, &log))
            .collect()
    });
    let mut by_row: Vec<Vec<RunResult>> = (0..exp.row.len()).map(|_| Vec::new()).collect();
    for ((r, _), res) in jobs.iter().zip(results) {
        by_row[*r].push(res?);
    }
    let names: Vec<String> = exp.row.iter().map(|r| r.name.clone()).collect();
    let table = compare::compare(
        &names,
        &by_row,
        exp.experiment.spike_k,
        exp.experiment.bootstrap,
    );
    if !rec.quiet {
        println!(
            "{} on {}: task trace {} ({} tasks, {} keys) on {} workers × {} seeds",
            exp.experiment.name,
            exp.workload.machine,
            exp.workload.trace.display(),
            trace.tasks.len(),
            trace.keys(),
            cores.len(),
            exp.experiment.seeds.len()
        );
        print!(
            "{}",
            compare::render_in(&table, exp.experiment.spike_k, "µs", "task")
        );
    }
    if let Some(dir) = out {
        ensure_dir(dir)?;
        write_file(
            &dir.join("compare.csv"),
            compare::to_csv_in(&table, "us")?.as_bytes(),
        )?;
        write_json(
            &dir.join("compare.json"),
            &json!({
                "experiment": exp.experiment.name,
                "machine": exp.workload.machine,
                "trace": exp.workload.trace,
                "workers": cores,
                "seeds": exp.experiment.seeds,
                "rows": table,
            }),
        )?;
        crate::experiment::write_latency_plots(
            dir,
            &format!("{}: task latency", exp.experiment.name),
            &names,
            &by_row,
        )?;
        let inputs = vec![rec.experiment.clone()];
        write_json(
            &dir.join("manifest.json"),
            &crate::manifest::manifest_as(
                &rec.args,
                inputs,
                json!({ "seeds": exp.experiment.seeds }),
                &log,
            ),
        )?;
    }
    Ok(())
}
