//! `numasim compare` on a task trace (`lab::tasks`: the schema, a row's
//! replay): the same table, `compare.csv`, `compare.json` and plots as the
//! request model's — in µs (tasks are µs-scale): the statistics are fed
//! latencies in ps, so every "ms" of the shared code reads as µs, and the
//! CSV's columns are named `_us`.

use std::path::Path;

use anyhow::Result;
use serde_json::json;

use analysis::compare;

use crate::output::{ensure_dir, write_file};

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
    let table = &tc.comparison.table;
    let cores = &tc.cores;
    if !rec.quiet {
        println!(
            "{} on {}: task trace {} ({} tasks, {} keys) on {} workers × {} seeds",
            exp.experiment.name,
            exp.workload.machine,
            exp.workload.trace.display(),
            tc.tasks,
            tc.keys,
            cores.len(),
            exp.experiment.seeds.len()
        );
        print!(
            "{}",
            compare::render_in(table, exp.experiment.spike_k, "µs", "task")
        );
    }
    if let Some(dir) = out {
        ensure_dir(dir)?;
        write_file(
            &dir.join("compare.csv"),
            compare::to_csv_in(table, "us")?.as_bytes(),
        )?;
        super::files::write_common(
            dir,
            rec,
            &json!({
                "experiment": exp.experiment.name,
                "machine": exp.workload.machine,
                "trace": exp.workload.trace,
                "workers": cores,
                "seeds": exp.experiment.seeds,
                "rows": table,
            }),
            &format!("{}: task latency", exp.experiment.name),
            &tc.comparison,
            json!({ "seeds": exp.experiment.seeds }),
            &log,
        )?;
    }
    Ok(())
}
