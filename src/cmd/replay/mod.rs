//! `numasim replay`: a trace through the cache model.

pub mod parts;
pub mod tasks;

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use lab::replay::ReplayError;
use serde_json::json;
use sim::cachegrind::CgConfig;
use sim::{Geometry, Replacement};
use traces::{Format, RecordSource};

use crate::input::{open_trace, parse_format, trace_err};
use crate::manifest::manifest;
use crate::output::{ensure_dir, write_json};
use crate::progress::Progress;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace file, its format detected (`--format` lists the formats).
    pub trace: PathBuf,
    #[arg(long, value_parser = parse_format, help = crate::input::format_help())]
    pub format: Option<Format>,
    /// I1 cache geometry, SIZE,ASSOC,LINE (cachegrind's --I1). Default 65536,2,64.
    #[arg(long = "I1", value_name = "SIZE,ASSOC,LINE")]
    pub i1: Option<Geometry>,
    /// D1 cache geometry, SIZE,ASSOC,LINE (cachegrind's --D1). Default 65536,2,64.
    #[arg(long = "D1", value_name = "SIZE,ASSOC,LINE")]
    pub d1: Option<Geometry>,
    /// LL cache geometry, SIZE,ASSOC,LINE (cachegrind's --LL). Default 262144,8,64.
    #[arg(long = "LL", value_name = "SIZE,ASSOC,LINE")]
    pub ll: Option<Geometry>,
    /// Replacement policy (lru, plru, srrip, random). Without it the replay
    /// follows cachegrind's rules exactly; with it, a write-back hierarchy
    /// with that policy runs and write-backs are reported too.
    #[arg(long)]
    pub replacement: Option<String>,
    /// Seed for randomised policies: the random replacement policy, a
    /// randomised placement or scheduler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object (cachegrind event names under "events") instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write summary.json and manifest.json into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write OUT/report.html: tables, plots and manifest in one self-contained page.
    #[arg(long)]
    pub report: bool,
    /// Decode and simulate on one thread (by default the trace is decoded on
    /// a second thread; bench/replay_speed.sh measures both).
    #[arg(long)]
    pub single_thread: bool,
    /// Run the NUMA timing model on this machine (preset name or TOML file)
    /// instead of the cache-only replay.
    #[arg(long)]
    pub machine: Option<String>,
    /// Thread pinning for --machine: compact, spread (round-robin across
    /// nodes) or T=CORE,... (trace thread id = core).
    #[arg(long, default_value = "compact")]
    pub pin: sim::Pin,
    /// Outstanding-miss limit per core for --machine (1 = every miss blocks);
    /// default: the machine's.
    #[arg(long)]
    pub mlp: Option<u32>,
    #[arg(long, default_value = "first-touch",
          help = crate::policy::flag_help("Page placement for --machine", &policies::placement::PLACEMENTS))]
    pub placement: String,
    /// Time-series window for --machine (ns of simulated time; the series
    /// is kept only with --out, and only windows that saw activity).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000_000_000))]
    pub window_ns: u64,
    /// Most time-series windows --out keeps (each holds a count per channel and link).
    #[arg(long, default_value_t = sim::timing::DEFAULT_MAX_WINDOWS)]
    pub max_windows: usize,
    #[arg(long, help = format!(
        "{}. Repeat for several, one per level: SPEC@LEVEL (LEVEL a number or a cache name: next-line@L1D, stream:16:16@L2)",
        crate::policy::flag_help("Cache prefetcher for --machine", &policies::prefetch::PREFETCHERS)
    ))]
    pub prefetch: Vec<String>,
    /// Sampled replay with --machine (SMARTS): measure UNIT records every
    /// PERIOD after WARM in detail (default 2×UNIT, 8×UNIT with --prefetch;
    /// each unit's cut by up to half, drawn from --sample-seed), warm caches
    /// and prefetchers between (only FUNCTIONAL records before each warm-up,
    /// if given). With --workers: tasks in arrival order (UNIT:PERIOD[:WARM]).
    #[arg(long, value_name = "UNIT:PERIOD[:WARM[:FUNCTIONAL]]")]
    pub sample: Option<sim::timing::SampleSpec>,
    /// Seed of the units' placement (the first unit's offset in the period)
    /// and of each unit's warm-up cut.
    #[arg(long, default_value_t = 0)]
    pub sample_seed: u64,
    /// With --sample: split the replay into N parts, each simulated on its
    /// own (its units after --part-warming records warmed), then merged.
    #[arg(long, value_name = "N", requires = "sample", conflicts_with_all = ["save_checkpoint", "from_checkpoint"],
          value_parser = clap::value_parser!(u64).range(1..=sim::timing::MAX_UNITS))]
    pub parts: Option<u64>,
    /// With --parts: only part K, into OUT/parts/part-K.json (a Slurm array task).
    #[arg(long, value_name = "K", requires_all = ["parts", "out"])]
    pub part: Option<u64>,
    /// With --parts: merge OUT/parts/part-*.json into OUT/summary.json (the merge job).
    #[arg(long, requires_all = ["parts", "out"], conflicts_with = "part")]
    pub merge: bool,
    /// With --parts: records each part warms functionally before its first
    /// unit (default: 4 × the lines of the machine's LLCs).
    #[arg(long, value_name = "R", requires = "parts")]
    pub part_warming: Option<u64>,
    /// With --parts: write OUT/replay.sbatch (an array task per part) and
    /// OUT/merge.sbatch, and submit both if sbatch exists.
    #[arg(long, requires_all = ["parts", "out"], conflicts_with_all = ["part", "merge"])]
    pub slurm: bool,
    /// With --slurm: at most K array tasks at once.
    #[arg(long, requires = "slurm")]
    pub array_limit: Option<usize>,
    /// With --slurm: an extra #SBATCH line for both jobs (repeatable).
    #[arg(long = "sbatch-option", allow_hyphen_values = true, requires = "slurm")]
    pub sbatch_options: Vec<String>,
    /// With --slurm: write the job scripts, do not submit.
    #[arg(long, requires = "slurm")]
    pub dry_run: bool,
    /// Save the whole machine state into FILE after --checkpoint-at records (the run goes on).
    #[arg(long, value_name = "FILE", requires = "checkpoint_at")]
    pub save_checkpoint: Option<PathBuf>,
    /// Records fed before --save-checkpoint's checkpoint.
    #[arg(long, value_name = "N", requires = "save_checkpoint")]
    pub checkpoint_at: Option<u64>,
    /// Resume from a checkpoint of the same machine, flags and trace: the uninterrupted run's results.
    #[arg(long, value_name = "FILE")]
    pub from_checkpoint: Option<PathBuf>,
    /// Private data level a prefetcher without @LEVEL fills (0 = L1D, 1 = L2, ...).
    #[arg(long, default_value_t = 1)]
    pub prefetch_level: usize,
    /// Most prefetches a core keeps in flight beyond its private levels;
    /// more are dropped (default: no limit).
    #[arg(long)]
    pub prefetch_queue: Option<usize>,
    /// Run a task trace (CSV with task markers, docs/trace-format.md) on
    /// workers pinned to cores: N (spread over the nodes) or a core list
    /// 0,1,28,29. Needs --machine.
    #[arg(long, requires = "machine")]
    pub workers: Option<String>,
    #[arg(long, default_value = "round-robin",
          help = crate::policy::flag_help("Task scheduler for --workers", &policies::sched::SCHEDULERS))]
    pub scheduler: String,
    /// With --workers: re-time the task arrivals as a Poisson process,
    /// poisson:QPS[:SEED] (a recorded trace at any load), or by a request
    /// log, log:FILE (task k at the log's request k; Azure, BurstGPT,
    /// Mooncake or plain CSV).
    #[arg(long)]
    pub arrivals: Option<String>,
    /// With --workers: write a Chrome trace-event / Perfetto timeline (JSON):
    /// a track per worker with each task as a slice, and queued tasks.
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Simulated time the timeline covers, START..END (e.g. 0..2s, 1ms..5ms).
    #[arg(long, default_value = "0..2s")]
    pub timeline_window: String,
}

