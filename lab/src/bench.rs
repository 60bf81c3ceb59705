//! One row of the built-in seed experiment on one seed (the article's
//! `run_bench.py --scenario=...`): the run, its statistics, its text and
//! its files.

use serde_json::json;

use crate::LabError;
use crate::experiment::{Experiment, RowRun, RowSpec, run_row};
use crate::outputs::{OutputError, Outputs};

/// A bench run and its statistics.
pub struct Bench {
    pub run: RowRun,
    /// Percentiles and spikes from the kept latencies (every request, or
    /// a uniform sample of them in a long run); the mean and max are exact.
    pub percentiles: analysis::stats::Percentiles,
    pub spike_share: f64,
}

/// Runs `row` of `exp` on `m` with `seed`; `keep` keeps every request's
/// record, `bandwidth_until_ps` per-node bandwidth up to then (a timeline).
pub fn run(
    m: &sim::Machine,
    exp: &Experiment,
    row: &RowSpec,
    seed: u64,
    keep: bool,
    bandwidth_until_ps: Option<u64>,
) -> Result<Bench, LabError> {
    exp.check_size()?;
    let run = run_row(m, exp, row, seed, keep, None, bandwidth_until_ps)?;
    let rr = &run.result;
    // Shown in ms: statistics of whole ns (the request model's resolution).
    let mut ns: Vec<u64> = rr.latency.iter().map(|&ps| ps / 1000).collect();
    ns.sort_unstable();
    let mut p = analysis::stats::percentiles_sorted(&ns);
    if rr.requests > 0 {
        let ms = analysis::compare::Unit::Ms;
        p.mean = ms.mean_of_ps(rr.latency_sum, rr.requests);
        p.max = ms.of_ps(rr.latency_max);
    }
    let spike_share = analysis::stats::spike_share_sorted(&ns, exp.experiment.spike_k);
    Ok(Bench {
        run,
        percentiles: p,
        spike_share,
    })
}

/// The line that says the statistics come from a sample: `n` latencies
/// kept of `total` requests simulated.
pub fn sample_line(n: usize, total: u64) -> String {
    format!(
        "statistics from a uniform sample of {n} requests (of {total} simulated: percentiles and spikes; mean and max over all)"
    )
}

impl Bench {
    /// The heading and result lines, as printed.
    pub fn text(&self, exp: &Experiment, row: &RowSpec, seed: u64) -> String {
        let (rr, p) = (&self.run.result, &self.percentiles);
        let mut s = format!(
            "scenario {} ({} dispatch, warm-up {}) on {} at {:.0} QPS for {} s, seed {seed}\n",
            row.name,
            row.scheduler,
            row.warmup,
            exp.workload.machine,
            exp.workload.qps,
            exp.workload.duration_s,
        );
        s += &format!(
            "requests {}  TP50 {:.1} ms  TP90 {:.1}  TP99 {:.1}  TP99.9 {:.1}  max {:.1}  spikes >{}×TP50 {:.2}%\n",
            rr.requests,
            p.tp50,
            p.tp90,
            p.tp99,
            p.tp999,
            p.max,
            exp.experiment.spike_k,
            100.0 * self.spike_share
        );
        if rr.sampled {
            s += &sample_line(p.n, rr.requests);
            s.push('\n');
        }
        s
    }

    /// `requests.csv`, the monitoring chart and `summary.json`.
    pub fn files(&self, row: &RowSpec, seed: u64) -> Result<Outputs, OutputError> {
        let (rr, p) = (&self.run.result, &self.percentiles);
        let mut files = Outputs::default();
        files.add(
            "requests.csv",
            crate::outputs::requests_csv(&self.run.records)?,
        );
        crate::outputs::monitor(
            &mut files,
            &format!("scenario {}: monitoring, seed {seed}", row.name),
            &[(row.name.clone(), rr.windows.clone())],
        )?;
        files.json(
            "summary.json",
            &json!({
                "scenario": row.name,
                "requests_simulated": rr.requests,
                "requests_in_sample": p.n,
                "sampled": rr.sampled,
                "percentiles": {
                    "n": p.n, "mean_ms": p.mean, "tp50_ms": p.tp50, "tp90_ms": p.tp90,
                    "tp99_ms": p.tp99, "tp999_ms": p.tp999, "max_ms": p.max,
                },
                "spike_share": self.spike_share,
                "totals": self.run.totals
            }),
        );
        Ok(files)
    }
}
