//! Memory beyond the caches: each node's channels (FCFS [`Queue`]s,
//! line-interleaved), the links between nodes (FCFS too), which node's
//! memory holds each page, and the placement policy that decides it.
//!
//! Its own structure so that the miss path borrows it apart from the cores
//! and the directory: a method here sees the machine, the statistics it
//! adds to, and nothing else of the engine.

use crate::checkpoint::CheckpointError;
use crate::directory::U64Map;
use crate::machine::{Machine, ns_to_ps, transfer_ps};
use crate::policy::{PageView, Placement};
use crate::queue::Queue;

use super::stats::Stats;

pub(super) struct Memory {
    pub channels: Vec<Vec<Queue>>,
    chan_service_ps: Vec<u64>,
    /// Per node: the index of its first channel among all channels.
    pub chan_base: Vec<usize>,
    mem_ps: Vec<u64>,
    interleave_bits: Vec<u32>,
    pub links: Vec<Queue>,
    link_service_ps: Vec<u64>,
    /// Home node by (virtual) page.
    pages: U64Map<u32>,
    /// The last page looked up and its node (streams touch one page many times).
    last_page: (u64, u32),
    pub placement: Box<dyn Placement>,
    line_bits: u32,
    page_bits: u32,
    /// Lines come in physical; pages are placed, looked up and moved
    /// virtual, as the kernel places a program's pages (`crate::frames`).
    frames: crate::frames::Frames,
    /// From this time (ps) on, channels serve a line this many times
    /// slower ([`Memory::slow_after`]; a test's change of the machine).
    slow: Option<(u64, u64)>,
    /// Functional warming (`sampled.rs`): lines cross no channel or link.
    pub functional: bool,
}

/// [`Memory`]'s state in a checkpoint; the rest follows from the machine.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct MemoryState {
    channels: Vec<Vec<Queue>>,
    links: Vec<Queue>,
    pages: U64Map<u32>,
    last_page: (u64, u32),
    slow: Option<(u64, u64)>,
    functional: bool,
    /// The placement policy's own state.
    placement: Vec<u8>,
}

impl Memory {
    /// (memory channels in all, links): what the books keep a slot for.
    pub fn queue_counts(&self) -> (usize, usize) {
        (self.channels.iter().map(Vec::len).sum(), self.links.len())
    }

    pub fn new(m: &Machine, placement: Box<dyn Placement>) -> Memory {
        let s = &m.spec;
        let line = s.line_size;
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
        Memory {
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
            pages: U64Map::default(),
            last_page: (u64::MAX, 0),
            placement,
            line_bits: line.trailing_zeros(),
            page_bits: s.page_size.trailing_zeros(),
            frames: crate::frames::Frames::new(s.frames, s.page_size),
            slow: None,
            functional: false,
        }
    }

    /// From `at_ps` on, every channel serves a line `factor` times slower:
    /// a line whose service starts then or later takes `factor` times as
    /// long, one in service across `at_ps` its remainder. Page migrations
    /// keep their speed.
    pub fn slow_after(&mut self, at_ps: u64, factor: u32) {
        self.slow = Some((at_ps, factor as u64));
    }

    /// A line's service time on channel `ch` of `home` for a request
    /// arriving at `t` (see [`Memory::slow_after`]). Saturating, as the
    /// queue's clock is.
    #[inline]
    fn channel_service(&self, home: usize, ch: usize, t: u64) -> u64 {
        let svc = self.chan_service_ps[home];
        let Some((at, k)) = self.slow else {
            return svc;
        };
        let start = t.max(self.channels[home][ch].busy_until());
        let end = start.saturating_add(svc);
        if start >= at {
            svc.saturating_mul(k)
        } else if end > at {
            (at - start).saturating_add((end - at).saturating_mul(k))
        } else {
            svc
        }
    }