/// The three things `replay` does, chosen by `--machine` and `--workers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No `--machine`: the cachegrind-compatible cache replay.
    Cache = 1,
    /// `--machine`: the NUMA timing model.
    Timing = 2,
    /// `--machine` and `--workers`: a task trace on workers.
    Tasks = 4,
}

impl Mode {
    fn of(a: &ReplayArgs) -> Mode {
        match (&a.machine, &a.workers) {
            (_, Some(_)) => Mode::Tasks,
            (Some(_), None) => Mode::Timing,
            (None, None) => Mode::Cache,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Mode::Cache => "the cache replay (no --machine)",
            Mode::Timing => "the timing model (--machine)",
            Mode::Tasks => "a task replay (--workers)",
        }
    }
}

/// Which modes each flag applies to (by its field name); the trace, the
/// mode-choosing flags and the output flags apply to all.
const APPLIES: &[(&str, u8)] = &[
    ("format", Mode::Cache as u8 | Mode::Timing as u8),
    ("i1", Mode::Cache as u8),
    ("d1", Mode::Cache as u8),
    ("ll", Mode::Cache as u8),
    ("replacement", Mode::Cache as u8),
    ("json", Mode::Cache as u8 | Mode::Timing as u8),
    ("single_thread", Mode::Cache as u8),
    ("pin", Mode::Timing as u8),
    ("sample", Mode::Timing as u8 | Mode::Tasks as u8),
    ("sample_seed", Mode::Timing as u8 | Mode::Tasks as u8),
    ("save_checkpoint", Mode::Timing as u8),
    ("checkpoint_at", Mode::Timing as u8),
    ("from_checkpoint", Mode::Timing as u8),
    ("parts", Mode::Timing as u8),
    ("part", Mode::Timing as u8),
    ("merge", Mode::Timing as u8),
    ("part_warming", Mode::Timing as u8),
    ("slurm", Mode::Timing as u8),
    ("array_limit", Mode::Timing as u8),
    ("sbatch_options", Mode::Timing as u8),
    ("dry_run", Mode::Timing as u8),
    ("window_ns", Mode::Timing as u8),
    ("max_windows", Mode::Timing as u8),
    ("mlp", Mode::Timing as u8 | Mode::Tasks as u8),
    ("placement", Mode::Timing as u8 | Mode::Tasks as u8),
    ("prefetch", Mode::Timing as u8 | Mode::Tasks as u8),
    ("prefetch_level", Mode::Timing as u8 | Mode::Tasks as u8),
    ("prefetch_queue", Mode::Timing as u8 | Mode::Tasks as u8),
    ("scheduler", Mode::Tasks as u8),
    ("arrivals", Mode::Tasks as u8),
    ("timeline", Mode::Tasks as u8),
    ("timeline_window", Mode::Tasks as u8),
];

