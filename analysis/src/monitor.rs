//! The monitoring view of a request-level run (the seed's chart): per second
//! of simulated time, prediction accuracy, preload hit rate, feature-cache
//! hit rate, TP50/TP99 and memory bandwidth — to catch the see-saw where
//! latency drops while bandwidth soars.
//!
//! Formulas (per window):
//! - prediction accuracy = correct "will miss" predictions / predictions
//!   judged (a prediction is judged when its truth is known: at its preload,
//!   or when its batch runs);
//! - preload hit rate = preloaded items still cached when their batch ran /
//!   items preloaded (the prefetch "accuracy" of the preloads);
//! - feature hit rate = lookups served from the worker node's cache / lookups;
//! - TP50/TP99 over the requests that *arrived* in the window;
//! - memory GB/s = bytes read from all nodes' memories in the window / 1 s.

use serde::Serialize;
use sim::serve::{MONITOR_WINDOW_PS, WindowTotals};

use crate::table::{self, TableError};

/// One window of the monitoring chart. Rates are `None` where nothing was
/// counted (no predictions, no preloads, no lookups).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MonitorPoint {
    pub second: u64,
    pub requests: usize,
    pub tp50_ms: f64,
    pub tp99_ms: f64,
    pub prediction_accuracy: Option<f64>,
    pub preload_hit_rate: Option<f64>,
    pub feature_hit_rate: Option<f64>,
    pub memory_gbps: f64,
    pub far_gbps: f64,
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Builds the points of a run from the latencies (ps) of the requests that
/// arrived in each window and the engine's per-window counters. There are
/// as many points as latency windows (the workload's duration): the drain
/// after the last arrival is not a window of the service.
pub fn points(latency_by_window: &[Vec<u64>], totals: &[WindowTotals]) -> Vec<MonitorPoint> {
    let n = latency_by_window.len();
    let secs = MONITOR_WINDOW_PS as f64 / 1e12;
    (0..n)
        .map(|i| {
            let lat = latency_by_window.get(i).map_or(&[][..], |v| &v[..]);
            // Shown in ms: percentiles of whole ns.
            let ns: Vec<u64> = lat.iter().map(|&ps| ps / 1000).collect();
            let p = crate::stats::percentiles(&ns);
            let w = totals.get(i).cloned().unwrap_or_default();
            MonitorPoint {
                second: i as u64,
                requests: lat.len(),
                tp50_ms: p.tp50,
                tp99_ms: p.tp99,
                prediction_accuracy: ratio(w.predictions_correct, w.predictions_judged),
                preload_hit_rate: ratio(w.preload_item_hits, w.preload_items),
                feature_hit_rate: ratio(w.feature_hits, w.feature_hits + w.feature_misses),
                memory_gbps: w.memory_bytes as f64 / 1e9 / secs,
                far_gbps: w.far_bytes as f64 / 1e9 / secs,
            }
        })
        .collect()
}

/// One line of `monitor.csv`.
#[derive(Serialize, Default)]
struct CsvRow<'a> {
    row: &'a str,
    second: u64,
    requests: usize,
    #[serde(serialize_with = "table::f4")]
    tp50_ms: f64,
    #[serde(serialize_with = "table::f4")]
    tp99_ms: f64,
    #[serde(serialize_with = "table::opt_f6")]
    prediction_accuracy: Option<f64>,
    #[serde(serialize_with = "table::opt_f6")]
    preload_hit_rate: Option<f64>,
    #[serde(serialize_with = "table::opt_f6")]
    feature_hit_rate: Option<f64>,
    #[serde(serialize_with = "table::f4")]
    memory_gbps: f64,
    #[serde(serialize_with = "table::f4")]
    far_gbps: f64,
}

/// `monitor.csv`: one line per (row, window); empty cells where a rate is undefined.
pub fn to_csv(rows: &[(String, Vec<MonitorPoint>)]) -> Result<String, TableError> {
    let lines: Vec<CsvRow> = rows
        .iter()
        .flat_map(|(name, pts)| {
            pts.iter().map(move |p| CsvRow {
                row: name,
                second: p.second,
                requests: p.requests,
                tp50_ms: p.tp50_ms,
                tp99_ms: p.tp99_ms,
                prediction_accuracy: p.prediction_accuracy,
                preload_hit_rate: p.preload_hit_rate,
                feature_hit_rate: p.feature_hit_rate,
                memory_gbps: p.memory_gbps,
                far_gbps: p.far_gbps,
            })
        })
        .collect();
    table::to_csv(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_follow_the_documented_formulas() {
        let w = WindowTotals {
            predictions_judged: 8,
            predictions_correct: 6,
            preload_items: 40,
            preload_item_hits: 30,
            feature_hits: 75,
            feature_misses: 25,
            memory_bytes: 3_500_000_000,
            far_bytes: 500_000_000,
        };
        // Window 0: latencies 1..=100 ms; window 1: nothing arrived, nothing counted.
        let lat: Vec<u64> = (1..=100).map(|ms| ms * 1_000_000_000).collect();
        let p = points(&[lat, vec![]], &[w]);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].requests, 100);
        assert_eq!(p[0].prediction_accuracy, Some(0.75));
        assert_eq!(p[0].preload_hit_rate, Some(0.75));
        assert_eq!(p[0].feature_hit_rate, Some(0.75));
        assert!((p[0].memory_gbps - 3.5).abs() < 1e-12);
        assert!((p[0].far_gbps - 0.5).abs() < 1e-12);
        // Nearest-rank TP99 of 1..=100 ms is 99 ms.
        assert_eq!(p[0].tp99_ms, 99.0);
        assert_eq!(p[1].prediction_accuracy, None);
        assert_eq!(p[1].feature_hit_rate, None);
        assert_eq!(p[1].memory_gbps, 0.0);
        let csv = to_csv(&[("r".into(), p)]).unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(csv.lines().nth(2).unwrap().starts_with("r,1,0,"));
        assert!(csv.lines().nth(2).unwrap().contains(",,,"), "{csv}");
    }
}
