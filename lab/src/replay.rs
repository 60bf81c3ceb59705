//! A trace replayed through the cache model (cachegrind's rules, or a
//! write-back hierarchy with a chosen replacement policy) or through the
//! NUMA timing model: the engines fed batch by batch from an opened trace
//! ([`crate::input`]), progress reported through a callback.

use policies::PolicyError;
use sim::cachegrind::{Cachegrind, CgConfig};
use sim::hierarchy::Hierarchy;
use std::path::Path;

use sim::checkpoint::{CheckpointError, TraceHash};
use sim::{EngineError, Replacement};
use traces::{Batch, RecordSource, TraceError};

use crate::InputLog;
use crate::checkpoints::{self, CheckpointFileError, Plan};
use crate::errors::PrefetchError;
use crate::input::Source;

/// What can stop a replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace does not decode.
    #[error(transparent)]
    Trace(TraceError),
    /// A cache geometry the replacement policy cannot run.
    #[error(transparent)]
    Cache(#[from] sim::cache::CacheError),
    #[error("placement: {0}")]
    Placement(PolicyError),
    #[error(transparent)]
    Prefetch(#[from] PrefetchError),
    /// The timing model refused (a thread without a core, a clock past
    /// the horizon, ...).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A checkpoint that cannot be saved, read or resumed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointFileError),
}

/// The cache model's counts after a replay.
pub struct CacheCounts {
    /// Cachegrind's nine events.
    pub events: sim::cachegrind::Events,
    /// Write-backs, with a replacement policy (cachegrind does not count them).
    pub writebacks: Option<sim::hierarchy::Writebacks>,
}

impl CacheCounts {
    /// `summary.json` of a cache replay of the trace at `path` (in
    /// `format`) with `cfg`, run in `mode` (`cachegrind`, or the
    /// replacement policy's name, with its `seed`).
    pub fn summary(
        &self,
        mode: &str,
        path: &str,
        format: &str,
        cfg: &CgConfig,
        seed: u64,
    ) -> serde_json::Value {
        let mut s = serde_json::json!({
            "mode": mode,
            "trace": { "path": path, "format": format },
            "config": cfg,
            "events": self.events,
        });
        if let Some(wb) = &self.writebacks {
            s["writebacks"] = serde_json::json!(wb);
            s["seed"] = serde_json::json!(seed);
        }
        s
    }
}

/// Replays `source` through the cache model of `cfg`: cachegrind's exact
/// rules without `replacement`, else a write-back hierarchy with it
/// (`seed` for the random policy). With `decode_ahead`, batches are decoded
/// on another thread. `progress` is called after every batch.
pub fn cache(
    source: Source,
    cfg: &CgConfig,
    replacement: Option<Replacement>,
    seed: u64,
    decode_ahead: bool,
    progress: &mut dyn FnMut(),
) -> Result<CacheCounts, ReplayError> {
    enum Model {
        Cachegrind(Box<Cachegrind>),
        Hierarchy(Box<Hierarchy>),
    }
    let mut model = match replacement {
        None => Model::Cachegrind(Box::new(Cachegrind::new(cfg))),
        Some(policy) => Model::Hierarchy(Box::new(Hierarchy::new(cfg, policy, seed)?)),
    };
    // Only cachegrind's model reads records in place (`Batch::in_place`).
    let mut run_batch = |batch: &Batch| match (&mut model, batch.in_place()) {
        (Model::Cachegrind(m), Some(cores)) => m.run(cores),
        (Model::Cachegrind(m), None) => m.run(&batch.acc),
        (Model::Hierarchy(m), _) => m.run(&batch.acc),
    };
    if decode_ahead {
        let mut batches = source.into_batches();
        if replacement.is_none() {
            // A mapped native trace's records are then not copied: they
            // are checked and simulated where they lie.
            batches.allow_in_place();
        }
        while let Some(batch) = batches.next_batch() {
            let batch = batch.map_err(ReplayError::Trace)?;
            run_batch(&batch);
            progress();
            batches.recycle(batch);
        }
    } else {
        let mut src = source;
        let mut batch = Batch::new(src.fields());
        loop {
            batch.clear();
            if src.fill(&mut batch).map_err(ReplayError::Trace)? == 0 {
                break;
            }
            run_batch(&batch);
            progress();
        }
    }
    Ok(match model {
        Model::Cachegrind(m) => CacheCounts {
            events: m.events(),
            writebacks: None,
        },
        Model::Hierarchy(m) => CacheCounts {
            events: m.events,
            writebacks: Some(m.writebacks),
        },
    })
}

/// The timing model for a trace replay on `machine`: `placement` and the
/// `prefetch` specs (`SPEC[@LEVEL]`, without a level at
/// `cfg.prefetch_level`) from the registries, `seed` for randomised ones.
pub fn timing_engine<'m>(
    machine: &'m sim::Machine,
    cfg: sim::Config,
    placement: &str,
    prefetch: &[String],
    seed: u64,
    log: &InputLog,
) -> Result<sim::Engine<'m>, ReplayError> {
    let ctx = policies::registry::Ctx {
        seed,
        ..policies::registry::Ctx::for_machine(machine)
    };
    let placement = policies::placement::PLACEMENTS
        .build(placement, &ctx)
        .map_err(ReplayError::Placement)?;
    let level = cfg.prefetch_level;
    let mut engine = sim::Engine::new(machine, cfg, placement)?;
    crate::prefetchers::attach(&mut engine, machine, prefetch, level, log)?;
    Ok(engine)
}

