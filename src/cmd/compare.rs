//! `numasim compare EXPERIMENT.toml` and `numasim bench --scenario NAME`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::json;
use sim::Machine;
use sim::serve::{RequestRecord, ServeEngine, ServeTotals};
use traces::workload::WorkloadSpec;

use analysis::compare::{self, RunResult};

use crate::machines::load_machine;
use crate::manifest::manifest;
use crate::output::{ensure_dir, write_file, write_json};

/// The seed experiment, built in so `bench` works anywhere.
pub const SEED_SCENARIO: &str = include_str!("../../scenarios/seed-inference.toml");
/// Its learned model, built in too (written to a temporary directory on use).
pub const SEED_MODEL: &str = include_str!("../../scenarios/models/seed-gbdt.json");

/// A directory holding the built-in scenario's model file.
fn scenario_dir() -> PathBuf {
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
    /// Preload: none, always[:MS], learned:FILE[:MS] (FILE relative to the experiment file).
    #[serde(default = "d_none")]
    pub preload: String,
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

/// Where a learned preload records its real prediction times (ns).
pub type WallSink = std::sync::Arc<std::sync::Mutex<Vec<u64>>>;

/// A preload policy for a row; learned models are read from files.
/// Returns the policy and, for learned models, the wall-clock sample sink.
pub fn make_preload(
    spec: &str,
    base: &std::path::Path,
) -> Result<(Box<dyn sim::serve::Preload>, Option<WallSink>)> {
    if let Some(rest) = spec.strip_prefix("learned:") {
        // FILE or FILE:WINDOW_MS (the window is a number after the last colon).
        let (file, window) = match rest.rsplit_once(':') {
            Some((f, w)) if w.parse::<f64>().is_ok() => (
                f,
                w.parse::<f64>()
                    .unwrap_or(policies::preload::DEFAULT_WINDOW_MS),
            ),
            _ => (rest, policies::preload::DEFAULT_WINDOW_MS),
        };
        let path = base.join(file);
        let model = crate::prefetchers::read_model(&path)?;
        if sim::serve::FeatureSet::from_names(&model.features).is_none() {
            bail!(
                "{}: the model's features are not a set of the request model's decision features (remote_shard, outstanding, then {}_K per past batch K; numasim dataset writes them)",
                path.display(),
                sim::serve::GROUPS.join("_K, ")
            );
        }
        let l = policies::preload::Learned::new(
            model,
            format!("learned:{file}"),
            window,
            policies::preload::Cost::default(),
        );
        let sink = l.wall_ns.clone();
        return Ok((Box::new(l), Some(sink)));
    }
    Ok((policies::preload::create(spec)?, None))
}

impl Experiment {
    pub fn parse(text: &str, origin: &str, base: &std::path::Path) -> Result<Experiment> {
        let mut e: Experiment = toml::from_str(text).map_err(|e| {
            anyhow::anyhow!("{origin}: {}", e.to_string().trim().replace('\n', " "))
        })?;
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
            policies::sched::create(&r.scheduler, 0)
                .map_err(|x| anyhow::anyhow!("{origin}: row {}: {x}", r.name))?;
            policies::warmup::create(&r.warmup)
                .map_err(|x| anyhow::anyhow!("{origin}: row {}: {x}", r.name))?;
            make_preload(&r.preload, base)
                .map_err(|x| anyhow::anyhow!("{origin}: row {}: {x:#}", r.name))?;
        }
        Ok(e)
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

/// One row on one seed: the run's summary and, if asked, every record.
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
    record: Option<&sim::serve::FeatureSet>,
) -> Result<RowRun> {
    let mut spec = exp.workload.clone();
    if !row.moves {
        spec.moves.clear();
    }
    let sched = policies::sched::create(&row.scheduler, seed)?;
    let warm = policies::warmup::create(&row.warmup)?;
    let (preload, wall) = make_preload(&row.preload, &exp.base)?;
    let mut e = ServeEngine::new(m, &spec, sched, warm)
        .map_err(|x| anyhow::anyhow!("row {}: {x}", row.name))?;
    let reads = (row.preload != "none").then(|| preload.features());
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
    let predict_wall_ns = wall
        .and_then(|w| w.lock().ok().map(|v| v.clone()))
        .unwrap_or_default();
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
    };
    Ok(RowRun {
        result: rr,
        totals,
        records: kept,
        predict_wall_ns,
        dataset,
    })
}

