//! Cache prefetchers by name, for every command that takes `--prefetch`:
//! the registry of `policies::prefetch`, plus `learned:FILE[:BASE]`, whose
//! model file only the binary may read.

use std::path::Path;

use anyhow::{Context, Result, bail};
use policies::prefetch::learned::{self, Cost, Learned};
use sim::prefetch::Prefetcher;

/// The base a learned filter wraps when its spec names none.
pub const DEFAULT_BASE: &str = "delta:2";

pub fn create(spec: &str, line: u64, cores: usize) -> Result<Box<dyn Prefetcher>> {
    let Some(rest) = spec.strip_prefix("learned:") else {
        return Ok(policies::prefetch::create(spec, line, cores)?);
    };
    // FILE or FILE:BASE (BASE may hold colons of its own: ip-stride:2:1).
    let (file, base) = match rest.split_once(':') {
        Some((f, b)) => (f, b),
        None => (rest, DEFAULT_BASE),
    };
    if base.starts_with("learned") {
        bail!("prefetcher {spec:?}: a learned filter cannot wrap another");
    }
    let path = Path::new(file);
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read model", path.display()))?;
    let model = policies::model::Model::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if learned::history_of(&model.features).is_none() {
        bail!(
            "{}: the model's features are not the prefetch filter's (for a history of H accesses: {}); train it on `numasim dataset TRACE`",
            path.display(),
            learned::feature_names(2).join(",").replace("_1", "_H-1")
        );
    }
    let base = policies::prefetch::create(base, line, cores)?;
    Ok(Box::new(Learned::new(
        model,
        file,
        base,
        cores,
        Cost::default(),
    )))
}
