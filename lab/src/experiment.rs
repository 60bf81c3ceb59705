//! Experiments of the request-level model: the experiment file's schema
//! (`[experiment]`, `[workload]`, `[[row]]`s), building a row's policies
//! from the registries, and running one row on one seed ([`run_row`]).
//! What a run read is noted in the experiment's [`InputLog`].

use std::path::{Path, PathBuf};

use policies::PolicyError;
use policies::model::Model;
use policies::registry::{Ctx, ModelLoader, Timer};
use serde::Deserialize;
use sim::Machine;
use sim::policy::{Preload, Scheduler, Warmup};
use sim::serve::{RequestRecord, ServeEngine, ServeTotals};
use traces::workload::WorkloadSpec;

use analysis::compare::RunResult;

use crate::models::FileLoader;
use crate::{InputLog, LabError};

/// The seed experiment, built in so `bench` works anywhere.
pub const SEED_SCENARIO: &str = include_str!("../../scenarios/seed-inference.toml");
/// Its learned model (`models/seed-gbdt.json` in the scenario), built in too.
pub const SEED_MODEL: &str = include_str!("../../scenarios/models/seed-gbdt.json");
/// The path the built-in scenario names its model by.
const SEED_MODEL_PATH: &str = "models/seed-gbdt.json";

/// The text of a built-in input a manifest names as a preset of `role`
/// (`machine`: the machine presets; `model`: the seed scenario's model).
pub fn builtin(role: &str, name: &str) -> Option<&'static str> {
    match (role, name) {
        ("machine", n) => sim::presets::preset(n),
        ("model", "seed-gbdt") => Some(SEED_MODEL),
        _ => None,
    }
}

/// The built-in scenario's model loader: its one model from memory, noted
/// as a built-in input (no file, no temporary copy).
struct BuiltIn {
    log: InputLog,
}

impl ModelLoader for BuiltIn {
    fn load(&self, path: &str) -> Result<Model, PolicyError> {
        if path != SEED_MODEL_PATH {
            return Err(PolicyError::NoBuiltIn {
                path: path.to_string(),
                only: SEED_MODEL_PATH,
            });
        }
        self.log.note_preset("model", "seed-gbdt", SEED_MODEL);
        Model::from_json(SEED_MODEL)
    }
}

impl Experiment {
    /// The built-in seed experiment.
    pub fn seed() -> Result<Experiment, LabError> {
        let mut e = Experiment::parse_with(
            SEED_SCENARIO,
            "scenarios/seed-inference.toml (built in)",
            Path::new(""),
            true,
            None,
        )?;
        e.builtin = true;
        Ok(e)
    }

    /// Reads and parses the request-model experiment at `path` (relative
    /// paths in it resolve against its folder).
    pub fn load(path: &Path) -> Result<Experiment, LabError> {
        let text = std::fs::read_to_string(path).map_err(|error| LabError::Read {
            path: path.display().to_string(),
            what: "experiment",
            error,
        })?;
        Experiment::parse_file_text(path, &text)
    }

