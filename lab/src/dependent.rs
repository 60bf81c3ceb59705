//! The model of a live replay: one trace thread whose every load miss
//! blocks (`--mlp 1`, as the live loads are dependent) and whose stores
//! are posted (no later address waits for them, `live::chase::run_ops`:
//! a store costs the L1D's latency), the given prefetchers,
//! and every access from the one PC of the live loop's load (or store) —
//! the host's instruction-indexed prefetchers see one instruction. Used by
//! `validate` (each trace) and by a calibration's fit of the
//! prefetchers' confirmation count (the ramp walks).

use traces::{Access, Batch};

use crate::InputLog;
use crate::prefetchers::PrefetchError;

/// A dependent replay that cannot be built or run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{0}")]
    Placement(policies::PolicyError),
    #[error(transparent)]
    Engine(#[from] sim::EngineError),
    #[error(transparent)]
    Prefetch(#[from] PrefetchError),
    #[error("the calibrated machine is not a valid description: {0}")]
    Machine(sim::MachineError),
}

/// The PCs of the live replay's load and store.
pub const REPLAY_LOAD_PC: u64 = 0x1000;
pub const REPLAY_STORE_PC: u64 = 0x1004;

/// A simulated dependent-load replay on a machine.
pub struct DependentReplay<'a> {
    engine: sim::Engine<'a>,
}

impl<'a> DependentReplay<'a> {
    /// On `m`, with `prefetch` (SPEC[@LEVEL], default level the L2, or L1
    /// on a one-level machine) and a prefetch queue of `queue` fills.
    pub fn new(
        m: &'a sim::Machine,
        prefetch: &[String],
        queue: usize,
        log: &InputLog,
    ) -> Result<Self, ReplayError> {
        let placement = policies::placement::PLACEMENTS
            .build("first-touch", &policies::registry::Ctx::for_machine(m))
            .map_err(ReplayError::Placement)?;
        let level = 1.min(m.spec.core.caches.len().saturating_sub(1));
        let mut engine = sim::Engine::new(
            m,
            sim::Config {
                mlp: Some(1),
                pin: sim::Pin::Compact,
                prefetch_level: level,
                prefetch_queue: Some(queue),
                timeseries: false,
                // The live loop's stores feed no later address.
                posted_stores: true,
                ..sim::Config::default()
            },
            placement,
        )?;
        crate::prefetchers::attach(&mut engine, m, prefetch, level, log)?;
        Ok(DependentReplay { engine })
    }

    /// Runs `chunk` to completion; returns its accesses and their total
    /// latency (ns).
    pub fn run(&mut self, chunk: &[Access]) -> Result<(u64, f64), sim::EngineError> {
        let mut b = Batch::new(traces::Fields {
            pc: true,
            ..traces::Fields::default()
        });
        for x in chunk {
            let mut r = traces::Record::access(0, x.kind, x.addr, x.size);
            r.pc = if matches!(x.kind, traces::Kind::Store | traces::Kind::Modify) {
                REPLAY_STORE_PC
            } else {
                REPLAY_LOAD_PC
            };
            r.flags |= traces::record::FLAG_PC;
            b.push(r);
        }
        let before = self.engine.latency_totals();
        self.engine.feed(&b)?;
        self.engine.finish()?;
        let after = self.engine.latency_totals();
        Ok((after.0 - before.0, (after.1 - before.1) as f64 / 1000.0))
    }

    /// Forgets the statistics so far (not the caches' or prefetchers' state).
    pub fn clear_stats(&mut self) {
        self.engine.clear_stats();
    }

    pub fn engine(&self) -> &sim::Engine<'a> {
        &self.engine
    }
}

/// ns per load of the model walking `lines` (line indices) as loads, the
/// first half warming the caches and training the prefetchers, the second
/// timed.
pub fn walk_ns(m: &sim::Machine, prefetch: &[String], lines: &[u32]) -> Result<f64, ReplayError> {
    let (warm, timed) = lines.split_at(lines.len() / 2);
    walk_split_ns(m, prefetch, warm, timed)
}

/// ns per load of the model walking the lines of `timed` as loads after
/// those of `warm` (untimed).
pub fn walk_split_ns(
    m: &sim::Machine,
    prefetch: &[String],
    warm: &[u32],
    timed: &[u32],
) -> Result<f64, ReplayError> {
    // Built-in prefetcher specs only (a calibration's model): no file to note.
    let mut r = DependentReplay::new(m, prefetch, m.spec.core.mlp as usize, &InputLog::default())?;
    let acc = |lines: &[u32]| -> Vec<Access> {
        lines
            .iter()
            .map(|&l| Access::new(0, traces::Kind::Load, 0x4000_0000 + l as u64 * 64, 8))
            .collect()
    };
    r.run(&acc(warm))?;
    let (n, ns) = r.run(&acc(timed))?;
    Ok(if n == 0 { 0.0 } else { ns / n as f64 })
}

/// A calibration fit's sweep: for each value of `candidates`, `spec` with
/// `set(spec, value)` applied walks each of `orders` through the model
/// with its calibrated prefetchers ([`walk_ns`]). Returns the index of the
/// value nearest the host — least sum over the walks of |log(sim/live)|
/// against `live` (ns per load, one per walk; the first on a tie) — and
/// every value's ns per load on each walk.
pub fn sweep<T: Copy>(
    spec: &sim::machine::MachineSpec,
    candidates: impl IntoIterator<Item = T>,
    set: impl Fn(&mut sim::machine::MachineSpec, T),
    orders: &[Vec<u32>],
    live: &[f64],
) -> Result<(usize, Vec<Vec<f64>>), ReplayError> {
    let mut errors = Vec::new();
    let mut sims = Vec::new();
    for value in candidates {
        let mut s = spec.clone();
        set(&mut s, value);
        let model = s
            .core
            .prefetch
            .as_ref()
            .map(|p| p.model.clone())
            .unwrap_or_default();
        let m = sim::Machine::new(s).map_err(ReplayError::Machine)?;
        let ns = orders
            .iter()
            .map(|o| walk_ns(&m, &model, o))
            .collect::<Result<Vec<_>, _>>()?;
        errors.push(
            ns.iter()
                .zip(live)
                .map(|(s, l)| (s / l).ln().abs())
                .sum::<f64>(),
        );
        sims.push(ns);
    }
    let best = (0..errors.len())
        .min_by(|&a, &b| errors[a].total_cmp(&errors[b]))
        .unwrap_or(0);
    Ok((best, sims))
}
