//! Experiments of the request-level model: the experiment file's schema
//! (`[experiment]`, `[workload]`, `[[row]]`s), building a row's policies
//! from the registries, and running one row on one seed (`run_row`) —
//! shared by `compare`, `bench` and `dataset`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use policies::registry::{Ctx, Timer};
use serde::Deserialize;
use sim::Machine;
use sim::policy::{Preload, Scheduler, Warmup};
use sim::serve::{RequestRecord, ServeEngine, ServeTotals};
use traces::workload::WorkloadSpec;

use analysis::compare::RunResult;

use crate::output::write_file;
use crate::policy::FileLoader;

/// The seed experiment, built in so `bench` works anywhere.
pub const SEED_SCENARIO: &str = include_str!("../scenarios/seed-inference.toml");
/// Its learned model, built in too (written to a temporary directory on use).
pub const SEED_MODEL: &str = include_str!("../scenarios/models/seed-gbdt.json");

/// A directory holding the built-in scenario's model file.
pub fn scenario_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("numasim-scenario-{}", std::process::id()));
    let models = dir.join("models");
    if std::fs::create_dir_all(&models).is_ok() {
        let _ = std::fs::write(models.join("seed-gbdt.json"), SEED_MODEL);
    }
    dir
}

fn d_k() -> f64 {
    3.0
}
fn d_boot() -> usize {
    1000
}
fn d_none() -> String {
    "none".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub name: String,
    pub seeds: Vec<u64>,
    #[serde(default = "d_k")]
    pub spike_k: f64,
    #[serde(default = "d_boot")]
    pub bootstrap: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowSpec {
    pub name: String,
    pub scheduler: String,
    #[serde(default = "d_none")]
    pub warmup: String,
    /// Apply the workload's shard moves in this row.
    #[serde(default)]
    pub moves: bool,
    /// Preload: none, always[:MS], oracle[:MS], learned:FILE[:MS[:P]] (FILE
    /// relative to the experiment file).
    #[serde(default = "d_none")]
    pub preload: String,
    /// This row's `features.miss_share` (what counts as a miss: the label
    /// judged and the outcome an oracle is told), if not the workload's.
    pub miss_share: Option<f64>,
}

/// An experiment file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub experiment: Meta,
    pub workload: WorkloadSpec,
    pub row: Vec<RowSpec>,
    /// Directory that relative model paths are resolved against.
    #[serde(skip)]
    pub base: PathBuf,
}

/// Most requests one row × seed run may hold (its latencies and arrival
/// times: 16 bytes each while it runs).
pub const MAX_REQUESTS_PER_RUN: u64 = 250_000_000;
/// Most request latencies held over all runs of a command (8 bytes each
/// until the comparison is computed).
pub const MAX_REQUESTS_HELD: u64 = 1_000_000_000;

/// A row's policies, built.
pub struct RowPolicies {
    pub scheduler: Box<dyn Scheduler>,
    pub warmup: Box<dyn Warmup>,
    pub preload: Box<dyn Preload>,
}

