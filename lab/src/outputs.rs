//! The explicit sink of a run's files: `lab` renders what a result folder
//! holds as named byte strings ([`Outputs`]) and the front end writes them
//! (the command line atomically, into `--out`; Python where it is told).
//! Also the renderers several kinds of run share: `requests.csv`, the
//! monitoring chart, the latency plots.

use analysis::compare::{RunResult, Unit};
use analysis::monitor::MonitorPoint;
use analysis::plots::PlotError;
use analysis::table::TableError;
use sim::serve::RequestRecord;

/// A file that cannot be rendered.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Files by name (relative to a result folder), in the order made.
#[derive(Debug, Default)]
pub struct Outputs {
    pub files: Vec<(String, Vec<u8>)>,
}

impl Outputs {
    /// Adds `name` with `bytes`.
    pub fn add(&mut self, name: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.push((name.into(), bytes.into()));
    }

    /// Adds `name` as pretty-printed JSON with a final newline.
    pub fn json(&mut self, name: impl Into<String>, v: &serde_json::Value) {
        let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
        s.push('\n');
        self.add(name, s);
    }

    /// The bytes of `name`, if made.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    }
}

/// One line of `requests.csv` (times in ns, the request model's
/// resolution).
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

impl From<&RequestRecord> for RequestRow {
    fn from(r: &RequestRecord) -> RequestRow {
        RequestRow {
            id: r.id,
            shard: r.shard,
            worker: r.worker,
            node: r.node,
            arrival: r.arrival_ps / 1000,
            start: r.start_ps / 1000,
            end: r.end_ps / 1000,
            queue: r.queue_ps / 1000,
            stall: r.stall_ps / 1000,
            compute: r.compute_ps / 1000,
            transfer: r.transfer_ps / 1000,
            cold: r.cold,
        }
    }
}

/// `requests.csv`: one line per served request.
pub fn requests_csv(recs: &[RequestRecord]) -> Result<String, TableError> {
    let rows: Vec<RequestRow> = recs.iter().map(Into::into).collect();
    analysis::table::to_csv(&rows)
}

/// `requests.csv`'s columns, in its order, as integers (`cold` as 0 or
/// 1): what a front end makes a table of without the CSV text in between
/// (Python's `Comparison.requests`, checked equal to the file read back).
pub fn requests_columns(recs: &[RequestRecord]) -> Vec<(&'static str, Vec<i64>)> {
    const NAMES: [&str; 12] = [
        "id", "shard", "worker", "node", "arrival", "start", "end", "queue", "stall", "compute",
        "transfer", "cold",
    ];
    let mut cols: Vec<Vec<i64>> = (0..NAMES.len())
        .map(|_| Vec::with_capacity(recs.len()))
        .collect();
    for r in recs {
        let w = RequestRow::from(r);
        // Every value is within the time horizon (2^53 ns) or a small index.
        let v = [
            w.id,
            w.shard as u64,
            w.worker as u64,
            w.node as u64,
            w.arrival,
            w.start,
            w.end,
            w.queue,
            w.stall,
            w.compute,
            w.transfer,
            w.cold as u64,
        ];
        for (c, x) in cols.iter_mut().zip(v) {
            c.push(x as i64);
        }
    }
    NAMES.into_iter().zip(cols).collect()
}

/// `monitor.csv` and `monitor.svg` (the seed's monitoring chart).
pub fn monitor(
    out: &mut Outputs,
    title: &str,
    rows: &[(String, Vec<MonitorPoint>)],
) -> Result<(), OutputError> {
    out.add("monitor.csv", analysis::monitor::to_csv(rows)?);
    out.add("monitor.svg", analysis::plots::monitor_svg(title, rows)?);
    Ok(())
}

/// `latency-histogram.svg` and `latency-cdf.svg`: every row's latencies
/// over all its seeds, overlaid, in `unit`.
pub fn latency_plots(
    out: &mut Outputs,
    title: &str,
    unit: Unit,
    names: &[String],
    by_row: &[Vec<RunResult>],
) -> Result<(), OutputError> {
    // The plots take ticks: millionths of the unit shown.
    let tick = unit.ps_per_tick();
    let series: Vec<(String, Vec<u64>)> = names
        .iter()
        .zip(by_row)
        .map(|(n, runs)| {
            (
                n.clone(),
                runs.iter()
                    .flat_map(|r| r.latency.iter().map(|&ps| ps / tick))
                    .collect(),
            )
        })
        .collect();
    let unit = unit.label();
    out.add(
        "latency-histogram.svg",
        analysis::plots::histogram_svg(title, unit, &series)?,
    );
    out.add(
        "latency-cdf.svg",
        analysis::plots::cdf_svg(title, unit, &series)?,
    );
    Ok(())
}