/// A flag given on the command line (`given`: the field names clap saw
/// there, defaults excluded) that does not apply to the mode `a` runs in:
/// its usage error, naming the modes it applies to.
pub fn inapplicable(
    a: &ReplayArgs,
    given: &[String],
    long: impl Fn(&str) -> String,
) -> Option<String> {
    let mode = Mode::of(a);
    for (id, modes) in APPLIES {
        if modes & mode as u8 == 0 && given.iter().any(|g| g == id) {
            let to: Vec<&str> = [Mode::Cache, Mode::Timing, Mode::Tasks]
                .into_iter()
                .filter(|m| modes & *m as u8 != 0)
                .map(Mode::describe)
                .collect();
            return Some(format!(
                "--{} does not apply to {}; it applies to {}",
                long(id),
                mode.describe(),
                to.join(" and ")
            ));
        }
    }
    None
}

/// A replay error in the command line's words (the flag that fixes it).
pub fn replay_err(a: &ReplayArgs, e: ReplayError) -> anyhow::Error {
    match e {
        ReplayError::Trace(e) => trace_err(&a.trace, e),
        ReplayError::Placement(e) => anyhow::anyhow!("--placement: {e}"),
        ReplayError::Prefetch(e) => anyhow::anyhow!(crate::flags::prefetch(&e)),
        ReplayError::Engine(e) => anyhow::anyhow!(crate::flags::engine(&e)),
        e => e.into(),
    }
}

pub fn run(a: ReplayArgs) -> Result<()> {
    if a.machine.is_some() {
        return run_timing(a);
    }
    let defaults = CgConfig::default();
    let cfg = CgConfig {
        i1: a.i1.unwrap_or(defaults.i1),
        d1: a.d1.unwrap_or(defaults.d1),
        ll: a.ll.unwrap_or(defaults.ll),
    };
    let (mode, replacement) = match a.replacement.as_deref() {
        None => ("cachegrind", None),
        Some(name) => {
            let Some(policy) = Replacement::from_name(name) else {
                bail!("unknown replacement policy {name:?}; expected lru, plru, srrip or random");
            };
            (name, Some(policy))
        }
    };
    let threads = if a.single_thread { 1 } else { 2 };
    let input = open_trace(&a.trace, a.format, a.out.is_some(), threads)?;
    let format = input.source.format_name();
    let tap = input.tap.clone();
    let mut progress = Progress::new(input.file_len, "replaying");
    let counts = lab::replay::cache(
        input.source,
        &cfg,
        replacement,
        a.seed,
        !a.single_thread,
        &mut || progress.update(tap.bytes()),
    )
    .map_err(|e| replay_err(&a, e))?;
    progress.finish();
    let summary = counts.summary(mode, &a.trace.display().to_string(), format, &cfg, a.seed);
    if a.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print!(
            "{}",
            analysis::cgreport::render(&cfg, &counts.events, counts.writebacks.as_ref())
        );
    }
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        let inputs = vec![crate::input::manifest_input(&a.trace, format, &tap)];
        write_json(&dir.join("summary.json"), &summary)?;
        write_json(
            &dir.join("manifest.json"),
            &manifest(
                inputs,
                json!({ "mode": mode, "caches": cfg, "seed": a.seed }),
                &lab::InputLog::default(),
            ),
        )?;
    }
    crate::report::after(a.report, a.out.as_deref())
}

