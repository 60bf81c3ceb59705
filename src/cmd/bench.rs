//! `numasim bench --scenario NAME`: one row of the built-in seed experiment
//! (the article's `run_bench.py --scenario=...`).

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde_json::json;

use crate::experiment::{Experiment, parse_duration};
use crate::machines::load_machine;
use crate::output::{ensure_dir, write_file, write_json};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Row of the seed experiment: static, dynamic_lb, numa_aware, ai_predict.
    #[arg(long)]
    pub scenario: String,
    /// Simulated duration (10s, 30m, 1h); default the scenario's.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write requests.csv, summary.json, monitor.* and manifest.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write a Chrome trace-event / Perfetto timeline (JSON) of the run:
    /// batches and stalls per worker, queue lengths, memory bandwidth per
    /// node, background sweeps, shard moves.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// The simulated time the timeline covers, START..END.
    #[arg(long, default_value = "0..2s")]
    pub timeline_window: String,
    /// Also write OUT/report.html: tables, plots and manifest in one self-contained page.
    #[arg(long)]
    pub report: bool,
}

pub fn bench_cmd(a: BenchArgs) -> Result<()> {
    let mut exp = Experiment::seed()?;
    if let Some(d) = a.duration {
        exp.workload.duration_s = d;
    }
    let names: Vec<&str> = exp.row.iter().map(|r| r.name.as_str()).collect();
    let Some(row) = exp.row.iter().find(|r| r.name == a.scenario) else {
        bail!(
            "unknown --scenario {:?}; expected one of {}",
            a.scenario,
            names.join(", ")
        );
    };
    let m = load_machine(&exp.workload.machine, &exp.inputs)?;
    let wall = std::time::Instant::now();
    let window = a
        .timeline
        .as_ref()
        .map(|_| crate::timeline::parse_window(&a.timeline_window))
        .transpose()?;
    let keep = a.out.is_some() || window.is_some();
    let b = lab::bench::run(&m, &exp, row, a.seed, keep, window.map(|w| w.1))?;
    let secs = wall.elapsed().as_secs_f64();
    if let (Some(path), Some(w)) = (&a.timeline, window) {
        let ev = lab::timeline::serve::events(&b.run.records, &b.run.totals, w);
        write_file(path, lab::timeline::to_json(&ev)?.as_bytes())?;
    }
    print!("{}", b.text(&exp, row, a.seed));
    let n = b.run.totals.requests;
    println!(
        "simulated {n} requests in {secs:.2} s of wall time ({:.0} requests/s)",
        n as f64 / secs.max(1e-9)
    );
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        crate::output::write_all(dir, &b.files(row, a.seed)?)?;
        write_json(
            &dir.join("manifest.json"),
            &crate::manifest::manifest(
                Vec::new(),
                json!({ "scenario": row.name, "seed": a.seed }),
                &exp.inputs,
            ),
        )?;
    }
    crate::report::after(a.report, a.out.as_deref())
}
