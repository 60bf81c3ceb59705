//! `replay --sample … --parts N`: a sampled replay split into parts
//! (`lab::parts`), run here one after another, or one part (`--part K`,
//! a Slurm array task), or merged from the parts' files (`--merge`, the
//! merge job), or sent to Slurm (`--slurm`).

use std::path::Path;

use anyhow::{Context, Result};
use lab::parts::{self, Split};
use rayon::prelude::*;
use sim::timing::Sample;

use super::{ReplayArgs, replay_err};
use crate::input::open_trace;
use crate::output::{ensure_dir, write_json};

/// Runs what the flags ask of a split sampled replay on `machine`.
pub fn run(a: &ReplayArgs, machine: &sim::Machine, cfg: sim::Config, shape: Sample) -> Result<()> {
    let log = lab::InputLog::default();
    let engine = || {
        lab::replay::timing_engine(
            machine,
            cfg.clone(),
            &a.placement,
            &a.prefetch,
            a.seed,
            &log,
        )
        .map_err(|e| replay_err(a, e))
    };
    let source = || Ok::<_, anyhow::Error>(open_trace(&a.trace, a.format, false, 2)?.source);
    let counted = parts::count(source()?, &mut || {}).map_err(|e| replay_err(a, e))?;
    let n = a.parts.unwrap_or(1);
    let warming = (a.part_warming).unwrap_or_else(|| parts::default_warming(machine));
    let split = parts::split(&engine()?, &shape, counted, n, warming);
    if a.slurm {
        return slurm(a, split.parts.len());
    }
    let run_part = |k: u64| -> Result<sim::timing::PartResult> {
        let part = parts::part(&split, k).map_err(|e| anyhow::anyhow!("--{e}"))?;
        parts::run(&mut engine()?, source()?, part, &mut || {}).map_err(|e| replay_err(a, e))
    };
    let out = a.out.as_deref();
    if let (Some(k), Some(out)) = (a.part, out) {
        let result = run_part(k)?;
        let file = parts::PartFile {
            split: split.clone(),
            index: k,
            result,
        };
        parts::save(&parts::path(out, k), &file)?;
        eprintln!("wrote {}", parts::path(out, k).display());
        return Ok(());
    }
    // Locally the parts run at once, on every CPU.
    let results: Vec<_> = (0..split.parts.len() as u64)
        .into_par_iter()
        .map(|k| match (a.merge, out) {
            (true, Some(out)) => Ok(parts::load(out, &split, k)?),
            _ => run_part(k),
        })
        .collect::<Result<_>>()?;
    let summary = parts::merge(machine, &shape, &split, &results)?;
    write(a, &split, &summary)
}

/// Prints the merged estimates and writes them into `--out`.
fn write(a: &ReplayArgs, split: &Split, summary: &serde_json::Value) -> Result<()> {
    if a.json {
        println!("{}", serde_json::to_string(summary)?);
    } else {
        let sampled: sim::results::Sampled = serde_json::from_value(summary["sampled"].clone())?;
        let mut o = format!("{} parts of {} records\n", split.parts.len(), split.records);
        analysis::timing::render_sampled(&mut o, &sampled);
        print!("{o}");
    }
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        write_json(&dir.join("summary.json"), summary)?;
    }
    Ok(())
}

/// `--slurm`: this command line as an array task per part (`--part K`)
/// and a merge job (`--merge`), without the Slurm flags.
fn slurm(a: &ReplayArgs, n: usize) -> Result<()> {
    let out = a.out.as_deref().context("--slurm needs --out")?;
    let exe = std::env::current_exe().context("numasim's own path")?;
    let mut args: Vec<String> = vec![exe.display().to_string()];
    let mut skip = false;
    for arg in std::env::args().skip(1) {
        let flag = arg.split('=').next().unwrap_or("");
        if std::mem::take(&mut skip) {
            continue;
        }
        match flag {
            "--slurm" | "--dry-run" => {}
            "--array-limit" | "--sbatch-option" => skip = !arg.contains('='),
            _ => args.push(arg),
        }
    }
    let dir = std::env::current_dir()?;
    let logs = std::path::absolute(out)?.join("slurm");
    ensure_dir(&logs)?;
    let merge: Vec<String> = args.iter().cloned().chain(["--merge".into()]).collect();
    // The jobs start where this command runs, so relative paths hold.
    let mut options = vec![format!("--chdir={}", dir.display())];
    options.extend(a.sbatch_options.iter().cloned());
    let jobs = lab::slurm::Jobs {
        name: "replay",
        task: &args,
        index_flag: "--part",
        merge: &merge,
        logs: &logs,
        tasks: n,
        array_limit: a.array_limit,
        options: &options,
    };
    let launched = lab::slurm::launch(Path::new(out), &jobs, a.dry_run)?;
    crate::output::launched(&launched, &out.display().to_string(), n)
}