/// The machine (noted in `log`) and the timing model's configuration
/// the flags ask for.
pub fn timing_setup(a: &ReplayArgs, log: &lab::InputLog) -> Result<(sim::Machine, sim::Config)> {
    let machine = crate::machines::load_machine(a.machine.as_deref().unwrap_or_default(), log)?;
    let sample = (a.sample).map(|s| s.place(a.sample_seed, !a.prefetch.is_empty()));
    let cfg = sim::Config {
        mlp: a.mlp,
        pin: a.pin.clone(),
        window_ns: a.window_ns,
        timeseries: a.out.is_some(),
        max_windows: a.max_windows,
        prefetch_level: a.prefetch_level,
        prefetch_queue: a.prefetch_queue,
        sample,
        ..sim::Config::default()
    };
    Ok((machine, cfg))
}

/// Replay through the NUMA timing model.
fn run_timing(a: ReplayArgs) -> Result<()> {
    let log = lab::InputLog::default();
    let (machine, cfg) = timing_setup(&a, &log)?;
    let sample = cfg.sample;
    let mut engine =
        lab::replay::timing_engine(&machine, cfg, &a.placement, &a.prefetch, a.seed, &log)
            .map_err(|e| replay_err(&a, e))?;
    let input = open_trace(&a.trace, a.format, a.out.is_some(), 2)?;
    let format = input.source.format_name();
    let tap = input.tap.clone();
    let mut progress = Progress::new(input.file_len, "simulating");
    let wall = std::time::Instant::now();
    let plan = lab::checkpoints::Plan::new(&a.save_checkpoint, a.checkpoint_at, &a.from_checkpoint);
    lab::replay::timing_with(&mut engine, input.source, &plan, &mut || {
        progress.update(tap.bytes())
    })
    .map_err(|e| match e {
        ReplayError::Engine(e) => {
            anyhow::anyhow!("{}: {}", a.trace.display(), crate::flags::engine(&e))
        }
        e => replay_err(&a, e),
    })?;
    progress.finish();
    let secs = wall.elapsed().as_secs_f64();
    let summary = engine.summary();
    if a.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print!("{}", analysis::timing::render(&summary));
    }
    eprintln!(
        "simulated {} accesses in {:.2} s of wall time ({:.1} M accesses/s)",
        summary.accesses,
        secs,
        summary.accesses as f64 / secs.max(1e-9) / 1e6
    );
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        let inputs = vec![crate::input::manifest_input(&a.trace, format, &tap)];
        let config = json!({
            "machine": machine.spec,
            "pin": format!("{:?}", a.pin),
            "mlp": a.mlp,
            "placement": a.placement,
            "window_ns": a.window_ns,
            "prefetch": a.prefetch,
            "prefetch_level": a.prefetch_level,
            "sample": sample,
            "checkpoint": { "from": a.from_checkpoint, "save": a.save_checkpoint, "at": a.checkpoint_at },
        });
        write_json(&dir.join("summary.json"), &serde_json::to_value(&summary)?)?;
        crate::output::write_file(
            &dir.join("timeseries.csv"),
            analysis::timing::timeseries_csv(&engine.timeseries())?.as_bytes(),
        )?;
        write_json(&dir.join("manifest.json"), &manifest(inputs, config, &log))?;
    }
    crate::report::after(a.report, a.out.as_deref())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The arguments that apply to every mode: the trace, the two that
    /// choose the mode, the outputs and the seed.
    const EVERY_MODE: &[&str] = &["trace", "machine", "workers", "out", "report", "seed"];

    /// Every argument of `replay` says which modes it applies to: a new
    /// flag missing from `APPLIES` (and not one of every mode's) fails
    /// here, rather than being silently accepted in every mode.
    #[test]
    fn every_replay_argument_has_its_modes() {
        let cli = crate::Cli::command();
        let replay = cli.find_subcommand("replay").expect("replay");
        for arg in replay.get_arguments() {
            let id = arg.get_id().as_str();
            if matches!(id, "help" | "version") {
                continue;
            }
            assert!(
                super::APPLIES.iter().any(|(a, _)| *a == id) || EVERY_MODE.contains(&id),
                "replay's {id} is in neither APPLIES nor EVERY_MODE"
            );
        }
    }
}
