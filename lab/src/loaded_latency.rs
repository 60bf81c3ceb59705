//! Intel MLC's loaded-latency view of the model: one open-loop thread on a
//! core of node `from` issues random line reads to memory bound on node
//! `to` at Poisson times, at an offered load (a fraction of the target
//! node's peak channel bandwidth); each point gives the offered and
//! achieved bandwidth and the read latency. Latency stays near the idle
//! value, then climbs at the knee where achieved bandwidth stops following
//! offered load — the channels' (or, remotely, the link's) bandwidth.

use traces::synth::{GenConfig, Generator, Pattern};
use traces::{Batch, RecordSource};

/// What can stop a loaded-latency run.
#[derive(Debug, thiserror::Error)]
pub enum LoadedError {
    #[error("the machine has nodes 0..{last}")]
    NoNode { last: u32 },
    #[error("node {0} has no cores")]
    NoCores(u32),
    #[error("node {0} has no memory")]
    NoMemory(u32),
    #[error("every load must be positive")]
    Load,
    #[error("{0}")]
    Generator(traces::Problem),
    #[error("{0}")]
    Trace(#[from] traces::TraceError),
    #[error(transparent)]
    Policy(#[from] policies::PolicyError),
    #[error(transparent)]
    Engine(#[from] sim::EngineError),
}

/// One offered load's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Point {
    pub load: f64,
    pub offered_gbps: f64,
    pub achieved_gbps: f64,
    pub mean_latency_ns: f64,
    pub p99_latency_ns: f64,
    pub reads: u64,
}

/// The target node's peak bandwidth (GB/s), with its channel count and
/// per-channel bandwidth, after checking that `from` has cores and `to`
/// memory.
pub fn peak(m: &sim::Machine, from: u32, to: u32) -> Result<(f64, u32, f64), LoadedError> {
    let n = m.nodes() as u32;
    if from >= n || to >= n {
        return Err(LoadedError::NoNode { last: n - 1 });
    }
    if m.spec.nodes[from as usize].cores == 0 {
        return Err(LoadedError::NoCores(from));
    }
    let Some(mem) = &m.spec.nodes[to as usize].memory else {
        return Err(LoadedError::NoMemory(to));
    };
    Ok((
        mem.channels as f64 * mem.channel_gbps,
        mem.channels,
        mem.channel_gbps,
    ))
}

/// `requests` reads at offered load `load` (seeded by `seed`).
pub fn point(
    m: &sim::Machine,
    from: u32,
    to: u32,
    load: f64,
    requests: u64,
    seed: u64,
) -> Result<Point, LoadedError> {
    if !(load.is_finite() && load > 0.0) {
        return Err(LoadedError::Load);
    }
    let (peak_gbps, _, _) = peak(m, from, to)?;
    let line = m.spec.line_size as f64;
    let cfg = GenConfig {
        pattern: Pattern::Random,
        count: requests,
        footprint: 64 << 30,
        size: 8,
        threads: 1,
        rate_per_us: Some(load * peak_gbps / line * 1000.0),
        seed,
        ..GenConfig::default()
    };
    let mut g = Generator::new(cfg).map_err(|e| LoadedError::Generator(e.problem))?;
    let placement = policies::placement::PLACEMENTS.build(
        &format!("bind:{to}"),
        &policies::registry::Ctx::for_machine(m),
    )?;
    let ecfg = sim::Config {
        pin: sim::Pin::Explicit(vec![(0, m.first_core[from as usize])]),
        ..sim::Config::default()
    };
    let mut e = sim::Engine::new(m, ecfg, placement)?;
    let mut b = Batch::new(g.fields());
    loop {
        b.clear();
        if g.fill(&mut b)? == 0 {
            break;
        }
        e.feed(&b)?;
    }
    e.finish()?;
    let s = e.summary();
    Ok(Point {
        load,
        offered_gbps: load * peak_gbps,
        achieved_gbps: s.memory.bytes as f64 / s.elapsed_ns.max(1.0),
        mean_latency_ns: s.latency_ns.mean,
        p99_latency_ns: s.latency_ns.p99,
        reads: s.memory.reads,
    })
}
