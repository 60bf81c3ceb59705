//! `numasim compare EXPERIMENT.toml --fidelity lines`: a request-model
//! experiment run by the line-level task engine instead of the flow model
//! (`lab::lines`: the mapping; `docs/fidelity.md`). Results are in ms, in
//! the flow run's table and `compare.csv` form, so the two fidelities
//! compare column by column.

use std::path::Path;

use anyhow::Result;
use serde_json::json;

use analysis::compare;

use crate::experiment::Experiment;
use crate::output::{ensure_dir, write_file};

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
    let table = &lc.comparison.table;
    let cores = &lc.cores;
    let seeds = &exp.experiment.seeds;
    if !rec.quiet {
        println!(
            "{} on {} at line level: {:.0} QPS for {} s × {} seeds ({} requests per row; {} line reads per request, {} workers)",
            exp.experiment.name,
            exp.workload.machine,
            exp.workload.qps,
            exp.workload.duration_s,
            seeds.len(),
            table.first().map_or(0, |r| r.requests),
            exp.workload.request.features.lookups as u64 * lc.lines_per_item,
            cores.len()
        );
        print!("{}", compare::render(table, exp.experiment.spike_k));
    }
    if let Some(dir) = out {
        ensure_dir(dir)?;
        write_file(&dir.join("compare.csv"), compare::to_csv(table)?.as_bytes())?;
        super::files::write_common(
            dir,
            rec,
            &json!({
                "experiment": exp.experiment.name,
                "fidelity": "lines",
                "machine": exp.workload.machine,
                "seeds": seeds,
                "duration_s": exp.workload.duration_s,
                "workers": cores,
                "rows": table,
            }),
            &format!("{}: request latency (line level)", exp.experiment.name),
            &lc.comparison,
            json!({ "fidelity": "lines", "duration_s": exp.workload.duration_s, "seeds": seeds }),
            &exp.inputs,
        )?;
    }
    Ok(())
}
