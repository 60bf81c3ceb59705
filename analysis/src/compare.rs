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

/// The clock a run's latencies are counted in, which sets the unit the
/// table shows them in: the request model's nanoseconds as ms, a task
/// engine's picoseconds as µs (in both, one shown unit is 10⁶ ticks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    #[default]
    Ns,
    Ps,
}

impl Clock {
    /// Ticks per unit shown.
    pub const PER_UNIT: f64 = 1e6;

    /// The unit shown, as CSV/JSON column suffixes write it.
    pub fn unit(self) -> &'static str {
        match self {
            Clock::Ns => "ms",
            Clock::Ps => "us",
        }
    }

    /// The unit shown, as text writes it.
    pub fn label(self) -> &'static str {
        match self {
            Clock::Ns => "ms",
            Clock::Ps => "µs",
        }
    }

    /// What one latency is of (`request` or `task`).
    pub fn what(self) -> &'static str {
        match self {
            Clock::Ns => "request",
            Clock::Ps => "task",
        }
    }
}

/// What one run of one row on one seed produced.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub seed: u64,
    /// The clock of every latency below.
    pub clock: Clock,
    /// Latencies (in `clock` ticks) of the run's kept requests in request-id
    /// order — all of them, or a sample chosen by id (the same ids in every
    /// row of a seed, so rows pair element by element).
    pub latency: Vec<u64>,
    /// Every request: how many, the sum and the largest latency, exact.
    pub requests: u64,
    pub latency_sum: u128,
    pub latency_max: u64,
    /// `latency` is a sample, not every request.
    pub sampled: bool,
    /// When sampled: the latencies of the first requests in id order
    /// (for the spike period, which needs consecutive requests).
    pub sequence: Option<Vec<u64>>,
    /// Accelerator time waiting for data (stall + transfer) and computing (ns).
    pub bubble_ns: u64,
    pub compute_ns: u64,
    /// Bytes through the nodes' memories.
    pub memory_bytes: u64,
    /// Simulated span (ns).
    pub span_ns: u64,
    /// Latency (ms) of the first request after each shard move (the
    /// request model's shard moves).
    pub first_after_move_ms: Vec<f64>,
    /// Per second of simulated time: the monitoring chart's values.
    pub windows: Vec<crate::monitor::MonitorPoint>,
    /// Preload: decisions, correct "will miss" predictions, items brought in,
    /// of those still cached at their batch, fallbacks, simulated cost (ns).
    pub preload_decisions: u64,
    pub predictions_correct: u64,
    pub preload_items: u64,
    pub preload_item_hits: u64,
    pub preload_fallbacks: u64,
    pub predict_cost_ns: u64,
    /// The "will miss" calls judged against the run's outcomes.
    pub judged: sim::serve::Judged,
    /// Bytes the preloads read.
    pub preload_bytes: u64,
    /// The row's preload is an oracle: an upper bound, not a policy.
    pub upper_bound: bool,
}

