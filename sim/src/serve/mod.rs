//! The request-level model: an inference service on a NUMA machine.
//!
//! **What runs.** One worker per accelerator (or per core on a machine
//! without accelerators), pinned to a core of the accelerator's node, each
//! with a FIFO queue. A [`Scheduler`] dispatches every arriving request to a
//! worker. An idle worker takes up to `batch` queued requests and runs them
//! as one batch: fetch the batch's data, copy it to the accelerator over
//! PCIe, compute. A request's latency = queueing + data stall + transfer +
//! compute; the time the accelerator sits ready but waiting for data (stall +
//! transfer) is the "c/a parity" bubble.
//!
//! **Data.** Each request looks up `lookups` feature items of its shard
//! (Zipf popularity). Each node keeps a feature cache (a real LRU over item
//! ids, `feature_cache.rs`); a hit is read from the node's own memory,
//! a miss from the shard's home node memory (across the inter-node route if
//! that is another node) for resident items, or from the far tier (object
//! storage) for the rest; either way the item is then cached. A shard whose
//! working state is not in memory anywhere (a shard just (re)deployed by a
//! move) must first fetch that state from the far tier: the cold start.
//!
//! **Bulk transfers are flows, not line events.** Each node's memory (all
//! channels together), each link, each accelerator's PCIe link and the far
//! tier is a FCFS server of bytes ([`crate::queue::Queue`]): a transfer of B
//! bytes occupies it for B / bandwidth, so concurrent requests, background
//! sweeps and remote traffic contend for bandwidth, at a cost of O(1) per
//! transfer.
//!
//! **Background work.** Every `every_requests` arrivals a job streams
//! `sweep_gb` through one node's memory (alternating nodes) and, if it
//! flushes, empties that node's feature cache — the seed's periodic spike.
//!
//! **Moves.** At a given time a shard's home worker changes; the [`Warmup`]
//! policy decides whether the new node pre-reads the shard's state before
//! traffic switches.
//!
//! **Pairing.** Everything about a request (its features, its compute time)
//! comes from its own seed, so runs with different policies on one workload
//! seed are paired request by request. No clock, no I/O: results stream to a
//! callback.
//!
//! **Time** is kept in picoseconds, as in every engine. The model's
//! durations (transfers, compute, latencies, decision costs) are whole
//! nanoseconds — its resolution — computed in ns and held in ps
//! ([`ps_of_ns`]).

mod feature_cache;
mod judged;
mod preload;
mod records;
mod worker;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use traces::workload::{Arrival, ArrivalGen, CdfSampler, WorkloadSpec, zipf_cdf};

use crate::machine::Machine;
use crate::policy::{FeatureSet, Preload, RequestView, Scheduler, Warmup, WorkerView};
use crate::queue::Queue;
use crate::signals::Signals;
use feature_cache::FeatureCache;
pub use judged::{Judged, PROB_BINS};
use judged::{bit, set_bit};
pub use records::{
    BANDWIDTH_BIN_PS, DatasetRow, Decision, MONITOR_WINDOW_PS, RequestRecord, ServeError,
    ServeTotals, WindowTotals,
};
use worker::{Pending, Queued, Scratch, Worker};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    WorkerFree(usize),
    MoveAt(usize),
    WarmupDone(usize),
    /// Preload for (worker, request id).
    Preload(usize, u64),
}

/// A change of the machine at a time (see [`ServeEngine::slow_down_after`]).
#[derive(Clone, Copy, Debug)]
struct SlowDown {
    at_ps: u64,
    node: Option<usize>,
    factor: f64,
}

