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

/// What one run of one row on one seed produced.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub seed: u64,
    /// Latencies (ns) of the run's kept requests in request-id order — all
    /// of them, or a sample chosen by id (the same ids in every row of a
    /// seed, so rows pair element by element).
    pub latency_ns: Vec<u64>,
    /// Every request: how many, the sum and the largest latency (ns), exact.
    pub requests: u64,
    pub latency_sum_ns: u128,
    pub latency_max_ns: u64,
    /// `latency_ns` is a sample, not every request.
    pub sampled: bool,
    /// When sampled: the latencies of the first requests in id order
    /// (for the spike period, which needs consecutive requests).
    pub sequence_ns: Option<Vec<u64>>,
    /// Accelerator time waiting for data (stall + transfer) and computing (ns).
    pub bubble_ns: u64,
    pub compute_ns: u64,
    /// Bytes through the nodes' memories.
    pub memory_bytes: u64,
    /// Simulated span (ns).
    pub span_ns: u64,
    /// Latency (ms) of the first request after each shard move.
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

/// One line of `compare.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub row: String,
    pub requests: u64,
    /// Latencies behind the percentiles, CIs, spikes and bimodality: all
    /// requests, or a paired sample of them.
    pub sampled_requests: usize,
    pub tp50_ms: f64,
    pub tp90_ms: f64,
    pub tp99_ms: f64,
    pub tp999_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    /// TP99 minus the first row's, paired by request, pooled over seeds.
    pub tp99_diff_ms: f64,
    pub tp99_ci_low_ms: f64,
    pub tp99_ci_high_ms: f64,
    /// Share of requests above spike_k × TP50.
    pub spike_share: f64,
    /// Spikes recur every this many requests (0: no period found).
    pub spike_period: usize,
    pub bimodality: f64,
    pub bubble_pct: f64,
    pub bandwidth_gbps: f64,
    /// Mean over seeds of the first request's latency after a shard move (ms; 0 without moves).
    pub first_after_move_ms: f64,
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
        .flat_map(|r| r.latency_ns.iter().copied())
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
                    let seq = r.sequence_ns.as_deref().unwrap_or(&r.latency_ns);
                    spike_period(seq, spike_k, 20_000, 0.1)
                })
                .map_or(0, |(lag, _)| lag);
            let requests: u64 = runs.iter().map(|r| r.requests).sum();
            let sum_ns: u128 = runs.iter().map(|r| r.latency_sum_ns).sum();
            let max_ns = runs.iter().map(|r| r.latency_max_ns).max().unwrap_or(0);
            let ms: Vec<f64> = all.iter().map(|&x| x as f64 / 1e6).collect();
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
                row: name.clone(),
                requests,
                sampled_requests: all.len(),
                tp50_ms: p.tp50_ms,
                tp90_ms: p.tp90_ms,
                tp99_ms: p.tp99_ms,
                tp999_ms: p.tp999_ms,
                max_ms: max_ns as f64 / 1e6,
                mean_ms: if requests == 0 {
                    0.0
                } else {
                    sum_ns as f64 / requests as f64 / 1e6
                },
                tp99_diff_ms: d,
                tp99_ci_low_ms: lo,
                tp99_ci_high_ms: hi,
                spike_share: spike_share(&all, spike_k),
                spike_period: period,
                bimodality: bimodality(&ms),
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
                first_after_move_ms: if moves.is_empty() {
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

/// The table as text.
pub fn render(rows: &[Row], spike_k: f64) -> String {
    render_in(rows, spike_k, "ms", "request")
}

/// The table as text, its latencies in `unit` (the rows hold latencies in
/// that unit; `ms` for requests, `µs` for task traces), paired by `what`.
pub fn render_in(rows: &[Row], spike_k: f64, unit: &str, what: &str) -> String {
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
        let ci = if r.tp99_ci_low_ms == 0.0 && r.tp99_ci_high_ms == 0.0 && r.tp99_diff_ms == 0.0 {
            "—".to_string()
        } else {
            format!(
                "{:+.1} [{:+.1}, {:+.1}]",
                r.tp99_diff_ms, r.tp99_ci_low_ms, r.tp99_ci_high_ms
            )
        };
        s.push_str(&format!(
            "{:<18} {:>7.1} {:>7.1} {:>8.1} {:>26} {:>8.1} {:>8.1} {:>6.2}% {:>7} {:>7.2} {:>5.1}% {:>9.1}\n",
            if r.upper_bound {
                format!("{}*", r.row)
            } else {
                r.row.clone()
            },
            r.tp50_ms,
            r.tp90_ms,
            r.tp99_ms,
            ci,
            r.tp999_ms,
            r.max_ms,
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
    let moved: Vec<&Row> = rows
        .iter()
        .filter(|r| r.first_after_move_ms > 0.0)
        .collect();
    for r in moved {
        s.push_str(&format!(
            "first request after the shard move, {}: {:.1} ms\n",
            r.row, r.first_after_move_ms
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

/// One line of `compare.csv`: [`Row`] with its numbers rounded.
#[derive(Serialize, Default)]
struct CsvRow<'a> {
    row: &'a str,
    requests: u64,
    #[serde(serialize_with = "table::f3")]
    tp50_ms: f64,
    #[serde(serialize_with = "table::f3")]
    tp90_ms: f64,
    #[serde(serialize_with = "table::f3")]
    tp99_ms: f64,
    #[serde(serialize_with = "table::f3")]
    tp999_ms: f64,
    #[serde(serialize_with = "table::f3")]
    max_ms: f64,
    #[serde(serialize_with = "table::f3")]
    mean_ms: f64,
    #[serde(serialize_with = "table::f3")]
    tp99_diff_ms: f64,
    #[serde(serialize_with = "table::f3")]
    tp99_ci_low_ms: f64,
    #[serde(serialize_with = "table::f3")]
    tp99_ci_high_ms: f64,
    #[serde(serialize_with = "table::f5")]
    spike_share: f64,
    spike_period: usize,
    #[serde(serialize_with = "table::f4")]
    bimodality: f64,
    #[serde(serialize_with = "table::f2")]
    bubble_pct: f64,
    #[serde(serialize_with = "table::f3")]
    bandwidth_gbps: f64,
    #[serde(serialize_with = "table::f3")]
    first_after_move_ms: f64,
    #[serde(serialize_with = "table::f4")]
    prediction_accuracy: f64,
    #[serde(serialize_with = "table::f4")]
    preload_hit_rate: f64,
    preload_fallbacks: u64,
    #[serde(serialize_with = "table::f2")]
    predict_cost_us: f64,
    #[serde(serialize_with = "table::opt_f4")]
    predict_auc: Option<f64>,
    #[serde(serialize_with = "table::opt_f4")]
    predict_precision: Option<f64>,
    #[serde(serialize_with = "table::opt_f4")]
    predict_recall: Option<f64>,
    #[serde(serialize_with = "table::f4")]
    preload_gb: f64,
    #[serde(serialize_with = "table::bit")]
    upper_bound: bool,
}

/// The table as CSV (header and one line per row).
pub fn to_csv(rows: &[Row]) -> Result<String, TableError> {
    to_csv_in(rows, "ms")
}

/// The table as CSV with latency columns named for `unit` (`ms` or `us`).
pub fn to_csv_in(rows: &[Row], unit: &str) -> Result<String, TableError> {
    let text = csv_ms(rows)?;
    if unit == "ms" {
        return Ok(text);
    }
    let (head, body) = text.split_once('\n').unwrap_or((&text, ""));
    Ok(format!(
        "{}\n{body}",
        head.replace("_ms", &format!("_{unit}"))
    ))
}

fn csv_ms(rows: &[Row]) -> Result<String, TableError> {
    let rows: Vec<CsvRow> = rows
        .iter()
        .map(|r| CsvRow {
            row: &r.row,
            requests: r.requests,
            tp50_ms: r.tp50_ms,
            tp90_ms: r.tp90_ms,
            tp99_ms: r.tp99_ms,
            tp999_ms: r.tp999_ms,
            max_ms: r.max_ms,
            mean_ms: r.mean_ms,
            tp99_diff_ms: r.tp99_diff_ms,
            tp99_ci_low_ms: r.tp99_ci_low_ms,
            tp99_ci_high_ms: r.tp99_ci_high_ms,
            spike_share: r.spike_share,
            spike_period: r.spike_period,
            bimodality: r.bimodality,
            bubble_pct: r.bubble_pct,
            bandwidth_gbps: r.bandwidth_gbps,
            first_after_move_ms: r.first_after_move_ms,
            prediction_accuracy: r.prediction_accuracy,
            preload_hit_rate: r.preload_hit_rate,
            preload_fallbacks: r.preload_fallbacks,
            predict_cost_us: r.predict_cost_us,
            predict_auc: r.predict_auc,
            predict_precision: r.predict_precision,
            predict_recall: r.predict_recall,
            preload_gb: r.preload_gb,
            upper_bound: r.upper_bound,
        })
        .collect();
    table::to_csv(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lat_ms: &[u64]) -> RunResult {
        let latency_ns: Vec<u64> = lat_ms.iter().map(|x| x * 1_000_000).collect();
        RunResult {
            requests: latency_ns.len() as u64,
            latency_sum_ns: latency_ns.iter().map(|&x| x as u128).sum(),
            latency_max_ns: latency_ns.iter().copied().max().unwrap_or(0),
            latency_ns,
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
        assert_eq!(rows[0].tp99_diff_ms, 0.0);
        assert_eq!(rows[1].tp99_diff_ms, 10.0);
        assert_eq!(
            (rows[1].tp99_ci_low_ms, rows[1].tp99_ci_high_ms),
            (10.0, 10.0)
        );
        assert_eq!(rows[1].tp99_ms, 1000.0);
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
        r.latency_ns = vec![1_000_000, 3_000_000];
        r.sampled = true;
        let rows = compare(&["a".to_string()], &[vec![r]], 3.0, 10);
        assert_eq!((rows[0].requests, rows[0].sampled_requests), (4, 2));
        assert_eq!((rows[0].mean_ms, rows[0].max_ms), (4.0, 10.0));
        assert_eq!(rows[0].tp99_ms, 3.0, "percentiles from the sample");
        assert!(render(&rows, 3.0).contains(
            "statistics from a uniform sample of 2 requests per row, of the 4 simulated"
        ));
        let full = compare(&["a".to_string()], &[vec![run(&[1, 2])]], 3.0, 10);
        assert!(!render(&full, 3.0).contains("sample"));
    }
}