    /// Reads `path` keeping only the row `name`: the other rows are not
    /// built, so a row naming a model that does not exist yet — the model
    /// a dataset recorded under this row is for — cannot stop it.
    pub fn load_row(path: &Path, name: &str) -> Result<Experiment, LabError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| LabError::Read {
            path: origin.clone(),
            what: "experiment",
            error,
        })?;
        let Ok(mut t) = toml::from_str::<toml::Table>(&text) else {
            // Not TOML: the full parse says where.
            return Experiment::parse_file_text(path, &text);
        };
        let Some(toml::Value::Array(rows)) = t.get_mut("row") else {
            return Experiment::parse_file_text(path, &text);
        };
        let named = |r: &toml::Value| r.get("name").and_then(|n| n.as_str()) == Some(name);
        if !rows.iter().any(named) {
            let names: Vec<&str> = rows
                .iter()
                .filter_map(|r| r.get("name")?.as_str())
                .collect();
            return Err(LabError::NoSuchRow {
                origin,
                row: name.to_string(),
                rows: names.join(", "),
            });
        }
        rows.retain(named);
        let only = toml::to_string(&t).map_err(|error| LabError::RowSelect { origin, error })?;
        Experiment::parse_file_text(path, &only).map_err(|e| {
            // The reduced text's line numbers are not the file's: a
            // problem outside the rows is reported from the file itself.
            match Experiment::parse_file_text(path, &text) {
                Err(full) if !matches!(full, LabError::RowPolicy { .. }) => full,
                _ => e,
            }
        })
    }

    /// Parses an experiment's `text` as if read from `path` (relative paths
    /// in it resolve against `path`'s folder).
    pub fn parse_file_text(path: &Path, text: &str) -> Result<Experiment, LabError> {
        Experiment::parse_file_text_with(path, text, None)
    }

    /// [`Experiment::parse_file_text`] with policies `custom` supplies
    /// beside the registries.
    pub fn parse_file_text_with(
        path: &Path,
        text: &str,
        custom: Option<std::sync::Arc<dyn crate::custom::CustomPolicies>>,
    ) -> Result<Experiment, LabError> {
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Experiment::parse_with(text, &path.display().to_string(), &base, false, custom)
    }
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

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub name: String,
    pub seeds: Vec<u64>,
    #[serde(default = "d_k")]
    pub spike_k: f64,
    #[serde(default = "d_boot")]
    pub bootstrap: usize,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
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
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub experiment: Meta,
    pub workload: WorkloadSpec,
    pub row: Vec<RowSpec>,
    /// Directory that relative model paths are resolved against.
    #[serde(skip)]
    pub base: PathBuf,
    /// What runs of this experiment read (machine, models), noted as read.
    #[serde(skip)]
    pub inputs: InputLog,
    /// The built-in seed scenario: its model comes from numasim itself.
    #[serde(skip)]
    pub builtin: bool,
    /// Policies a front end supplies beside the registries (asked first).
    #[serde(skip)]
    pub custom: Option<std::sync::Arc<dyn crate::custom::CustomPolicies>>,
}

/// Most requests one row × seed run may simulate (about 10 minutes of
/// wall time at 400 000 requests/s): a bound on time, not on memory.
pub const MAX_REQUESTS_PER_RUN: u64 = 250_000_000;
/// About this many requests' latencies are kept per row × seed run for the
/// statistics (24 bytes each while the run lasts, 8 after): all of them
/// up to this many, above it a uniform sample chosen by request id — the
/// same requests in every row of a seed, so the comparison stays paired.
/// Memory then does not grow with the simulated duration.
pub const KEEP_PER_RUN: u64 = 1 << 18;
/// Latencies of the first this many requests are kept in sequence for the
/// spike period (when the run is sampled).
pub const SEQUENCE_KEPT: u64 = 1 << 18;

/// A row's policies, built.
pub struct RowPolicies {
    pub scheduler: Box<dyn Scheduler>,
    pub warmup: Box<dyn Warmup>,
    pub preload: Box<dyn Preload>,
}

impl Experiment {
    pub fn parse(text: &str, origin: &str, base: &Path) -> Result<Experiment, LabError> {
        Experiment::parse_with(text, origin, base, false, None)
    }