    /// Empties every channel and link queue (state and sums): after an
    /// untimed warm-up, whose requests all came at time 0.
    pub fn reset_queues(&mut self) {
        for q in self
            .channels
            .iter_mut()
            .flatten()
            .chain(self.links.iter_mut())
        {
            *q = Queue::default();
        }
    }

    /// What a checkpoint keeps: everything that changes during a run.
    pub fn state(&self) -> MemoryState {
        MemoryState {
            channels: self.channels.clone(),
            links: self.links.clone(),
            pages: self.pages.clone(),
            last_page: self.last_page,
            slow: self.slow,
            functional: self.functional,
            placement: self.placement.save_state(),
        }
    }

    /// Takes back what [`Memory::state`] gave, if it has this machine's
    /// channels and links and places pages only on nodes with memory.
    pub fn restore(&mut self, s: MemoryState) -> Result<(), CheckpointError> {
        let dims = |c: &[Vec<Queue>]| c.iter().map(Vec::len).collect::<Vec<_>>();
        let home_ok = |h: u32| self.channels.get(h as usize).is_some_and(|c| !c.is_empty());
        let fits = dims(&s.channels) == dims(&self.channels)
            && s.links.len() == self.links.len()
            && s.pages.values().all(|&h| home_ok(h))
            && (s.last_page.0 == u64::MAX || home_ok(s.last_page.1));
        if !fits {
            return Err(CheckpointError::Malformed {
                what: "memory channels, links or page homes of another machine",
            });
        }
        self.placement.load_state(&s.placement)?;
        self.channels = s.channels;
        self.links = s.links;
        self.pages = s.pages;
        self.last_page = s.last_page;
        self.slow = s.slow;
        self.functional = s.functional;
        Ok(())
    }

    /// Forgets the queues' sums (their state stays).
    pub fn clear_stats(&mut self) {
        for q in self
            .channels
            .iter_mut()
            .flatten()
            .chain(self.links.iter_mut())
        {
            q.clear_stats();
        }
    }

    fn channel_of(&self, home: usize, line: u64) -> usize {
        let n = self.channels[home].len();
        let addr = line << self.line_bits;
        ((addr >> self.interleave_bits[home]) % n as u64) as usize
    }

    /// The (virtual) page of physical line `line`.
    #[inline]
    fn page_of(&self, line: u64) -> u64 {
        self.frames
            .page_of_frame((line << self.line_bits) >> self.page_bits)
    }

    /// The node of the page holding virtual address `addr`, if placed (no
    /// placement happens).
    pub fn node_of(&self, addr: u64) -> Option<u32> {
        self.pages.get(&(addr >> self.page_bits)).copied()
    }

    /// The home node of physical line `line`'s page, placing the page on
    /// first touch.
    #[inline]
    pub fn home_of(&mut self, m: &Machine, stats: &mut Stats, line: u64, from: usize) -> usize {
        let page = self.page_of(line);
        if self.last_page.0 == page {
            return self.last_page.1 as usize;
        }
        if let Some(&h) = self.pages.get(&page) {
            self.last_page = (page, h);
            return h as usize;
        }
        let mut h = self.placement.place(page, from as u32, m) as usize;
        if h >= m.nodes() || self.channels[h].is_empty() {
            // A policy naming a node without memory: fall back to the nearest memory node.
            h = self.nearest_memory(m, from);
        }
        self.pages.insert(page, h as u32);
        self.last_page = (page, h as u32);
        stats.counters.pages_on_node[h] += 1;
        h
    }

    fn nearest_memory(&self, m: &Machine, from: usize) -> usize {
        (0..m.nodes())
            .filter(|&j| !self.channels[j].is_empty())
            .min_by_key(|&j| (m.route_ps[from][j], j))
            .unwrap_or(0)
    }

