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
        // Without posted stores, as before the option existed (the
        // description is in every checkpoint and part file).
        let cfg = format!("{:?}", self.cfg);
        let cfg = cfg
            .strip_suffix(", posted_stores: false }")
            .map_or(cfg.clone(), |c| format!("{c} }}"));
        format!(
            "placement {}; prefetch [{}]; {cfg}",
            self.mem.placement.name(),
            pf.join(", "),
        )
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
        let shape = checkpoint::same_len;
        shape("cores", s.cores.len(), self.cores.len())?;
        shape("nodes", s.llc.len(), self.llc.len())?;
        shape("prefetchers", s.pf.len(), self.pf.len())?;
        shape(
            "sampling states",
            s.sampling.is_some() as usize,
            self.sampling.is_some() as usize,
        )?;
        self.check(&s)?;
        for (slot, st) in self.pf.iter_mut().zip(s.pf) {
            slot.restore(st)?;
        }
        self.mem.restore(s.mem)?;
        // What the machine fixes (a core's node, latencies, which shortcuts
        // its policies allow) stays this engine's; the rest is restored.
        for (c, saved) in self.cores.iter_mut().zip(s.cores) {
            c.levels = saved.levels;
            c.l1i = saved.l1i;
            c.l1i_filled = saved.l1i_filled;
            c.last_line = saved.last_line;
            c.last_dirty = saved.last_dirty;
            c.last_iline = saved.last_iline;
            c.tlb = saved.tlb;
        }
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
    /// A decoded state fits this engine: every cache has its cache's
    /// geometry and well-formed bookkeeping, the directory, threads and
    /// event heap name only this machine's cores and the state's threads,
    /// the books have this run's shape. So nothing restored can make an
    /// operation index outside a table or search forever, whoever wrote
    /// the file.
    fn check(&self, s: &State) -> Result<(), CheckpointError> {
        let bad = |what: &'static str| Err(CheckpointError::Malformed { what });
        let same_cache = |a: &Option<Cache>, b: &Option<Cache>| match (a, b) {
            (Some(a), Some(b)) => a.fits(b),
            (None, None) => true,
            _ => false,
        };
        let cores_ok = self.cores.iter().zip(&s.cores).all(|(c, r)| {
            c.levels.len() == r.levels.len()
                && c.levels.iter().zip(&r.levels).all(|(a, b)| a.fits(b))
                && same_cache(&c.l1i, &r.l1i)
                && match (&c.tlb, &r.tlb) {
                    (Some(a), Some(b)) => a.fits(b),
                    (None, None) => true,
                    _ => false,
                }
        });
        if !cores_ok {
            return bad("private caches or TLBs of another shape");
        }
        if !self.llc.iter().zip(&s.llc).all(|(a, b)| same_cache(a, b)) {
            return bad("LLCs of another shape");
        }
        if !s.dir.well_formed(self.cores.len()) {
            return bad("a malformed directory");
        }
        if !s.threads.well_formed(self.cores.len()) || !s.heap.threads_below(s.threads.len()) {
            return bad("threads or events naming no thread or core");
        }
        // A sampled run warming functionally has its books swapped with
        // the scratch ones (`swap_books`): either order fits.
        let books_ok = match (&self.sampling, &s.sampling) {
            (Some(mine), Some(saved)) => {
                let (a, b) = (&self.stats, &mine.scratch);
                let (x, y) = (&s.stats, &saved.scratch);
                (a.fits(x) && b.fits(y) || a.fits(y) && b.fits(x))
                    && saved.slots == mine.slots
                    && saved.units.iter().all(|u| u.served.len() == mine.slots)
            }
            _ => self.stats.fits(&s.stats),
        };
        if !books_ok {
            return bad("statistics of another shape");
        }
        Ok(())
    }

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
