//! Paired comparison of policy rows run on the same workload seeds.
//!
//! Input: for each row and seed, the latency of every request indexed by
//! request id (the same requests in every row of a seed), plus totals.
//! Output: one line per row over all seeds, with the TP99 difference
//! against the first row and its 95% paired-bootstrap CI.

use serde::Serialize;

use crate::table::{self, TableError};

use crate::stats::{
    Percentiles, bimodality, paired_bootstrap_diff, percentiles, spike_period, spike_share,
};

/// The unit a comparison shows its latencies in, which the experiment's
/// kind chooses: ms for requests (the request model, or requests at line
/// level), µs for tasks. Every latency arrives in ps, the engines' unit,
/// and is converted here, once: the statistics count in ticks of a
/// millionth of the unit shown (ns for ms, ps for µs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unit {
    #[default]
    Ms,
    Us,
}

impl Unit {
    /// Ticks per unit shown.
    pub const TICKS: f64 = 1e6;

    /// Picoseconds per tick.
    pub fn ps_per_tick(self) -> u64 {
        match self {
            Unit::Ms => 1000,
            Unit::Us => 1,
        }
    }

    /// `ps` in the unit shown.
    pub fn of_ps(self, ps: u64) -> f64 {
        (ps / self.ps_per_tick()) as f64 / Unit::TICKS
    }

    /// The mean of `n` latencies summing to `sum_ps`, in the unit shown.
    pub fn mean_of_ps(self, sum_ps: u128, n: u64) -> f64 {
        if n == 0 {
            0.0
        } else {
            (sum_ps / self.ps_per_tick() as u128) as f64 / n as f64 / Unit::TICKS
        }
    }

    /// The unit, as CSV/JSON column suffixes write it.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::Us => "us",
        }
    }

    /// The unit, as text writes it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::Us => "µs",
        }
    }

    /// What one latency is of (`request` or `task`).
    pub fn what(self) -> &'static str {
        match self {
            Unit::Ms => "request",
            Unit::Us => "task",
        }
    }
}

/// What one run of one row on one seed produced.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub seed: u64,
    /// Latencies (ps) of the run's kept requests in request-id
    /// order — all of them, or a sample chosen by id (the same ids in every
    /// row of a seed, so rows pair element by element).
    pub latency: Vec<u64>,
    /// Every request: how many, the sum and the largest latency (ps), exact.
    pub requests: u64,
    pub latency_sum: u128,
    pub latency_max: u64,
    /// `latency` is a sample, not every request.
    pub sampled: bool,
    /// When sampled: the latencies of the first requests in id order
    /// (for the spike period, which needs consecutive requests).
    pub sequence: Option<Vec<u64>>,
    /// Accelerator time waiting for data (stall + transfer) and computing (ps).
    pub bubble_ps: u64,
    pub compute_ps: u64,
    /// Bytes through the nodes' memories.
    pub memory_bytes: u64,
    /// Simulated span (ps).
    pub span_ps: u64,
    /// Latency (ps) of the first request after each shard move (the
    /// request model's shard moves).
    pub first_after_move: Vec<u64>,
    /// Per second of simulated time: the monitoring chart's values.
    pub windows: Vec<crate::monitor::MonitorPoint>,
    /// Preload: decisions, correct "will miss" predictions, items brought in,
    /// of those still cached at their batch, fallbacks, simulated cost (ps).
    pub preload_decisions: u64,
    pub predictions_correct: u64,
    pub preload_items: u64,
    pub preload_item_hits: u64,
    pub preload_fallbacks: u64,
    pub predict_cost_ps: u64,
    /// The "will miss" calls judged against the run's outcomes.
    pub judged: sim::serve::Judged,
    /// Bytes the preloads read.
    pub preload_bytes: u64,
    /// The row's preload is an oracle: an upper bound, not a policy.
    pub upper_bound: bool,
}