/// The request-level engine for one workload seed.
pub struct ServeEngine<'a> {
    m: &'a Machine,
    spec: WorkloadSpec,
    sched: Box<dyn Scheduler>,
    warmup: Box<dyn Warmup>,
    preload: Option<Box<dyn Preload>>,
    record: bool,
    /// From this time on, the bandwidth of one node's memory (or, with no
    /// node, of every server) divided by a factor (tests of what policies
    /// can observe: decisions before it must not change).
    slow_down: Option<SlowDown>,
    /// Every dispatch decision, when recorded.
    pub decisions: Vec<Decision>,
    /// Bit `id`: request `id` missed at its batch (when recorded, for an
    /// oracle's paired run).
    outcomes: Option<Vec<u64>>,
    /// The outcomes an oracle preload is told.
    truth: Option<Vec<u64>>,
    record_decisions: bool,
    fset: FeatureSet,
    /// Rows collected when recording a dataset.
    pub dataset: Vec<DatasetRow>,
    workers: Vec<Worker>,
    node_mem: Vec<Queue>,
    node_gbps: Vec<f64>,
    node_lat_ps: Vec<u64>,
    links: Vec<Queue>,
    far: Queue,
    caches: Vec<FeatureCache>,
    /// Reused buffers (no allocation per batch or arrival).
    scratch: Scratch,
    item_cdf: CdfSampler,
    shard_node: Vec<u32>,
    shard_worker: Vec<usize>,
    /// The shard's working state is in memory (on its home node).
    resident: Vec<bool>,
    /// When a state fetch in flight completes: every batch needing the shard waits for it.
    state_ready_at: Vec<u64>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    arrivals_seen: u64,
    /// Per shard: after a move, when traffic switched and the id of the first
    /// request that arrived since (recorded when it completes).
    watch_move: Vec<Option<(u64, Option<u64>)>>,
    pub totals: ServeTotals,
}

/// The monitoring window holding time `t`.
fn window(w: &mut Vec<WindowTotals>, t: u64) -> &mut WindowTotals {
    let i = (t / MONITOR_WINDOW_PS) as usize;
    if w.len() <= i {
        w.resize(i + 1, WindowTotals::default());
    }
    &mut w[i]
}

/// Counts a "will miss" prediction against what happened, in the totals
/// and in the monitoring window of `t`.
fn judge(totals: &mut ServeTotals, t: u64, (predicted, p): (bool, f64), missed: bool) {
    let ok = (predicted == missed) as u64;
    totals.judged.add(p, predicted, missed);
    totals.predictions_correct += ok;
    let win = window(&mut totals.windows, t);
    win.predictions_judged += 1;
    win.predictions_correct += ok;
}

/// A transfer's service time `svc` starting at `start`, with the part of it
/// after the slow-down time `factor` times as long (bandwidth divided by
/// `factor` from then on).
fn stretch(slow_down: Option<(u64, f64)>, start: u64, svc: u64) -> u64 {
    match slow_down {
        Some((at, k)) if start >= at => (svc as f64 * k) as u64,
        Some((at, k)) if start + svc > at => (at - start) + ((start + svc - at) as f64 * k) as u64,
        _ => svc,
    }
}

/// Whole nanoseconds, the model's resolution, in the engine's ps.
fn ps_of_ns(ns: u64) -> u64 {
    ns.saturating_mul(1000)
}

/// The time (ps, whole ns, at least one) `bytes` take at `gbps`.
fn ps_of(bytes: f64, gbps: f64) -> u64 {
    ps_of_ns((bytes / gbps).round().max(1.0) as u64)
}