    /// [`Experiment::parse`]; `builtin` takes models from numasim itself,
    /// `custom` supplies policies beside the registries.
    fn parse_with(
        text: &str,
        origin: &str,
        base: &Path,
        builtin: bool,
        custom: Option<std::sync::Arc<dyn crate::custom::CustomPolicies>>,
    ) -> Result<Experiment, LabError> {
        let origin = origin.to_string();
        let mut e: Experiment =
            traces::config::parse_toml(text).map_err(|error| LabError::ExperimentToml {
                origin: origin.clone(),
                error,
            })?;
        e.base = base.to_path_buf();
        e.builtin = builtin;
        e.custom = custom;
        if e.row.is_empty() {
            return Err(LabError::NoRows { origin });
        }
        if e.experiment.seeds.is_empty() {
            return Err(LabError::NoSeeds { origin });
        }
        e.workload.validate().map_err(|x| LabError::Workload {
            origin: origin.clone(),
            problem: x.problem,
        })?;
        crate::request_logs::attach(&mut e.workload, base, &e.inputs)?;
        for r in &e.row {
            if let Some(ms) = r.miss_share
                && !(ms.is_finite() && ms > 0.0 && ms <= 1.0)
            {
                return Err(LabError::MissShare {
                    origin,
                    row: r.name.clone(),
                    value: ms,
                });
            }
            e.policies(r, 0, None)
                .map_err(|error| LabError::RowPolicy {
                    origin: origin.clone(),
                    row: r.name.clone(),
                    error,
                })?;
        }
        Ok(e)
    }

    /// The most requests one row × seed run can have (at the highest
    /// arrival rate throughout).
    pub fn requests_per_run(&self) -> f64 {
        let w = &self.workload;
        let rate = match &w.arrivals {
            traces::workload::Arrivals::Poisson => w.qps,
            traces::workload::Arrivals::Mmpp { rates, .. } => {
                rates.iter().copied().fold(0.0, f64::max)
            }
            traces::workload::Arrivals::Log { requests, .. } => {
                return requests.as_ref().map_or(0, |l| l.requests.len()) as f64;
            }
        };
        rate * w.duration_s
    }

    /// Refuses a run too long to simulate, with the numbers.
    pub fn check_size(&self) -> Result<(), LabError> {
        let per_run = self.requests_per_run();
        if per_run > MAX_REQUESTS_PER_RUN as f64 {
            let w = &self.workload;
            return Err(LabError::TooLarge {
                rate: per_run / w.duration_s,
                duration_s: w.duration_s,
                per_run,
                max: MAX_REQUESTS_PER_RUN,
            });
        }
        Ok(())
    }

    /// The share of requests whose latency a run keeps (see [`KEEP_PER_RUN`]).
    pub fn keep_share(&self) -> f64 {
        (KEEP_PER_RUN as f64 / self.requests_per_run().max(1.0)).min(1.0)
    }