/// One line of `compare.csv`; latencies in `unit`, which also suffixes
/// their column names ([`Unit::suffix`]).
#[derive(Clone, Debug)]
pub struct Row {
    /// The unit its latencies are shown in.
    pub unit: Unit,
    pub row: String,
    pub requests: u64,
    /// Latencies behind the percentiles, CIs, spikes and bimodality: all
    /// requests, or a paired sample of them.
    pub sampled_requests: usize,
    pub tp50: f64,
    pub tp90: f64,
    pub tp99: f64,
    pub tp999: f64,
    pub max: f64,
    pub mean: f64,
    /// TP99 minus the first row's, paired by request, pooled over seeds.
    pub tp99_diff: f64,
    pub tp99_ci_low: f64,
    pub tp99_ci_high: f64,
    /// Share of requests above spike_k × TP50.
    pub spike_share: f64,
    /// Spikes recur every this many requests (0: no period found).
    pub spike_period: usize,
    pub bimodality: f64,
    pub bubble_pct: f64,
    pub bandwidth_gbps: f64,
    /// Mean over seeds of the first request's latency after a shard move (0 without moves).
    pub first_after_move: f64,
    /// Share of preload decisions whose miss prediction came true (0 without a predictor).
    pub prediction_accuracy: f64,
    /// Share of preloaded items still cached when their batch ran.
    pub preload_hit_rate: f64,
    pub preload_fallbacks: u64,
    /// Simulated decision cost per request (µs).
    pub predict_cost_us: f64,
    /// Of the "will miss" calls over all seeds, judged on each run's
    /// outcomes: ROC AUC, precision, recall (None without calls).
    pub predict_auc: Option<f64>,
    pub predict_precision: Option<f64>,
    pub predict_recall: Option<f64>,
    /// GB the preloads read, over all seeds.
    pub preload_gb: f64,
    /// An oracle row: an upper bound, not a policy a real system could run.
    pub upper_bound: bool,
}

/// Pools a row's seeds in seed order, in ticks of `unit`.
fn pooled(runs: &[RunResult], unit: Unit) -> Vec<u64> {
    let tick = unit.ps_per_tick();
    runs.iter()
        .flat_map(|r| r.latency.iter().map(move |&ps| ps / tick))
        .collect()
}

/// The bootstrap's seed for a row: from its name (FNV-1a), so a row's
/// confidence interval does not depend on which other rows run beside it
/// (a sweep's `rows` subset gives the same CIs as the full experiment).
fn bootstrap_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    }) ^ 0xB007
}