/// Feeds every batch of `source` (decoded ahead) to `engine` and finishes
/// it; `progress` is called after every batch.
pub fn timing(
    engine: &mut sim::Engine,
    source: Source,
    progress: &mut dyn FnMut(),
) -> Result<(), ReplayError> {
    timing_with(engine, source, &Plan::default(), progress)
}

/// [`timing`] that first resumes from `plan.from` (reading, checking and
/// skipping the records before it) and saves the state into `plan.save`
/// after its record count. Either way the results are the uninterrupted
/// run's, byte for byte.
pub fn timing_with(
    engine: &mut sim::Engine,
    source: Source,
    plan: &Plan,
    progress: &mut dyn FnMut(),
) -> Result<(), ReplayError> {
    let mut resumed = None;
    if let Some(path) = &plan.from {
        let (header, state) = checkpoints::load(path)?;
        engine
            .resume(&header, &state)
            .map_err(|e| checkpoints::bad(path, e))?;
        resumed = Some((path.as_path(), header.records, header.trace));
    }
    let skip = resumed.map_or(0, |r| r.1);
    let save = plan.save.as_ref().map(|(p, at)| (p.as_path(), *at));
    if let Some((_, at)) = save
        && at < skip
    {
        return Err(CheckpointFileError::BeforeResume { at, from: skip }.into());
    }
    // Records are hashed up to the last checkpoint, fed from the first.
    let hash_until = skip.max(save.map_or(0, |s| s.1));
    let mut hash = TraceHash::default();
    let mut pos = 0u64;
    at_checkpoint(engine, 0, &hash, resumed, save)?;
    let mut batches = source.into_batches();
    while let Some(batch) = batches.next_batch() {
        let batch = batch.map_err(ReplayError::Trace)?;
        if pos >= hash_until {
            engine.feed(&batch)?;
        } else {
            for r in checkpoints::cuts(pos, batch.len(), &[skip, hash_until]) {
                let (a, b) = (pos + r.start as u64, pos + r.end as u64);
                if b <= hash_until {
                    hash.add(&batch, r.clone());
                }
                if a >= skip && r.len() == batch.len() {
                    engine.feed(&batch)?;
                } else if a >= skip {
                    let mut part = Batch::new(batch.fields());
                    r.clone().for_each(|i| part.push(batch.get(i)));
                    engine.feed(&part)?;
                }
                if !r.is_empty() {
                    at_checkpoint(engine, b, &hash, resumed, save)?;
                }
            }
        }
        pos += batch.len() as u64;
        progress();
        batches.recycle(batch);
    }
    if let Some((path, records, _)) = resumed
        && pos < records
    {
        let error = CheckpointError::TraceTooShort {
            records,
            found: pos,
        };
        return Err(checkpoints::bad(path, error).into());
    }
    if let Some((_, at)) = save
        && pos < at
    {
        return Err(CheckpointFileError::PastEnd { at, records: pos }.into());
    }
    engine.finish()?;
    Ok(())
}

/// At record `pos`: checks the trace against the checkpoint resumed from
/// if it was taken there, and saves one if one is asked for there.
fn at_checkpoint(
    engine: &sim::Engine,
    pos: u64,
    hash: &TraceHash,
    resumed: Option<(&Path, u64, u64)>,
    save: Option<(&Path, u64)>,
) -> Result<(), ReplayError> {
    if let Some((path, records, saved)) = resumed
        && pos == records
        && hash.digest() != saved
    {
        let this = hash.digest();
        let error = CheckpointError::Trace {
            records,
            saved,
            this,
        };
        return Err(checkpoints::bad(path, error).into());
    }
    if let Some((path, at)) = save
        && pos == at
    {
        let header = engine.checkpoint_header(hash.digest());
        checkpoints::save(path, &header, &engine.save_state())?;
    }
    Ok(())
}
