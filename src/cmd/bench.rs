//! `numasim bench --scenario NAME`: one row of the built-in seed experiment
//! (the article's `run_bench.py --scenario=...`).

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde_json::json;

use crate::experiment::{Experiment, parse_duration, run_row};
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
    exp.check_size()?;
    let m = load_machine(&exp.workload.machine, &exp.inputs)?;
    let wall = std::time::Instant::now();
    let window = a
        .timeline
        .as_ref()
        .map(|_| crate::timeline::parse_window(&a.timeline_window))
        .transpose()?;
    let run = run_row(
        &m,
        &exp,
        row,
        a.seed,
        a.out.is_some() || window.is_some(),
        None,
        window.map(|w| w.1),
    )?;
    if let (Some(path), Some(w)) = (&a.timeline, window) {
        let ev = lab::timeline::serve::events(&run.records, &run.totals, w);
        write_file(path, lab::timeline::to_json(&ev)?.as_bytes())?;
    }
    let (rr, totals, recs) = (run.result, run.totals, run.records);
    let secs = wall.elapsed().as_secs_f64();
    // Percentiles and spikes from the kept latencies (every request, or a
    // uniform sample of them in a long run); the mean and max are exact.
    let mut p = analysis::stats::percentiles(&rr.latency_ns);
    if rr.requests > 0 {
        p.mean_ms = rr.latency_sum_ns as f64 / rr.requests as f64 / 1e6;
        p.max_ms = rr.latency_max_ns as f64 / 1e6;
    }
    let spikes = analysis::stats::spike_share(&rr.latency_ns, exp.experiment.spike_k);
    println!(
        "scenario {} ({} dispatch, warm-up {}) on {} at {:.0} QPS for {} s, seed {}",
        row.name,
        row.scheduler,
        row.warmup,
        exp.workload.machine,
        exp.workload.qps,
        exp.workload.duration_s,
        a.seed
    );
    println!(
        "requests {}  TP50 {:.1} ms  TP90 {:.1}  TP99 {:.1}  TP99.9 {:.1}  max {:.1}  spikes >{}×TP50 {:.2}%",
        rr.requests,
        p.tp50_ms,
        p.tp90_ms,
        p.tp99_ms,
        p.tp999_ms,
        p.max_ms,
        exp.experiment.spike_k,
        100.0 * spikes
    );
    if rr.sampled {
        println!("{}", sample_line(p.n, rr.requests));
    }
    println!(
        "simulated {} requests in {:.2} s of wall time ({:.0} requests/s)",
        totals.requests,
        secs,
        totals.requests as f64 / secs.max(1e-9)
    );
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        let mut files = lab::outputs::Outputs::default();
        files.add("requests.csv", lab::outputs::requests_csv(&recs)?);
        lab::outputs::monitor(
            &mut files,
            &format!("scenario {}: monitoring, seed {}", row.name, a.seed),
            &[(row.name.clone(), rr.windows.clone())],
        )?;
        crate::output::write_all(dir, &files)?;
        write_json(
            &dir.join("summary.json"),
            &json!({
                "scenario": row.name,
                "requests_simulated": rr.requests,
                "requests_in_sample": p.n,
                "sampled": rr.sampled,
                "percentiles": p,
                "spike_share": spikes,
                "totals": totals
            }),
        )?;
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

/// The line that says the statistics come from a sample: `n` latencies
/// kept of `total` requests simulated.
pub fn sample_line(n: usize, total: u64) -> String {
    format!(
        "statistics from a uniform sample of {n} requests (of {total} simulated: percentiles and spikes; mean and max over all)"
    )
}