/// Computes the table, its latencies in `unit`. `rows[i]` holds row i's
/// runs, one per seed, in the same seed order for every row.
pub fn compare(
    names: &[String],
    rows: &[Vec<RunResult>],
    unit: Unit,
    spike_k: f64,
    bootstrap: usize,
) -> Vec<Row> {
    let tick = unit.ps_per_tick();
    let base = pooled(&rows[0], unit);
    // `percentiles` and the bootstrap count ticks and give millions of
    // them ("ms" of ns): the unit shown.
    names
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(i, (name, runs))| {
            let all = pooled(runs, unit);
            let p: Percentiles = percentiles(&all);
            let (d, lo, hi) = if i == 0 || base.len() != all.len() {
                (0.0, 0.0, 0.0)
            } else {
                paired_bootstrap_diff(&base, &all, 0.99, bootstrap, bootstrap_seed(name))
            };
            // Period on the first seed's request sequence.
            let period = runs
                .first()
                .and_then(|r| {
                    let seq = r.sequence.as_deref().unwrap_or(&r.latency);
                    let seq: Vec<u64> = seq.iter().map(|&ps| ps / tick).collect();
                    spike_period(&seq, spike_k, 20_000, 0.1)
                })
                .map_or(0, |(lag, _)| lag);
            let requests: u64 = runs.iter().map(|r| r.requests).sum();
            let total_ps: u128 = runs.iter().map(|r| r.latency_sum).sum();
            let max = runs.iter().map(|r| r.latency_max / tick).max().unwrap_or(0);
            let shown: Vec<f64> = all.iter().map(|&x| x as f64 / Unit::TICKS).collect();
            // Times that are not latencies, in whole ns.
            let ns = |f: fn(&RunResult) -> u64| runs.iter().map(|r| f(r) / 1000).sum::<u64>();
            let (bubble, compute, span) =
                (ns(|r| r.bubble_ps), ns(|r| r.compute_ps), ns(|r| r.span_ps));
            let bytes: u64 = runs.iter().map(|r| r.memory_bytes).sum();
            let moves: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.first_after_move.iter().map(|&ps| unit.of_ps(ps)))
                .collect();
            let sum = |f: fn(&RunResult) -> u64| runs.iter().map(f).sum::<u64>();
            let decisions = sum(|r| r.preload_decisions);
            let items = sum(|r| r.preload_items);
            let mut judged = sim::serve::Judged::default();
            for r in runs {
                judged.merge(&r.judged);
            }
            Row {
                unit,
                row: name.clone(),
                requests,
                sampled_requests: all.len(),
                tp50: p.tp50,
                tp90: p.tp90,
                tp99: p.tp99,
                tp999: p.tp999,
                max: max as f64 / Unit::TICKS,
                mean: unit.mean_of_ps(total_ps, requests),
                tp99_diff: d,
                tp99_ci_low: lo,
                tp99_ci_high: hi,
                spike_share: spike_share(&all, spike_k),
                spike_period: period,
                bimodality: bimodality(&shown),
                bubble_pct: if bubble + compute == 0 {
                    0.0
                } else {
                    100.0 * bubble as f64 / (bubble + compute) as f64
                },
                bandwidth_gbps: if span == 0 {
                    0.0
                } else {
                    bytes as f64 / span as f64
                },
                first_after_move: if moves.is_empty() {
                    0.0
                } else {
                    moves.iter().sum::<f64>() / moves.len() as f64
                },
                prediction_accuracy: if decisions == 0 {
                    0.0
                } else {
                    sum(|r| r.predictions_correct) as f64 / decisions as f64
                },
                preload_hit_rate: if items == 0 {
                    0.0
                } else {
                    sum(|r| r.preload_item_hits) as f64 / items as f64
                },
                preload_fallbacks: sum(|r| r.preload_fallbacks),
                predict_cost_us: if requests == 0 {
                    0.0
                } else {
                    ns(|r| r.predict_cost_ps) as f64 / requests as f64 / 1000.0
                },
                predict_auc: judged.auc(),
                predict_precision: judged.precision(),
                predict_recall: judged.recall(),
                preload_gb: sum(|r| r.preload_bytes) as f64 / 1e9,
                upper_bound: runs.iter().any(|r| r.upper_bound),
            }
        })
        .collect()
}

/// The table as text, its latencies in its rows' unit, paired by request
/// or task.
pub fn render(rows: &[Row], spike_k: f64) -> String {
    let shown = rows.first().map_or(Unit::Ms, |r| r.unit);
    let (unit, what) = (shown.label(), shown.what());
    let mut s = format!(
        "{:<18} {:>7} {:>7} {:>8} {:>26} {:>8} {:>8} {:>6} {:>7} {:>7} {:>6} {:>9}\n",
        "row",
        "TP50",
        "TP90",
        "TP99",
        "ΔTP99 vs first [95% CI]",
        "TP99.9",
        "max",
        format!("spk>{spike_k}×"),
        "period",
        "bimod",
        "bubble",
        "mem GB/s"
    );
    for r in rows {
        let ci = if r.tp99_ci_low == 0.0 && r.tp99_ci_high == 0.0 && r.tp99_diff == 0.0 {
            "—".to_string()
        } else {
            format!(
                "{:+.1} [{:+.1}, {:+.1}]",
                r.tp99_diff, r.tp99_ci_low, r.tp99_ci_high
            )
        };
        s.push_str(&format!(
            "{:<18} {:>7.1} {:>7.1} {:>8.1} {:>26} {:>8.1} {:>8.1} {:>6.2}% {:>7} {:>7.2} {:>5.1}% {:>9.1}\n",
            if r.upper_bound {
                format!("{}*", r.row)
            } else {
                r.row.clone()
            },
            r.tp50,
            r.tp90,
            r.tp99,
            ci,
            r.tp999,
            r.max,
            100.0 * r.spike_share,
            if r.spike_period == 0 { "-".to_string() } else { r.spike_period.to_string() },
            r.bimodality,
            r.bubble_pct,
            r.bandwidth_gbps
        ));
    }
    s.push_str(&format!("({unit}; TP99 difference against the first row, paired by {what} over all seeds, 95% bootstrap CI)\n"));
    if let Some(r) = rows
        .iter()
        .find(|r| r.sampled_requests < r.requests as usize)
    {
        s.push_str(&format!(
            "(statistics from a uniform sample of {} requests per row, of the {} simulated, the same requests in every row: percentiles, CIs, spikes and bimodality; mean and max over all)\n",
            r.sampled_requests, r.requests
        ));
    }
    if rows.iter().any(|r| r.upper_bound) {
        s.push_str("* upper bound, not a policy: its preload is told which requests will miss (a paired run without preload)\n");
    }
    let moved: Vec<&Row> = rows.iter().filter(|r| r.first_after_move > 0.0).collect();
    for r in moved {
        s.push_str(&format!(
            "first request after the shard move, {}: {:.1} {unit}\n",
            r.row, r.first_after_move
        ));
    }
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
    for r in rows
        .iter()
        .filter(|r| r.preload_hit_rate > 0.0 || r.predict_auc.is_some())
    {
        s.push_str(&format!(
            "preload, {}: will-miss calls AUC {}, precision {}, recall {}, accuracy {:.3}; {:.2} GB preloaded, preload hit rate {:.3}, {} fallbacks, decision cost {:.1} µs/request (simulated)\n",
            r.row,
            opt(r.predict_auc),
            opt(r.predict_precision),
            opt(r.predict_recall),
            r.prediction_accuracy,
            r.preload_gb,
            r.preload_hit_rate,
            r.preload_fallbacks,
            r.predict_cost_us
        ));
    }
    s
}