impl Experiment {
    pub fn parse(text: &str, origin: &str, base: &std::path::Path) -> Result<Experiment> {
        let mut e: Experiment =
            traces::config::parse_toml(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        e.base = base.to_path_buf();
        if e.row.is_empty() {
            bail!("{origin}: an experiment needs at least one [[row]]");
        }
        if e.experiment.seeds.is_empty() {
            bail!("{origin}: experiment.seeds is empty");
        }
        e.workload
            .validate()
            .map_err(|x| anyhow::anyhow!("{origin}: workload: {}", x.problem))?;
        for r in &e.row {
            if let Some(ms) = r.miss_share
                && !(ms.is_finite() && ms > 0.0 && ms <= 1.0)
            {
                bail!(
                    "{origin}: row {}: miss_share must be in (0, 1], found {ms}",
                    r.name
                );
            }
            e.policies(r, 0, None)
                .map_err(|x| anyhow::anyhow!("{origin}: row {}: {x:#}", r.name))?;
        }
        Ok(e)
    }

    /// Refuses a run too large to hold: every request's latency is kept
    /// (for the paired comparison) in `runs` row × seed runs at once.
    pub fn check_size(&self, runs: usize) -> Result<()> {
        let w = &self.workload;
        let rate = match &w.arrivals {
            traces::workload::Arrivals::Poisson => w.qps,
            traces::workload::Arrivals::Mmpp { rates, .. } => {
                rates.iter().copied().fold(0.0, f64::max)
            }
        };
        let per_run = rate * w.duration_s;
        let total = per_run * runs as f64;
        if per_run > MAX_REQUESTS_PER_RUN as f64 || total > MAX_REQUESTS_HELD as f64 {
            bail!(
                "{rate} requests/s × {} s is about {per_run:.3e} requests per row and seed, {total:.3e} over {runs} row × seed runs; numasim keeps every request's latency for the paired comparison, at most {MAX_REQUESTS_PER_RUN} per run and {MAX_REQUESTS_HELD} in all (about 8 bytes each): lower qps, duration_s, the rows or the seeds",
                w.duration_s
            );
        }
        Ok(())
    }

    /// A row's scheduler, warm-up and preload, built from the registries;
    /// model files resolve against the experiment's directory, and a
    /// learned preload times its predictions with `timer`.
    pub fn policies(&self, row: &RowSpec, seed: u64, timer: Option<&Timer>) -> Result<RowPolicies> {
        let loader = FileLoader {
            base: self.base.clone(),
        };
        let ctx = Ctx {
            seed,
            loader: Some(&loader),
            timer,
            ..Ctx::default()
        };
        Ok(RowPolicies {
            scheduler: policies::sched::SCHEDULERS.build(&row.scheduler, &ctx)?,
            warmup: policies::warmup::WARMUPS.build(&row.warmup, &ctx)?,
            preload: policies::preload::PRELOADS.build(&row.preload, &ctx)?,
        })
    }
}

/// Parses "10s", "30m", "1h", "500ms" or plain seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * mult),
        _ => Err(format!("bad duration {s:?} (e.g. 10s, 30m, 1h)")),
    }
}

/// What one row on one seed produced.
pub struct RowRun {
    pub result: RunResult,
    pub totals: ServeTotals,
    pub records: Vec<RequestRecord>,
    /// Wall-clock prediction times (ns), for learned preloads.
    pub predict_wall_ns: Vec<u64>,
    pub dataset: Vec<sim::serve::DatasetRow>,
}

/// One row on one seed; `keep` keeps every record, `record` collects a dataset.
pub fn run_row(
    m: &Machine,
    exp: &Experiment,
    row: &RowSpec,
    seed: u64,
    keep: bool,
    record: Option<&sim::policy::FeatureSet>,
) -> Result<RowRun> {
    let mut spec = exp.workload.clone();
    if !row.moves {
        spec.moves.clear();
    }
    if let Some(ms) = row.miss_share {
        spec.request.features.miss_share = ms;
    }
    let timer = crate::policy::timer();
    let RowPolicies {
        scheduler: sched,
        warmup: warm,
        preload,
    } = exp.policies(row, seed, Some(&timer))?;
    let mut e = ServeEngine::new(m, &spec, sched, warm)
        .map_err(|x| anyhow::anyhow!("row {}: {x}", row.name))?;
    let row_is_oracle = preload.oracle();
    let reads = (row.preload != "none").then(|| preload.features());
    if preload.oracle() {
        e.set_truth(paired_outcomes(m, exp, row, &spec, seed)?);
    }
    if row.preload != "none" {
        e.set_preload(preload);
    }
    if let Some(fs) = record {
        if reads.is_some_and(|r| r != *fs) {
            bail!(
                "row {}: its preload model reads other features than the dataset asks for",
                row.name
            );
        }
        e.set_features(fs.clone());
    }
    e.record_dataset(record.is_some());
    let mut lat: Vec<u64> = Vec::new();
    let mut arrival: Vec<u64> = Vec::new();
    let mut kept = Vec::new();
    let totals = e
        .run(seed, |r| {
            let i = r.id as usize;
            if lat.len() <= i {
                lat.resize(i + 1, 0);
                arrival.resize(i + 1, 0);
            }
            lat[i] = r.latency();
            arrival[i] = r.arrival;
            if keep {
                kept.push(*r);
            }
        })
        .map_err(|x| anyhow::anyhow!("row {}: {x}", row.name))?;
    // Per second of arrival: the latencies behind each window's TP50/TP99.
    let secs = (spec.duration_s.ceil() as usize).max(1);
    let mut per: Vec<Vec<u64>> = vec![Vec::new(); secs];
    for (i, &l) in lat.iter().enumerate() {
        let w = ((arrival[i] / sim::serve::MONITOR_WINDOW_NS) as usize).min(secs - 1);
        per[w].push(l);
    }
    let windows = analysis::monitor::points(&per, &totals.windows);
    kept.sort_by_key(|r| r.id);
    let predict_wall_ns = timer.samples.lock().map(|v| v.clone()).unwrap_or_default();
    let dataset = std::mem::take(&mut e.dataset);
    let rr = RunResult {
        seed,
        latency_ns: lat,
        bubble_ns: totals.bubble_ns,
        compute_ns: totals.compute_ns,
        memory_bytes: totals.node_bytes.iter().sum(),
        span_ns: totals.end_ns,
        first_after_move_ms: totals
            .first_after_move
            .iter()
            .map(|x| x.2 as f64 / 1e6)
            .collect(),
        windows,
        preload_decisions: totals.preload_decisions,
        predictions_correct: totals.predictions_correct,
        preload_items: totals.preload_items,
        preload_item_hits: totals.preload_item_hits,
        preload_fallbacks: totals.preload_fallbacks,
        predict_cost_ns: totals.predict_cost_ns,
        judged: totals.judged.clone(),
        preload_bytes: totals.preload_bytes,
        upper_bound: row_is_oracle,
    };
    Ok(RowRun {
        result: rr,
        totals,
        records: kept,
        predict_wall_ns,
        dataset,
    })
}