    /// A row's scheduler, warm-up and preload, built from the registries;
    /// model files resolve against the experiment's directory, and a
    /// learned preload times its predictions with `timer`.
    pub fn policies(
        &self,
        row: &RowSpec,
        seed: u64,
        timer: Option<&Timer>,
    ) -> Result<RowPolicies, PolicyError> {
        let files = FileLoader {
            base: self.base.clone(),
            log: self.inputs.clone(),
        };
        let builtin = BuiltIn {
            log: self.inputs.clone(),
        };
        let loader: &dyn policies::registry::ModelLoader =
            if self.builtin { &builtin } else { &files };
        let ctx = Ctx {
            seed,
            loader: Some(loader),
            timer,
            ..Ctx::default()
        };
        let custom = self
            .custom
            .as_ref()
            .and_then(|c| c.scheduler(&row.scheduler));
        let scheduler = match custom {
            Some(built) => built?,
            None => policies::sched::SCHEDULERS.build(&row.scheduler, &ctx)?,
        };
        let custom = self
            .custom
            .as_ref()
            .and_then(|c| c.preload(&row.preload, timer));
        let preload = match custom {
            Some(built) => built?,
            None => policies::preload::PRELOADS.build(&row.preload, &ctx)?,
        };
        Ok(RowPolicies {
            scheduler,
            warmup: policies::warmup::WARMUPS.build(&row.warmup, &ctx)?,
            preload,
        })
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
    bandwidth_until_ps: Option<u64>,
) -> Result<RowRun, LabError> {
    let mut spec = exp.workload.clone();
    if !row.moves {
        spec.moves.clear();
    }
    if let Some(ms) = row.miss_share {
        spec.request.features.miss_share = ms;
    }
    let timer = crate::models::timer();
    let RowPolicies {
        scheduler: sched,
        warmup: warm,
        preload,
    } = exp.policies(row, seed, Some(&timer))?;
    let row_err = |error| LabError::Row {
        row: row.name.clone(),
        error,
    };
    let mut e = ServeEngine::new(m, &spec, sched, warm).map_err(row_err)?;
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
            return Err(LabError::FeatureMismatch {
                row: row.name.clone(),
            });
        }
        e.set_features(fs.clone());
    }
    e.record_dataset(record.is_some());
    if let Some(until) = bandwidth_until_ps {
        e.bin_bandwidth(sim::serve::BANDWIDTH_BIN_PS, until);
    }
    // Every request's latency counts in the exact totals; a sample of
    // them (all, in a run of at most KEEP_PER_RUN) feeds the statistics.
    let share = exp.keep_share();
    // Room for the expected sample up front: growing by copies would
    // touch every page twice (a tenth of a short bench's time).
    let expected = exp.requests_per_run().min(KEEP_PER_RUN as f64) * 1.05;
    let mut sample: Vec<(u64, u64, u64)> = Vec::with_capacity(expected as usize + 64);
    let mut sequence: Vec<u64> = Vec::new();
    if share < 1.0 {
        sequence.reserve(SEQUENCE_KEPT as usize);
    }
    let (mut count, mut sum, mut max) = (0u64, 0u128, 0u64);
    let mut kept = Vec::new();
    let totals = e
        .run(seed, |r| {
            let l = r.latency_ps();
            count += 1;
            sum += l as u128;
            max = max.max(l);
            if kept_in_sample(r.id, share) {
                sample.push((r.id, l, r.arrival_ps));
            }
            if share < 1.0 && r.id < SEQUENCE_KEPT {
                let i = r.id as usize;
                if sequence.len() <= i {
                    sequence.resize(i + 1, 0);
                }
                sequence[i] = l;
            }
            if keep {
                kept.push(*r);
            }
        })
        .map_err(row_err)?;
    // Per second of arrival: the (kept) latencies behind each window's TP50/TP99.
    let secs = (spec.duration_s.ceil() as usize).max(1);
    let window_of = |at: u64| ((at / sim::serve::MONITOR_WINDOW_PS) as usize).min(secs - 1);
    // Each window's vector sized first: grown by copies, they touched
    // twice the pages they end with (page faults cost this VM up to
    // 34 µs each; a third of a short bench's time was the kernel's).
    let mut sizes = vec![0usize; secs];
    for &(_, _, at) in &sample {
        sizes[window_of(at)] += 1;
    }
    let mut per: Vec<Vec<u64>> = sizes.into_iter().map(Vec::with_capacity).collect();
    let mut lat: Vec<u64> = Vec::with_capacity(sample.len());
    for (_, l, at) in in_id_order(&mut sample) {
        per[window_of(at)].push(l);
        lat.push(l);
    }
    drop(sample);
    let windows = analysis::monitor::points(&per, &totals.windows);
    kept.sort_by_key(|r| r.id);
    let predict_wall_ns = timer.samples.lock().map(|v| v.clone()).unwrap_or_default();
    let dataset = std::mem::take(&mut e.dataset);
    let rr = RunResult {
        seed,
        latency: lat,
        requests: count,
        latency_sum: sum,
        latency_max: max,
        sampled: share < 1.0,
        sequence: (share < 1.0).then_some(sequence),
        bubble_ps: totals.bubble_ps,
        compute_ps: totals.compute_ps,
        memory_bytes: totals.node_bytes.iter().sum(),
        span_ps: totals.end_ps,
        first_after_move: totals.first_after_move.iter().map(|x| x.2).collect(),
        windows,
        preload_decisions: totals.preload_decisions,
        predictions_correct: totals.predictions_correct,
        preload_items: totals.preload_items,
        preload_item_hits: totals.preload_item_hits,
        preload_fallbacks: totals.preload_fallbacks,
        predict_cost_ps: totals.predict_cost_ps,
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

/// A run's kept `(id, latency, arrival)` triples, in completion order, by
/// id. The ids are unique; when they are dense (a whole run's, or an even
/// share of it) each goes to its slot in one pass, else they are sorted.
fn in_id_order(sample: &mut [(u64, u64, u64)]) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
    let lo = sample.iter().map(|x| x.0).min().unwrap_or(0);
    let hi = sample.iter().map(|x| x.0).max().unwrap_or(0);
    let mut slots = Vec::new();
    let dense = sample.len() < u32::MAX as usize && hi - lo < 4 * sample.len() as u64;
    if dense {
        slots = vec![u32::MAX; (hi - lo + 1) as usize];
        for (i, x) in sample.iter().enumerate() {
            slots[(x.0 - lo) as usize] = i as u32;
        }
    } else {
        sample.sort_unstable_by_key(|x| x.0);
    }
    let sample = &*sample;
    let n = if dense { 0 } else { sample.len() };
    let placed = slots
        .into_iter()
        .filter(|&i| i != u32::MAX)
        .map(move |i| sample[i as usize]);
    placed.chain(sample[..n].iter().copied())
}