/// A column of `compare.csv` and a key of `compare.json`: its name (a
/// latency's is suffixed with the row's unit) and its value.
struct Column {
    name: &'static str,
    latency: bool,
    value: fn(&Row) -> Cell,
}

/// A value, as CSV writes it (fixed decimals) and as JSON does (full
/// precision).
enum Cell {
    Text(String),
    Count(u64),
    /// A number and its decimals in CSV.
    Real(f64, usize),
    /// A number, if any (4 decimals in CSV, empty if none; JSON null).
    Maybe(Option<f64>),
    /// 1/0 in CSV, true/false in JSON.
    Flag(bool),
}

impl Cell {
    fn text(self) -> String {
        match self {
            Cell::Text(t) => t,
            Cell::Count(n) => n.to_string(),
            Cell::Real(v, n) => format!("{v:.n$}"),
            Cell::Maybe(v) => v.map_or(String::new(), |v| format!("{v:.4}")),
            Cell::Flag(b) => (b as u8).to_string(),
        }
    }

    fn json(self) -> serde_json::Value {
        match self {
            Cell::Text(t) => t.into(),
            Cell::Count(n) => n.into(),
            Cell::Real(v, _) => v.into(),
            Cell::Maybe(v) => v.into(),
            Cell::Flag(b) => b.into(),
        }
    }
}

