//! `report.html` of a result folder (`analysis::report` renders it) and
//! `--report`, which writes it after a command's outputs.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Writes `dir/report.html` from what `dir` holds; returns its path.
pub fn write_report(dir: &Path) -> Result<PathBuf> {
    let html = analysis::report::render(dir)?;
    let path = dir.join("report.html");
    crate::output::write_file(&path, html.as_bytes())?;
    Ok(path)
}

/// `--report`: after a command wrote `out`, its report; an error without `--out`.
pub fn after(report: bool, out: Option<&Path>) -> Result<()> {
    if !report {
        return Ok(());
    }
    let Some(dir) = out else {
        anyhow::bail!("--report needs --out DIR (the report describes that folder)");
    };
    let p = write_report(dir)?;
    eprintln!("wrote {}", p.display());
    Ok(())
}
