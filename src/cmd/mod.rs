//! Subcommands, one module each.

pub mod bench;
pub mod compare;
pub mod dataset;
pub mod live;
pub mod loaded_latency;
pub mod machine;
pub mod policies;
pub mod replay;
pub mod reproduce;
pub mod sweep;
pub mod trace;
pub mod train;
pub mod validate;

use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate, convert and inspect traces.
    #[command(subcommand)]
    Trace(trace::TraceCmd),
    /// Replay a trace: through the cachegrind-compatible cache model, or with
    /// --machine through the NUMA timing model.
    Replay(Box<replay::ReplayArgs>),
    /// List every policy by kind (schedulers, placements, prefetchers, warm-ups, preloads).
    Policies,
    /// List and describe machine presets.
    #[command(subcommand)]
    Machine(machine::MachineCmd),
    /// Sweep injected memory load and print latency vs achieved bandwidth (Intel MLC's loaded-latency view).
    LoadedLatency(loaded_latency::Args),
    /// Run every policy row of an experiment × seeds on the same workload and compare them.
    Compare(compare::CompareArgs),
    /// Run an experiment over a grid of overrides (qps, duration, machine,
    /// rows' policies, seeds …), locally in parallel or as a Slurm job array,
    /// merged into sweep.csv; `sweep merge DIR` merges what is done.
    Sweep(sweep::SweepArgs),
    /// Write DIR/report.html: a result folder's tables, plots and manifest
    /// in one self-contained page (no scripts, no external URLs).
    Report { dir: std::path::PathBuf },
    /// Rerun the command a result folder's manifest.json records and
    /// compare every output byte for byte.
    Reproduce(reproduce::ReproduceArgs),
    /// Run one row of the seed experiment (the article's run_bench.py --scenario=...).
    Bench(bench::BenchArgs),
    /// Export a training dataset: dispatch decisions of a workload, or candidate prefetches of a trace.
    Dataset(dataset::DatasetArgs),
    /// Train a predictor on a dataset (split by time) and save it.
    Train(train::Args),
    /// The real machine: probe its topology, calibrate a machine file, replay on pinned threads.
    #[command(subcommand)]
    Live(live::LiveCmd),
    /// Run traces simulated and live and compare their latencies.
    Validate(validate::ValidateArgs),
}

pub fn run(cmd: Command) -> Result<()> {
    match cmd {
        Command::Trace(t) => trace::run(t),
        Command::Replay(r) => match r.workers.clone() {
            Some(w) => replay::tasks::run(&r, &w),
            None if r.parts.is_some() && r.machine.is_some() => replay::parts::run(&r),
            None => replay::run(*r),
        },
        Command::Policies => policies::run(),
        Command::Machine(m) => machine::run(m),
        Command::LoadedLatency(a) => loaded_latency::run(a),
        Command::Compare(a) => compare::compare_cmd(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Report { dir } => {
            let p = crate::report::write_report(&dir)?;
            eprintln!("wrote {}", p.display());
            Ok(())
        }
        Command::Bench(a) => bench::bench_cmd(a),
        Command::Dataset(a) => dataset::run(a),
        Command::Train(a) => train::run(a),
        Command::Live(a) => live::run(a),
        Command::Validate(a) => validate::validate(a),
    }
}
