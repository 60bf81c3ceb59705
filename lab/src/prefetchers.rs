//! Prefetchers by spec: `SPEC[@LEVEL]` attached to an engine, or one
//! prefetcher for a run without a machine. Model files a spec names are
//! read relative to the working directory and noted in the run's log.

use policies::PolicyError;
use policies::registry::Ctx;

use crate::InputLog;
use crate::models::FileLoader;

pub use crate::errors::PrefetchError;

/// Attaches `SPEC[@LEVEL]` prefetchers to an engine; without `@LEVEL` a
/// prefetcher fills `default_level`. `LEVEL` is a number or a cache's name.
pub fn attach(
    engine: &mut sim::Engine,
    machine: &sim::Machine,
    specs: &[String],
    default_level: usize,
    log: &InputLog,
) -> Result<(), PrefetchError> {
    let caches = &machine.spec.core.caches;
    let loader = FileLoader::cwd(log);
    let ctx = Ctx {
        loader: Some(&loader),
        ..Ctx::for_machine(machine)
    };
    for full in specs {
        let (spec, level, from_spec) = match full.rsplit_once('@') {
            Some((s, l)) => {
                let level = l
                    .parse::<usize>()
                    .ok()
                    .or_else(|| caches.iter().position(|c| c.name.eq_ignore_ascii_case(l)))
                    .ok_or_else(|| PrefetchError::Level {
                        spec: full.clone(),
                        level: l.to_string(),
                        names: caches
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?;
                (s, level, true)
            }
            None => (full.as_str(), default_level, false),
        };
        let p = policies::prefetch::PREFETCHERS
            .build(spec, &ctx)
            .map_err(|error| PrefetchError::Build {
                spec: full.clone(),
                error,
            })?;
        engine
            .add_prefetcher(p, level)
            .map_err(|error| PrefetchError::Engine {
                spec: full.clone(),
                error,
                from_spec,
            })?;
    }
    Ok(())
}

/// One prefetcher for a run without a machine (`line`-byte lines).
pub fn one(
    spec: &str,
    line: u64,
    cores: usize,
    log: &InputLog,
) -> Result<Box<dyn sim::policy::Prefetcher>, PolicyError> {
    let loader = FileLoader::cwd(log);
    let ctx = Ctx {
        line,
        cores,
        loader: Some(&loader),
        ..Ctx::default()
    };
    policies::prefetch::PREFETCHERS.build(spec, &ctx)
}

/// What can stop an offline prefetch run.
#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    #[error(transparent)]
    Trace(traces::TraceError),
    #[error("write failed: {0}")]
    Write(std::io::Error),
    #[error("no loads in the trace")]
    NoLoads,
}

/// Runs prefetcher `pf` over an ML Prefetching Competition load trace
/// (`loads`, decompressed) and writes the competition's prefetch file
/// (`instr_id hexaddr` per line, at most `max_per_load` per load) to `out`;
/// returns the timing-free estimate of accuracy and coverage (a prefetch
/// is useful if its line is loaded within `window` loads).
pub fn offline(
    loads: impl std::io::Read + Send,
    pf: Box<dyn sim::policy::Prefetcher>,
    line: u64,
    max_per_load: usize,
    window: u64,
    mut out: &mut dyn std::io::Write,
) -> Result<sim::prefetch::OfflineStats, OfflineError> {
    let mut loads = traces::mldpc::MlDpcReader::new(loads);
    let mut off = sim::prefetch::Offline::new(pf, line, max_per_load, window);
    while let Some(l) = loads.next_load().map_err(OfflineError::Trace)? {
        for &p in off.load(l.pc, l.addr, !l.llc_hit) {
            traces::mldpc::write_prefetch(&mut out, l.instr_id, p).map_err(OfflineError::Write)?;
        }
    }
    if off.stats.loads == 0 {
        return Err(OfflineError::NoLoads);
    }
    Ok(off.stats)
}
