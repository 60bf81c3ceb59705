//! The run's books: counters, the data-access latency histogram and the
//! per-window time series. Written on every access, read only by
//! `summary.rs`; nothing here decides anything in the model.

use std::borrow::Cow;

use hdrhistogram::Histogram;
use traces::{Access, Kind};

use crate::latency::Latencies;
use crate::machine::Machine;

use super::cores::Served;

/// Per-window time series accumulator: the result type itself, filled in place.
pub(super) type Window = crate::results::WindowRow;

/// Counters of a run.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Counters {
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
    /// Data accesses by where their translation was found: each TLB
    /// level, then the walk (empty without `[core.tlb]`).
    pub tlb: Vec<u64>,
}

/// A run of shortcut hits of one thread, gathered by the fast paths
/// (`shortcuts.rs`) and counted at once by [`Stats::record_hits`].
#[derive(Default)]
pub(super) struct HitRun {
    pub data: u64,
    pub ifetches: u64,
    /// Latency of the fetches (the data accesses all take the L1D's).
    pub ifetch_ps: u64,
    pub last_issue: u64,
    pub last_done: u64,
}

/// How the time series is kept.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct WindowLimits {
    /// Keep one (no time series: every count goes to one scratch window).
    pub keep: bool,
    /// Most windows kept; one more is an overflow.
    pub max: usize,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Stats {
    pub counters: Counters,
    pub hist: Latencies,
    pub window_ps: u64,
    /// The windows that saw anything, in time order (sparse: a quiet
    /// stretch of simulated time costs nothing); without a time series, one
    /// scratch window.
    pub windows: Vec<Window>,
    /// The last window used: [start, end) in ps and its index in `windows`.
    pub win_span: (u64, u64, usize),
    limits: WindowLimits,
    /// The time series needed more than `limits.max` windows.
    pub overflow: bool,
    /// Completion time of the last access to complete.
    pub elapsed_ps: u64,
    /// Private data levels (at least one slot: a machine without caches
    /// counts its accesses in slot 0).
    levels: usize,
    channels: usize,
    links: usize,
}

impl Stats {
    /// Scratch books for warmed records (`sampled.rs`): no time series.
    pub fn scratch(m: &Machine, queues: (usize, usize), window_ns: u64) -> Stats {
        let limits = WindowLimits {
            keep: false,
            max: 1,
        };
        Stats::new(m, queues, window_ns, limits)
    }

    /// Books for `m`, with `(channels, links)` memory channels and links
    /// (as [`super::memory::Memory::queue_counts`] gives them).
    pub fn new(
        m: &Machine,
        (channels, links): (usize, usize),
        window_ns: u64,
        limits: WindowLimits,
    ) -> Stats {
        let levels = m.spec.core.caches.len().max(1);
        let n = m.nodes();
        let mut s = Stats {
            counters: Counters {
                served: vec![0; levels + 4],
                tlb: vec![0; m.spec.core.tlb.as_ref().map_or(0, |t| t.levels.len() + 1)],
                node_local: vec![0; n],
                node_remote: vec![0; n],
                pages_on_node: vec![0; n],
                ..Counters::default()
            },
            hist: Latencies::new(),
            window_ps: window_ns.clamp(1, u64::MAX / 1000) * 1000,
            windows: Vec::new(),
            win_span: (0, 0, 0),
            limits,
            overflow: false,
            elapsed_ps: 0,
            levels,
            channels,
            links,
        };
        s.reset_windows();
        s
    }

    /// Restored books (a checkpoint's) have this fresh one's shape: the
    /// same slots, nodes, channels, links, window and limits, and every
    /// window sized for them.
    pub fn fits(&self, restored: &Stats) -> bool {
        let (c, r) = (&self.counters, &restored.counters);
        let (from, to, i) = restored.win_span;
        let span_ok = from >= to || i < restored.windows.len();
        c.served.len() == r.served.len()
            && c.tlb.len() == r.tlb.len()
            && c.node_local.len() == r.node_local.len()
            && c.node_remote.len() == r.node_remote.len()
            && c.pages_on_node.len() == r.pages_on_node.len()
            && self.window_ps == restored.window_ps
            && (self.levels, self.channels, self.links)
                == (restored.levels, restored.channels, restored.links)
            && (self.limits.keep, self.limits.max) == (restored.limits.keep, restored.limits.max)
            && span_ok
            && restored
                .windows
                .iter()
                .all(|w| w.channel_bytes.len() == self.channels && w.link_bytes.len() == self.links)
    }

