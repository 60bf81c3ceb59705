//! `numasim dataset INPUT --out data.csv|data.npy`: training data for the
//! learned predictors (`lab::dataset`) from an experiment (`.toml`, with
//! `--row`: dispatch decisions) or a trace (candidate prefetches; the
//! level whose misses the features see from `--machine M
//! --prefetch-level N` or `--level SIZE,ASSOC`, default 1 MiB, 16-way).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use lab::dataset::Dataset;
use traces::Format;

use crate::experiment::{load_experiment, parse_duration};
use crate::input::{open_trace, parse_format, trace_err};
use crate::machines::load_machine;
use crate::output::write_file;

#[derive(clap::Args, Debug)]
pub struct DatasetArgs {
    /// Experiment file (.toml) whose workload to run, or a trace.
    pub input: PathBuf,
    /// Experiment: the row whose dispatcher runs while recording.
    #[arg(long)]
    pub row: Option<String>,
    /// Experiment: workload seed (use one the evaluation does not use).
    #[arg(long, default_value_t = 101)]
    pub seed: u64,
    /// Experiment: override the workload duration (10s, 30m).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// Past batches (experiment) or accesses (trace) in the features.
    #[arg(long, default_value_t = 10)]
    pub history: usize,
    /// Experiment: the request's cached_share (share of its lookups in the
    /// worker node's cache at dispatch) and per-batch feature groups (some
    /// of hit_rate,read_mb,addr_delta_mb).
    #[arg(long, default_value = "cached_share,hit_rate,read_mb,addr_delta_mb")]
    pub features: String,
    #[arg(long, default_value = "delta:2",
          help = crate::policy::flag_help("Trace: the base prefetcher whose proposals become rows", &policies::prefetch::PREFETCHERS))]
    pub prefetcher: String,
    /// Trace: a proposed line is useful if accessed within this many accesses.
    #[arg(long, default_value_t = 2000)]
    pub window: u64,
    /// Trace: the cache level whose misses the features see (SIZE,ASSOC; 64 B
    /// lines; default 1M,16), or take it from --machine.
    #[arg(long, conflicts_with = "machine")]
    pub level: Option<String>,
    /// Trace: a machine (preset or file) whose private level --prefetch-level
    /// is the level the features see.
    #[arg(long)]
    pub machine: Option<String>,
    /// Trace, with --machine: the private level (0 = L1D, 1 = L2, ...).
    #[arg(long, default_value_t = 1)]
    pub prefetch_level: usize,
    /// Trace: stop adding rows after this many (later accesses still label).
    #[arg(long, default_value_t = 2_000_000)]
    pub max_rows: usize,
    /// Trace: input format, overriding detection.
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Output: CSV (time_ns,id,<features>,label) or, for a .npy name, a
    /// float64 matrix in that column order plus NAME.columns.txt.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(a: DatasetArgs) -> Result<()> {
    let is_experiment = a
        .input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let d = if is_experiment {
        experiment_rows(&a)?
    } else {
        trace_rows(&a)?
    };
    let header = d.columns();
    if lab::npy::is_npy(&a.out) {
        let (bytes, columns) = lab::npy::encode(&header, &d.matrix())?;
        // The names first: the array, the main output, appears last.
        write_file(&lab::npy::columns_path(&a.out), columns.as_bytes())?;
        write_file(&a.out, &bytes)?;
    } else {
        let s = analysis::table::records_to_csv(&header, &d.text_rows())?;
        write_file(&a.out, s.as_bytes())?;
    }
    eprintln!(
        "wrote {} rows ({} positive) to {}",
        d.rows.len(),
        d.positives(),
        a.out.display()
    );
    Ok(())
}

/// Dispatch decisions of the request-level model.
fn experiment_rows(a: &DatasetArgs) -> Result<Dataset> {
    let Some(want) = &a.row else {
        let exp = load_experiment(&a.input, a.duration)?;
        let names: Vec<&str> = exp.row.iter().map(|r| r.name.as_str()).collect();
        bail!(
            "--row is needed with an experiment (rows: {})",
            names.join(", ")
        );
    };
    // Only the recorded row is built (its model may not exist yet).
    let mut exp = lab::experiment::Experiment::load_row(&a.input, want)?;
    if let Some(d) = a.duration {
        exp.workload.duration_s = d;
    }
    let row = &exp.row[0];
    let fs = sim::policy::FeatureSet::parse(a.history, &a.features)
        .map_err(|e| anyhow::anyhow!("--features: {e}"))?;
    exp.check_size()
        .with_context(|| a.input.display().to_string())?;
    let m = load_machine(&exp.workload.machine, &exp.inputs)?;
    Ok(lab::dataset::requests(&m, &exp, row, a.seed, &fs)?)
}

/// Candidate prefetches over a trace's data accesses.
fn trace_rows(a: &DatasetArgs) -> Result<Dataset> {
    let spec = lab::dataset::TraceSpec {
        prefetcher: &a.prefetcher,
        window: a.window,
        level: a.level.as_deref(),
        machine: a.machine.as_deref(),
        prefetch_level: a.prefetch_level,
        max_rows: a.max_rows,
        history: a.history,
    };
    let mut input = open_trace(&a.input, a.format, false, 2)?;
    lab::dataset::trace_named(&mut input.source, &spec, &lab::InputLog::default()).map_err(|e| {
        use lab::dataset::TraceDatasetError as E;
        match e {
            E::Trace(e) => trace_err(&a.input, e),
            E::Empty(_) => anyhow::anyhow!("{}: {e}", a.input.display()),
            // Said with the flag's name.
            E::PrivateLevels {
                level,
                machine,
                levels,
            } => anyhow::anyhow!(
                "--prefetch-level {level}: {machine} has {levels} private data levels"
            ),
            E::History(_) | E::LevelForm(_) | E::Level { .. } => anyhow::anyhow!("--{e}"),
            e => anyhow::anyhow!(e),
        }
    })
}
