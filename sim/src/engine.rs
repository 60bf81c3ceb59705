//! The discrete-event timing model of a NUMA machine.
//!
//! **Time.** Integer picoseconds. Each trace thread runs on a core; its
//! accesses are processed in global issue-time order (a min-heap keyed by
//! `(time, thread index)`, so ties break deterministically; [`Events`]). An access is
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
//! write-backs) and memory channels (FCFS [`Queue`]s, line-interleaved).
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

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hdrhistogram::Histogram;
use traces::{Access, Batch, Kind, Timing};

use crate::cache::Cache;
use crate::directory::{Agents, Directory, NO_AGENT, U64Map};
use crate::events::Events;
use crate::latency::Latencies;
use crate::machine::{Machine, ns_to_ps, transfer_ps};
use crate::placement::{Observed, Placement};
use crate::prefetch::{PrefetchStats, Prefetcher, Seen};
use crate::queue::Queue;
use crate::results::{self, Summary};

/// How trace threads map to cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Thread k (in order of first appearance) on core k: fills node 0 first.
    Compact,
    /// Round-robin across the nodes that have cores.
    Spread,
    /// Explicit `(trace thread id, core)` pairs.
    Explicit(Vec<(u32, u32)>),
}

/// One attached prefetcher: the private level it fills and watches, and
/// its books.
struct PfSlot {
    p: Box<dyn Prefetcher>,
    level: usize,
    stats: PrefetchStats,
    /// Lines it prefetched, not yet used or lost: (fill completion, core).
    lines: U64Map<(u64, u16)>,
    /// Per core: completion times of its fills in flight beyond the private levels.
    inflight: Vec<BinaryHeap<Reverse<u64>>>,
}

/// Run configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Override of the machine's outstanding-miss limit.
    pub mlp: Option<u32>,
    pub pin: Pin,
    /// Time-series window (ns).
    pub window_ns: u64,
    /// Most records buffered while waiting for a thread's next record.
    pub max_buffered: usize,
    /// Private data level (index into the core's caches) a prefetcher fills
    /// and watches: 0 = L1D, 1 = L2, ...
    pub prefetch_level: usize,
    /// Most prefetches a core keeps in flight beyond its private levels (its
    /// fill buffers); further prefetches are dropped. `None`: no limit (a
    /// late prefetch still makes its demand wait for the fill).
    pub prefetch_queue: Option<usize>,
    /// The exact fast paths (a core's repeated load, write while dirty, or
    /// fetch of the line it touched last answered without the lookup, runs
    /// of such accesses without the event loop's general steps). Results are identical either way;
    /// off, every access takes the general path, which tests use as the
    /// reference.
    pub shortcuts: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mlp: None,
            pin: Pin::Compact,
            window_ns: 10_000,
            max_buffered: 1 << 22,
            prefetch_level: 1,
            prefetch_queue: None,
            shortcuts: true,
        }
    }
}

/// What can go wrong in a run (all caused by the input or the configuration).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "record {record}: trace thread {thread} needs a core, but the machine has only {cores} (threads are pinned in order of first appearance)"
    )]
    TooManyThreads {
        record: u64,
        thread: u32,
        cores: usize,
    },
    #[error("record {record}: trace thread {thread} has no --pin entry")]
    Unpinned { record: u64, thread: u32 },
    #[error("--pin: core {core} does not exist (the machine has {cores})")]
    NoSuchCore { core: u32, cores: usize },
    #[error("--pin: core {core} is given to two threads")]
    CoreTaken { core: u32 },
    #[error(
        "record {record}: time_ns {time_ns} is earlier than thread {thread}'s previous access ({prev_ns} ns)"
    )]
    TimeBackwards {
        record: u64,
        thread: u32,
        time_ns: u64,
        prev_ns: u64,
    },
    #[error("--mlp must be at least 1")]
    ZeroMlp,
    #[error("--prefetch-level {0}: the machine's cores have {1} private data levels")]
    NoSuchLevel(usize, usize),
}

/// Where an access was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Served {
    Private(u8),
    Llc,
    Remote, // cache-to-cache transfer
    LocalMem,
    RemoteMem,
}

struct CoreState {
    node: u32,
    /// Private data levels, nearest first.
    levels: Vec<Cache>,
    level_ps: Vec<u64>,
    l1i: Option<Cache>,
    l1i_ps: u64,
    /// Something was ever filled into the L1I (a data-only trace leaves it
    /// empty, and invalidations need not search it).
    l1i_filled: bool,
    /// The line of this core's last data access when it is known to sit in
    /// the L1D as its set's most recent line ([`NO_LINE`] otherwise). A load
    /// to it is an L1D hit that changes no state: see [`Engine::access`].
    last_line: u64,
    /// `last_line` is dirty in the L1D (the core's last access to it was a
    /// write, and no other core has read it since): a store to it is an
    /// L1D hit that needs no upgrade.
    last_dirty: bool,
    /// The L1D's policy leaves a repeated hit on the most recent line
    /// unchanged (all but SRRIP), so the shortcut may be taken.
    repeat_hit_free: bool,
    /// The same for instruction fetches: the line of this core's last fetch
    /// while it is known to be its L1I set's most recent line (only this
    /// core's fetches fill its L1I; every invalidation of an L1I line
    /// clears it), or [`NO_LINE`].
    last_iline: u64,
    /// The L1I exists and its policy leaves a repeated hit unchanged.
    l1i_repeat_hit_free: bool,
}

/// A run of shortcut hits of one thread, gathered by [`Engine::run_hits`] or
/// [`Engine::direct_hit`] and counted by [`Engine::apply_run`].
#[derive(Default)]
struct HitRun {
    data: u64,
    ifetches: u64,
    /// Latency of the fetches (the data accesses all take the L1D's).
    ifetch_ps: u64,
    last_issue: u64,
    last_done: u64,
}

/// What [`Engine::direct_hit`] did with a record.
enum Direct {
    /// Settled as a hit.
    Done,
    /// Queued with its issue time (outside the current window).
    Queued,
    /// Not a direct hit: queue it as usual.
    No,
}

/// No line (line numbers are addresses shifted right, never all ones).
const NO_LINE: u64 = u64::MAX;

struct ThreadState {
    id: u32,
    core: usize,
    queue: VecDeque<(Access, u64, u64, Option<u64>)>, // access, time column, record index, pc
    /// Address of the thread's last instruction fetch (the PC of a lackey data access).
    last_ifetch: Option<u64>,
    /// Issue time of the previous access.
    last_issue: u64,
    started: bool,
    /// Completion times of misses in flight (at most `mlp`).
    inflight: BinaryHeap<Reverse<u64>>,
    /// Time of the next access, when it has been computed and pushed on the heap.
    scheduled: bool,
    accesses: u64,
    latency_ps: u128,
    last_done: u64,
}

/// Per-window time series accumulator.
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    pub accesses: u64,
    pub latency_ps: u128,
    pub l1_hits: u64,
    pub llc_hits: u64,
    pub mem_reads: u64,
    pub invalidations: u64,
    pub channel_bytes: Vec<u64>,
    pub link_bytes: Vec<u64>,
}

/// Counters of a run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub accesses: u64,
    pub data_accesses: u64,
    pub ifetches: u64,
    pub served: Vec<u64>, // per private level, then LLC, c2c, local mem, remote mem
    pub invalidations: u64,
    pub cache_to_cache: u64,
    pub upgrades: u64,
    pub mem_reads: u64,
    pub mem_writebacks: u64,
    pub migrations: u64,
    pub migration_bytes: u64,
    pub false_sharing_events: u64,
    pub node_local: Vec<u64>,
    pub node_remote: Vec<u64>,
    pub pages_on_node: Vec<u64>,
    pub latency_sum_ps: u128,
}