/// Whether request `id`'s latency is in a run's sample: all of them at
/// share 1, else those whose id hashes below the share (the same ids in
/// every row, spread evenly over the run whatever its periodicities).
pub fn kept_in_sample(id: u64, share: f64) -> bool {
    if share >= 1.0 {
        return true;
    }
    let mut x = id ^ 0x5EED_5A4D_1E00_0000;
    let h = traces::workload::splitmix(&mut x);
    ((h >> 11) as f64 / (1u64 << 53) as f64) < share
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
) -> Result<Vec<u64>, LabError> {
    let p = exp.policies(row, seed, None)?;
    let oracle_err = |error| LabError::Oracle {
        row: row.name.clone(),
        error,
    };
    let mut e = ServeEngine::new(m, spec, p.scheduler, p.warmup).map_err(oracle_err)?;
    e.record_outcomes();
    e.run(seed, |_| {}).map_err(oracle_err)?;
    Ok(e.outcomes())
}

#[cfg(test)]
mod tests {
    use super::{in_id_order, kept_in_sample};

    /// Against a sort by id: a dense set in near-completion order, a
    /// sparse one (ids far apart, sorted instead), one id, none.
    #[test]
    fn samples_come_out_in_id_order() {
        let dense: Vec<(u64, u64, u64)> = (0..1000u64)
            .filter(|id| id % 3 != 1)
            .map(|id| ((id + 7) ^ 5, id * 10, id))
            .collect();
        let sparse: Vec<(u64, u64, u64)> =
            (0..100u64).rev().map(|k| (k * 1_000_003, k, 0)).collect();
        for mut case in [dense, sparse, vec![(42, 1, 2)], vec![]] {
            let mut want = case.clone();
            want.sort_by_key(|x| x.0);
            let got: Vec<_> = in_id_order(&mut case).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_sample_is_the_share_asked_for_and_blind_to_periods() {
        let n = 1_000_000u64;
        let all = (0..n).filter(|&id| kept_in_sample(id, 0.25)).count() as f64;
        assert!((all / n as f64 - 0.25).abs() < 0.005, "{all}");
        // Every 2500th request (the seed's sweep period) is kept at the same share.
        let periodic = (0..n / 2500)
            .filter(|&k| kept_in_sample(k * 2500, 0.25))
            .count() as f64;
        assert!((periodic / 400.0 - 0.25).abs() < 0.07, "{periodic}");
        assert!((0..1000).all(|id| kept_in_sample(id, 1.0)));
    }
}
