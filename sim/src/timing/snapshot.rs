//! A checkpoint of the engine: its whole state after some records
//! (caches, directory, prefetchers' books and tables, pages and the
//! placement's state, queues, threads and their buffered records, the
//! event heap, statistics, a sampled run's units), saved and taken back so
//! that the rest of the run gives byte-identical results
//! ([`crate::checkpoint`] is the file around it).

use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::checkpoint::{self, CheckpointError, Header};
use crate::directory::{Directory, U64Map};
use crate::events::Events;

use super::Engine;
use super::cores::CoreState;
use super::memory::MemoryState;
use super::sample::Sampling;
use super::slots::PfSlotState;
use super::stats::Stats;
use super::threads::Threads;

/// Everything of an [`Engine`] that a run changes; the rest follows from
/// the machine, the configuration and the policies.
#[derive(Serialize, Deserialize)]
struct State {
    cores: Vec<CoreState>,
    llc: Vec<Option<Cache>>,
    dir: Directory,
    false_shared: U64Map<()>,
    mem: MemoryState,
    threads: Threads,
    heap: Events,
    buffered: usize,
    records_in: u64,
    stats: Stats,
    now_ps: u64,
    pf: Vec<PfSlotState>,
    waited: bool,
    sampling: Option<Box<Sampling>>,
}

impl Engine<'_> {
    /// What must be the same for a checkpoint to resume this run: the
    /// placement, the prefetchers at their levels and the configuration.
    pub fn run_description(&self) -> String {
        let pf: Vec<String> = self
            .pf
            .iter()
            .map(|s| format!("{}@{}", s.p.name(), s.level))
            .collect();
        format!(
            "placement {}; prefetch [{}]; {:?}",
            self.mem.placement.name(),
            pf.join(", "),
            self.cfg
        )
    }

    /// Records fed so far.
    pub fn records_fed(&self) -> u64 {
        self.records_in
    }

    /// The engine's state, encoded ([`crate::checkpoint::encode`]).
    pub fn save_state(&self) -> Vec<u8> {
        checkpoint::encode(&State {
            cores: self.cores.clone(),
            llc: self.llc.clone(),
            dir: self.dir.clone(),
            false_shared: self.false_shared.clone(),
            mem: self.mem.state(),
            threads: self.threads.clone(),
            heap: self.heap.clone(),
            buffered: self.buffered,
            records_in: self.records_in,
            stats: self.stats.clone(),
            now_ps: self.now_ps,
            pf: self.pf.iter().map(|s| s.state()).collect(),
            waited: self.waited,
            sampling: self.sampling.clone(),
        })
    }

    /// Takes back what [`Engine::save_state`] gave on an engine built with
    /// the same machine, configuration and policies (the checkpoint's
    /// header checks that). A failed load leaves the engine half-restored:
    /// drop it.
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<(), CheckpointError> {
        let s: State = checkpoint::decode(bytes)?;
        let shape = |what: &'static str, saved: usize, this: usize| {
            if saved == this {
                Ok(())
            } else {
                Err(CheckpointError::Shape { what, saved, this })
            }
        };
        shape("cores", s.cores.len(), self.cores.len())?;
        shape("nodes", s.llc.len(), self.llc.len())?;
        shape("prefetchers", s.pf.len(), self.pf.len())?;
        shape(
            "sampling states",
            s.sampling.is_some() as usize,
            self.sampling.is_some() as usize,
        )?;
        for (slot, st) in self.pf.iter_mut().zip(s.pf) {
            slot.restore(st)?;
        }
        self.mem.restore(s.mem)?;
        self.cores = s.cores;
        self.llc = s.llc;
        self.dir = s.dir;
        self.false_shared = s.false_shared;
        self.threads = s.threads;
        self.heap = s.heap;
        self.buffered = s.buffered;
        self.records_in = s.records_in;
        self.stats = s.stats;
        self.now_ps = s.now_ps;
        self.waited = s.waited;
        self.sampling = s.sampling;
        Ok(())
    }
}

impl Engine<'_> {
    /// The header of a checkpoint taken now, after records whose
    /// [`crate::checkpoint::TraceHash`] is `trace`.
    pub fn checkpoint_header(&self, trace: u64) -> Header {
        Header {
            records: self.records_in,
            trace,
            machine: checkpoint::machine_hash(self.m),
            run: self.run_description(),
        }
    }

    /// Resumes from a checkpoint read with [`crate::checkpoint::read`],
    /// after checking that it was taken on this machine by this run (the
    /// trace is the caller's to check: it holds the records).
    pub fn resume(&mut self, header: &Header, state: &[u8]) -> Result<(), CheckpointError> {
        header.check(checkpoint::machine_hash(self.m), &self.run_description())?;
        self.load_state(state)
    }
}
