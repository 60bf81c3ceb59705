//! `replay --sample … --parts N`: a sampled replay split into parts
//! (`lab::parts`), run here at once, or one part (`--part K`,
//! a Slurm array task), or merged from the parts' files (`--merge`, the
//! merge job), or sent to Slurm (`--slurm`).

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use lab::parts::{self, PartsError, Split};
use serde_json::json;
use sim::results::Sampled;
use traces::RecordSource;

use super::{ReplayArgs, replay_err, timing_setup};
use crate::input::{input_err, manifest_input, may_map, open_trace};
use crate::manifest::manifest;
use crate::output::{ensure_dir, write_json};

/// Runs what the flags ask of a split sampled replay.
pub fn run(a: &ReplayArgs) -> Result<()> {
    let log = &lab::InputLog::default();
    let (machine, cfg) = timing_setup(a, log)?;
    let (machine, shape) = (&machine, cfg.sample.context("--parts needs --sample")?);
    if a.report {
        bail!("--report does not apply to a split run (--parts): its summary has no plain part");
    }
    let open = || lab::input::open_trace(&a.trace, a.format, false, 2, may_map()).map(|i| i.source);
    let (placement, prefetch, seed) = (&a.placement, &a.prefetch[..], a.seed);
    let job = parts::Job {
        machine,
        cfg,
        placement,
        prefetch,
        seed,
        log,
        open: &open,
    };
    let err = |e| match e {
        PartsError::Replay(e) => anyhow!("{}: {}", a.trace.display(), replay_err(a, e)),
        PartsError::Input(e) => input_err(e),
        PartsError::Merge(e) => anyhow!("{}: {e}", a.trace.display()),
        e @ PartsError::NoSuchPart { .. } => anyhow!("--{e}"),
        e => e.into(),
    };
    // The count's read also sums the trace for the manifest.
    let input = open_trace(&a.trace, a.format, a.out.is_some(), 2)?;
    let (format, tap) = (input.source.format_name(), input.tap.clone());
    let split =
        (job.split(input.source, &shape, a.parts.unwrap_or(1), a.part_warming)).map_err(err)?;
    let out = a.out.as_deref();
    match (a.slurm, a.part, a.merge, out) {
        (true, ..) => slurm(a, split.parts.len()),
        (_, Some(k), _, Some(out)) => {
            let result = job.part(&split, k).map_err(err)?;
            let file = parts::PartFile {
                split,
                index: k,
                result,
            };
            parts::save(&parts::path(out, k), &file)?;
            eprintln!("wrote {}", parts::path(out, k).display());
            Ok(())
        }
        (_, _, merge, out) => {
            let results = match (merge, out) {
                (true, Some(out)) => parts::load_all(out, &split),
                _ => job.all(&split),
            };
            let merged = parts::merge(machine, &shape, &split, &results.map_err(err)?);
            write(a, &split, &merged.map_err(err)?)?;
            let Some(dir) = &a.out else { return Ok(()) };
            let config = json!({
                "machine": machine.spec, "sample": shape, "parts": split.count,
                "part_warming": split.warming, "pin": format!("{:?}", a.pin), "mlp": a.mlp,
                "placement": a.placement, "prefetch": a.prefetch, "prefetch_level": a.prefetch_level,
            });
            let inputs = vec![manifest_input(&a.trace, format, &tap)];
            write_json(&dir.join("manifest.json"), &manifest(inputs, config, log))
        }
    }
}

/// Prints the merged estimates and writes them into `--out`.
fn write(a: &ReplayArgs, split: &Split, merged: &(Sampled, serde_json::Value)) -> Result<()> {
    let (sampled, summary) = merged;
    if a.json {
        println!("{}", serde_json::to_string(summary)?);
    } else {
        let mut o = format!("{} parts of {} records\n", split.count, split.records);
        analysis::timing::render_sampled(&mut o, sampled);
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
    let mut args = vec![exe.display().to_string()];
    let slurm = ["--array-limit", "--sbatch-option"];
    args.extend(lab::slurm::without(
        std::env::args_os().skip(1),
        &["--slurm", "--dry-run"],
        &slurm,
    )?);
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
    eprintln!("{}", lab::slurm::launch(Path::new(out), &jobs, a.dry_run)?);
    Ok(())
}