    /// No windows yet (or, without a time series, the one scratch window
    /// that spans all time).
    fn reset_windows(&mut self) {
        self.windows.clear();
        self.win_span = (0, 0, 0);
        if !self.limits.keep || self.overflow {
            self.windows.push(self.new_window(0));
            self.win_span = (0, u64::MAX, 0);
        }
    }

    fn new_window(&self, start_ns: u64) -> Window {
        Window {
            start_ns,
            channel_bytes: vec![0; self.channels],
            link_bytes: vec![0; self.links],
            ..Window::default()
        }
    }

    /// The windows kept (none without a time series).
    pub fn series(&self) -> &[Window] {
        if self.limits.keep && !self.overflow {
            &self.windows
        } else {
            &[]
        }
    }

    /// The most windows kept.
    pub fn max_windows(&self) -> usize {
        self.limits.max
    }

    /// Forgets everything counted so far but where pages live.
    pub fn clear(&mut self) {
        let n = self.counters.node_local.len();
        self.counters = Counters {
            served: vec![0; self.counters.served.len()],
            tlb: vec![0; self.counters.tlb.len()],
            node_local: vec![0; n],
            node_remote: vec![0; n],
            pages_on_node: self.counters.pages_on_node.clone(),
            ..Counters::default()
        };
        self.hist.reset();
        self.reset_windows();
    }

    /// The window holding time `t`. Times mostly move forward: the last
    /// window's span answers without a division.
    #[inline(always)]
    pub fn window(&mut self, t: u64) -> &mut Window {
        if t >= self.win_span.0 && t < self.win_span.1 {
            let w = self.win_span.2;
            return &mut self.windows[w];
        }
        self.window_at(t)
    }

    #[cold]
    #[inline(never)]
    fn window_at(&mut self, t: u64) -> &mut Window {
        let w = t / self.window_ps;
        let start = w * self.window_ps;
        let start_ns = start / 1000;
        // Time moves forward: a new window goes at the end; an earlier one
        // (rare) is found or inserted in order.
        let pos = match self.windows.last() {
            Some(last) if last.start_ns >= start_ns => {
                self.windows.binary_search_by_key(&start_ns, |x| x.start_ns)
            }
            _ => Err(self.windows.len()),
        };
        let i = match pos {
            Ok(i) => i,
            Err(i) if self.windows.len() < self.limits.max => {
                let win = self.new_window(start_ns);
                self.windows.insert(i, win);
                i
            }
            Err(_) => {
                // Over the limit: stop keeping the series (the run fails
                // with `EngineError::TooManyWindows` at the end of this feed).
                self.overflow = true;
                self.reset_windows();
                return &mut self.windows[0];
            }
        };
        self.win_span = (start, start.saturating_add(self.window_ps), i);
        &mut self.windows[i]
    }

    /// Counts one access issued at `t`, of latency `lat`, served by `served`.
    #[inline(always)]
    pub fn record(&mut self, a: &Access, t: u64, lat: u64, served: Served) {
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

    /// Counts a run of L1 hits at once, as [`Stats::record`] would one by
    /// one (data hits take the L1D's latency `data_ps`); returns the sum of
    /// the run's latencies.
    pub fn record_hits(&mut self, run: &HitRun, data_ps: u64) -> u128 {
        let n = run.data + run.ifetches;
        let lat_ps = run.data as u128 * data_ps as u128 + run.ifetch_ps as u128;
        self.elapsed_ps = self.elapsed_ps.max(run.last_done);
        let c = &mut self.counters;
        c.accesses += n;
        c.ifetches += run.ifetches;
        c.data_accesses += run.data;
        c.latency_sum_ps += run.data as u128 * data_ps as u128;
        c.served[0] += n;
        // A shortcut's load is on the page its core translated last.
        if let Some(first) = c.tlb.first_mut() {
            *first += run.data;
        }
        if run.data > 0 {
            self.hist.record_n(data_ps.max(1), run.data);
        }
        let w = self.window(run.last_issue);
        w.accesses += n;
        w.latency_ps += lat_ps;
        w.l1_hits += n;
        lat_ps
    }

    pub fn count_invalidations(&mut self, n: u64, t: u64) {
        self.counters.invalidations += n;
        self.window(t).invalidations += n;
    }

    /// The data-access latency histogram (ps).
    pub fn latency_hist(&self) -> Cow<'_, Histogram<u64>> {
        self.hist.histogram()
    }

    /// Index into `Counters::served` of a level.
    #[inline(always)]
    pub fn served_slot(&self, s: Served) -> usize {
        let p = self.levels;
        match s {
            Served::Private(i) => i as usize,
            Served::Llc => p,
            Served::Remote => p + 1,
            Served::LocalMem => p + 2,
            Served::RemoteMem => p + 3,
        }
    }
}