/// `monitor.csv` and `monitor.svg` (the seed's monitoring chart) in `dir`.
fn write_monitor(
    dir: &std::path::Path,
    title: &str,
    rows: &[(String, Vec<analysis::monitor::MonitorPoint>)],
) -> Result<()> {
    write_file(
        &dir.join("monitor.csv"),
        analysis::monitor::to_csv(rows).as_bytes(),
    )?;
    write_file(
        &dir.join("monitor.svg"),
        analysis::plots::monitor_svg(title, rows)
            .map_err(anyhow::Error::msg)?
            .as_bytes(),
    )
}

fn requests_csv(recs: &[RequestRecord]) -> String {
    let mut s =
        String::from("id,shard,worker,node,arrival,start,end,queue,stall,compute,transfer,cold\n");
    for r in recs {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            r.id,
            r.shard,
            r.worker,
            r.node,
            r.arrival,
            r.start,
            r.end,
            r.queue,
            r.stall,
            r.compute,
            r.transfer,
            r.cold as u8
        ));
    }
    s
}

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
}

/// Reads an experiment file (model paths resolve against its directory),
/// with an optional duration override; also returns its text (for the manifest).
pub(crate) fn load_experiment(
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

pub fn compare_cmd(a: CompareArgs) -> Result<()> {
    let (mut exp, text) = load_experiment(&a.experiment, a.duration)?;
    if let Some(s) = &a.seeds {
        exp.experiment.seeds = s.clone();
    }
    if let Some(q) = a.qps {
        if !(q.is_finite() && q > 0.0) {
            bail!("--qps must be positive");
        }
        exp.workload.qps = q;
    }
    let m = load_machine(&exp.workload.machine)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.unwrap_or(0))
        .build()
        .context("thread pool")?;
    let jobs: Vec<(usize, usize)> = (0..exp.row.len())
        .flat_map(|r| (0..exp.experiment.seeds.len()).map(move |s| (r, s)))
        .collect();
    let clock = std::time::Instant::now();
    let keep = a.out.is_some();
    let results: Vec<Result<RowRun>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(r, s)| {
                run_row(
                    &m,
                    &exp,
                    &exp.row[r],
                    exp.experiment.seeds[s],
                    keep && s == 0,
                    None,
                )
            })
            .collect()
    });
    let mut by_row: Vec<Vec<RunResult>> = vec![Vec::new(); exp.row.len()];
    let mut kept: Vec<Vec<RequestRecord>> = vec![Vec::new(); exp.row.len()];
    let mut wall: Vec<Vec<u64>> = vec![Vec::new(); exp.row.len()];
    let mut simulated = 0u64;
    for (&(r, s), res) in jobs.iter().zip(results) {
        let run = res?;
        simulated += run.totals.requests;
        by_row[r].push(run.result);
        wall[r].extend(run.predict_wall_ns);
        if s == 0 {
            kept[r] = run.records;
        }
    }
    let secs = clock.elapsed().as_secs_f64();
    let names: Vec<String> = exp.row.iter().map(|r| r.name.clone()).collect();
    let table = compare::compare(
        &names,
        &by_row,
        exp.experiment.spike_k,
        exp.experiment.bootstrap,
    );
    println!(
        "{} on {}: {:.0} QPS for {} s × {} seeds ({} requests per row)",
        exp.experiment.name,
        exp.workload.machine,
        exp.workload.qps,
        exp.workload.duration_s,
        exp.experiment.seeds.len(),
        table.first().map_or(0, |r| r.requests)
    );
    print!("{}", compare::render(&table, exp.experiment.spike_k));
    eprintln!(
        "simulated {simulated} requests in {secs:.2} s of wall time ({:.0} requests/s)",
        simulated as f64 / secs.max(1e-9)
    );
    for (n, w) in names.iter().zip(wall.iter_mut()) {
        if !w.is_empty() {
            w.sort_unstable();
            eprintln!(
                "{n}: real prediction time p50 {} ns, p99 {} ns over {} predictions (wall clock; reported, not simulated)",
                analysis::stats::quantile_sorted(w, 0.5),
                analysis::stats::quantile_sorted(w, 0.99),
                w.len()
            );
        }
    }
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        write_file(&dir.join("compare.csv"), compare::to_csv(&table).as_bytes())?;
        let monitor: Vec<(String, Vec<analysis::monitor::MonitorPoint>)> = names
            .iter()
            .zip(&by_row)
            .map(|(n, runs)| (n.clone(), runs[0].windows.clone()))
            .collect();
        let windows: serde_json::Map<String, serde_json::Value> =
            monitor.iter().map(|(n, w)| (n.clone(), json!(w))).collect();
        write_monitor(
            dir,
            &format!(
                "{}: monitoring, seed {}",
                exp.experiment.name, exp.experiment.seeds[0]
            ),
            &monitor,
        )?;
        let v = json!({
            "experiment": exp.experiment.name,
            "machine": exp.workload.machine,
            "seeds": exp.experiment.seeds,
            "duration_s": exp.workload.duration_s,
            "rows": table,
            "windows_first_seed": windows,
        });
        write_json(&dir.join("compare.json"), &v)?;
        let series: Vec<(String, Vec<u64>)> = names
            .iter()
            .zip(&by_row)
            .map(|(n, runs)| {
                (
                    n.clone(),
                    runs.iter()
                        .flat_map(|r| r.latency_ns.iter().copied())
                        .collect(),
                )
            })
            .collect();
        let title = format!("{}: request latency", exp.experiment.name);
        write_file(
            &dir.join("latency-histogram.svg"),
            analysis::plots::histogram_svg(&title, &series)
                .map_err(anyhow::Error::msg)?
                .as_bytes(),
        )?;
        write_file(
            &dir.join("latency-cdf.svg"),
            analysis::plots::cdf_svg(&title, &series)
                .map_err(anyhow::Error::msg)?
                .as_bytes(),
        )?;
        for (n, recs) in names.iter().zip(&kept) {
            write_file(
                &dir.join(format!("requests-{n}.csv")),
                requests_csv(recs).as_bytes(),
            )?;
        }
        let inputs = vec![json!({
            "role": "experiment",
            "path": a.experiment.display().to_string(),
            "checksum": format!("xxh3-128:{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes())),
        })];
        write_json(
            &dir.join("manifest.json"),
            &manifest(
                inputs,
                json!({ "duration_s": exp.workload.duration_s, "seeds": exp.experiment.seeds }),
            ),
        )?;
    }
    Ok(())
}

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
    /// Write requests.csv and summary.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn bench_cmd(a: BenchArgs) -> Result<()> {
    let mut exp = Experiment::parse(
        SEED_SCENARIO,
        "scenarios/seed-inference.toml (built in)",
        &scenario_dir(),
    )?;
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
    let m = load_machine(&exp.workload.machine)?;
    let wall = std::time::Instant::now();
    let run = run_row(&m, &exp, row, a.seed, a.out.is_some(), None)?;
    let (rr, totals, recs) = (run.result, run.totals, run.records);
    let secs = wall.elapsed().as_secs_f64();
    let p = analysis::stats::percentiles(&rr.latency_ns);
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
        p.n,
        p.tp50_ms,
        p.tp90_ms,
        p.tp99_ms,
        p.tp999_ms,
        p.max_ms,
        exp.experiment.spike_k,
        100.0 * spikes
    );
    println!(
        "simulated {} requests in {:.2} s of wall time ({:.0} requests/s)",
        totals.requests,
        secs,
        totals.requests as f64 / secs.max(1e-9)
    );
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        write_file(&dir.join("requests.csv"), requests_csv(&recs).as_bytes())?;
        write_monitor(
            dir,
            &format!("scenario {}: monitoring, seed {}", row.name, a.seed),
            &[(row.name.clone(), rr.windows.clone())],
        )?;
        write_json(
            &dir.join("summary.json"),
            &json!({ "scenario": row.name, "percentiles": p, "spike_share": spikes, "totals": totals }),
        )?;
    }
    Ok(())
}
