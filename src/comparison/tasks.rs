//! `numasim compare` on a task trace (`lab::tasks`: the schema, a row's
//! replay; `lab::compare::files`: what is printed and written).

use std::path::Path;

use anyhow::Result;
use lab::tasks::TaskExperiment;

pub fn run(
    path: &Path,
    exp: &TaskExperiment,
    out: Option<&Path>,
    threads: Option<usize>,
    rec: &crate::manifest::Record,
) -> Result<()> {
    let opts = lab::compare::Options {
        threads,
        ..Default::default()
    };
    let origin = path.display().to_string();
    let tc = lab::compare::tasks(exp, &origin, &opts, &|_, _| {})?;
    let r = lab::compare::files::tasks(exp, &tc)?;
    if !rec.quiet {
        print!("{}", r.text);
    }
    if let Some(dir) = out {
        super::write(dir, r, rec, &exp.inputs)?;
    }
    Ok(())
}
