//! The files every kind of comparison writes beside its table.

use anyhow::Result;

use crate::experiment::write_latency_plots;
use crate::output::write_json;

/// What every kind of comparison writes beside its table: `compare.json`,
/// the latency plots (every row's latencies over all its seeds, titled
/// `title`) and the manifest (`config`; the experiment as read, then the
/// inputs in `log`).
pub fn write_common(
    dir: &std::path::Path,
    rec: &crate::manifest::Record,
    compare_json: &serde_json::Value,
    title: &str,
    c: &lab::compare::Comparison,
    config: serde_json::Value,
    log: &lab::InputLog,
) -> Result<()> {
    write_json(&dir.join("compare.json"), compare_json)?;
    write_latency_plots(dir, title, &c.names(), &c.by_row())?;
    write_json(
        &dir.join("manifest.json"),
        &crate::manifest::manifest_as(&rec.args, vec![rec.experiment.clone()], config, log),
    )
}