/// The engine.
pub struct Engine<'m> {
    pub(crate) m: &'m Machine,
    cfg: Config,
    line_bits: u32,
    page_bits: u32,
    mask_shift: u32,
    cycle_ps: u64,
    mlp: usize,
    c2c_ps: u64,
    cores: Vec<CoreState>,
    core_taken: Vec<bool>,
    pub(crate) llc: Vec<Option<Cache>>,
    llc_ps: Vec<u64>,
    pub(crate) channels: Vec<Vec<Queue>>,
    chan_service_ps: Vec<u64>,
    /// Per node: the index of its first channel among all channels.
    chan_base: Vec<usize>,
    mem_ps: Vec<u64>,
    interleave_bits: Vec<u32>,
    pub(crate) links: Vec<Queue>,
    link_service_ps: Vec<u64>,
    dir: Directory,
    false_shared: U64Map<()>,
    pages: U64Map<u32>,
    /// The last page looked up and its node (streams touch one page many times).
    last_page: (u64, u32),
    placement: Box<dyn Placement>,
    threads: Vec<ThreadState>,
    thread_index: U64Map<usize>,
    /// Thread index + 1 by trace thread id, for ids below
    /// [`THREAD_TABLE_MAX`] (0: not seen); larger ids use `thread_index`.
    thread_table: Vec<u32>,
    /// The last (thread id, index) looked up: traces often run one thread long.
    last_thread: (u32, usize),
    heap: Events,
    buffered: usize,
    records_in: u64,
    pub(crate) counters: Counters,
    hist: Latencies,
    pub(crate) window_ps: u64,
    pub(crate) windows: Vec<Window>,
    /// The last window used: [start, end) in ps and its index.
    win_span: (u64, u64, usize),
    pub(crate) elapsed_ps: u64,
    /// Issue time of the access processed last.
    now_ps: u64,
    /// Attached prefetchers, each at its own private level.
    pf: Vec<PfSlot>,
    /// Pool of line buffers for [`Engine::consult`].
    pf_bufs: Vec<Vec<u64>>,
}

const LINE_STRADDLE_MAX: usize = 2;

/// Thread ids below this are looked up in a table, not a hash map.
const THREAD_TABLE_MAX: u32 = 1 << 16;