    /// One line through its channel at `home` and over the links from node
    /// `a` to node `b` (home → reader for a read, writer → home for a
    /// write-back), counted in the time series; returns the queueing waits.
    #[allow(clippy::too_many_arguments)]
    fn carry_line(
        &mut self,
        m: &Machine,
        stats: &mut Stats,
        home: usize,
        line: u64,
        a: usize,
        b: usize,
        t: u64,
    ) -> u64 {
        if self.functional {
            return 0;
        }
        let line_bytes = 1u64 << self.line_bits;
        let ch = self.channel_of(home, line);
        let svc = self.channel_service(home, ch, t);
        let mut wait = self.channels[home][ch].serve(t, svc, line_bytes);
        let w = stats.window(t);
        w.channel_bytes[self.chan_base[home] + ch] += line_bytes;
        for &li in &m.route[a][b] {
            wait =
                wait.saturating_add(self.links[li].serve(t, self.link_service_ps[li], line_bytes));
            w.link_bytes[li] += line_bytes;
        }
        wait
    }

    /// A demand read of one line from `home`'s memory by a core on `node`.
    #[allow(clippy::too_many_arguments)]
    pub fn memory_read(
        &mut self,
        m: &Machine,
        stats: &mut Stats,
        node: usize,
        home: usize,
        line: u64,
        t: u64,
    ) -> u64 {
        let wait = self.carry_line(m, stats, home, line, home, node, t);
        let c = &mut stats.counters;
        c.mem_reads += 1;
        if home == node {
            c.node_local[node] += 1;
        } else {
            c.node_remote[node] += 1;
        }
        let page = self.page_of(line);
        let seen = PageView {
            page,
            from: node as u32,
            home: home as u32,
            now_ps: t,
        };
        if let Some(dest) = self.placement.on_memory_access(seen, m) {
            self.migrate(m, stats, page, home, dest as usize, t);
        }
        // Saturating: a queue that never drains stops the run at the
        // horizon (`run.rs`), it does not wrap the latency.
        self.mem_ps[home]
            .saturating_add(m.route_ps[node][home])
            .saturating_add(wait)
    }

    /// A posted write of one dirty line to its home memory from `node`.
    pub fn write_back(&mut self, m: &Machine, stats: &mut Stats, node: usize, line: u64, t: u64) {
        let home = self.home_of(m, stats, line, node);
        self.carry_line(m, stats, home, line, node, home, t);
        stats.counters.mem_writebacks += 1;
    }

    /// Moves a page: read at the old home, across the route, written at the new one.
    #[allow(clippy::too_many_arguments)]
    fn migrate(
        &mut self,
        m: &Machine,
        stats: &mut Stats,
        page: u64,
        from: usize,
        to: usize,
        t: u64,
    ) {
        if to == from || to >= m.nodes() || self.channels[to].is_empty() {
            return;
        }
        self.pages.insert(page, to as u32);
        if self.last_page.0 == page {
            self.last_page.1 = to as u32;
        }
        let c = &mut stats.counters;
        c.pages_on_node[from] -= 1;
        c.pages_on_node[to] += 1;
        if self.functional {
            // Warming moves the page but carries nothing (`sampled.rs`).
            return;
        }
        let bytes = m.spec.page_size;
        let base_line = self
            .frames
            .line((page << self.page_bits) >> self.line_bits, self.line_bits);
        let ch_from = self.channel_of(from, base_line);
        let gb_from = m.spec.nodes[from]
            .memory
            .as_ref()
            .map_or(1.0, |m| m.channel_gbps);
        self.channels[from][ch_from].serve(t, transfer_ps(bytes, gb_from), bytes);
        for &li in &m.route[from][to] {
            let gb = m.spec.links[li].bandwidth_gbps;
            self.links[li].serve(t, transfer_ps(bytes, gb), bytes);
            stats.window(t).link_bytes[li] += bytes;
        }
        let ch_to = self.channel_of(to, base_line);
        let gb_to = m.spec.nodes[to]
            .memory
            .as_ref()
            .map_or(1.0, |m| m.channel_gbps);
        self.channels[to][ch_to].serve(t, transfer_ps(bytes, gb_to), bytes);
        let c = &mut stats.counters;
        c.migrations += 1;
        c.migration_bytes += bytes;
    }
}
