//! A comparison as its front ends show it: the text (a heading and the
//! table) and the result folder's files — `compare.csv`, `compare.json`,
//! the latency plots, and for the request model the monitoring chart and
//! `requests-<row>.csv` — plus the configuration its manifest records.
//! The front end adds the manifest (it knows the command) and writes.

use serde_json::{Value, json};

use analysis::compare;

use super::{Comparison, LineComparison, TaskComparison};
use crate::experiment::Experiment;
use crate::outputs::{OutputError, Outputs, latency_plots, monitor, requests_csv};
use crate::tasks::TaskExperiment;

/// A comparison rendered.
pub struct Rendered {
    /// The heading line and the table, as printed.
    pub text: String,
    /// The result folder's files, the manifest aside.
    pub files: Outputs,
    /// What the manifest records as the run's configuration.
    pub config: Value,
}

/// `compare.csv`, `compare.json` and the latency plots (titled `title`).
fn common(compare_json: &Value, title: &str, c: &Comparison) -> Result<Outputs, OutputError> {
    let mut files = Outputs::default();
    files.add("compare.csv", compare::to_csv(&c.table)?);
    files.json("compare.json", compare_json);
    latency_plots(&mut files, title, c.unit, &c.names(), &c.by_row())?;
    Ok(files)
}

/// A request-model comparison; with `files` false, its text alone (and
/// the manifest's configuration); with `files`, also its table's files
/// ([`flow_table`]) and the rest of its folder ([`flow_rest`]).
pub fn flow(exp: &Experiment, c: &Comparison, files: bool) -> Result<Rendered, OutputError> {
    let mut r = flow_table(exp, c)?;
    if files {
        flow_rest(exp, c, &mut r.files)?;
    } else {
        r.files = Outputs::default();
    }
    Ok(r)
}

/// A request-model comparison's text and table: `compare.csv` and
/// `compare.json` (with the first seed's monitoring windows) — what a
/// front end needs to show the table, without the plots and requests.
pub fn flow_table(exp: &Experiment, c: &Comparison) -> Result<Rendered, OutputError> {
    let table = &c.table;
    let e = &exp.experiment;
    let per_row = table.first().map_or(0, |r| r.requests);
    let text = format!(
        "{} on {}: {:.0} QPS for {} s × {} seeds ({per_row} requests simulated per row)\n{}",
        e.name,
        exp.workload.machine,
        exp.workload.qps,
        exp.workload.duration_s,
        e.seeds.len(),
        compare::render(table, e.spike_k)
    );
    let config = json!({ "duration_s": exp.workload.duration_s, "seeds": e.seeds });
    let windows: serde_json::Map<String, Value> = c
        .rows
        .iter()
        .map(|r| (r.name.clone(), json!(r.runs[0].windows)))
        .collect();
    let v = json!({
        "experiment": e.name,
        "machine": exp.workload.machine,
        "seeds": e.seeds,
        "duration_s": exp.workload.duration_s,
        "requests_simulated_per_row": per_row,
        "requests_in_sample_per_row": table.first().map_or(0, |r| r.sampled_requests),
        "sampled": c.rows.iter().flat_map(|r| &r.runs).any(|r| r.sampled),
        "rows": table,
        "windows_first_seed": windows,
    });
    let mut files = Outputs::default();
    files.add("compare.csv", compare::to_csv(&c.table)?);
    files.json("compare.json", &v);
    Ok(Rendered {
        text,
        files,
        config,
    })
}

/// The rest of a request-model comparison's folder, into `out`: the
/// latency plots, the monitoring chart and each row's first-seed
/// requests as `requests-<row>.csv`.
pub fn flow_rest(exp: &Experiment, c: &Comparison, out: &mut Outputs) -> Result<(), OutputError> {
    let e = &exp.experiment;
    latency_plots(
        out,
        &format!("{}: request latency", e.name),
        c.unit,
        &c.names(),
        &c.by_row(),
    )?;
    let mon: Vec<(String, Vec<analysis::monitor::MonitorPoint>)> = c
        .rows
        .iter()
        .map(|r| (r.name.clone(), r.runs[0].windows.clone()))
        .collect();
    monitor(
        out,
        &format!("{}: monitoring, seed {}", e.name, e.seeds[0]),
        &mon,
    )?;
    // Each row's CSV on its own thread: rendering is serial after the runs.
    use rayon::prelude::*;
    let csvs: Vec<_> = c
        .rows
        .par_iter()
        .map(|row| requests_csv(&row.first_records))
        .collect();
    for (row, csv) in c.rows.iter().zip(csvs) {
        out.add(format!("requests-{}.csv", row.name), csv?);
    }
    Ok(())
}

/// A task-trace comparison (latencies in µs); its files only with `files`.
pub fn tasks(
    exp: &TaskExperiment,
    tc: &TaskComparison,
    files: bool,
) -> Result<Rendered, OutputError> {
    let table = &tc.comparison.table;
    let e = &exp.experiment;
    let text = format!(
        "{} on {}: task trace {} ({} tasks, {} keys) on {} workers × {} seeds\n{}",
        e.name,
        exp.workload.machine,
        exp.workload.trace.display(),
        tc.tasks,
        tc.keys,
        tc.cores.len(),
        e.seeds.len(),
        compare::render(table, e.spike_k)
    );
    let config = json!({ "seeds": e.seeds });
    let files = if files {
        let v = json!({
            "experiment": e.name,
            "machine": exp.workload.machine,
            "trace": exp.workload.trace,
            "workers": tc.cores,
            "seeds": e.seeds,
            "rows": table,
        });
        common(&v, &format!("{}: task latency", e.name), &tc.comparison)?
    } else {
        Outputs::default()
    };
    Ok(Rendered {
        text,
        files,
        config,
    })
}

/// A request-model experiment compared at line level; its files only
/// with `files`.
pub fn lines(exp: &Experiment, lc: &LineComparison, files: bool) -> Result<Rendered, OutputError> {
    let table = &lc.comparison.table;
    let e = &exp.experiment;
    let scaled = lc
        .scaled
        .as_ref()
        .map_or(String::new(), |s| format!("*** {s} ***\n"));
    let text = format!(
        "{} on {} at line level: {:.0} QPS for {} s × {} seeds ({} requests per row; {} line reads per lookup, {} workers)\n{scaled}{}",
        e.name,
        lc.workload.machine,
        lc.workload.qps,
        lc.workload.duration_s,
        e.seeds.len(),
        table.first().map_or(0, |r| r.requests),
        lc.lines_per_item,
        lc.cores.len(),
        compare::render(table, e.spike_k)
    );
    let config = json!({
        "fidelity": "lines",
        "duration_s": lc.workload.duration_s,
        "seeds": e.seeds,
        "scaled": lc.scaled.as_ref().map(|s| s.to_string()),
    });
    let files = if files {
        let v = json!({
            "experiment": e.name,
            "fidelity": "lines",
            "machine": exp.workload.machine,
            "seeds": e.seeds,
            "duration_s": exp.workload.duration_s,
            "workers": lc.cores,
            "rows": table,
        });
        let title = format!("{}: request latency (line level)", e.name);
        common(&v, &title, &lc.comparison)?
    } else {
        Outputs::default()
    };
    Ok(Rendered {
        text,
        files,
        config,
    })
}