/// Records queued between two simulation steps within a batch.
const FEED_CHUNK: usize = 2048;

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
            })
            .collect::<Vec<_>>();
        let n = m.nodes();
        let mut channels = Vec::new();
        let mut chan_service_ps = Vec::new();
        let mut mem_ps = Vec::new();
        let mut interleave_bits = Vec::new();
        for node in &s.nodes {
            match &node.memory {
                Some(mem) => {
                    channels.push(vec![Queue::default(); mem.channels as usize]);
                    chan_service_ps.push(transfer_ps(line, mem.channel_gbps));
                    mem_ps.push(ns_to_ps(mem.latency_ns));
                    interleave_bits.push(mem.interleave.trailing_zeros());
                }
                None => {
                    channels.push(Vec::new());
                    chan_service_ps.push(0);
                    mem_ps.push(0);
                    interleave_bits.push(0);
                }
            }
        }
        let chan_base = channels
            .iter()
            .scan(0, |base, c| {
                let first = *base;
                *base += c.len();
                Some(first)
            })
            .collect();
        let window_ps = cfg.window_ns.max(1) * 1000;
        let served_len = s.core.caches.len().max(1) + 4;
        Ok(Engine {
            m,
            line_bits: line.trailing_zeros(),
            page_bits: s.page_size.trailing_zeros(),
            mask_shift: line.trailing_zeros().saturating_sub(6),
            cycle_ps: ns_to_ps(1.0 / s.core.freq_ghz).max(1),
            mlp,
            c2c_ps: ns_to_ps(s.c2c_latency_ns),
            core_taken: vec![false; cores.len()],
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
            channels,
            chan_service_ps,
            chan_base,
            mem_ps,
            interleave_bits,
            links: vec![Queue::default(); s.links.len()],
            link_service_ps: s
                .links
                .iter()
                .map(|l| transfer_ps(line, l.bandwidth_gbps))
                .collect(),
            dir: Directory::default(),
            false_shared: U64Map::default(),
            pages: U64Map::default(),
            last_page: (u64::MAX, 0),
            placement,
            threads: Vec::new(),
            thread_index: U64Map::default(),
            thread_table: Vec::new(),
            last_thread: (u32::MAX, 0),
            heap: Events::default(),
            buffered: 0,
            records_in: 0,
            counters: Counters {
                served: vec![0; served_len],
                node_local: vec![0; n],
                node_remote: vec![0; n],
                pages_on_node: vec![0; n],
                ..Counters::default()
            },
            hist: Latencies::new(),
            window_ps,
            windows: Vec::new(),
            win_span: (0, 0, 0),
            elapsed_ps: 0,
            now_ps: 0,
            pf: Vec::new(),
            pf_bufs: Vec::new(),
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
                s.useless += slot.lines.len() as u64;
                (slot.p.name(), slot.level, s)
            })
            .collect()
    }

    /// Forgets the statistics gathered so far (counters, latency histogram,
    /// time series, queue sums) but keeps the machine's state (caches,
    /// directory, pages): measure a second pass after a warm-up pass.
    pub fn clear_stats(&mut self) {
        let n = self.m.nodes();
        self.counters = Counters {
            served: vec![0; self.counters.served.len()],
            node_local: vec![0; n],
            node_remote: vec![0; n],
            pages_on_node: self.counters.pages_on_node.clone(),
            ..Counters::default()
        };
        self.hist.reset();
        self.windows.clear();
        self.win_span = (0, 0, 0);
        for slot in &mut self.pf {
            slot.stats = PrefetchStats::default();
        }
        for q in self
            .channels
            .iter_mut()
            .flatten()
            .chain(self.links.iter_mut())
        {
            q.clear_stats();
        }
    }

    /// Name of the placement policy.
    pub fn placement_name(&self) -> String {
        self.placement.name()
    }

    fn pin_thread(&mut self, id: u32, record: u64) -> Result<usize, EngineError> {
        let k = self.threads.len();
        let cores = self.cores.len();
        let core = match &self.cfg.pin {
            Pin::Compact => k,
            Pin::Spread => {
                let nodes = self.m.cpu_nodes();
                let node = nodes[k % nodes.len()] as usize;
                let within = k / nodes.len();
                if within >= self.m.spec.nodes[node].cores as usize {
                    cores // too many: reported below
                } else {
                    self.m.first_core[node] as usize + within
                }
            }
            Pin::Explicit(pairs) => match pairs.iter().find(|(t, _)| *t == id) {
                Some((_, c)) => {
                    if *c as usize >= cores {
                        return Err(EngineError::NoSuchCore { core: *c, cores });
                    }
                    *c as usize
                }
                None => return Err(EngineError::Unpinned { record, thread: id }),
            },
        };
        if core >= cores {
            return Err(EngineError::TooManyThreads {
                record,
                thread: id,
                cores,
            });
        }
        if self.core_taken[core] {
            return Err(EngineError::CoreTaken { core: core as u32 });
        }
        self.core_taken[core] = true;
        self.threads.push(ThreadState {
            id,
            core,
            queue: VecDeque::new(),
            last_ifetch: None,
            // A thread first seen mid-run starts now, not at time zero
            // (`feed` has simulated what the records before it allow).
            last_issue: self.now_ps,
            started: false,
            inflight: BinaryHeap::new(),
            scheduled: false,
            accesses: 0,
            latency_ps: 0,
            last_done: 0,
        });
        self.thread_index.insert(id as u64, k);
        if id < THREAD_TABLE_MAX {
            if self.thread_table.len() <= id as usize {
                self.thread_table.resize(id as usize + 1, 0);
            }
            self.thread_table[id as usize] = k as u32 + 1;
        }
        Ok(k)
    }

    /// Adds a batch of records and simulates as far as is safe.
    pub fn feed(&mut self, batch: &Batch) -> Result<(), EngineError> {
        let mut from = 0;
        if self.cfg.shortcuts && self.threads.len() <= 1 {
            from = self.feed_lone(batch)?;
        }
        let has_time = batch.fields().time;
        let has_pc = batch.fields().pc;
        for (i, a) in batch.acc.iter().enumerate().skip(from) {
            let record = self.records_in;
            self.records_in += 1;
            let time = if has_time { batch.time[i] } else { 0 };
            let pc = if has_pc { batch.pc_of(i) } else { None };
            self.enqueue(a, time, record, pc)?;
            if self.buffered >= self.cfg.max_buffered {
                // Full: events run out of turn, at this record whatever the
                // batch boundaries.
                self.advance(false)?;
            } else if i % FEED_CHUNK == FEED_CHUNK - 1 {
                // Simulate while the records just queued are still in the
                // host's caches (results do not depend on where this
                // happens).
                self.advance(false)?;
            }
        }
        self.advance(false)
    }

    /// [`Engine::feed`] while the trace has (at most) one thread: a record
    /// a shortcut answers is settled as it arrives ([`Engine::direct_hit`]),
    /// any other is queued and run at once, which leaves the queue empty
    /// for the next (results do not depend on where the simulation steps
    /// fall). Returns the index of the first record of a second thread
    /// (the general path takes over there), or the batch length.
    fn feed_lone(&mut self, batch: &Batch) -> Result<usize, EngineError> {
        let has_time = batch.fields().time;
        let has_pc = batch.fields().pc;
        // Hits settled, not yet counted.
        let mut run = HitRun::default();
        let mut stop = batch.acc.len();
        for (i, a) in batch.acc.iter().enumerate() {
            if self.threads.len() == 1 && self.last_thread.0 != a.thread {
                stop = i;
                break;
            }
            let record = self.records_in;
            self.records_in += 1;
            let time = if has_time { batch.time[i] } else { 0 };
            let pc = if has_pc { batch.pc_of(i) } else { None };
            let direct = if self.threads.is_empty() {
                Direct::No
            } else {
                self.direct_hit(a, time, record, pc, &mut run)?
            };
            if let Direct::Done = direct {
                continue;
            }
            // Anything else may read the counters: the pending hits first.
            if run.data + run.ifetches > 0 {
                self.apply_run(0, self.threads[0].core, &run);
                run = HitRun::default();
            }
            if let Direct::No = direct {
                self.enqueue(a, time, record, pc)?;
            }
            self.advance(false)?;
        }
        if let Some(th) = self.threads.first() {
            self.apply_run(0, th.core, &run);
        }
        Ok(stop)
    }

    /// Queues a record on its thread (pinning a new thread first) and
    /// schedules the thread if it was idle.
    #[inline(always)]
    fn enqueue(
        &mut self,
        a: &Access,
        time: u64,
        record: u64,
        pc: Option<u64>,
    ) -> Result<(), EngineError> {
        let t = if self.last_thread.0 == a.thread {
            self.last_thread.1
        } else {
            let known = match self.thread_table.get(a.thread as usize) {
                Some(&k) if k > 0 => Some(k as usize - 1),
                Some(_) => None,
                None if a.thread < THREAD_TABLE_MAX => None,
                None => self.thread_index.get(&(a.thread as u64)).copied(),
            };
            let t = match known {
                Some(t) => t,
                None => {
                    // A new thread starts at the time the run has
                    // reached: first simulate what the records before it
                    // allow, so that time does not depend on where the
                    // input's batches happen to end.
                    self.advance(false)?;
                    self.pin_thread(a.thread, record)?
                }
            };
            self.last_thread = (a.thread, t);
            t
        };
        let th = &mut self.threads[t];
        th.queue.push_back((*a, time, record, pc));
        self.buffered += 1;
        if !th.scheduled {
            self.schedule(t)?;
        }
        Ok(())
    }

    /// The direct path of [`Engine::feed`] while the trace has one thread
    /// and nothing of it is queued: a record a shortcut answers
    /// ([`Engine::shortcut`]) is settled at once, as [`Engine::run_hits`]
    /// would settle it from the queue (the one thread is always first and
    /// may always run), its counts added to `run`. `No`: the caller queues
    /// the record as usual. `Queued`: its issue time was computed but it
    /// falls outside the current time-series window, so it went on the
    /// queue and the heap with that time, as `schedule` would have put it.
    #[inline(always)]
    fn direct_hit(
        &mut self,
        a: &Access,
        time: u64,
        record: u64,
        pc: Option<u64>,
        run: &mut HitRun,
    ) -> Result<Direct, EngineError> {
        let th = &self.threads[0];
        if !th.queue.is_empty() || th.scheduled {
            return Ok(Direct::No);
        }
        let core = th.core;
        let Some(lat) = self.shortcut(core, a) else {
            return Ok(Direct::No);
        };
        // Computed once: retiring the miss it waits for is not repeatable.
        let issue = self.issue_of(0, a, time, record)?;
        let (win_start, win_end, _) = self.win_span;
        if issue < win_start || issue >= win_end {
            let th = &mut self.threads[0];
            th.queue.push_back((*a, time, record, pc));
            th.scheduled = true;
            self.buffered += 1;
            self.heap.push(issue, 0);
            return Ok(Direct::Queued);
        }
        self.settle_hit(0, core, a, issue, lat, run);
        Ok(Direct::Done)
    }

    /// Settles a shortcut hit `a` of thread `idx` on `core`, issued at
    /// `issue` with latency `lat`, as the loop in [`Engine::advance`]
    /// would (a write noted for false sharing, the PC bookkeeping, the
    /// thread's issue time); its counts go to `run`. The caller takes the
    /// record off its queue, if it was on one.
    #[inline(always)]
    fn settle_hit(
        &mut self,
        idx: usize,
        core: usize,
        a: &Access,
        issue: u64,
        lat: u64,
        run: &mut HitRun,
    ) {
        self.shortcut_effect(core, a);
        let th = &mut self.threads[idx];
        if a.kind == Kind::IFetch {
            th.last_ifetch = Some(a.addr);
            run.ifetches += 1;
            run.ifetch_ps += lat;
        } else {
            run.data += 1;
        }
        th.last_issue = issue;
        th.started = true;
        run.last_issue = issue;
        run.last_done = run.last_done.max(issue + lat);
    }

    /// Simulates everything still buffered (end of input).
    pub fn finish(&mut self) -> Result<(), EngineError> {
        self.advance(true)
    }

    /// Computes thread `t`'s next issue time and pushes it on the heap.
    fn schedule(&mut self, t: usize) -> Result<(), EngineError> {
        if let Some(issue) = self.issue_time(t)? {
            self.heap.push(issue, t);
        }
        Ok(())
    }

    /// Thread `t`'s next issue time (None with nothing buffered); marks the
    /// thread scheduled, and the caller puts it on the heap or runs it.
    #[inline(always)]
    fn issue_time(&mut self, t: usize) -> Result<Option<u64>, EngineError> {
        let Some(&(a, time, record, _)) = self.threads[t].queue.front() else {
            return Ok(None);
        };
        let issue = self.issue_of(t, &a, time, record)?;
        self.threads[t].scheduled = true;
        Ok(Some(issue))
    }

    /// The issue time of `a` (time column `time`, trace record `record`) as
    /// thread `t`'s next access: retires the misses it finds completed and,
    /// when all `mlp` slots are busy, the one it waits for.
    #[inline(always)]
    fn issue_of(
        &mut self,
        t: usize,
        a: &Access,
        time: u64,
        record: u64,
    ) -> Result<u64, EngineError> {
        let th = &mut self.threads[t];
        let timing = if a.flags & traces::record::FLAG_GAP != 0 {
            Timing::Gap(time)
        } else if a.flags & traces::record::FLAG_TIME != 0 {
            Timing::At(time)
        } else {
            Timing::None
        };
        let issue = match timing {
            Timing::At(ns) => {
                let ps = ns.saturating_mul(1000);
                if th.started && ps < th.last_issue {
                    return Err(EngineError::TimeBackwards {
                        record,
                        thread: th.id,
                        time_ns: ns,
                        prev_ns: th.last_issue / 1000,
                    });
                }
                // Nothing waits on an open-loop thread's misses, but a later
                // closed-loop record of the thread would (and would retire
                // these first, at a time ≥ this one): retire them now, so the
                // heap holds only what is really in flight, not every miss.
                while th.inflight.peek().is_some_and(|&Reverse(done)| done <= ps) {
                    th.inflight.pop();
                }
                ps
            }
            other => {
                let gap = match other {
                    Timing::Gap(ns) => ns.saturating_mul(1000),
                    _ => 0,
                };
                let mut at = if th.started {
                    th.last_issue + gap.max(self.cycle_ps)
                } else {
                    th.last_issue + gap
                };
                // Retire misses that completed; block on the earliest if all slots are busy.
                while let Some(&Reverse(done)) = th.inflight.peek() {
                    if done <= at {
                        th.inflight.pop();
                    } else {
                        break;
                    }
                }
                if th.inflight.len() >= self.mlp
                    && let Some(Reverse(done)) = th.inflight.pop()
                {
                    at = at.max(done);
                }
                at
            }
        };
        Ok(issue)
    }

    /// The earliest time a thread with no buffered record could still issue.
    fn blocked_bound(&self) -> u64 {
        self.threads
            .iter()
            .filter(|th| th.queue.is_empty())
            .map(|th| th.last_issue)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Whether an event at `t` may run now: a thread with no buffered
    /// record might still issue before `t` once its records arrive (`bound`),
    /// unless the buffer is full.
    #[inline]
    fn may_run(&self, t: u64, bound: u64) -> bool {
        t <= bound || self.buffered >= self.cfg.max_buffered
    }

    fn advance(&mut self, end: bool) -> Result<(), EngineError> {
        let mut bound = if end { u64::MAX } else { self.blocked_bound() };
        // The thread that runs stays at the top of the heap while it runs;
        // its next issue time then replaces it there (one sift-down, none
        // when it is still first in (time, thread) order).
        while let Some((t, idx)) = self.heap.peek() {
            if !self.may_run(t, bound) {
                break;
            }
            let th = &mut self.threads[idx];
            th.scheduled = false;
            let Some((a, _, _, pc)) = th.queue.pop_front() else {
                self.heap.pop();
                continue;
            };
            let pc = if a.kind == Kind::IFetch {
                th.last_ifetch = Some(a.addr);
                None
            } else {
                pc.or(th.last_ifetch)
            };
            self.buffered -= 1;
            th.last_issue = t;
            self.now_ps = self.now_ps.max(t);
            th.started = true;
            let core = th.core;
            let (lat, served) = self.access(core, &a, t, pc);
            let done = t + lat;
            let th = &mut self.threads[idx];
            th.accesses += 1;
            th.latency_ps += lat as u128;
            th.last_done = th.last_done.max(done);
            if !matches!(served, Served::Private(0)) {
                th.inflight.push(Reverse(done));
            }
            self.elapsed_ps = self.elapsed_ps.max(done);
            self.record_stats(&a, t, lat, served);
            let next = match self.issue_time(idx)? {
                Some(issue) => self.run_hits(idx, issue, bound)?,
                None => None,
            };
            if let Some(issue) = next {
                self.heap.replace_top(issue, idx);
                if self.heap.peek().is_some_and(|(_, top)| top != idx) {
                    self.prefetch_front(idx);
                }
            } else {
                self.heap.pop();
                if !end {
                    bound = bound.min(self.threads[idx].last_issue);
                }
            }
        }
        Ok(())
    }

    /// Runs thread `idx`'s records that [`Engine::access`] answers by a
    /// shortcut (a load or a write while dirty to the core's last data
    /// line, a fetch from its last fetched line) for as long as each is
    /// first in (time, thread) order, may run and issues in the current
    /// time-series window, doing for each what the loop in
    /// [`Engine::advance`] does: the record is popped at its issue time,
    /// answered as the hit the shortcut finds (a write noted for false
    /// sharing) and counted — without the loop's general steps (heap,
    /// miss bookkeeping), and with the run's counts added up once at its end
    /// ([`Engine::apply_run`]): every access of a run is an L1 hit at one of two
    /// fixed latencies, so the sums are the same.
    /// `issue` is the front record's issue time, already computed; returns
    /// the front record's issue time after the run, `None` once the queue
    /// is empty.
    fn run_hits(
        &mut self,
        idx: usize,
        mut issue: u64,
        bound: u64,
    ) -> Result<Option<u64>, EngineError> {
        let core = self.threads[idx].core;
        let Some(&(mut a, ..)) = self.threads[idx].queue.front() else {
            return Ok(None);
        };
        // Most fronts are no shortcut hit: nothing to set up for them.
        let Some(mut lat) = self.shortcut(core, &a) else {
            return Ok(Some(issue));
        };
        // The heap does not change during a run (the thread sits at its
        // top): (issue, idx) < the next event is issue < stop.
        let stop =
            self.heap.second().map_or(
                u64::MAX,
                |(t, j)| {
                    if idx < j { t.saturating_add(1) } else { t }
                },
            );
        let (win_start, win_end, _) = self.win_span;
        let mut run = HitRun::default();
        // `a` is the front record, a shortcut hit of latency `lat`.
        loop {
            if issue >= stop || !self.may_run(issue, bound) || issue < win_start || issue >= win_end
            {
                break;
            }
            self.settle_hit(idx, core, &a, issue, lat, &mut run);
            let th = &mut self.threads[idx];
            th.queue.pop_front();
            th.scheduled = false;
            self.buffered -= 1;
            let Some(next) = self.issue_time(idx)? else {
                self.apply_run(idx, core, &run);
                return Ok(None);
            };
            issue = next;
            // (`issue_time` found a front record.)
            let Some(&(front, ..)) = self.threads[idx].queue.front() else {
                break;
            };
            a = front;
            let Some(l) = self.shortcut(core, &a) else {
                break;
            };
            lat = l;
        }
        self.apply_run(idx, core, &run);
        Ok(Some(issue))
    }

    /// Adds a run of shortcut hits of thread `idx` on `core` to the
    /// counters, as [`Engine::record_stats`] would have one by one.
    #[inline(always)]
    fn apply_run(&mut self, idx: usize, core: usize, run: &HitRun) {
        if run.data + run.ifetches > 0 {
            self.add_run(idx, core, run);
        }
    }

    fn add_run(&mut self, idx: usize, core: usize, run: &HitRun) {
        let n = run.data + run.ifetches;
        let data_ps = self.cores[core].level_ps[0];
        let lat_ps = run.data as u128 * data_ps as u128 + run.ifetch_ps as u128;
        let th = &mut self.threads[idx];
        th.accesses += n;
        th.latency_ps += lat_ps;
        th.last_done = th.last_done.max(run.last_done);
        self.now_ps = self.now_ps.max(run.last_issue);
        self.elapsed_ps = self.elapsed_ps.max(run.last_done);
        let c = &mut self.counters;
        c.accesses += n;
        c.ifetches += run.ifetches;
        c.data_accesses += run.data;
        c.latency_sum_ps += run.data as u128 * data_ps as u128;
        c.served[0] += n;
        if run.data > 0 {
            self.hist.record_n(data_ps.max(1), run.data);
        }
        let w = self.window(run.last_issue);
        w.accesses += n;
        w.latency_ps += lat_ps;
        w.l1_hits += n;
    }

    /// Hints the host to fetch what thread `idx`'s next access will read
    /// beyond its L1 — the directory slot, the L2 and LLC sets — while
    /// other threads run (with many threads the simulated caches outgrow
    /// the host's). Nothing when a shortcut will answer it. Changes nothing.
    #[inline]
    fn prefetch_front(&self, idx: usize) {
        let th = &self.threads[idx];
        let Some(&(a, ..)) = th.queue.front() else {
            return;
        };
        // The records after it, read when this one has run (a lagging
        // thread's queue is long and has left the host's caches).
        for k in [1, 2] {
            if let Some(r) = th.queue.get(k) {
                crate::hint::prefetch(r);
            }
        }
        if self.shortcut(th.core, &a).is_some() {
            return;
        }
        let line = a.addr >> self.line_bits;
        let cs = &self.cores[th.core];
        self.dir.prefetch(line);
        for c in cs.levels.iter().skip(1) {
            c.prefetch(line);
        }
        if let Some(c) = &self.llc[cs.node as usize] {
            c.prefetch(line);
        }
    }

    /// The window holding time `t`. Times mostly move forward: the last
    /// window's span answers without a division.
    #[inline(always)]
    fn window(&mut self, t: u64) -> &mut Window {
        if t >= self.win_span.0 && t < self.win_span.1 {
            let w = self.win_span.2;
            return &mut self.windows[w];
        }
        self.window_at(t)
    }

    #[cold]
    #[inline(never)]
    fn window_at(&mut self, t: u64) -> &mut Window {
        let w = (t / self.window_ps) as usize;
        let start = w as u64 * self.window_ps;
        self.win_span = (start, start.saturating_add(self.window_ps), w);
        while self.windows.len() <= w {
            self.windows.push(Window {
                channel_bytes: vec![0; self.channels.iter().map(Vec::len).sum()],
                link_bytes: vec![0; self.links.len()],
                ..Window::default()
            });
        }
        &mut self.windows[w]
    }

    #[inline(always)]
    fn record_stats(&mut self, a: &Access, t: u64, lat: u64, served: Served) {
        let c = &mut self.counters;
        c.accesses += 1;
        if a.kind == Kind::IFetch {
            c.ifetches += 1;
        } else {
            c.data_accesses += 1;
            c.latency_sum_ps += lat as u128;
            self.hist.record_n(lat.max(1), 1);
        }
        let slot = self.served_slot(served);
        self.counters.served[slot] += 1;
        let w = self.window(t);
        w.accesses += 1;
        w.latency_ps += lat as u128;
        match served {
            Served::Private(0) => w.l1_hits += 1,
            Served::Llc => w.llc_hits += 1,
            Served::LocalMem | Served::RemoteMem => w.mem_reads += 1,
            _ => {}
        }
    }

    /// The data-access latency histogram (ps).
    pub(crate) fn latency_hist(&self) -> Cow<'_, Histogram<u64>> {
        self.hist.histogram()
    }

    pub(crate) fn served_slot(&self, s: Served) -> usize {
        let p = self.m.spec.core.caches.len().max(1);
        match s {
            Served::Private(i) => i as usize,
            Served::Llc => p,
            Served::Remote => p + 1,
            Served::LocalMem => p + 2,
            Served::RemoteMem => p + 3,
        }
    }

    /// The latency of `a` if a shortcut answers it — an L1 hit that changes
    /// no cache state: a load to the line this core's last data access
    /// touched (still the most recent in its L1D set: only this core's own
    /// data accesses fill its L1D, and an invalidation from another core or
    /// a back-invalidation from its own L2 clears `last_line`), a write to
    /// that line while it is dirty (no upgrade needed), a fetch from the
    /// line it fetched last (likewise for the L1I). `None`: the full path.
    #[inline(always)]
    fn shortcut(&self, core: usize, a: &Access) -> Option<u64> {
        let line = a.addr >> self.line_bits;
        let last = a.addr.saturating_add(a.size.max(1) as u64 - 1) >> self.line_bits;
        let cs = &self.cores[core];
        if line != last {
            return None;
        }
        match a.kind {
            Kind::Load if cs.last_line == line => Some(cs.level_ps[0]),
            Kind::Store | Kind::Modify if cs.last_line == line && cs.last_dirty => {
                Some(cs.level_ps[0])
            }
            Kind::IFetch if cs.last_iline == line => Some(cs.l1i_ps),
            _ => None,
        }
    }

    /// What the full path would still do for an access [`Engine::shortcut`]
    /// answers: a write's false-sharing bookkeeping.
    #[inline(always)]
    fn shortcut_effect(&mut self, core: usize, a: &Access) {
        if matches!(a.kind, Kind::Store | Kind::Modify) {
            let off = a.addr & ((1 << self.line_bits) - 1);
            let line = a.addr >> self.line_bits;
            self.note_write(core, line, off, off + (a.size as u64).max(1));
        }
    }

    /// Applies one access at time `t`; returns (latency ps, where served).
    fn access(&mut self, core: usize, a: &Access, t: u64, pc: Option<u64>) -> (u64, Served) {
        let first = a.addr >> self.line_bits;
        let last = a.addr.saturating_add(a.size.max(1) as u64 - 1) >> self.line_bits;
        if let Some(lat) = self.shortcut(core, a) {
            self.shortcut_effect(core, a);
            return (lat, Served::Private(0));
        }
        let result = self.access_lines(core, a, t, pc, first, last);
        let no_pf = self.pf.is_empty();
        let cs = &mut self.cores[core];
        if a.kind == Kind::IFetch && cs.l1i.is_some() {
            // A fetch through the L1I leaves the L1D alone, except for
            // back-invalidations from the L2, which clear `last_line`.
            cs.last_iline = if first == last && no_pf && cs.l1i_repeat_hit_free {
                first
            } else {
                NO_LINE
            };
            return result;
        }
        cs.last_line = if first == last
            && a.kind != Kind::IFetch
            && no_pf
            && cs.repeat_hit_free
            && !cs.levels.is_empty()
        {
            first
        } else {
            NO_LINE
        };
        // Every write leaves its line dirty in the L1D (write-allocate).
        cs.last_dirty = matches!(a.kind, Kind::Store | Kind::Modify);
        result
    }

    fn access_lines(
        &mut self,
        core: usize,
        a: &Access,
        t: u64,
        pc: Option<u64>,
        first: u64,
        last: u64,
    ) -> (u64, Served) {
        let mut lat = 0;
        let mut served = Served::Private(0);
        let lines = if last == first { 1 } else { LINE_STRADDLE_MAX };
        for k in 0..lines as u64 {
            let line = first + k;
            let byte_off = if k == 0 {
                a.addr & ((1 << self.line_bits) - 1)
            } else {
                0
            };
            let byte_end = if k == 0 && lines == 1 {
                byte_off + a.size as u64
            } else if k == 0 {
                1 << self.line_bits
            } else {
                (a.addr + a.size as u64) & ((1 << self.line_bits) - 1)
            };
            let (mut l, s) =
                self.access_line(core, a.kind, line, byte_off, byte_end.max(byte_off + 1), t);
            if a.kind != Kind::IFetch && !self.pf.is_empty() {
                l = self.prefetch_after(core, a, line, s, l, t, pc);
            }
            if l >= lat {
                lat = l;
                served = s;
            }
        }
        (lat, served)
    }

    /// Prefetch accounting and issue for one demand data line, for every
    /// attached prefetcher. Returns the demand's latency, raised if it used
    /// a prefetch still in flight or a prefetcher spent time deciding.
    #[allow(clippy::too_many_arguments)]
    fn prefetch_after(
        &mut self,
        core: usize,
        a: &Access,
        line: u64,
        s: Served,
        lat: u64,
        t: u64,
        pc: Option<u64>,
    ) -> u64 {
        let mut lat = lat;
        for k in 0..self.pf.len() {
            let slot = &mut self.pf[k];
            let hit_at_level = matches!(s, Served::Private(h) if (h as usize) <= slot.level);
            let mut covered = false;
            if let Some(&(ready, who)) = slot.lines.get(&line)
                && who as usize == core
            {
                slot.lines.remove(&line);
                if hit_at_level {
                    covered = true;
                    slot.stats.useful += 1;
                    if ready > t {
                        slot.stats.late += 1;
                        lat = lat.max(ready - t);
                    }
                } else {
                    // Gone from the level before its use.
                    slot.stats.useless += 1;
                    slot.stats.early += 1;
                }
            }
            if !hit_at_level && !covered {
                slot.stats.demand_misses += 1;
            }
            // A prefetcher sees the accesses that reach its level (as in
            // ChampSim): all of them at L1D, the L1D's misses at L2, ...
            let reached = match s {
                Served::Private(h) => h as usize >= slot.level,
                _ => true,
            };
            if !reached && !covered {
                continue;
            }
            let seen = Seen {
                core,
                pc,
                addr: a.addr,
                miss: !hit_at_level,
                prefetch_hit: covered,
                write: matches!(a.kind, Kind::Store | Kind::Modify),
            };
            // A prefetcher that computes (a learned one) stalls its core.
            lat += self.consult(k, core, seen, line, t);
        }
        lat
    }

    /// Shows prefetcher `k` one access and issues the lines it names;
    /// returns the simulated time it spent deciding. Line buffers come from
    /// a pool (consulting nests: a prefetch request is shown to the levels
    /// below), so steady state allocates nothing.
    fn consult(&mut self, k: usize, core: usize, seen: Seen, line: u64, t: u64) -> u64 {
        let mut want = self.pf_bufs.pop().unwrap_or_default();
        want.clear();
        self.pf[k].p.on_access(seen, line, &mut want);
        let cost = self.pf[k].p.take_cost_ps();
        self.pf[k].stats.predict_cost_ps += cost;
        for &target in &want {
            self.issue_prefetch(k, core, target, t);
        }
        self.pf_bufs.push(want);
        cost
    }

    /// Brings `line` into `core`'s level of prefetcher `k` (and the levels
    /// below it) unless it is already there, in flight, or modified in
    /// another core.
    fn issue_prefetch(&mut self, k: usize, core: usize, line: u64, t: u64) {
        let lvl = self.pf[k].level;
        if self.cores[core].levels[..=lvl]
            .iter()
            .any(|c| c.contains(line))
            || self.pf[k].lines.contains_key(&line)
        {
            return;
        }
        if let Some(e) = self.dir.get(line)
            && e.owner != NO_AGENT
            && e.owner as usize != core
        {
            return;
        }
        // The request passes the levels below: their prefetchers see it (as
        // ChampSim's L2 prefetcher sees the L1's prefetch requests).
        for j in 0..self.pf.len() {
            if self.pf[j].level > lvl {
                self.observe_prefetch(j, core, line, t);
            }
        }
        let node = self.cores[core].node as usize;
        let nlev = self.cores[core].levels.len();
        // A private level below the prefetch level has it: an on-chip copy
        // up, at that level's latency, no memory traffic.
        if let Some(h) = (lvl + 1..nlev).find(|&i| self.cores[core].levels[i].contains(line)) {
            let latency = self.cores[core].level_ps[h];
            self.pf[k].stats.issued += 1;
            for i in (lvl..h).rev() {
                if let Some(v) = self.cores[core].levels[i].fill(line, false) {
                    self.evicted_private(core, i, v.block, v.dirty, t);
                }
            }
            self.pf[k].lines.insert(line, (t + latency, core as u16));
            return;
        }
        // Beyond the private levels: only as many in flight as the queue holds.
        if let Some(limit) = self.cfg.prefetch_queue {
            let q = &mut self.pf[k].inflight[core];
            while q.peek().is_some_and(|&Reverse(d)| d <= t) {
                q.pop();
            }
            if q.len() >= limit.max(1) {
                self.pf[k].stats.dropped += 1;
                return;
            }
        }
        let latency = if self.llc[node]
            .as_mut()
            .is_some_and(|c| c.probe(line, false))
        {
            self.llc_ps[node]
        } else {
            let home = self.home_of(line, node, t);
            let l = self.memory_read(node, home, line, t);
            self.fill_llc(node, line, false, t);
            l
        };
        if self.cfg.prefetch_queue.is_some() {
            self.pf[k].inflight[core].push(Reverse(t + latency));
        }
        self.pf[k].stats.issued += 1;
        self.pf[k].stats.extra_bytes += 1 << self.line_bits;
        self.dir.entry(line).sharers.insert(core);
        // Fill the prefetch level and every level below it (inclusion).
        for i in (lvl..nlev).rev() {
            if let Some(v) = self.cores[core].levels[i].fill(line, false) {
                self.evicted_private(core, i, v.block, v.dirty, t);
            }
        }
        self.pf[k].lines.insert(line, (t + latency, core as u16));
    }

    fn access_line(
        &mut self,
        core: usize,
        kind: Kind,
        line: u64,
        off: u64,
        end: u64,
        t: u64,
    ) -> (u64, Served) {
        let write = matches!(kind, Kind::Store | Kind::Modify);
        let instr = kind == Kind::IFetch;
        let node = self.cores[core].node as usize;
        // 1. Private levels.
        let nlev = self.cores[core].levels.len();
        let first_is_l1i = instr && self.cores[core].l1i.is_some();
        let mut hit_level: Option<usize> = None;
        let mut was_dirty = false;
        // The line's directory entry, once looked up.
        let mut ent = None;
        {
            let cs = &mut self.cores[core];
            let start = if first_is_l1i { 1 } else { 0 };
            if first_is_l1i && cs.l1i.as_mut().expect("l1i present").probe(line, false) {
                hit_level = Some(0);
            }
            if hit_level.is_none() {
                for i in start..nlev {
                    if i >= 1 && ent.is_none() {
                        // Below the first level, the directory decides: a
                        // core holds a line in some private level exactly
                        // when it holds it in the last (inclusion), and then
                        // it is a sharer. Not a sharer: a miss everywhere,
                        // without the probes.
                        let e = self.dir.copied(line);
                        ent = Some(e);
                        if !e.sharers.contains(core) {
                            break;
                        }
                    }
                    // Mark dirty only in the first data level; lower levels
                    // learn of it on write-back.
                    if let Some(d) = cs.levels[i].probe_ex(line, write && i == 0) {
                        hit_level = Some(i);
                        was_dirty = d;
                        break;
                    }
                }
            }
        }
        if let Some(h) = hit_level {
            let mut lat = if first_is_l1i && h == 0 {
                self.cores[core].l1i_ps
            } else {
                self.cores[core].level_ps[h]
            };
            // Modified (dirty anywhere in the core's levels) means exclusive.
            let exclusive = write
                && (was_dirty
                    || self.cores[core].levels[1..]
                        .iter()
                        .any(|c| c.is_dirty(line)));
            if write && !exclusive {
                lat += self.upgrade(core, line, t);
            }
            if write {
                self.note_write(core, line, off, end);
            }
            // Fill the levels above the hit level.
            if h > 0 {
                self.fill_private(core, line, write, h, instr, t);
            }
            return (lat, Served::Private(h as u8));
        }
        // 2. Private miss: directory, then LLC, then memory.
        let home = self.home_of(line, node, t);
        let ent = ent.unwrap_or_else(|| self.dir.copied(line));
        let me = core;
        let mut lat;
        let served;
        if ent.owner != NO_AGENT && ent.owner as usize != me {
            let o = ent.owner as usize;
            let onode = self.cores[o].node as usize;
            lat = self.c2c_ps + self.m.route_ps[node][onode];
            self.counters.cache_to_cache += 1;
            served = Served::Remote;
            let e = self.dir.entry(line);
            if write {
                e.sharers = Agents::one(me);
                e.owner = me as u16;
                self.invalidate_agent(o, line, t);
                self.count_invalidations(1, t);
            } else {
                e.sharers.insert(me);
                e.owner = NO_AGENT;
                // MESI: the owner's modified copy goes back to memory as it becomes shared.
                let owner = &mut self.cores[o];
                if owner.last_line == line {
                    owner.last_dirty = false;
                }
                let was_dirty = owner
                    .levels
                    .iter_mut()
                    .fold(false, |d, c| c.clean(line) | d);
                if was_dirty {
                    self.write_back(onode, line, t);
                }
            }
        } else {
            let mut inv_lat = 0;
            if write {
                // Other cores' copies (from the directory) and other nodes'
                // LLC copies (by probing) are invalidated.
                let mut far = 0;
                let mut count = 0;
                // `ent` is a copy: iterating it while invalidating allocates nothing.
                for a in ent.sharers.iter().filter(|&a| a != me) {
                    far = far.max(self.m.route_ps[node][self.cores[a].node as usize]);
                    self.invalidate_agent(a, line, t);
                    count += 1;
                }
                for x in 0..self.llc.len() {
                    if x != node
                        && self.llc[x]
                            .as_mut()
                            .is_some_and(|c| c.invalidate(line).is_some())
                    {
                        far = far.max(self.m.route_ps[node][x]);
                        count += 1;
                    }
                }
                if count > 0 {
                    inv_lat = self.c2c_ps + far;
                    self.count_invalidations(count, t);
                }
            }
            let llc_hit = self.llc[node]
                .as_mut()
                .is_some_and(|c| c.probe(line, false));
            if llc_hit {
                lat = self.llc_ps[node];
                served = Served::Llc;
                if write {
                    // The core takes the line modified; the LLC copy would be stale.
                    if let Some(c) = self.llc[node].as_mut() {
                        c.invalidate(line);
                    }
                }
            } else {
                lat = self.memory_read(node, home, line, t);
                served = if home == node {
                    Served::LocalMem
                } else {
                    Served::RemoteMem
                };
                if !write {
                    self.fill_llc(node, line, false, t);
                }
            }
            lat = lat.max(inv_lat);
            let e = self.dir.entry(line);
            if write {
                e.sharers = Agents::one(me);
                e.owner = me as u16;
            } else {
                e.sharers.insert(me);
                if e.owner == me as u16 {
                    e.owner = NO_AGENT;
                }
            }
        }
        if write {
            self.note_write(core, line, off, end);
        }
        self.fill_private(core, line, write, nlev, instr, t);
        (lat, served)
    }

    /// A write to a clean private copy: invalidate every other copy.
    fn upgrade(&mut self, core: usize, line: u64, t: u64) -> u64 {
        let node = self.cores[core].node as usize;
        let ent = self.dir.copied(line);
        let mut far = 0;
        let mut count = 0;
        for a in ent.sharers.iter().filter(|&a| a != core) {
            far = far.max(self.m.route_ps[node][self.cores[a].node as usize]);
            self.invalidate_agent(a, line, t);
            count += 1;
        }
        for x in 0..self.llc.len() {
            let Some(c) = self.llc[x].as_mut() else {
                continue;
            };
            // The own node's LLC copy goes stale silently; others are invalidations.
            if c.invalidate(line).is_some() && x != node {
                far = far.max(self.m.route_ps[node][x]);
                count += 1;
            }
        }
        let mut lat = 0;
        if count > 0 {
            lat = self.c2c_ps + far;
            self.counters.upgrades += 1;
            self.count_invalidations(count, t);
        }
        let e = self.dir.entry(line);
        e.sharers = Agents::one(core);
        e.owner = core as u16;
        lat
    }

    fn count_invalidations(&mut self, n: u64, t: u64) {
        self.counters.invalidations += n;
        self.window(t).invalidations += n;
    }

    /// Tracks written bytes per line to detect false sharing: a write by a
    /// different core than the last writer, to bytes the last writer did not
    /// write, marks the line falsely shared.
    fn note_write(&mut self, core: usize, line: u64, off: u64, end: u64) {
        let shift = self.mask_shift;
        let lo = off >> shift;
        let hi = ((end - 1) >> shift).min(63);
        let mask = if hi - lo == 63 {
            u64::MAX
        } else {
            ((1u64 << (hi - lo + 1)) - 1) << lo
        };
        let e = self.dir.entry(line);
        if e.last_writer == core as u16 {
            e.write_mask |= mask;
        } else {
            if e.last_writer != NO_AGENT && e.write_mask & mask == 0 {
                self.counters.false_sharing_events += 1;
                self.false_shared.insert(line, ());
            }
            e.last_writer = core as u16;
            e.write_mask = mask;
        }
    }

    /// Removes `line` from a core's private levels. The directory entry is
    /// the caller's: every caller is a write that then makes the writer the
    /// line's only sharer and owner.
    fn invalidate_agent(&mut self, agent: usize, line: u64, _t: u64) {
        let cs = &mut self.cores[agent];
        if cs.last_line == line {
            cs.last_line = NO_LINE;
        }
        if cs.last_iline == line {
            cs.last_iline = NO_LINE;
        }
        for c in cs.levels.iter_mut() {
            c.invalidate(line);
        }
        if let Some(c) = cs.l1i.as_mut().filter(|_| cs.l1i_filled) {
            c.invalidate(line);
        }
        for k in 0..self.pf.len() {
            self.prefetch_lost(k, agent, line);
        }
    }

    /// Drops a directory entry no core holds (unless it carries false-sharing history).
    fn forget_if_unheld(&mut self, line: u64) {
        if let Some(e) = self.dir.get(line)
            && e.sharers.is_empty()
            && e.owner == NO_AGENT
            && (self.false_shared.is_empty() || !self.false_shared.contains_key(&line))
        {
            self.dir.remove(line);
        }
    }

    /// Fills `line` into the private levels above `below` (all levels for a
    /// miss), handling evictions. The caller has probed those levels and
    /// missed in each.
    fn fill_private(
        &mut self,
        core: usize,
        line: u64,
        write: bool,
        below: usize,
        instr: bool,
        t: u64,
    ) {
        let nlev = self.cores[core].levels.len();
        // Lower levels first, so inclusion holds while upper levels fill.
        for i in (1..below.min(nlev)).rev() {
            let v = self.cores[core].levels[i].fill_absent(line, false);
            if let Some(v) = v {
                self.evicted_private(core, i, v.block, v.dirty, t);
            }
        }
        if instr && self.cores[core].l1i.is_some() {
            self.cores[core].l1i_filled = true;
            let c = self.cores[core].l1i.as_mut().expect("l1i present");
            c.fill(line, false);
            // An L1I victim is clean and still in the levels below: nothing to do.
            if nlev == 0 {
                self.dir.entry(line).sharers.insert(core);
            }
        } else if nlev > 0 && below > 0 {
            let v = self.cores[core].levels[0].fill_absent(line, write);
            if let Some(v) = v {
                self.evicted_private(core, 0, v.block, v.dirty, t);
            }
        } else if nlev > 0 && write {
            self.cores[core].levels[0].fill(line, true);
        }
        if nlev == 0 && self.cores[core].l1i.is_none() {
            // No private caches: the core holds nothing.
            let mut wrote = false;
            if let Some(e) = self.dir.get_mut(line) {
                e.sharers.remove(core);
                if e.owner as usize == core {
                    e.owner = NO_AGENT;
                    wrote = write;
                }
            }
            if wrote {
                let node = self.cores[core].node as usize;
                self.fill_llc_or_memory(node, line, true, t);
            }
            self.forget_if_unheld(line);
        }
    }

    /// Prefetcher `j` sees a prefetch request from a level above it pass
    /// through its level (not a demand: its counts do not change).
    fn observe_prefetch(&mut self, j: usize, core: usize, line: u64, t: u64) {
        let lvl = self.pf[j].level;
        let hit = self.cores[core].levels[..=lvl]
            .iter()
            .any(|c| c.contains(line));
        let seen = Seen {
            core,
            pc: None,
            addr: line << self.line_bits,
            miss: !hit,
            prefetch_hit: false,
            write: false,
        };
        // Not a demand: its decision time is counted, not charged to one.
        self.consult(j, core, seen, line, t);
    }

    /// A line prefetcher `k` brought in left `core`'s level unused: useless, early.
    fn prefetch_lost(&mut self, k: usize, core: usize, block: u64) {
        let slot = &mut self.pf[k];
        if let Some(&(_, who)) = slot.lines.get(&block)
            && who as usize == core
            && !self.cores[core].levels[slot.level].contains(block)
        {
            slot.lines.remove(&block);
            slot.stats.useless += 1;
            slot.stats.early += 1;
        }
    }

    /// A line left private level `i` of `core`.
    fn evicted_private(&mut self, core: usize, i: usize, block: u64, dirty: bool, t: u64) {
        for k in 0..self.pf.len() {
            if self.pf[k].level == i {
                self.prefetch_lost(k, core, block);
            }
        }
        let nlev = self.cores[core].levels.len();
        if i + 1 < nlev {
            // Not the last level: a dirty victim is written into the level below.
            if dirty {
                let v = self.cores[core].levels[i + 1].fill(block, true);
                if let Some(v) = v {
                    self.evicted_private(core, i + 1, v.block, v.dirty, t);
                }
            }
            return;
        }
        // Last private level: back-invalidate the levels above (inclusion).
        let mut dirty = dirty;
        {
            let cs = &mut self.cores[core];
            for c in cs.levels[..i].iter_mut() {
                if let Some(d) = c.invalidate(block) {
                    dirty |= d;
                }
            }
            if cs.last_line == block {
                cs.last_line = NO_LINE;
            }
            if let Some(c) = cs.l1i.as_mut().filter(|_| cs.l1i_filled) {
                c.invalidate(block);
            }
            if cs.last_iline == block {
                cs.last_iline = NO_LINE;
            }
        }
        let fs = &self.false_shared;
        self.dir
            .release(block, core, |l| !fs.is_empty() && fs.contains_key(&l));
        if dirty {
            let node = self.cores[core].node as usize;
            self.fill_llc_or_memory(node, block, true, t);
        }
    }

    fn fill_llc_or_memory(&mut self, node: usize, line: u64, dirty: bool, t: u64) {
        if self.llc[node].is_some() {
            self.fill_llc(node, line, dirty, t);
        } else if dirty {
            self.write_back(node, line, t);
        }
    }

    /// Puts a line into a node's LLC, handling the victim.
    fn fill_llc(&mut self, node: usize, line: u64, dirty: bool, t: u64) {
        let Some(c) = self.llc[node].as_mut() else {
            return;
        };
        if let Some(v) = c.fill(line, dirty)
            && v.dirty
        {
            self.write_back(node, v.block, t);
        }
    }

    fn channel_of(&self, home: usize, line: u64) -> usize {
        let n = self.channels[home].len();
        let addr = line << self.line_bits;
        ((addr >> self.interleave_bits[home]) % n as u64) as usize
    }

    /// The home node of a line's page, placing the page on first touch.
    fn home_of(&mut self, line: u64, from: usize, _t: u64) -> usize {
        let page = (line << self.line_bits) >> self.page_bits;
        if self.last_page.0 == page {
            return self.last_page.1 as usize;
        }
        if let Some(&h) = self.pages.get(&page) {
            self.last_page = (page, h);
            return h as usize;
        }
        let mut h = self.placement.place(page, from as u32, self.m) as usize;
        if h >= self.m.nodes() || self.channels[h].is_empty() {
            // A policy naming a node without memory: fall back to the nearest memory node.
            h = self.nearest_memory(from);
        }
        self.pages.insert(page, h as u32);
        self.last_page = (page, h as u32);
        self.counters.pages_on_node[h] += 1;
        h
    }

    fn nearest_memory(&self, from: usize) -> usize {
        (0..self.m.nodes())
            .filter(|&j| !self.channels[j].is_empty())
            .min_by_key(|&j| (self.m.route_ps[from][j], j))
            .unwrap_or(0)
    }

    /// One line through its channel at `home` and over the links from node
    /// `a` to node `b` (home → reader for a read, writer → home for a
    /// write-back), counted in the time series; returns the queueing waits.
    fn carry_line(&mut self, home: usize, line: u64, a: usize, b: usize, t: u64) -> u64 {
        let line_bytes = 1u64 << self.line_bits;
        let ch = self.channel_of(home, line);
        let mut wait = self.channels[home][ch].serve(t, self.chan_service_ps[home], line_bytes);
        self.window(t);
        let w = &mut self.windows[self.win_span.2];
        w.channel_bytes[self.chan_base[home] + ch] += line_bytes;
        let m = self.m;
        for &li in &m.route[a][b] {
            wait += self.links[li].serve(t, self.link_service_ps[li], line_bytes);
            self.windows[self.win_span.2].link_bytes[li] += line_bytes;
        }
        wait
    }

    /// A demand read of one line from `home`'s memory by a core on `node`.
    fn memory_read(&mut self, node: usize, home: usize, line: u64, t: u64) -> u64 {
        let wait = self.carry_line(home, line, home, node, t);
        self.counters.mem_reads += 1;
        if home == node {
            self.counters.node_local[node] += 1;
        } else {
            self.counters.node_remote[node] += 1;
        }
        let page = (line << self.line_bits) >> self.page_bits;
        let seen = Observed {
            page,
            from: node as u32,
            home: home as u32,
            now_ps: t,
        };
        if let Some(dest) = self.placement.on_memory_access(seen, self.m) {
            self.migrate(page, home, dest as usize, t);
        }
        self.mem_ps[home] + self.m.route_ps[node][home] + wait
    }

    /// A posted write of one dirty line to its home memory from `node`.
    fn write_back(&mut self, node: usize, line: u64, t: u64) {
        let home = self.home_of(line, node, t);
        self.carry_line(home, line, node, home, t);
        self.counters.mem_writebacks += 1;
    }

    /// Moves a page: read at the old home, across the route, written at the new one.
    fn migrate(&mut self, page: u64, from: usize, to: usize, t: u64) {
        if to == from || to >= self.m.nodes() || self.channels[to].is_empty() {
            return;
        }
        let bytes = self.m.spec.page_size;
        let base_line = (page << self.page_bits) >> self.line_bits;
        let ch_from = self.channel_of(from, base_line);
        let gb_from = self.m.spec.nodes[from]
            .memory
            .as_ref()
            .map_or(1.0, |m| m.channel_gbps);
        self.channels[from][ch_from].serve(t, transfer_ps(bytes, gb_from), bytes);
        for k in 0..self.m.route[from][to].len() {
            let li = self.m.route[from][to][k];
            let gb = self.m.spec.links[li].bandwidth_gbps;
            self.links[li].serve(t, transfer_ps(bytes, gb), bytes);
            self.window(t).link_bytes[li] += bytes;
        }
        let ch_to = self.channel_of(to, base_line);
        let gb_to = self.m.spec.nodes[to]
            .memory
            .as_ref()
            .map_or(1.0, |m| m.channel_gbps);
        self.channels[to][ch_to].serve(t, transfer_ps(bytes, gb_to), bytes);
        self.pages.insert(page, to as u32);
        if self.last_page.0 == page {
            self.last_page.1 = to as u32;
        }
        self.counters.pages_on_node[from] -= 1;
        self.counters.pages_on_node[to] += 1;
        self.counters.migrations += 1;
        self.counters.migration_bytes += bytes;
    }

    /// The results of the run so far.
    pub fn summary(&self) -> Summary {
        results::summarize(self)
    }

    /// Accesses completed and the sum of their latencies (ps), over all
    /// threads since the start (not reset by [`Engine::clear_stats`]) —
    /// cheap enough to read after every few hundred accesses.
    pub fn latency_totals(&self) -> (u64, u128) {
        self.threads
            .iter()
            .fold((0, 0), |(n, ps), t| (n + t.accesses, ps + t.latency_ps))
    }

    /// Per-thread (id, core, accesses, mean latency ps, last completion ps).
    pub(crate) fn thread_stats(&self) -> Vec<(u32, usize, u64, f64, u64)> {
        self.threads
            .iter()
            .map(|t| {
                let mean = if t.accesses == 0 {
                    0.0
                } else {
                    t.latency_ps as f64 / t.accesses as f64
                };
                (t.id, t.core, t.accesses, mean, t.last_done)
            })
            .collect()
    }

    pub(crate) fn false_sharing_lines(&self) -> u64 {
        self.false_shared.len() as u64
    }
}
