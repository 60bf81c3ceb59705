//! Worker and arrival specs given as flags (`--workers`, `--arrivals`):
//! `lab::workers` parses them, and its errors are said here with the flag.

use anyhow::{Result, anyhow};

/// Cores for `--workers`.
pub fn worker_cores(spec: &str, m: &sim::Machine) -> Result<Vec<usize>> {
    lab::workers::cores(spec, m).map_err(|e| anyhow!("--workers {e}"))
}

/// `--arrivals poisson:QPS[:SEED]`.
pub fn parse_arrivals(spec: &str) -> Result<(f64, u64)> {
    lab::workers::arrivals(spec).map_err(|e| anyhow!("--arrivals {e}"))
}
