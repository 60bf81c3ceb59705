//! `numasim compare EXPERIMENT.toml`: every row × seed of an experiment on
//! the same workload, paired, with bootstrap confidence intervals
//! (`crate::comparison` runs it and writes its files).

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::comparison::Ask;
use crate::experiment::parse_duration;

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Experiment file (TOML): [experiment], [workload], [[row]]s.
    pub experiment: PathBuf,
    /// Write compare.csv, compare.json, SVG plots, requests-<row>.csv (first seed) and manifest.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override the workload duration (10s, 30m, 1h).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// Override the seeds (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub seeds: Option<Vec<u64>>,
    /// Worker threads for running rows × seeds in parallel (results do not depend on it).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Override the workload's mean arrival rate (requests/s).
    #[arg(long)]
    pub qps: Option<f64>,
    /// Write a Chrome trace-event / Perfetto timeline (JSON) of one row's first seed (--timeline-row):
    /// batches and stalls per worker, queue lengths, memory bandwidth per
    /// node, background sweeps, shard moves.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// The simulated time the timeline covers, START..END.
    #[arg(long, default_value = "0..2s")]
    pub timeline_window: String,
    /// The row --timeline shows (default: the first).
    #[arg(long)]
    pub timeline_row: Option<String>,
    /// Also write OUT/report.html: tables, plots and manifest in one self-contained page.
    #[arg(long)]
    pub report: bool,
    /// Which model runs a request workload: flow (the request model: byte
    /// flows through queues, seconds for the article's 30 minutes) or lines
    /// (every feature lookup as line reads through the task engine's
    /// caches, directory, channels and links; docs/fidelity.md). A task
    /// trace workload always runs at line level.
    /// [default: flow]
    #[arg(long, value_parser = ["flow", "lines"])]
    pub fidelity: Option<String>,
    /// Run only these rows (comma-separated names), as a sweep's rows do.
    #[arg(long, value_delimiter = ',')]
    pub rows: Option<Vec<String>>,
    /// Override a dotted field of the experiment, as a sweep's grid key
    /// does: workload.qps=3000, workload.machine="xeon-2s",
    /// row.static.scheduler="least-loaded", rows.warmup="sequential".
    /// Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = lab::sweep::parse_override)]
    pub set: Vec<(String, toml::Value)>,
}

pub fn compare_cmd(a: CompareArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.experiment)
        .with_context(|| format!("{}: cannot read experiment", a.experiment.display()))?;
    let run = if a.rows.is_some() || !a.set.is_empty() {
        lab::sweep::apply(&text, &a.experiment, a.rows.as_deref(), &a.set)
            .map_err(|e| anyhow::anyhow!("{}: --rows/--set: {e:#}", a.experiment.display()))?
    } else {
        text.clone()
    };
    let ask = Ask {
        experiment: a.experiment.clone(),
        out: a.out,
        duration: a.duration,
        seeds: a.seeds,
        threads: a.threads,
        qps: a.qps,
        timeline: a.timeline,
        timeline_window: a.timeline_window,
        timeline_row: a.timeline_row,
        report: a.report,
        fidelity: a.fidelity,
        recorded: None,
        quiet: false,
    };
    crate::comparison::run(&ask, &run, &text)
}