/// What an oracle preload is told: which requests miss in the same row
/// and seed run without preload (the outcome a learned model is trained
/// to predict). A bit per request.
fn paired_outcomes(
    m: &Machine,
    exp: &Experiment,
    row: &RowSpec,
    spec: &WorkloadSpec,
    seed: u64,
) -> Result<Vec<u64>> {
    let p = exp.policies(row, seed, None)?;
    let mut e = ServeEngine::new(m, spec, p.scheduler, p.warmup)
        .map_err(|x| anyhow::anyhow!("row {} (its oracle's paired run): {x}", row.name))?;
    e.record_outcomes();
    e.run(seed, |_| {})
        .map_err(|x| anyhow::anyhow!("row {} (its oracle's paired run): {x}", row.name))?;
    Ok(e.outcomes())
}

/// `monitor.csv` and `monitor.svg` (the seed's monitoring chart) in `dir`.
pub fn write_monitor(
    dir: &std::path::Path,
    title: &str,
    rows: &[(String, Vec<analysis::monitor::MonitorPoint>)],
) -> Result<()> {
    write_file(
        &dir.join("monitor.csv"),
        analysis::monitor::to_csv(rows)?.as_bytes(),
    )?;
    write_file(
        &dir.join("monitor.svg"),
        analysis::plots::monitor_svg(title, rows)?.as_bytes(),
    )
}

/// One line of `requests.csv` (times in ns).
#[derive(serde::Serialize, Default)]
struct RequestRow {
    id: u64,
    shard: u32,
    worker: u32,
    node: u32,
    arrival: u64,
    start: u64,
    end: u64,
    queue: u64,
    stall: u64,
    compute: u64,
    transfer: u64,
    #[serde(serialize_with = "analysis::table::bit")]
    cold: bool,
}

/// `requests.csv`: one line per served request.
pub fn requests_csv(recs: &[RequestRecord]) -> Result<String> {
    let rows: Vec<RequestRow> = recs
        .iter()
        .map(|r| RequestRow {
            id: r.id,
            shard: r.shard,
            worker: r.worker,
            node: r.node,
            arrival: r.arrival,
            start: r.start,
            end: r.end,
            queue: r.queue,
            stall: r.stall,
            compute: r.compute,
            transfer: r.transfer,
            cold: r.cold,
        })
        .collect();
    Ok(analysis::table::to_csv(&rows)?)
}

/// Reads an experiment file (model paths resolve against its directory),
/// with an optional duration override; also returns its text (for the manifest).
pub fn load_experiment(
    path: &std::path::Path,
    duration: Option<f64>,
) -> Result<(Experiment, String)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read experiment", path.display()))?;
    let base = path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let mut exp = Experiment::parse(&text, &path.display().to_string(), &base)?;
    if let Some(d) = duration {
        exp.workload.duration_s = d;
    }
    Ok((exp, text))
}