/// The table's columns, in `compare.csv`'s order; `compare.json` has them
/// all and `sampled_requests`.
const COLUMNS: &[Column] = &[
    Column {
        name: "row",
        latency: false,
        value: |r| Cell::Text(r.row.clone()),
    },
    Column {
        name: "requests",
        latency: false,
        value: |r| Cell::Count(r.requests),
    },
    Column {
        name: "tp50",
        latency: true,
        value: |r| Cell::Real(r.tp50, 3),
    },
    Column {
        name: "tp90",
        latency: true,
        value: |r| Cell::Real(r.tp90, 3),
    },
    Column {
        name: "tp99",
        latency: true,
        value: |r| Cell::Real(r.tp99, 3),
    },
    Column {
        name: "tp999",
        latency: true,
        value: |r| Cell::Real(r.tp999, 3),
    },
    Column {
        name: "max",
        latency: true,
        value: |r| Cell::Real(r.max, 3),
    },
    Column {
        name: "mean",
        latency: true,
        value: |r| Cell::Real(r.mean, 3),
    },
    Column {
        name: "tp99_diff",
        latency: true,
        value: |r| Cell::Real(r.tp99_diff, 3),
    },
    Column {
        name: "tp99_ci_low",
        latency: true,
        value: |r| Cell::Real(r.tp99_ci_low, 3),
    },
    Column {
        name: "tp99_ci_high",
        latency: true,
        value: |r| Cell::Real(r.tp99_ci_high, 3),
    },
    Column {
        name: "spike_share",
        latency: false,
        value: |r| Cell::Real(r.spike_share, 5),
    },
    Column {
        name: "spike_period",
        latency: false,
        value: |r| Cell::Count(r.spike_period as u64),
    },
    Column {
        name: "bimodality",
        latency: false,
        value: |r| Cell::Real(r.bimodality, 4),
    },
    Column {
        name: "bubble_pct",
        latency: false,
        value: |r| Cell::Real(r.bubble_pct, 2),
    },
    Column {
        name: "bandwidth_gbps",
        latency: false,
        value: |r| Cell::Real(r.bandwidth_gbps, 3),
    },
    Column {
        name: "first_after_move",
        latency: true,
        value: |r| Cell::Real(r.first_after_move, 3),
    },
    Column {
        name: "prediction_accuracy",
        latency: false,
        value: |r| Cell::Real(r.prediction_accuracy, 4),
    },
    Column {
        name: "preload_hit_rate",
        latency: false,
        value: |r| Cell::Real(r.preload_hit_rate, 4),
    },
    Column {
        name: "preload_fallbacks",
        latency: false,
        value: |r| Cell::Count(r.preload_fallbacks),
    },
    Column {
        name: "predict_cost_us",
        latency: false,
        value: |r| Cell::Real(r.predict_cost_us, 2),
    },
    Column {
        name: "predict_auc",
        latency: false,
        value: |r| Cell::Maybe(r.predict_auc),
    },
    Column {
        name: "predict_precision",
        latency: false,
        value: |r| Cell::Maybe(r.predict_precision),
    },
    Column {
        name: "predict_recall",
        latency: false,
        value: |r| Cell::Maybe(r.predict_recall),
    },
    Column {
        name: "preload_gb",
        latency: false,
        value: |r| Cell::Real(r.preload_gb, 4),
    },
    Column {
        name: "upper_bound",
        latency: false,
        value: |r| Cell::Flag(r.upper_bound),
    },
];

impl Column {
    fn named(&self, unit: Unit) -> String {
        if self.latency {
            format!("{}_{}", self.name, unit.suffix())
        } else {
            self.name.to_string()
        }
    }
}

/// The table as CSV (header and one line per row), its latency columns
/// named for the rows' unit (`tp50_ms`, or `tp50_us` for tasks).
pub fn to_csv(rows: &[Row]) -> Result<String, TableError> {
    let unit = rows.first().map_or(Unit::Ms, |r| r.unit);
    let header: Vec<String> = COLUMNS.iter().map(|c| c.named(unit)).collect();
    let lines: Vec<Vec<String>> = rows
        .iter()
        .map(|r| COLUMNS.iter().map(|c| (c.value)(r).text()).collect())
        .collect();
    table::records_to_csv(&header, &lines)
}

