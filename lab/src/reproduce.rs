//! `reproduce`'s checks: which of a result folder's files are results
//! (compared byte for byte) and which describe the run, the first
//! difference between two folders, and which recorded inputs have changed
//! since (by checksum).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What can stop a check.
#[derive(Debug, thiserror::Error)]
pub enum ReproduceError {
    #[error("{path}: cannot list: {error}")]
    List { path: String, error: std::io::Error },
    #[error("{path}: cannot read: {error}")]
    Read { path: String, error: std::io::Error },
}

type Result<T> = std::result::Result<T, ReproduceError>;

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
    let list = |error| ReproduceError::List {
        path: at.display().to_string(),
        error,
    };
    let mut entries: Vec<_> = std::fs::read_dir(at)
        .map_err(list)?
        .collect::<std::io::Result<_>>()
        .map_err(list)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let rel = p.strip_prefix(root).expect("under root").to_path_buf();
        if is_record(&rel) {
            continue;
        }
        if e.file_type().map_err(list)?.is_dir() {
            files(root, &p, out)?;
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

/// What changed among the recorded inputs of manifest `m` (paths
/// relative to `cwd`), one line each.
pub fn changed_inputs(m: &Value, cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for i in m["inputs"].as_array().into_iter().flatten() {
        let (role, want) = (
            i["role"].as_str().unwrap_or("input"),
            i["checksum"].as_str(),
        );
        let Some(want) = want else { continue };
        let now = if let Some(name) = i["preset"].as_str() {
            crate::experiment::builtin(role, name).map(|t| crate::inputs::checksum(t.as_bytes()))
        } else if let Some(p) = i["path"].as_str() {
            crate::inputs::checksum_file(&cwd.join(p)).ok()
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

/// The first way the result folder `new` differs from `old` (a file
/// missing, different or new), or `None` if every result file is the same.
pub fn first_difference(old: &Path, new: &Path) -> Result<Option<String>> {
    let (mut old_files, mut new_files) = (Vec::new(), Vec::new());
    files(old, old, &mut old_files)?;
    files(new, new, &mut new_files)?;
    for f in &old_files {
        let now = std::fs::read(new.join(f)).ok();
        if now.is_none() {
            return Ok(Some(format!("{} is not written by the rerun", f.display())));
        }
        let was = std::fs::read(old.join(f)).map_err(|error| ReproduceError::Read {
            path: old.join(f).display().to_string(),
            error,
        })?;
        if now.as_deref() != Some(&was[..]) {
            return Ok(Some(format!("{} differs", f.display())));
        }
    }
    if let Some(f) = new_files.iter().find(|f| !old_files.contains(f)) {
        return Ok(Some(format!("{} is new in the rerun", f.display())));
    }
    Ok(None)
}
