//! `numasim sweep SWEEP.toml --out DIR`: every point of a sweep's grid is
//! a `compare` of the experiment with the point's overrides, run in
//! parallel on the local cores (or one point per Slurm array task), each
//! into `DIR/points/<i>/`, then merged into `DIR/sweep.csv` and
//! `DIR/sweep.json`. A point's folder appears whole (built under a
//! temporary name, then renamed), so an interrupted sweep resumes: the
//! points whose folders exist are not rerun. `docs/sweep.md`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use serde_json::json;

use crate::output::{ensure_dir, write_file, write_json};
use lab::sweep::Sweep;
use lab::sweep::merge::{SweepRecord, describe, point_dir, values_json};

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub sub: Option<SweepSub>,
    /// Sweep file (TOML): [sweep] experiment (and rows), [grid] or points.
    pub sweep: Option<PathBuf>,
    /// Output folder: points/<i>/, sweep.csv, sweep.json.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only point K (what a Slurm array task runs); no merge.
    #[arg(long)]
    pub point: Option<usize>,
    /// Points run at once (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write DIR/sweep.sbatch (a job array, one task per point) and
    /// DIR/merge.sbatch (a merge job after it), and submit both if sbatch
    /// exists.
    #[arg(long)]
    pub slurm: bool,
    /// With --slurm: at most K array tasks at once (--array=0-(N-1)%K).
    #[arg(long)]
    pub array_limit: Option<usize>,
    /// With --slurm: an extra #SBATCH line for both jobs (repeatable),
    /// e.g. --sbatch-option=--partition=debug.
    #[arg(long = "sbatch-option", allow_hyphen_values = true)]
    pub sbatch_options: Vec<String>,
    /// Also write DIR/report.html: tables, plots and manifest in one self-contained page.
    #[arg(long)]
    pub report: bool,
    /// With --slurm: write the job scripts, do not submit.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum SweepSub {
    /// Merge the finished points of DIR into sweep.csv and sweep.json,
    /// naming the missing ones.
    Merge { dir: PathBuf },
}

