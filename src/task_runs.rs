//! One row of a task-trace comparison on one seed: a task trace replayed
//! on workers through the timing model (shared by `compare` on a task
//! trace and `compare --fidelity lines`).

use anyhow::Result;

/// How one row replays: its name (for errors), scheduler, prefetchers,
/// the cores' MLP and the seed.
pub struct Replay<'a> {
    pub row: &'a str,
    pub scheduler: &'a str,
    pub prefetch: &'a [String],
    pub mlp: Option<u32>,
    pub seed: u64,
    /// Where model files its prefetchers read are noted.
    pub log: &'a lab::InputLog,
}

/// Replays `trace` on workers at `cores` through the timing model:
/// every task's latency (ps) in trace order, the last end (ns) and the
/// memory bytes moved.
pub fn replay_tasks(
    m: &sim::Machine,
    trace: &traces::tasks::TaskTrace,
    cores: &[usize],
    placement: Box<dyn sim::Placement>,
    how: &Replay,
) -> Result<(Vec<u64>, u64, u64)> {
    let ctx = policies::registry::Ctx {
        seed: how.seed,
        ..policies::registry::Ctx::for_machine(m)
    };
    let sched = policies::sched::SCHEDULERS
        .build(how.scheduler, &ctx)
        .map_err(|e| anyhow::anyhow!("row {}: {e}", how.row))?;
    let cfg = sim::Config {
        mlp: how.mlp,
        ..sim::Config::default()
    };
    let mut engine = sim::Engine::new(m, cfg, placement)?;
    crate::policy::attach_prefetchers(&mut engine, m, how.prefetch, 1, how.log)?;
    let mut te = sim::tasks::TaskEngine::new(engine, m, cores, sched)
        .map_err(|e| anyhow::anyhow!("workers {cores:?}: {e}"))?;
    let mut lat = vec![0u64; trace.tasks.len()];
    let index: std::collections::HashMap<u32, usize> = trace
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    let mut span = 0u64;
    te.run(trace, |r| {
        lat[index[&r.task]] = r.latency_ps();
        span = span.max(r.end_ps / 1000);
    })
    .map_err(|e| anyhow::anyhow!("row {}: {e}", how.row))?;
    Ok((lat, span, te.engine.summary().memory.bytes))
}