/// A row as JSON (`compare.json`): `compare.csv`'s columns under the same
/// names at full precision, and `sampled_requests`.
impl Serialize for Row {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(COLUMNS.len() + 1))?;
        for c in COLUMNS {
            m.serialize_entry(&c.named(self.unit), &(c.value)(self).json())?;
            if c.name == "requests" {
                m.serialize_entry("sampled_requests", &self.sampled_requests)?;
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose latencies are `lat` millions of ticks: ms for
    /// [`Unit::Ms`] (10⁹ ps each), µs for [`Unit::Us`] (10⁶ ps).
    fn run_in(unit: Unit, lat: &[u64]) -> RunResult {
        let per = 1_000_000 * unit.ps_per_tick();
        let latency: Vec<u64> = lat.iter().map(|x| x * per).collect();
        RunResult {
            requests: latency.len() as u64,
            latency_sum: latency.iter().map(|&x| x as u128).sum(),
            latency_max: latency.iter().copied().max().unwrap_or(0),
            latency,
            span_ps: 1_000_000_000_000,
            ..Default::default()
        }
    }

    fn run(lat_ms: &[u64]) -> RunResult {
        run_in(Unit::Ms, lat_ms)
    }

    #[test]
    fn differences_are_against_the_first_row_and_paired() {
        let a: Vec<u64> = (1..=1000).collect();
        let b: Vec<u64> = a.iter().map(|x| x + 10).collect();
        let names = vec!["a".to_string(), "b".to_string()];
        let rows = compare(&names, &[vec![run(&a)], vec![run(&b)]], Unit::Ms, 3.0, 200);
        assert_eq!(rows[0].tp99_diff, 0.0);
        assert_eq!(rows[1].tp99_diff, 10.0);
        assert_eq!((rows[1].tp99_ci_low, rows[1].tp99_ci_high), (10.0, 10.0));
        assert_eq!(rows[1].tp99, 1000.0);
        let csv = to_csv(&rows).unwrap();
        assert!(csv.starts_with("row,requests,tp50_ms,tp90_ms,tp99_ms,tp999_ms,"));
        assert!(csv.contains("tp99_ci_low_ms,tp99_ci_high_ms,spike_share"));
        assert!(csv.contains("bubble_pct,bandwidth_gbps"));
        assert_eq!(csv.lines().count(), 3);
    }

    #[test]
    fn a_sampled_run_counts_every_request_and_says_it_sampled() {
        let mut r = run(&[1, 2, 3, 10]);
        // All four requests ran (sum 16 ms, max 10 ms); two were kept.
        r.latency = vec![1_000_000_000, 3_000_000_000];
        r.sampled = true;
        let rows = compare(&["a".to_string()], &[vec![r]], Unit::Ms, 3.0, 10);
        assert_eq!((rows[0].requests, rows[0].sampled_requests), (4, 2));
        assert_eq!((rows[0].mean, rows[0].max), (4.0, 10.0));
        assert_eq!(rows[0].tp99, 3.0, "percentiles from the sample");
        assert!(render(&rows, 3.0).contains(
            "statistics from a uniform sample of 2 requests per row, of the 4 simulated"
        ));
        let full = compare(&["a".to_string()], &[vec![run(&[1, 2])]], Unit::Ms, 3.0, 10);
        assert!(!render(&full, 3.0).contains("sample"));
    }

    #[test]
    fn a_unit_names_itself_in_text_csv_and_json() {
        // 2 × 10⁶ ps = 2 µs, shown in µs.
        let rows = compare(
            &["t".to_string()],
            &[vec![run_in(Unit::Us, &[2])]],
            Unit::Us,
            3.0,
            10,
        );
        assert_eq!(rows[0].tp99, 2.0);
        let csv = to_csv(&rows).unwrap();
        assert!(
            csv.starts_with("row,requests,tp50_us,tp90_us,tp99_us,"),
            "{csv}"
        );
        assert!(csv.contains(",first_after_move_us,"), "{csv}");
        assert!(csv.contains(",predict_cost_us,"), "not a latency: {csv}");
        let json = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(json["tp99_us"], 2.0);
        assert!(json.get("tp99_ms").is_none());
        assert!(
            render(&rows, 3.0)
                .contains("(µs; TP99 difference against the first row, paired by task")
        );
        // The CSV header and the JSON keys are the same names.
        let header: Vec<String> = csv
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(String::from)
            .collect();
        let mut keys: Vec<String> = json.as_object().unwrap().keys().cloned().collect();
        keys.retain(|k| k != "sampled_requests");
        let mut sorted = header.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        // A shard move's latency (ps) in the unit shown.
        let mut moved = run_in(Unit::Us, &[2]);
        moved.first_after_move = vec![500_000_000];
        let rows = compare(
            &["t".to_string()],
            &[vec![moved.clone()]],
            Unit::Us,
            3.0,
            10,
        );
        assert_eq!(rows[0].first_after_move, 500.0, "5 × 10⁸ ps = 500 µs");
        moved.latency = vec![2_000_000_000];
        let rows = compare(&["t".to_string()], &[vec![moved]], Unit::Ms, 3.0, 10);
        assert_eq!(rows[0].first_after_move, 0.5, "5 × 10⁸ ps = 0.5 ms");
        let ns = compare(&["r".to_string()], &[vec![run(&[2])]], Unit::Ms, 3.0, 10);
        assert_eq!(serde_json::to_value(&ns[0]).unwrap()["tp99_ms"], 2.0);
        assert!(to_csv(&ns).unwrap().starts_with("row,requests,tp50_ms,"));
        assert!(
            render(&ns, 3.0)
                .contains("(ms; TP99 difference against the first row, paired by request")
        );
    }
}
