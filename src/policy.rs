//! Policies as the command line names them: the registries of the
//! `policies` crate with the two things only the binary has — a model-file
//! loader and a clock — plus `SPEC@LEVEL` for prefetchers and the flags'
//! help text, generated from the same registries.

use anyhow::{Context, Result};
use lab::InputLog;
pub use lab::models::FileLoader;
use policies::registry::{Ctx, Registry};

/// `--flag` help text: what the flag is, then every accepted spec.
pub fn flag_help<T: ?Sized>(what: &str, reg: &Registry<T>) -> String {
    format!(
        "{what}: {} (numasim policies explains each)",
        reg.syntax_list()
    )
}

/// Attaches `SPEC[@LEVEL]` prefetchers to an engine; without `@LEVEL` a
/// prefetcher fills `default_level`.
pub fn attach_prefetchers(
    engine: &mut sim::Engine,
    machine: &sim::Machine,
    specs: &[String],
    default_level: usize,
    log: &InputLog,
) -> Result<()> {
    let caches = &machine.spec.core.caches;
    let loader = FileLoader::cwd(log);
    let ctx = Ctx {
        loader: Some(&loader),
        ..Ctx::for_machine(machine)
    };
    for full in specs {
        let (spec, level, at) = match full.rsplit_once('@') {
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
                (s, level, true)
            }
            None => (full.as_str(), default_level, false),
        };
        let p = policies::prefetch::PREFETCHERS
            .build(spec, &ctx)
            .map_err(|e| anyhow::anyhow!("--prefetch {full:?}: {e}"))?;
        engine.add_prefetcher(p, level).map_err(|e| {
            // A level from `--prefetch-level` is named by that flag; one
            // from `@LEVEL` by the spec itself.
            let why = if at {
                e.to_string()
            } else {
                crate::flags::engine(&e)
            };
            anyhow::anyhow!("--prefetch {full:?}: {why}")
        })?;
    }
    Ok(())
}

/// One prefetcher for a command without a machine (`line`-byte lines).
pub fn prefetcher(
    spec: &str,
    line: u64,
    cores: usize,
    log: &InputLog,
) -> Result<Box<dyn sim::policy::Prefetcher>> {
    let loader = FileLoader::cwd(log);
    let ctx = Ctx {
        line,
        cores,
        loader: Some(&loader),
        ..Ctx::default()
    };
    Ok(policies::prefetch::PREFETCHERS.build(spec, &ctx)?)
}
