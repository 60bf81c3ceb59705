//! `numasim compare` on a task trace (`lab::tasks`: the schema, a row's
//! replay; `lab::compare::files`: what is printed and written).

use std::path::Path;

use anyhow::Result;

pub use lab::tasks::is_trace_experiment;

pub fn run(
    path: &Path,
    text: &str,
    out: Option<&Path>,
    seeds: Option<&[u64]>,
    threads: Option<usize>,
    rec: &crate::manifest::Record,
) -> Result<()> {
    let origin = path.display().to_string();
    let mut exp: lab::tasks::TaskExperiment =
        traces::config::parse_toml(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    if let Some(s) = seeds {
        exp.experiment.seeds = s.to_vec();
    }
    let log = lab::InputLog::default();
    let opts = lab::compare::Options {
        threads,
        ..Default::default()
    };
    let base = path.parent().unwrap_or(Path::new("."));
    let tc = lab::compare::tasks(&exp, &origin, base, &log, &opts, &|_, _| {})?;
    let r = lab::compare::files::tasks(&exp, &tc)?;
    if !rec.quiet {
        print!("{}", r.text);
    }
    if let Some(dir) = out {
        super::write(dir, r, rec, &log)?;
    }
    Ok(())
}