impl<'a> ServeEngine<'a> {
    /// Sets up workers (one per accelerator, else one per core), caches and
    /// the shards' initial homes (shard s on worker s mod workers).
    pub fn new(
        m: &'a Machine,
        spec: &WorkloadSpec,
        sched: Box<dyn Scheduler>,
        warmup: Box<dyn Warmup>,
    ) -> Result<ServeEngine<'a>, ServeError> {
        spec.validate()
            .map_err(|e| ServeError::Workload(e.problem))?;
        let mut workers = Vec::new();
        for (i, node) in m.spec.nodes.iter().enumerate() {
            let accel: u32 = node.accelerators.iter().map(|a| a.count).sum();
            let pcie = node
                .accelerators
                .first()
                .map_or(f64::INFINITY, |a| a.pcie_gbps);
            let n = if m.spec.nodes.iter().any(|x| !x.accelerators.is_empty()) {
                accel
            } else {
                node.cores
            };
            for _ in 0..n {
                workers.push(Worker {
                    node: i as u32,
                    queue: VecDeque::new(),
                    history: VecDeque::new(),
                    last_batch_ps: 0,
                    pending: None,
                    last_mean_addr: 0.0,
                    pending_cost_ps: 0,
                    signals: Signals::new(i as u32),
                    pcie_gbps: pcie,
                    running: Vec::new(),
                    started_at: 0,
                });
            }
        }
        if workers.is_empty() {
            return Err(ServeError::NoWorkers);
        }
        let nodes = m.nodes();
        let node_gbps: Vec<f64> = m
            .spec
            .nodes
            .iter()
            .map(|n| {
                n.memory
                    .as_ref()
                    .map_or(f64::INFINITY, |mm| mm.channels as f64 * mm.channel_gbps)
            })
            .collect();
        let node_lat_ps = m
            .spec
            .nodes
            .iter()
            .map(|n| {
                n.memory
                    .as_ref()
                    .map_or(0, |mm| ps_of_ns(mm.latency_ns.round() as u64))
            })
            .collect();
        // Feature cache: 16-way, sets rounded up to a power of two.
        let (per_node, shards) = (spec.cache.items_per_node, spec.shards.count as usize);
        let sets = (per_node.max(16) as u64 / 16).next_power_of_two();
        let max_block = spec.request.features.items as u64 * shards as u64;
        let caches = (0..nodes).map(|_| FeatureCache::new(sets, max_block));
        let caches = caches.collect::<Option<_>>();
        let caches = caches.ok_or(ServeError::FeatureCacheTags(per_node, max_block))?;
        let nw = workers.len();
        let shard_worker: Vec<usize> = (0..shards).map(|s| s % nw).collect();
        let shard_node: Vec<u32> = shard_worker.iter().map(|&w| workers[w].node).collect();
        let resident = vec![true; shards];
        let state_ready_at = vec![0; shards];
        let mut e = ServeEngine {
            m,
            item_cdf: CdfSampler::new(zipf_cdf(
                spec.request.features.items,
                spec.request.features.zipf,
            )),
            spec: spec.clone(),
            sched,
            warmup,
            preload: None,
            record: false,
            slow_down: None,
            decisions: Vec::new(),
            outcomes: None,
            truth: None,
            record_decisions: false,
            fset: FeatureSet::default(),
            dataset: Vec::new(),
            workers,
            node_mem: vec![Queue::default(); nodes],
            node_gbps,
            node_lat_ps,
            links: vec![Queue::default(); m.spec.links.len()],
            far: Queue::default(),
            caches,
            scratch: Scratch::default(),
            shard_node,
            shard_worker,
            resident,
            state_ready_at,
            heap: BinaryHeap::new(),
            seq: 0,
            arrivals_seen: 0,
            watch_move: vec![None; shards],
            totals: ServeTotals {
                node_bytes: vec![0; nodes],
                link_bytes: vec![0; m.spec.links.len()],
                ..ServeTotals::default()
            },
        };
        for (i, mv) in spec.moves.iter().enumerate() {
            if mv.to_worker as usize >= nw {
                return Err(ServeError::NoSuchWorker {
                    index: i,
                    worker: mv.to_worker,
                    workers: nw,
                });
            }
            e.push(ps_of_ns((mv.at_s * 1e9) as u64), Ev::MoveAt(i));
        }
        Ok(e)
    }

    /// Attaches a preload policy; its feature set becomes the engine's.
    pub fn set_preload(&mut self, p: Box<dyn Preload>) {
        self.fset = p.features();
        self.preload = Some(p);
    }

    /// The features recorded in datasets (and seen by preload policies).
    pub fn set_features(&mut self, fs: FeatureSet) {
        self.fset = fs;
    }

    /// Keeps each node's memory bytes per `bin_ps` up to `until_ps` (for a
    /// timeline's bandwidth counters: [`ServeTotals::node_bins`]).
    pub fn bin_bandwidth(&mut self, bin_ps: u64, until_ps: u64) {
        self.totals.bin_bandwidth(self.m.nodes(), bin_ps, until_ps);
    }

    /// Records a dataset row per request (features at dispatch, outcome at its batch).
    pub fn record_dataset(&mut self, on: bool) {
        self.record = on;
    }

    /// Records whether each request missed at its batch (see
    /// [`ServeEngine::outcomes`]).
    pub fn record_outcomes(&mut self) {
        self.outcomes = Some(Vec::new());
    }

    /// The recorded outcomes: bit `id % 64` of word `id / 64` is set if
    /// request `id` missed (≥ half its lookups) at its batch.
    pub fn outcomes(&mut self) -> Vec<u64> {
        self.outcomes.take().unwrap_or_default()
    }

    /// The outcomes (from [`ServeEngine::outcomes`] of a paired run) an
    /// oracle preload is told.
    pub fn set_truth(&mut self, bits: Vec<u64>) {
        self.truth = Some(bits);
    }

    /// Records every dispatch decision in [`ServeEngine::decisions`].
    pub fn record_decisions(&mut self, on: bool) {
        self.record_decisions = on;
    }

    /// Changes the machine at `at_ps`: from then on transfers run `factor`
    /// times slower — through `node`'s memory only, or with `None` through
    /// every memory, link, PCIe link and the far tier. For the test that no
    /// policy sees the future: decisions before `at_ps` must not change.
    pub fn slow_down_after(&mut self, at_ps: u64, node: Option<usize>, factor: f64) {
        self.slow_down = Some(SlowDown {
            at_ps,
            node,
            factor,
        });
    }

    /// The slow-down as it applies to a server (`node`: a node's memory).
    fn slow_for(&self, node: Option<usize>) -> Option<(u64, f64)> {
        self.slow_down
            .filter(|s| s.node.is_none() || s.node == node)
            .map(|s| (s.at_ps, s.factor))
    }

    /// The service time of `bytes` at `gbps` on `q` (node `node`'s memory,
    /// or another server) for a request arriving at `t`, stretched past
    /// the slow-down time.
    fn transfer_ps(&self, q: &Queue, node: Option<usize>, bytes: f64, gbps: f64, t: u64) -> u64 {
        stretch(
            self.slow_for(node),
            t.max(q.busy_until()),
            ps_of(bytes, gbps),
        )
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// Runs the workload for `seed`, calling `sink` for every request in
    /// completion order. Returns the totals.
    pub fn run(
        &mut self,
        seed: u64,
        mut sink: impl FnMut(&RequestRecord),
    ) -> Result<ServeTotals, ServeError> {
        let mut arrivals =
            ArrivalGen::new(&self.spec, seed).map_err(|e| ServeError::Workload(e.problem))?;
        // Arrival times enter the engine's ps here, once.
        let mut next = arrivals.next().map(|a| (ps_of_ns(a.arrival_ns), a));
        loop {
            let ev_t = self.heap.peek().map(|Reverse((t, _, _))| *t);
            match (next, ev_t) {
                (Some((at, _)), Some(t)) if t <= at => self.event(&mut sink)?,
                (Some(a), _) => {
                    self.arrive(a.0, a.1)?;
                    next = arrivals.next().map(|a| (ps_of_ns(a.arrival_ns), a));
                }
                (None, Some(_)) => self.event(&mut sink)?,
                (None, None) => break,
            }
        }
        self.totals.check_counters()?;
        Ok(self.totals.clone())
    }

    fn event(&mut self, sink: &mut impl FnMut(&RequestRecord)) -> Result<(), ServeError> {
        let Some(Reverse((t, _, ev))) = self.heap.pop() else {
            return Ok(());
        };
        // Times saturate rather than wrap; one past the horizon stops the
        // run — but a preload's fire time is an estimate (from the last
        // batch's duration), so one past the horizon is dropped: it would
        // never fire within it.
        if t > traces::horizon::HORIZON_PS {
            if matches!(ev, Ev::Preload(..)) {
                return Ok(());
            }
            return Err(ServeError::PastHorizon(t));
        }
        match ev {
            Ev::WorkerFree(w) => {
                let done = std::mem::take(&mut self.workers[w].running);
                for r in &done {
                    self.totals.requests += 1;
                    self.totals.end_ps = self.totals.end_ps.max(r.end_ps);
                    if let Some((at, Some(id))) = self.watch_move[r.shard as usize]
                        && r.id == id
                    {
                        self.totals
                            .first_after_move
                            .push((r.shard, at, r.latency_ps()));
                        self.watch_move[r.shard as usize] = None;
                    }
                    sink(r);
                }
                self.workers[w].running = done;
                self.workers[w].running.clear();
                self.set_busy(w, false, t);
                if !self.workers[w].queue.is_empty() {
                    self.start_batch(w, t);
                }
            }
            Ev::MoveAt(i) => {
                // A move redeploys the shard on its new worker: its state is
                // loaded afresh there (a new version, a new node).
                let mv = self.spec.moves[i].clone();
                if self.warmup.prefetch_before_traffic() {
                    let bytes = self.spec.shards.state_mb * 1e6;
                    let done = self.far_read(bytes, t);
                    self.totals.cold_fetches += 1;
                    // The old deployment keeps serving until the switch.
                    self.push(done, Ev::WarmupDone(i));
                } else {
                    self.resident[mv.shard as usize] = false;
                    self.switch(i, t);
                }
            }
            Ev::WarmupDone(i) => self.switch(i, t),
            Ev::Preload(w, id) => {
                if let Some(pos) = self.workers[w].queue.iter().position(|q| q.a.id == id) {
                    self.fire_preload(w, pos, t);
                }
            }
        }
        Ok(())
    }

    fn switch(&mut self, i: usize, t: u64) {
        let mv = &self.spec.moves[i];
        let s = mv.shard as usize;
        self.shard_worker[s] = mv.to_worker as usize;
        self.shard_node[s] = self.workers[mv.to_worker as usize].node;
        self.watch_move[s] = Some((t, None));
    }

    fn set_busy(&mut self, w: usize, busy: bool, t: u64) {
        self.workers[w].signals.set_busy(busy, t);
    }

    fn view(&self, w: usize, t: u64) -> WorkerView {
        let wk = &self.workers[w];
        wk.signals.view(
            w,
            wk.queue.len(),
            wk.running.len(),
            self.spec.request.batch,
            t,
        )
    }

    /// Request `a` arrives at `t` (ps).
    fn arrive(&mut self, t: u64, a: Arrival) -> Result<(), ServeError> {
        // Background job every N arrivals, on alternating memory nodes.
        if let Some(bg) = &self.spec.background {
            self.arrivals_seen += 1;
            if bg.every_requests > 0 && self.arrivals_seen.is_multiple_of(bg.every_requests) {
                let mem_nodes = self.m.memory_nodes();
                let job = self.arrivals_seen / bg.every_requests;
                let node = mem_nodes[(job as usize) % mem_nodes.len()] as usize;
                let bytes = bg.sweep_gb * 1e9;
                let svc = self.transfer_ps(
                    &self.node_mem[node],
                    Some(node),
                    bytes,
                    self.node_gbps[node],
                    t,
                );
                let wait = self.node_mem[node].serve(t, svc, bytes as u64);
                let (from, to) = (
                    t.saturating_add(wait),
                    t.saturating_add(wait).saturating_add(svc),
                );
                self.totals.add_background(node, from, to);
                self.totals.add_bandwidth(node, from, to, bytes as u64);
                self.totals.node_bytes[node] =
                    self.totals.node_bytes[node].saturating_add(bytes as u64);
                let win = window(&mut self.totals.windows, t);
                win.memory_bytes = win.memory_bytes.saturating_add(bytes as u64);
                if bg.flushes_cache {
                    self.caches[node].clear();
                }
                self.totals.background_jobs += 1;
            }
        }
        let mut views = std::mem::take(&mut self.scratch.views);
        views.clear();
        views.extend((0..self.workers.len()).map(|w| self.view(w, t)));
        let s = a.shard as usize;
        let rv = RequestView {
            id: a.id,
            key: a.shard,
            data_node: self.shard_node[s],
            home_worker: self.shard_worker[s],
            now_ns: t / 1000,
        };
        let w = self.sched.pick(&rv, &views);
        self.scratch.views = views;
        if w >= self.workers.len() {
            return Err(ServeError::BadPick(
                self.sched.name(),
                w,
                self.workers.len(),
            ));
        }
        if let Some((at, None)) = self.watch_move[s] {
            self.watch_move[s] = Some((at, Some(a.id)));
        }
        let features = (self.record || self.preload.is_some()).then(|| self.features(w, &a, t));
        let mut q = Queued {
            a,
            arrival_ps: t,
            features,
            preload_ready: 0,
            preloaded: Vec::new(),
            predicted: None,
        };
        let mut fire_at = None;
        if let (Some(p), Some(f)) = (self.preload.as_mut(), q.features.as_ref()) {
            let truth = match (p.oracle(), &self.truth) {
                (false, _) => None,
                (true, Some(bits)) => Some(bit(bits, a.id)),
                (true, None) => return Err(ServeError::NoTruth(p.name())),
            };
            let d = p.decide(f, truth);
            self.totals.preload_decisions += 1;
            let cost = ps_of_ns(d.cost_ns);
            self.totals.predict_cost_ps = self.totals.predict_cost_ps.saturating_add(cost);
            self.totals.preload_fallbacks += d.fallback as u64;
            let pending = &mut self.workers[w].pending_cost_ps;
            *pending = pending.saturating_add(cost);
            if d.preload && !d.fallback {
                q.predicted = Some((true, d.probability));
                // Fire a lead window before the batch is expected to start.
                let est_start = self.workers[w].start_estimate(t, self.spec.request.batch);
                fire_at = Some(est_start.saturating_sub(ps_of_ns(p.window_ns())).max(t));
            } else if !d.fallback {
                q.predicted = Some((false, d.probability));
            }
        }
        if self.record_decisions {
            self.decisions.push(Decision {
                at_ps: t,
                request: a.id,
                worker: w as u32,
                preload: q.predicted.map(|p| p.0),
                fire_at_ps: fire_at,
            });
        }
        self.workers[w].queue.push_back(q);
        match fire_at {
            Some(at) if at <= t => {
                let pos = self.workers[w].queue.len() - 1;
                self.fire_preload(w, pos, t);
            }
            Some(at) => self.push(at, Ev::Preload(w, a.id)),
            None => {}
        }
        if !self.workers[w].signals.busy() {
            self.start_batch(w, t);
        }
        Ok(())
    }

    /// Reads `bytes` from the far tier starting at `t`; returns completion.
    fn far_read(&mut self, bytes: f64, t: u64) -> u64 {
        let svc = self.transfer_ps(
            &self.far,
            Some(usize::MAX),
            bytes,
            self.spec.far_tier.bandwidth_gbps,
            t,
        );
        let wait = self.far.serve(t, svc, bytes as u64);
        self.totals.far_bytes = self.totals.far_bytes.saturating_add(bytes as u64);
        let win = window(&mut self.totals.windows, t);
        win.far_bytes = win.far_bytes.saturating_add(bytes as u64);
        t.saturating_add(wait)
            .saturating_add(svc)
            .saturating_add(ps_of_ns((self.spec.far_tier.latency_ms * 1e6) as u64))
    }

    /// Reads `bytes` from `home`'s memory for a worker on `node`; returns completion.
    fn mem_read(&mut self, home: usize, node: usize, bytes: f64, t: u64) -> u64 {
        let svc = self.transfer_ps(
            &self.node_mem[home],
            Some(home),
            bytes,
            self.node_gbps[home],
            t,
        );
        let start = t.saturating_add(self.node_mem[home].serve(t, svc, bytes as u64));
        let mut done = start.saturating_add(svc);
        self.totals.add_bandwidth(home, start, done, bytes as u64);
        self.totals.node_bytes[home] = self.totals.node_bytes[home].saturating_add(bytes as u64);
        let win = window(&mut self.totals.windows, t);
        win.memory_bytes = win.memory_bytes.saturating_add(bytes as u64);
        for &li in &self.m.route[home][node] {
            let l = &self.m.spec.links[li];
            let lsvc = self.transfer_ps(
                &self.links[li],
                Some(usize::MAX),
                bytes,
                l.bandwidth_gbps,
                t,
            );
            let w = self.links[li].serve(t, lsvc, bytes as u64);
            done = done.max(t.saturating_add(w).saturating_add(lsvc));
            self.totals.link_bytes[li] = self.totals.link_bytes[li].saturating_add(bytes as u64);
        }
        done.saturating_add(self.node_lat_ps[home])
            // The route's latency to whole ns, the model's resolution.
            .saturating_add(ps_of_ns(self.m.route_ps[node][home] / 1000))
    }

    fn start_batch(&mut self, w: usize, t: u64) {
        // The batch before this one has ended: all it tells is known.
        self.workers[w].observe_pending(self.fset.history);
        // Decision costs charged to this worker delay its batch.
        let t = t.saturating_add(std::mem::take(&mut self.workers[w].pending_cost_ps));
        let f = self.spec.request.features.clone();
        let item_bytes = f.item_kb * 1024.0;
        let node = self.workers[w].node as usize;
        let n = (self.spec.request.batch as usize).min(self.workers[w].queue.len());
        let mut sc = std::mem::take(&mut self.scratch);
        let Scratch {
            queued,
            from_node,
            cold,
            spans,
            items,
            us,
            ..
        } = &mut sc;
        queued.clear();
        queued.extend(self.workers[w].queue.drain(..n));
        let mut preload_wait = t;
        for q in queued.iter() {
            preload_wait = preload_wait.max(q.preload_ready);
            let used = q
                .preloaded
                .iter()
                .filter(|&&b| self.caches[node].contains(b))
                .count() as u64;
            self.totals.preload_item_hits += used;
            window(&mut self.totals.windows, t).preload_item_hits += used;
        }
        let (mut batch_hits, mut batch_lookups, mut batch_addr) = (0u64, 0u64, 0.0f64);
        from_node.clear();
        from_node.resize(self.m.nodes(), 0.0);
        let mut far = 0.0f64;
        cold.clear();
        cold.resize(n, false);
        let mut state_wait = t;
        let mut compute_ps = ps_of_ns((self.spec.request.compute.batch_ms * 1e6) as u64);
        let mut input = 0.0f64;
        let shards = self.spec.shards.count as u64;
        // Every request's items first (its own stream; noise after them);
        // request i+1's sets are asked of the host while i probes.
        let batch = queued.iter().map(|q| &q.a);
        self.spec
            .batch_items(batch, &self.item_cdf, us, items, spans);
        let prefetch = |cache: &FeatureCache, i: usize| {
            if let Some(&(end, _)) = spans.get(i) {
                let from = if i == 0 { 0 } else { spans[i - 1].0 };
                let s = queued[i].a.shard as u64;
                for &item in &items[from..end] {
                    cache.prefetch(item as u64 * shards + s + 1);
                }
            }
        };
        prefetch(&self.caches[node], 0);
        let mut start = 0;
        for (i, q) in queued.iter().enumerate() {
            let a = &q.a;
            let s = a.shard as usize;
            if !self.resident[s] {
                // Cold: this batch fetches the shard's state; until it lands,
                // every batch needing the shard waits for it.
                let done = self.far_read(self.spec.shards.state_mb * 1e6, t);
                self.state_ready_at[s] = done;
                self.resident[s] = true;
                self.totals.cold_fetches += 1;
                cold[i] = true;
            }
            state_wait = state_wait.max(self.state_ready_at[s]);
            let home = self.shard_node[s] as usize;
            let mut misses = 0u32;
            let (end, z) = spans[i];
            prefetch(&self.caches[node], i + 1);
            let cache = &mut self.caches[node];
            // Without a branch on the outcome (a request's hits and misses
            // are a coin toss to the host): adding 0.0 leaves a sum as it is.
            // The sums stay in registers (in memory, each item waited for
            // the last one's store), and come out the same, bit for bit.
            let same = home == node;
            let (mut at_node, mut at_home, mut addr) =
                (from_node[node], from_node[home], batch_addr);
            for &item in &items[start..end] {
                let block = item as u64 * shards + s as u64 + 1;
                addr += item as f64 * item_bytes / 1e6;
                let hit = cache.access(block);
                let (node_b, home_b, far_b) = match (hit, item < f.resident, same) {
                    (true, _, _) | (false, true, true) => (item_bytes, 0.0, 0.0),
                    (false, true, false) => (0.0, item_bytes, 0.0),
                    (false, false, _) => (0.0, 0.0, item_bytes),
                };
                at_node += node_b;
                at_home += home_b;
                far += far_b;
                misses += !hit as u32;
            }
            batch_addr = addr;
            from_node[home] = at_home;
            from_node[node] = at_node;
            let looked = (end - start) as u32;
            batch_lookups += looked as u64;
            batch_hits += (looked - misses) as u64;
            self.totals.feature_hits += (looked - misses) as u64;
            self.totals.feature_misses += misses as u64;
            start = end;
            // A logged request that looks nothing up misses nothing.
            let missed =
                misses as f64 >= f.miss_share * looked as f64 && (looked > 0 || f.lookups == 0);
            if missed && let Some(bits) = &mut self.outcomes {
                set_bit(bits, a.id);
            }
            let win = window(&mut self.totals.windows, t);
            win.feature_hits += (looked - misses) as u64;
            win.feature_misses += misses as u64;
            if q.preloaded.is_empty()
                && let Some(pred) = q.predicted
            {
                judge(&mut self.totals, t, pred, missed);
            }
            if self.record
                && let Some(feat) = &q.features
            {
                self.dataset.push(DatasetRow {
                    time_ps: q.arrival_ps,
                    id: a.id,
                    features: feat.clone(),
                    label: missed,
                });
            }
            // Log-normal compute noise on the request's cost.
            // Saturating (a float past u64 converts to u64::MAX): a batch
            // that would end past the horizon stops the run there.
            let c = &self.spec.request.compute;
            compute_ps = compute_ps.saturating_add(ps_of_ns(
                (c.request_ms(a) * 1e6 * (c.sigma * z).exp()) as u64,
            ));
            input += a.input_tokens as f64 * self.spec.request.token_bytes as f64;
        }
        let mut ready = state_wait.max(preload_wait);
        for (home, &b) in from_node.iter().enumerate() {
            if b > 0.0 {
                ready = ready.max(self.mem_read(home, node, b, t));
            }
        }
        if far > 0.0 {
            ready = ready.max(self.far_read(far, t));
        }
        let feature_bytes: f64 = from_node.iter().sum::<f64>() + far;
        let pcie_bytes = input + feature_bytes;
        let pcie = self.workers[w].pcie_gbps;
        let transferred = if pcie.is_finite() {
            let svc = stretch(
                self.slow_for(Some(usize::MAX)),
                ready,
                ps_of(pcie_bytes, pcie),
            );
            self.totals.pcie_bytes = self.totals.pcie_bytes.saturating_add(pcie_bytes as u64);
            ready.saturating_add(svc)
        } else {
            ready
        };
        let end = transferred.saturating_add(compute_ps);
        let stall = ready - t;
        let wk = &mut self.workers[w];
        let read_mb = from_node.iter().sum::<f64>() / 1e6;
        let mean_addr = if batch_lookups == 0 {
            0.0
        } else {
            batch_addr / batch_lookups as f64
        };
        let delta = if wk.history.is_empty() {
            0.0
        } else {
            mean_addr - wk.last_mean_addr
        };
        wk.last_mean_addr = mean_addr;
        let hit_rate = if batch_lookups == 0 {
            1.0
        } else {
            batch_hits as f64 / batch_lookups as f64
        };
        // Known to an observer only later: the stall and features once the
        // data has arrived, the duration once the batch has ended.
        wk.signals.stall_known_at(ready, stall as f64 / 1e9);
        wk.pending = Some(Pending {
            data_at: ready,
            history: (hit_rate, read_mb, delta),
            end_at: end,
            batch_ps: end - t,
        });
        wk.started_at = t;
        wk.running.clear();
        wk.running
            .extend(queued.iter().enumerate().map(|(i, q)| RequestRecord {
                id: q.a.id,
                shard: q.a.shard,
                worker: w as u32,
                node: node as u32,
                arrival_ps: q.arrival_ps,
                start_ps: t,
                end_ps: end,
                queue_ps: t - q.arrival_ps,
                stall_ps: stall,
                compute_ps: end - transferred,
                transfer_ps: transferred - ready,
                cold: cold[i],
            }));
        self.scratch = sc;
        self.totals.batches += 1;
        self.totals.bubble_ps = self.totals.bubble_ps.saturating_add(transferred - t);
        self.totals.compute_ps = self.totals.compute_ps.saturating_add(end - transferred);
        self.set_busy(w, true, t);
        self.push(end, Ev::WorkerFree(w));
    }

    /// Bytes each FCFS server has served: every node's memory, every
    /// link, the far tier (the servers' own counters).
    pub fn server_bytes(&self) -> (Vec<u64>, Vec<u64>, u64) {
        (
            self.node_mem.iter().map(|q| q.bytes).collect(),
            self.links.iter().map(|q| q.bytes).collect(),
            self.far.bytes,
        )
    }

    /// Bandwidth of each node's memory (GB/s), for reports.
    pub fn node_gbps(&self) -> &[f64] {
        &self.node_gbps
    }

    /// The machine.
    pub fn machine(&self) -> &Machine {
        self.m
    }
}
