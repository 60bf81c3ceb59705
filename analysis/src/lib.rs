//! # analysis — numasim's statistics and reports
//!
//! Consumes results; never runs the model.
//!
//! - [`cgreport`]: the cachegrind-style summary of a cache replay.
//! - [`timing`]: the summary of a timing (NUMA model) run.
//! - [`stats`]: percentiles, spikes and their period, bimodality, paired bootstrap.
//! - [`compare`]: the paired comparison table of policy rows.
//! - [`plots`]: SVG histograms and CDFs.

pub mod cgreport;
pub mod compare;
pub mod plots;
pub mod stats;
pub mod timing;
