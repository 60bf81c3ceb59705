//! Request-model experiments as the command line uses them: the schema and
//! runs live in `lab::experiment`; here, reading the file, `--duration`,
//! and the files a run writes (monitoring chart, latency plots,
//! `requests.csv`).

use anyhow::{Context, Result};
use sim::serve::RequestRecord;

use analysis::compare::RunResult;

pub use lab::experiment::{Experiment, run_row};

use crate::output::write_file;

/// Parses "10s", "30m", "1h", "500ms" or plain seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * mult),
        _ => Err(format!("bad duration {s:?} (e.g. 10s, 30m, 1h)")),
    }
}

/// `monitor.csv` and `monitor.svg` (the seed's monitoring chart) in `dir`.
pub fn write_monitor(
    dir: &std::path::Path,
    title: &str,
    rows: &[(String, Vec<analysis::monitor::MonitorPoint>)],
) -> Result<()> {
    write_file(
        &dir.join("monitor.csv"),
        analysis::monitor::to_csv(rows)?.as_bytes(),
    )?;
    write_file(
        &dir.join("monitor.svg"),
        analysis::plots::monitor_svg(title, rows)?.as_bytes(),
    )
}

/// `latency-histogram.svg` and `latency-cdf.svg` in `dir`: every row's
/// latencies over all its seeds, overlaid (shared by `compare` on a
/// workload and on a task trace).
pub fn write_latency_plots(
    dir: &std::path::Path,
    title: &str,
    names: &[String],
    by_row: &[Vec<RunResult>],
) -> Result<()> {
    let series: Vec<(String, Vec<u64>)> = names
        .iter()
        .zip(by_row)
        .map(|(n, runs)| {
            (
                n.clone(),
                runs.iter()
                    .flat_map(|r| r.latency_ns.iter().copied())
                    .collect(),
            )
        })
        .collect();
    write_file(
        &dir.join("latency-histogram.svg"),
        analysis::plots::histogram_svg(title, &series)?.as_bytes(),
    )?;
    write_file(
        &dir.join("latency-cdf.svg"),
        analysis::plots::cdf_svg(title, &series)?.as_bytes(),
    )
}

/// One line of `requests.csv` (times in ns).
#[derive(serde::Serialize, Default)]
struct RequestRow {
    id: u64,
    shard: u32,
    worker: u32,
    node: u32,
    arrival: u64,
    start: u64,
    end: u64,
    queue: u64,
    stall: u64,
    compute: u64,
    transfer: u64,
    #[serde(serialize_with = "analysis::table::bit")]
    cold: bool,
}

/// `requests.csv`: one line per served request.
pub fn requests_csv(recs: &[RequestRecord]) -> Result<String> {
    let rows: Vec<RequestRow> = recs
        .iter()
        .map(|r| RequestRow {
            id: r.id,
            shard: r.shard,
            worker: r.worker,
            node: r.node,
            arrival: r.arrival,
            start: r.start,
            end: r.end,
            queue: r.queue,
            stall: r.stall,
            compute: r.compute,
            transfer: r.transfer,
            cold: r.cold,
        })
        .collect();
    Ok(analysis::table::to_csv(&rows)?)
}

/// Reads an experiment file (model paths resolve against its directory),
/// with an optional duration override; also returns its text (for the manifest).
pub fn load_experiment(
    path: &std::path::Path,
    duration: Option<f64>,
) -> Result<(Experiment, String)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read experiment", path.display()))?;
    let exp = parse_experiment(path, &text, duration)?;
    Ok((exp, text))
}

/// Parses an experiment's `text` as if read from `path` (relative paths in
/// it resolve against `path`'s folder), with an optional duration override.
pub fn parse_experiment(
    path: &std::path::Path,
    text: &str,
    duration: Option<f64>,
) -> Result<Experiment> {
    let mut exp = Experiment::parse_file_text(path, text)?;
    if let Some(d) = duration {
        exp.workload.duration_s = d;
    }
    Ok(exp)
}
