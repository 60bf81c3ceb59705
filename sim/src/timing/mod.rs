//! The discrete-event timing model of a NUMA machine.
//!
//! **Files.** The state is in sub-structures with narrow borrows, in files
//! that know nothing of the engine: `config.rs` (`Config`, `Pin`,
//! `EngineError`), `cores.rs` (a core's private caches and what the fast
//! paths know of its last lines), `threads.rs` (trace threads, their cores,
//! queues and issue times), `memory.rs` (channels, links, pages and the
//! placement policy), `stats.rs` (counters, latency histogram, time-series
//! windows), `slots.rs` (attached prefetchers and their books). The
//! behaviour is in `impl Engine` blocks that nothing imports: `run.rs` (the
//! event loop), `shortcuts.rs` (the exact fast paths), `access.rs` (an
//! access through the private levels, directory, LLC and memory: the
//! coherence miss path), `prefetch.rs` (what prefetchers see and bring in)
//! and `summary.rs` (filling the plain types of [`crate::results`]);
//! `snapshot.rs` saves and takes back the whole state (checkpoints).
//!
//! **Time.** Integer picoseconds. Each trace thread runs on a core; its
//! accesses are processed in global issue-time order (a min-heap keyed by
//! `(time, thread index)`, so ties break deterministically; `events.rs`). An access is
//! applied to caches, directory, channels and links at its issue time; its
//! latency is the served level's latency plus queueing.
//!
//! **Issue times.** Closed loop (no timing, or `gap_ns`): an access issues
//! one core cycle (or `gap_ns`, whichever is larger) after the previous one,
//! and, if the core already has `mlp` misses in flight, not before the
//! earliest of them completes (`--mlp 1` makes every miss blocking). Hits
//! never block. Open loop (`time_ns`): the access issues at its time,
//! whatever is in flight.
//!
//! **Memory system.** Per core: private data levels (inclusive: an eviction
//! from the last level back-invalidates the levels above) and an optional
//! L1I. Per node: a shared LLC (filled by memory reads and by private
//! write-backs) and memory channels (FCFS [`Queue`](crate::queue::Queue)s, line-interleaved).
//! Links are FCFS queues too. A MESI directory ([`crate::directory`])
//! tracks which cores hold each line in their private caches (entries exist
//! only while some core holds the line); LLC copies are found by probing the
//! node LLCs, which is exact and keeps the directory as small as the private
//! caches. A write invalidates every other copy; a miss on a line another
//! core holds modified is a cache-to-cache transfer (`c2c_latency_ns` +
//! route latency), after which a reader's owner writes the line back (MESI). Dirty lines leaving the last cache
//! level are written back to their home memory (posted: they occupy channels
//! and links but no thread waits for them).
//!
//! **Modelling choices.** A request occupies its channel and links from its
//! issue time (the time spent reaching them is folded into the base
//! latency), which keeps every queue's arrivals in time order. Straddling
//! accesses touch both lines; their latency is the larger.
//!
//! **Fast paths, exact by construction** ([`Config::shortcuts`]). A load
//! to the line its core's last data access touched, a write to it while it
//! is dirty, and a fetch from the line it fetched last (when no prefetcher
//! is attached and the level's policy leaves a repeated hit unchanged) are
//! answered as the L1 hits they are, without the lookup (`Engine::shortcut`;
//! every invalidation of such a line clears it); runs of them skip the event
//! loop's general steps; while the trace has one thread, `feed` settles
//! them as it reads them, without queueing. The thread that runs stays at
//! the top of the heap, and its next issue time replaces it there (one
//! sift-down, no step when it is still first).
//! Repeated latencies enter the histogram as counts. None of these changes a
//! result: a test compares every shortcut against the general path. Below
//! the L1, a core that is not a sharer of the line (the directory, looked up
//! once per miss) holds it in no private level, so none is searched.
//!
//! **Host caches.** The simulated caches and directory outgrow the host's
//! caches with many cores; when a thread goes back on the heap, the engine
//! hints the host to fetch what its next access will read
//! (`Engine::prefetch_front`, `hint.rs`), and it simulates every
//! `FEED_CHUNK` records of a batch while they are still cached.
//!
//! **Invariant.** No I/O, no clock, no randomness: the same records, machine
//! and configuration give the same results, however the records are cut
//! into batches. Hot state is flat vectors indexed by core, node, channel and
//! link; per-line state lives in the [`Directory`] and in hash maps with a
//! fixed hasher, none iterated into output.

