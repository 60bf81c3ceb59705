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
    let changed = lab::reproduce::changed_inputs(&m, &cwd);
    let result = if run.status.success() {
        lab::reproduce::first_difference(&dir, &new).map_err(anyhow::Error::from)
    } else {
        let err = String::from_utf8_lossy(&run.stderr);
        let last = err.lines().last().unwrap_or("").trim().to_string();
        Ok(Some(format!("the rerun failed ({}): {last}", run.status)))
    };
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