pub fn run(a: SweepArgs) -> Result<()> {
    if let Some(SweepSub::Merge { dir }) = &a.sub {
        return merge(dir);
    }
    let (Some(file), Some(out)) = (&a.sweep, &a.out) else {
        bail!("sweep needs SWEEP.toml and --out DIR (or: sweep merge DIR)");
    };
    let s = Sweep::load(file)?;
    let n = s.points.len();
    ensure_dir(&out.join("points"))?;
    let record = SweepRecord::of(&s, file);
    write_json(
        &out.join("sweep-points.json"),
        &serde_json::to_value(&record)?,
    )?;
    if a.slurm {
        return slurm(&a, file, out, n);
    }
    if let Some(k) = a.point {
        if k >= n {
            bail!("--point {k}: the sweep has {n} points (0..{})", n - 1);
        }
        return run_point(&s, out, k);
    }
    let todo: Vec<usize> = (0..n).filter(|&i| !point_dir(out, i).exists()).collect();
    if todo.len() < n {
        eprintln!(
            "resuming: {} of {n} points already done, {} to run",
            n - todo.len(),
            todo.len()
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.unwrap_or(0))
        .build()
        .context("thread pool")?;
    let done = std::sync::atomic::AtomicU64::new((n - todo.len()) as u64);
    let bar = std::sync::Mutex::new(crate::progress::Progress::new(n as u64, "points"));
    let results: Vec<Result<()>> = pool.install(|| {
        todo.par_iter()
            .map(|&i| {
                let r = run_point(&s, out, i);
                let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                bar.lock().expect("progress").update(d);
                r
            })
            .collect()
    });
    bar.lock().expect("progress").finish();
    for r in results {
        r?;
    }
    merge(out)?;
    // The sweep's inputs, then every point's (from its own manifest: a
    // resumed sweep's earlier points count too).
    let log = s.inputs.clone();
    for i in 0..n {
        let path = point_dir(out, i).join("manifest.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let m: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        for v in m["inputs"].as_array().into_iter().flatten() {
            if let Ok(input) = serde_json::from_value::<lab::Input>(v.clone()) {
                log.note(input);
            }
        }
    }
    write_json(
        &out.join("manifest.json"),
        &crate::manifest::manifest(Vec::new(), json!({ "points": n, "keys": s.keys }), &log),
    )?;
    crate::report::after(a.report, Some(out))
}

/// Runs point `i` into `out/points/<i>/` (built whole under a temporary
/// name, then renamed into place).
fn run_point(s: &Sweep, out: &Path, i: usize) -> Result<()> {
    let dest = point_dir(out, i);
    if dest.exists() {
        return Ok(());
    }
    let tmp = out
        .join("points")
        .join(format!(".{i}.partial-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)
            .with_context(|| format!("{}: cannot clear", tmp.display()))?;
    }
    let text = s.point_text(i)?;
    let ask = crate::comparison::Ask {
        experiment: s.experiment.clone(),
        out: Some(tmp.clone()),
        duration: None,
        seeds: None,
        threads: Some(1),
        qps: None,
        timeline: None,
        timeline_window: "0..2s".into(),
        timeline_row: None,
        report: false,
        fidelity: s.fidelity.clone(),
        recorded: Some(point_command(s, i, &dest)),
        quiet: true,
    };
    crate::comparison::run(&ask, &text, &s.text)
        .with_context(|| format!("sweep point {i} ({})", describe(s, i)))?;
    write_file(&tmp.join("experiment.toml"), text.as_bytes())?;
    write_json(
        &tmp.join("point.json"),
        &json!({ "point": i, "values": values_json(&s.keys, &s.cells(i)) }),
    )?;
    match std::fs::rename(&tmp, &dest) {
        Ok(()) => Ok(()),
        // Another runner finished the same point first: its copy stands.
        Err(_) if dest.exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => Err(e).with_context(|| format!("{}: cannot rename into place", dest.display())),
    }
}

/// The `compare` command that runs point `i` on its own (what its
/// manifest records, so `reproduce` reruns just that point), writing to `out`.
fn point_command(s: &Sweep, i: usize, out: &Path) -> Vec<String> {
    let mut a = vec!["compare".to_string(), s.experiment.display().to_string()];
    if let Some(rows) = s.rows() {
        a.extend(["--rows".to_string(), rows.join(",")]);
    }
    for (k, v) in s.overrides(i) {
        a.extend(["--set".to_string(), format!("{k}={v}")]);
    }
    if let Some(f) = &s.fidelity {
        a.extend(["--fidelity".to_string(), f.clone()]);
    }
    a.extend(["--out".to_string(), out.display().to_string()]);
    a
}

/// `sweep merge DIR`: every finished point's `compare.csv` lines behind
/// its grid values, in point order; the missing points named on stderr.
pub fn merge(out: &Path) -> Result<()> {
    let m = lab::sweep::merge::merge(out)?;
    write_file(&out.join("sweep.csv"), &m.csv)?;
    write_json(&out.join("sweep.json"), &m.json)?;
    let n = m.points;
    if m.missing.is_empty() {
        eprintln!("merged {n} points into {}", out.join("sweep.csv").display());
    } else {
        eprintln!(
            "merged {} of {n} points into {}; missing (not finished): {:?}",
            n - m.missing.len(),
            out.join("sweep.csv").display(),
            m.missing
        );
    }
    Ok(())
}

/// `--slurm`: the array job (one task per point) and the merge job that
/// depends on it; submitted if `sbatch` is on PATH and not `--dry-run`.
fn slurm(a: &SweepArgs, file: &Path, out: &Path, n: usize) -> Result<()> {
    let exe = std::env::current_exe().context("numasim's own path")?;
    let abs = |p: &Path| std::path::absolute(p).unwrap_or(p.to_path_buf());
    let [exe, file, out] = [&exe, file, out].map(|p| abs(p).display().to_string());
    let logs = Path::new(&out).join("slurm");
    ensure_dir(&logs)?;
    let jobs = lab::slurm::Jobs {
        name: "sweep",
        task: &[
            exe.clone(),
            "sweep".into(),
            file,
            "--out".into(),
            out.clone(),
        ],
        index_flag: "--point",
        merge: &[exe, "sweep".into(), "merge".into(), out.clone()],
        logs: &logs,
        tasks: n,
        array_limit: a.array_limit,
        options: &a.sbatch_options,
    };
    eprintln!("{}", lab::slurm::launch(Path::new(&out), &jobs, a.dry_run)?);
    Ok(())
}
