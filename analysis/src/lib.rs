//! # analysis — numasim's statistics and reports
//!
//! Consumes results; never runs the model.
//!
//! - [`cgreport`]: the cachegrind-style summary of a cache replay.

pub mod cgreport;
