//! `numasim reproduce DIR [--out NEW]`: reruns the command a result
//! folder's `manifest.json` records — the same arguments, in the same
//! working folder, into NEW instead of DIR — and compares every output
//! byte for byte. "identical" and exit 0 when all match; otherwise exit 1
//! naming the first differing file and every input whose checksum is no
//! longer the recorded one.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// A folder a numasim command wrote with --out (it holds manifest.json).
    pub dir: PathBuf,
    /// Where the rerun writes (kept); default: a temporary folder beside
    /// DIR, removed afterwards.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Files that describe a run rather than its results: not compared (a
/// sweep point's `experiment.toml` and `point.json` say what it ran).
fn is_record(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(
        name,
        "manifest.json"
            | "sweep-points.json"
            | "slurm-jobs.json"
            | "report.html"
            | "experiment.toml"
            | "point.json"
    ) || name.ends_with(".sbatch")
        || rel.components().any(|c| c.as_os_str() == "slurm")
        || name.starts_with('.')
}

fn files(root: &Path, at: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(at)
        .with_context(|| format!("{}: cannot list", at.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let rel = p.strip_prefix(root).expect("under root").to_path_buf();
        if is_record(&rel) {
            continue;
        }
        if e.file_type()?.is_dir() {
            files(root, &p, out)?;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

/// What changed among the recorded inputs, one line each.
fn changed_inputs(m: &Value, cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for i in m["inputs"].as_array().into_iter().flatten() {
        let (role, want) = (
            i["role"].as_str().unwrap_or("input"),
            i["checksum"].as_str(),
        );
        let Some(want) = want else { continue };
        let now = if let Some(name) = i["preset"].as_str() {
            lab::experiment::builtin(role, name).map(|t| crate::manifest::checksum(t.as_bytes()))
        } else if let Some(p) = i["path"].as_str() {
            crate::manifest::checksum_file(&cwd.join(p)).ok()
        } else {
            continue;
        };
        let what = i["preset"]
            .as_str()
            .map(|n| format!("preset {n}"))
            .or_else(|| i["path"].as_str().map(String::from))
            .unwrap_or_default();
        match now {
            Some(now) if now == want => {}
            Some(now) => out.push(format!("{role} {what}: checksum {want} is now {now}")),
            None => out.push(format!("{role} {what}: gone (checksum was {want})")),
        }
    }
    out
}

/// The arguments with the value of `--out` replaced by `new`.
fn retarget(args: &[String], new: &Path) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    let mut found = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--out" {
            it.next();
            out.push(a.clone());
            out.push(new.display().to_string());
            found = true;
        } else if a.starts_with("--out=") {
            out.push(format!("--out={}", new.display()));
            found = true;
        } else {
            out.push(a.clone());
        }
    }
    if !found {
        bail!("the recorded command has no --out: nothing to compare");
    }
    Ok(out)
}

pub fn run(a: ReproduceArgs) -> Result<()> {
    let mpath = a.dir.join("manifest.json");
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(&mpath)
            .with_context(|| format!("{}: cannot read (not a result folder?)", mpath.display()))?,
    )
    .with_context(|| format!("{}: not JSON", mpath.display()))?;
    let args: Vec<String> = m["arguments"]
        .as_array()
        .with_context(|| format!("{}: no arguments", mpath.display()))?
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_string())
        .collect();
    if args.first().is_some_and(|c| c == "reproduce") {
        bail!("{}: records a reproduce run", mpath.display());
    }
    let recorded_cwd = PathBuf::from(m["cwd"].as_str().unwrap_or(""));
    let cwd = if recorded_cwd.is_dir() {
        recorded_cwd
    } else {
        eprintln!(
            "the recorded working folder {:?} does not exist here; running in the current one",
            m["cwd"].as_str().unwrap_or("")
        );
        std::env::current_dir()?
    };
    let dir = std::path::absolute(&a.dir)?;
    let (new, temporary) = match &a.out {
        Some(p) => (std::path::absolute(p)?, false),
        None => {
            let name = format!(
                ".{}.reproduce-{}",
                dir.file_name().and_then(|n| n.to_str()).unwrap_or("run"),
                std::process::id()
            );
            (dir.with_file_name(name), true)
        }
    };
    if new.exists() {
        bail!("{}: exists; reproduce writes a new folder", new.display());
    }
    let rerun = retarget(&args, &new)?;
    if let Some(c) = m["git_commit"].as_str()
        && !c.is_empty()
        && !c.starts_with('$')
        && c != crate::manifest::git_commit()
    {
        eprintln!(
            "note: recorded by numasim {c}, rerun by {}",
            crate::manifest::git_commit()
        );
    }
    let exe = std::env::current_exe().context("numasim's own path")?;
    let run = std::process::Command::new(exe)
        .args(&rerun)
        .current_dir(&cwd)
        .output()
        .context("rerun")?;
    let changed = changed_inputs(&m, &cwd);
    let result = (|| -> Result<Option<String>> {
        if !run.status.success() {
            let err = String::from_utf8_lossy(&run.stderr);
            let last = err.lines().last().unwrap_or("").trim().to_string();
            return Ok(Some(format!("the rerun failed ({}): {last}", run.status)));
        }
        let (mut old_files, mut new_files) = (Vec::new(), Vec::new());
        files(&dir, &dir, &mut old_files)?;
        files(&new, &new, &mut new_files)?;
        for f in &old_files {
            let now = std::fs::read(new.join(f)).ok();
            if now.is_none() {
                return Ok(Some(format!("{} is not written by the rerun", f.display())));
            }
            if now.as_deref() != Some(&std::fs::read(dir.join(f))?[..]) {
                return Ok(Some(format!("{} differs", f.display())));
            }
        }
        if let Some(f) = new_files.iter().find(|f| !old_files.contains(f)) {
            return Ok(Some(format!("{} is new in the rerun", f.display())));
        }
        Ok(None)
    })();
    if temporary {
        let _ = std::fs::remove_dir_all(&new);
    }
    match result? {
        None => {
            println!(
                "identical: {} (numasim {})",
                a.dir.display(),
                rerun.join(" ")
            );
            for c in &changed {
                eprintln!("note: input changed but the outputs did not: {c}");
            }
            Ok(())
        }
        Some(first) => {
            let why = if changed.is_empty() {
                "no recorded input changed".to_string()
            } else {
                format!("changed input: {}", changed.join("; "))
            };
            bail!("{}: not reproduced: {first}; {why}", a.dir.display())
        }
    }
}
