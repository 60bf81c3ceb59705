//! Worker and arrival specs given as flags (`--workers`, `--arrivals`):
//! `lab::workers` and `lab::request_logs` parse them, and their errors are
//! said here with the flag.

use anyhow::{Result, anyhow};

/// Cores for `--workers`.
pub fn worker_cores(spec: &str, m: &sim::Machine) -> Result<Vec<usize>> {
    lab::workers::cores(spec, m).map_err(|e| anyhow!("--workers {e}"))
}

/// Re-times `trace` by `--arrivals poisson:QPS[:SEED]` or `log:FILE` (the
/// log noted in `log`).
pub fn retime(trace: &mut traces::tasks::TaskTrace, spec: &str, log: &lab::InputLog) -> Result<()> {
    lab::request_logs::Retime::parse(spec, std::path::Path::new(""), log)
        .and_then(|r| r.apply(trace, None))
        .map_err(|e| anyhow!("--arrivals {e}"))
}
