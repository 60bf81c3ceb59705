//! # analysis — numasim's statistics and reports
//!
//! Consumes results; never runs the model.
//!
//! - [`cgreport`]: the cachegrind-style summary of a cache replay.
//! - [`timing`]: the summary of a timing (NUMA model) run.
//! - [`stats`]: percentiles, spikes and their period, bimodality, paired bootstrap.
//! - [`compare`]: the paired comparison table of policy rows.
//! - [`monitor`]: per-window accuracy, hit rates, TP99 and bandwidth (the seed's chart).
//! - [`plots`]: SVG histograms, CDFs, sim-vs-live pairs and the monitoring chart.
//! - [`report`]: `report.html`, one self-contained page for a result folder.
//! - [`table`]: CSV through `csv` + serde, with fixed-decimal fields.

pub mod cgreport;
pub mod compare;
pub mod monitor;
pub mod plots;
pub mod report;
pub mod stats;
pub mod table;
pub mod timing;
