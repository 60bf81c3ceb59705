//! Cache prefetchers by name, for every command that takes `--prefetch`:
//! the registry of `policies::prefetch`, plus `learned:FILE[:BASE]`, whose
//! model file only the binary may read; and `SPEC@LEVEL`, which private
//! level a prefetcher fills (a number, 0 = L1D, or the cache's name).

use std::path::Path;

use anyhow::{Context, Result, bail};
use policies::prefetch::learned::{self, Cost, Learned};
use sim::prefetch::Prefetcher;

/// Reads and checks a model file (numasim's format or XGBoost JSON).
pub fn read_model(path: &Path) -> Result<policies::model::Model> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read model", path.display()))?;
    policies::model::Model::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

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
    let model = read_model(path)?;
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

/// Attaches `SPEC[@LEVEL]` prefetchers to an engine; without `@LEVEL` a
/// prefetcher fills `default_level`.
pub fn attach(
    engine: &mut sim::Engine,
    machine: &sim::Machine,
    specs: &[String],
    default_level: usize,
) -> Result<()> {
    let caches = &machine.spec.core.caches;
    for full in specs {
        let (spec, level) = match full.rsplit_once('@') {
            Some((s, l)) => {
                let level = l
                    .parse::<usize>()
                    .ok()
                    .or_else(|| caches.iter().position(|c| c.name.eq_ignore_ascii_case(l)))
                    .with_context(|| {
                        format!(
                            "--prefetch {full:?}: level {l:?} is neither a number nor one of {}",
                            caches
                                .iter()
                                .map(|c| c.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    })?;
                (s, level)
            }
            None => (full.as_str(), default_level),
        };
        let p = create(spec, machine.spec.line_size, machine.cores())
            .map_err(|e| anyhow::anyhow!("--prefetch {full:?}: {e:#}"))?;
        engine
            .add_prefetcher(p, level)
            .map_err(|e| anyhow::anyhow!("--prefetch {full:?}: {e:#}"))?;
    }
    Ok(())
}