// State: plain structures, none of which knows the engine.
mod config;
mod cores;
mod memory;
mod slots;
mod stats;
mod threads;
// Behaviour: `impl Engine` blocks, which nothing imports.
mod access;
mod external;
mod parts;
mod prefetch;
mod run;
mod sample;
mod sampled;
mod shortcuts;
mod snapshot;
mod summary;

use std::collections::BinaryHeap;

use crate::cache::Cache;
use crate::directory::{Directory, U64Map};
use crate::events::Events;
use crate::machine::{Machine, ns_to_ps};
use crate::policy::{Placement, Prefetcher};
use crate::prefetch::PrefetchStats;

pub use config::{Config, DEFAULT_MAX_WINDOWS, EngineError, Pin, PinError};
pub use cores::Issued;
use cores::{CoreState, NO_LINE};
use memory::Memory;
pub use parts::{MergeError, PartResult, merge_parts};
pub use sample::MAX_UNITS;
use sample::Sampling;
pub use sample::{Part, Phase, Sample, SampleShapeError, SampleSpec, SampleSpecError, UnitSums};
use slots::PfSlot;
use stats::{Stats, WindowLimits};
use threads::Threads;

/// The engine: the machine's state and the run's books.
pub struct Engine<'m> {
    m: &'m Machine,
    cfg: Config,
    line_bits: u32,
    /// Virtual to physical: the caches, directory and memory see physical
    /// lines; the TLBs, the prefetchers and page placement virtual ones.
    frames: crate::frames::Frames,
    mask_shift: u32,
    cycle_ps: u64,
    mlp: usize,
    c2c_ps: u64,
    /// Added latency of a translation found at each TLB level, then of a
    /// walk (`crate::tlb::costs_ns`; empty without a TLB).
    tlb_ps: Vec<u64>,
    cores: Vec<CoreState>,
    llc: Vec<Option<Cache>>,
    llc_ps: Vec<u64>,
    dir: Directory,
    /// Lines written by two cores at disjoint bytes.
    false_shared: U64Map<()>,
    /// Channels, links, pages and the placement policy.
    mem: Memory,
    threads: Threads,
    heap: Events,
    /// Records queued on all threads.
    buffered: usize,
    records_in: u64,
    stats: Stats,
    /// Issue time of the access processed last.
    now_ps: u64,
    /// Attached prefetchers, each at its own private level.
    pf: Vec<PfSlot>,
    /// Pool of line buffers for [`Engine::consult`].
    pf_bufs: Vec<Vec<u64>>,
    /// The access just applied hit a prefetched line still in flight and
    /// waited for it: like a miss, it holds one of the core's outstanding
    /// slots until done (an L1 hit otherwise never does).
    waited: bool,
    /// A sampled run's phase and units (`Config::sample`).
    sampling: Option<Box<Sampling>>,
}