/// One line of `compare.csv`; latencies in the unit of `clock`
/// ([`Clock::unit`]), which also suffixes their column names.
#[derive(Clone, Debug)]
pub struct Row {
    /// The clock the row's runs counted in.
    pub clock: Clock,
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

/// Pools a row's seeds in seed order.
fn pooled(runs: &[RunResult]) -> Vec<u64> {
    runs.iter()
        .flat_map(|r| r.latency.iter().copied())
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

/// Computes the table. `rows[i]` holds row i's runs, one per seed, in the
/// same seed order for every row.
pub fn compare(
    names: &[String],
    rows: &[Vec<RunResult>],
    spike_k: f64,
    bootstrap: usize,
) -> Vec<Row> {
    let base = pooled(&rows[0]);
    let clock = rows[0].first().map_or(Clock::Ns, |r| r.clock);
    // `percentiles` and the bootstrap give "ms" of ns: millionths of ticks,
    // which is the unit shown for either clock.
    names
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(i, (name, runs))| {
            let all = pooled(runs);
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
                    spike_period(seq, spike_k, 20_000, 0.1)
                })
                .map_or(0, |(lag, _)| lag);
            let requests: u64 = runs.iter().map(|r| r.requests).sum();
            let total: u128 = runs.iter().map(|r| r.latency_sum).sum();
            let max = runs.iter().map(|r| r.latency_max).max().unwrap_or(0);
            let shown: Vec<f64> = all.iter().map(|&x| x as f64 / Clock::PER_UNIT).collect();
            let bubble: u64 = runs.iter().map(|r| r.bubble_ns).sum();
            let compute: u64 = runs.iter().map(|r| r.compute_ns).sum();
            let bytes: u64 = runs.iter().map(|r| r.memory_bytes).sum();
            let span: u64 = runs.iter().map(|r| r.span_ns).sum();
            let moves: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.first_after_move_ms.iter().copied())
                .collect();
            let sum = |f: fn(&RunResult) -> u64| runs.iter().map(f).sum::<u64>();
            let decisions = sum(|r| r.preload_decisions);
            let items = sum(|r| r.preload_items);
            let mut judged = sim::serve::Judged::default();
            for r in runs {
                judged.merge(&r.judged);
            }
            Row {
                clock,
                row: name.clone(),
                requests,
                sampled_requests: all.len(),
                tp50: p.tp50_ms,
                tp90: p.tp90_ms,
                tp99: p.tp99_ms,
                tp999: p.tp999_ms,
                max: max as f64 / Clock::PER_UNIT,
                mean: if requests == 0 {
                    0.0
                } else {
                    total as f64 / requests as f64 / Clock::PER_UNIT
                },
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
                // The request model's ms, in the unit shown.
                first_after_move: if moves.is_empty() {
                    0.0
                } else {
                    moves.iter().sum::<f64>() / moves.len() as f64
                        * match clock {
                            Clock::Ns => 1.0,
                            Clock::Ps => 1e3,
                        }
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
                    sum(|r| r.predict_cost_ns) as f64 / requests as f64 / 1000.0
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

/// The table as text, its latencies in the unit of its rows' clock,
/// paired by request or task.
pub fn render(rows: &[Row], spike_k: f64) -> String {
    let clock = rows.first().map_or(Clock::Ns, |r| r.clock);
    let (unit, what) = (clock.label(), clock.what());
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

/// A column of `compare.csv`: its name (a latency's is suffixed with the
/// unit of the row's clock) and its text.
struct Column {
    name: &'static str,
    latency: bool,
    text: fn(&Row) -> String,
}

/// Fixed decimals.
fn fixed(v: f64, n: usize) -> String {
    format!("{v:.n$}")
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| fixed(v, 4))
}

/// `compare.csv`'s columns, in order.
const COLUMNS: &[Column] = &[
    Column {
        name: "row",
        latency: false,
        text: |r| r.row.clone(),
    },
    Column {
        name: "requests",
        latency: false,
        text: |r| r.requests.to_string(),
    },
    Column {
        name: "tp50",
        latency: true,
        text: |r| fixed(r.tp50, 3),
    },
    Column {
        name: "tp90",
        latency: true,
        text: |r| fixed(r.tp90, 3),
    },
    Column {
        name: "tp99",
        latency: true,
        text: |r| fixed(r.tp99, 3),
    },
    Column {
        name: "tp999",
        latency: true,
        text: |r| fixed(r.tp999, 3),
    },
    Column {
        name: "max",
        latency: true,
        text: |r| fixed(r.max, 3),
    },
    Column {
        name: "mean",
        latency: true,
        text: |r| fixed(r.mean, 3),
    },
    Column {
        name: "tp99_diff",
        latency: true,
        text: |r| fixed(r.tp99_diff, 3),
    },
    Column {
        name: "tp99_ci_low",
        latency: true,
        text: |r| fixed(r.tp99_ci_low, 3),
    },
    Column {
        name: "tp99_ci_high",
        latency: true,
        text: |r| fixed(r.tp99_ci_high, 3),
    },
    Column {
        name: "spike_share",
        latency: false,
        text: |r| fixed(r.spike_share, 5),
    },
    Column {
        name: "spike_period",
        latency: false,
        text: |r| r.spike_period.to_string(),
    },
    Column {
        name: "bimodality",
        latency: false,
        text: |r| fixed(r.bimodality, 4),
    },
    Column {
        name: "bubble_pct",
        latency: false,
        text: |r| fixed(r.bubble_pct, 2),
    },
    Column {
        name: "bandwidth_gbps",
        latency: false,
        text: |r| fixed(r.bandwidth_gbps, 3),
    },
    Column {
        name: "first_after_move",
        latency: true,
        text: |r| fixed(r.first_after_move, 3),
    },
    Column {
        name: "prediction_accuracy",
        latency: false,
        text: |r| fixed(r.prediction_accuracy, 4),
    },
    Column {
        name: "preload_hit_rate",
        latency: false,
        text: |r| fixed(r.preload_hit_rate, 4),
    },
    Column {
        name: "preload_fallbacks",
        latency: false,
        text: |r| r.preload_fallbacks.to_string(),
    },
    Column {
        name: "predict_cost_us",
        latency: false,
        text: |r| fixed(r.predict_cost_us, 2),
    },
    Column {
        name: "predict_auc",
        latency: false,
        text: |r| opt(r.predict_auc),
    },
    Column {
        name: "predict_precision",
        latency: false,
        text: |r| opt(r.predict_precision),
    },
    Column {
        name: "predict_recall",
        latency: false,
        text: |r| opt(r.predict_recall),
    },
    Column {
        name: "preload_gb",
        latency: false,
        text: |r| fixed(r.preload_gb, 4),
    },
    Column {
        name: "upper_bound",
        latency: false,
        text: |r| (r.upper_bound as u8).to_string(),
    },
];

impl Column {
    fn named(&self, clock: Clock) -> String {
        if self.latency {
            format!("{}_{}", self.name, clock.unit())
        } else {
            self.name.to_string()
        }
    }
}

/// The table as CSV (header and one line per row), its latency columns
/// named for the rows' clock (`tp50_ms`, or `tp50_us` for tasks).
pub fn to_csv(rows: &[Row]) -> Result<String, TableError> {
    let clock = rows.first().map_or(Clock::Ns, |r| r.clock);
    let header: Vec<String> = COLUMNS.iter().map(|c| c.named(clock)).collect();
    let lines: Vec<Vec<String>> = rows
        .iter()
        .map(|r| COLUMNS.iter().map(|c| (c.text)(r)).collect())
        .collect();
    table::records_to_csv(&header, &lines)
}

/// A row as JSON (`compare.json`): every field at full precision, the
/// latencies' keys suffixed as in `compare.csv`.
impl Serialize for Row {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let u = self.clock.unit();
        let mut m = s.serialize_map(Some(27))?;
        m.serialize_entry("row", &self.row)?;
        m.serialize_entry("requests", &self.requests)?;
        m.serialize_entry("sampled_requests", &self.sampled_requests)?;
        for (k, v) in [
            ("tp50", self.tp50),
            ("tp90", self.tp90),
            ("tp99", self.tp99),
            ("tp999", self.tp999),
            ("max", self.max),
            ("mean", self.mean),
            ("tp99_diff", self.tp99_diff),
            ("tp99_ci_low", self.tp99_ci_low),
            ("tp99_ci_high", self.tp99_ci_high),
            ("first_after_move", self.first_after_move),
        ] {
            m.serialize_entry(&format!("{k}_{u}"), &v)?;
        }
        m.serialize_entry("spike_share", &self.spike_share)?;
        m.serialize_entry("spike_period", &self.spike_period)?;
        m.serialize_entry("bimodality", &self.bimodality)?;
        m.serialize_entry("bubble_pct", &self.bubble_pct)?;
        m.serialize_entry("bandwidth_gbps", &self.bandwidth_gbps)?;
        m.serialize_entry("prediction_accuracy", &self.prediction_accuracy)?;
        m.serialize_entry("preload_hit_rate", &self.preload_hit_rate)?;
        m.serialize_entry("preload_fallbacks", &self.preload_fallbacks)?;
        m.serialize_entry("predict_cost_us", &self.predict_cost_us)?;
        m.serialize_entry("predict_auc", &self.predict_auc)?;
        m.serialize_entry("predict_precision", &self.predict_precision)?;
        m.serialize_entry("predict_recall", &self.predict_recall)?;
        m.serialize_entry("preload_gb", &self.preload_gb)?;
        m.serialize_entry("upper_bound", &self.upper_bound)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lat_ms: &[u64]) -> RunResult {
        let latency: Vec<u64> = lat_ms.iter().map(|x| x * 1_000_000).collect();
        RunResult {
            requests: latency.len() as u64,
            latency_sum: latency.iter().map(|&x| x as u128).sum(),
            latency_max: latency.iter().copied().max().unwrap_or(0),
            latency,
            span_ns: 1_000_000_000,
            ..Default::default()
        }
    }

    #[test]
    fn differences_are_against_the_first_row_and_paired() {
        let a: Vec<u64> = (1..=1000).collect();
        let b: Vec<u64> = a.iter().map(|x| x + 10).collect();
        let names = vec!["a".to_string(), "b".to_string()];
        let rows = compare(&names, &[vec![run(&a)], vec![run(&b)]], 3.0, 200);
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
        r.latency = vec![1_000_000, 3_000_000];
        r.sampled = true;
        let rows = compare(&["a".to_string()], &[vec![r]], 3.0, 10);
        assert_eq!((rows[0].requests, rows[0].sampled_requests), (4, 2));
        assert_eq!((rows[0].mean, rows[0].max), (4.0, 10.0));
        assert_eq!(rows[0].tp99, 3.0, "percentiles from the sample");
        assert!(render(&rows, 3.0).contains(
            "statistics from a uniform sample of 2 requests per row, of the 4 simulated"
        ));
        let full = compare(&["a".to_string()], &[vec![run(&[1, 2])]], 3.0, 10);
        assert!(!render(&full, 3.0).contains("sample"));
    }

    #[test]
    fn a_clock_names_its_unit_in_text_csv_and_json() {
        // 2 000 000 ps = 2 µs; 2 000 000 ns = 2 ms: one shown unit is 10⁶ ticks.
        let mut ps = run(&[2]);
        ps.clock = Clock::Ps;
        let rows = compare(&["t".to_string()], &[vec![ps]], 3.0, 10);
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
        // A shard move's latency (the request model's ms) in the unit shown.
        let mut moved = run(&[2]);
        moved.clock = Clock::Ps;
        moved.first_after_move_ms = vec![0.5];
        let rows = compare(&["t".to_string()], &[vec![moved]], 3.0, 10);
        assert_eq!(rows[0].first_after_move, 500.0, "0.5 ms = 500 µs");
        let ns = compare(&["r".to_string()], &[vec![run(&[2])]], 3.0, 10);
        assert_eq!(serde_json::to_value(&ns[0]).unwrap()["tp99_ms"], 2.0);
        assert!(to_csv(&ns).unwrap().starts_with("row,requests,tp50_ms,"));
        assert!(
            render(&ns, 3.0)
                .contains("(ms; TP99 difference against the first row, paired by request")
        );
    }
}
