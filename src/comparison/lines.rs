//! `numasim compare EXPERIMENT.toml --fidelity lines`: a request-model
//! experiment run by the line-level task engine instead of the flow model
//! (`lab::lines`: the mapping; `docs/fidelity.md`). Results are in ms, in
//! the flow run's table and `compare.csv` form, so the two fidelities
//! compare column by column.

use std::path::Path;

use crate::experiment::Experiment;
use anyhow::Result;

pub fn run(
    exp: &Experiment,
    path: &Path,
    out: Option<&Path>,
    threads: Option<usize>,
    rec: &crate::manifest::Record,
) -> Result<()> {
    let origin = path.display().to_string();
    let opts = lab::compare::Options {
        threads,
        ..Default::default()
    };
    lab::lines::check(exp, &origin)?;
    for r in exp.row.iter().filter(|r| !lab::lines::mappable(r)) {
        eprintln!(
            "*** row {}: shard moves and preload have no line-level mapping; not run at --fidelity lines ***",
            r.name
        );
    }
    let lc = lab::compare::lines(exp, &origin, &opts, &|_, _| {})?;
    let r = lab::compare::files::lines(exp, &lc)?;
    if !rec.quiet {
        print!("{}", r.text);
    }
    if let Some(dir) = out {
        super::write(dir, r, rec, &exp.inputs)?;
    }
    Ok(())
}