impl<'m> Engine<'m> {
    /// A fresh machine state.
    pub fn new(
        m: &'m Machine,
        cfg: Config,
        placement: Box<dyn Placement>,
    ) -> Result<Engine<'m>, EngineError> {
        let s = &m.spec;
        let mlp = cfg.mlp.unwrap_or(s.core.mlp) as usize;
        if mlp == 0 {
            return Err(EngineError::ZeroMlp);
        }
        let line = s.line_size;
        let mk = |c: &crate::machine::CacheSpec, seed: u64| {
            // Geometry and policy were checked when the machine was built.
            let g = c.geometry(line).expect("checked machine");
            Cache::new(g, c.replacement, seed)
        };
        // A repeated hit on a level's most recent line changes nothing
        // (all policies but SRRIP), so the shortcuts may answer it.
        let repeat_free = |c: Option<&crate::machine::CacheSpec>| {
            cfg.shortcuts && c.is_some_and(|c| c.replacement != crate::cache::Replacement::Srrip)
        };
        let cores = m
            .core_node
            .iter()
            .enumerate()
            .map(|(i, &node)| CoreState {
                node,
                levels: s.core.caches.iter().map(|c| mk(c, i as u64)).collect(),
                level_ps: s
                    .core
                    .caches
                    .iter()
                    .map(|c| ns_to_ps(c.latency_ns))
                    .collect(),
                l1i: s.core.l1i.as_ref().map(|c| mk(c, i as u64)),
                l1i_ps: s.core.l1i.as_ref().map_or(0, |c| ns_to_ps(c.latency_ns)),
                l1i_filled: false,
                last_line: NO_LINE,
                last_dirty: false,
                repeat_hit_free: repeat_free(s.core.caches.first()),
                last_iline: NO_LINE,
                l1i_repeat_hit_free: repeat_free(s.core.l1i.as_ref()),
                tlb: s.core.tlb.as_ref().map(crate::tlb::Tlb::new),
            })
            .collect::<Vec<_>>();
        let mem = Memory::new(m, placement);
        let queues = mem.queue_counts();
        let stats = Stats::new(
            m,
            queues,
            cfg.window_ns,
            WindowLimits {
                keep: cfg.timeseries,
                max: cfg.max_windows,
            },
        );
        let sampling = match cfg.sample {
            Some(shape) => {
                shape.check()?;
                let scratch = Stats::scratch(m, queues, cfg.window_ns);
                let slots = stats.counters.served.len();
                Some(Box::new(Sampling::new(shape, scratch, slots)))
            }
            None => None,
        };
        Ok(Engine {
            m,
            line_bits: line.trailing_zeros(),
            frames: crate::frames::Frames::new(s.frames, s.page_size),
            mask_shift: line.trailing_zeros().saturating_sub(6),
            cycle_ps: ns_to_ps(1.0 / s.core.freq_ghz).max(1),
            mlp,
            c2c_ps: ns_to_ps(s.c2c_latency_ns),
            tlb_ps: s.core.tlb.as_ref().map_or(Vec::new(), |t| {
                crate::tlb::costs_ns(t).into_iter().map(ns_to_ps).collect()
            }),
            threads: Threads::new(cores.len()),
            cores,
            llc: s
                .nodes
                .iter()
                .enumerate()
                .map(|(i, x)| x.llc.as_ref().map(|c| mk(c, 1000 + i as u64)))
                .collect(),
            llc_ps: s
                .nodes
                .iter()
                .map(|x| x.llc.as_ref().map_or(0, |c| ns_to_ps(c.latency_ns)))
                .collect(),
            dir: Directory::default(),
            false_shared: U64Map::default(),
            mem,
            heap: Events::default(),
            buffered: 0,
            records_in: 0,
            stats,
            now_ps: 0,
            pf: Vec::new(),
            pf_bufs: Vec::new(),
            waited: false,
            sampling,
            cfg,
        })
    }

    /// Attaches a cache prefetcher at `Config::prefetch_level`.
    pub fn set_prefetcher(&mut self, p: Box<dyn Prefetcher>) -> Result<(), EngineError> {
        self.add_prefetcher(p, self.cfg.prefetch_level)
    }

    /// Attaches a cache prefetcher filling and watching private level
    /// `level` (0 = L1D), besides any attached before (ChampSim's per-level
    /// prefetchers: e.g. next-line at L1D and a streamer at L2).
    pub fn add_prefetcher(
        &mut self,
        p: Box<dyn Prefetcher>,
        level: usize,
    ) -> Result<(), EngineError> {
        let n = self.m.spec.core.caches.len();
        if level >= n {
            return Err(EngineError::NoSuchLevel(level, n));
        }
        self.pf.push(PfSlot {
            p,
            level,
            stats: PrefetchStats::default(),
            lines: U64Map::default(),
            inflight: vec![BinaryHeap::new(); self.cores.len()],
            evicted_inflight: U64Map::default(),
            fill_free: vec![Vec::new(); self.cores.len()],
        });
        // A prefetcher sees every load from now on: no shortcut around it.
        for c in &mut self.cores {
            c.last_line = NO_LINE;
            c.last_iline = NO_LINE;
        }
        Ok(())
    }

    /// Every prefetcher's name, level and counts (unused prefetches as useless).
    pub fn prefetchers(&self) -> Vec<(String, usize, PrefetchStats)> {
        self.pf
            .iter()
            .map(|slot| {
                let mut s = slot.stats;
                // Lines issued while warming (landed at 0) are warming's.
                s.useless += slot.lines.values().filter(|l| l.0 != 0).count() as u64;
                (slot.p.name(), slot.level, s)
            })
            .collect()
    }

    /// Forgets the statistics gathered so far (counters, latency histogram,
    /// time series, queue sums) but keeps the machine's state (caches,
    /// directory, pages): measure a second pass after a warm-up pass.
    pub fn clear_stats(&mut self) {
        self.stats.clear();
        for slot in &mut self.pf {
            slot.stats = PrefetchStats::default();
        }
        self.mem.clear_stats();
    }

    /// Name of the placement policy.
    pub fn placement_name(&self) -> String {
        self.mem.placement.name()
    }

    /// Accesses completed and the sum of their latencies (ps), over all
    /// threads since the start (not reset by [`Engine::clear_stats`]) —
    /// cheap enough to read after every few hundred accesses.
    pub fn latency_totals(&self) -> (u64, u128) {
        self.threads
            .iter()
            .fold((0, 0), |(n, ps), t| (n + t.accesses, ps + t.latency_ps))
    }
}
