//! # analysis — numasim's statistics and reports
//!
//! Consumes results; never runs the model.
//!
//! - [`cgreport`]: the cachegrind-style summary of a cache replay.
//! - [`timing`]: the summary of a timing (NUMA model) run.

pub mod cgreport;
pub mod timing;
