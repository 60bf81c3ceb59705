//! Sampled task replay (`replay TASKS --machine M --workers N --sample
//! UNIT:PERIOD[:WARM]`): the trace replay's sample shape
//! ([`crate::timing::Sample`], SMARTS) laid over the tasks in arrival
//! order instead of records, for a trace too long to replay in detail.
//!
//! - **Measured:** unit k's `UNIT` tasks. Each one's latency (arrival to
//!   end), queueing, service and the accesses memory served are added to
//!   its unit; only measured tasks reach the run's sink (`tasks.csv`).
//! - **Detailed warm-up:** the `WARM` tasks before each unit, less the
//!   unit's cut (`timing/sample.rs`). They run in detail and are not
//!   measured. Warming has no time, so every detailed stretch starts with
//!   idle workers; the warm-up is what brings the workers' queues back to
//!   a running state before the unit.
//! - **Warmed functionally:** every other task. The scheduler picks its
//!   worker at the task's arrival (or the drained clock, if later),
//!   seeing warming's queues: each worker a FIFO, empty at the drain,
//!   whose warmed tasks each take the workers' busy time per task that
//!   ended in detail so far (a task's service; a batch's members share
//!   its duration), one at a time; a worker with a task in it is
//!   busy. Until a task has ended in detail
//!   there is no such time: the run's first tasks run in detail,
//!   unmeasured, until one ends. Without warming's queues a load-aware
//!   scheduler would see every worker idle and send every warmed task to
//!   one worker, whose caches alone would then be warm (`least-loaded`
//!   came out 1.3% fast on a 400 000-task trace, its interval missing the
//!   full run). The task's accesses go through that worker's core's
//!   caches, the directory, the prefetchers and page placement at a
//!   frozen clock ([`crate::timing::Engine::set_warming`]), in arrival
//!   order, and the dispatcher learns where its key's data lives, as from
//!   a task that ended. Other signals a scheduler reads (utilisation,
//!   memory stall) keep their values from the last detailed stretch, so
//!   a scheduler led by utilisation alone (`least-utilized`) sends a
//!   whole warming stretch to one worker: sample it only with that in
//!   mind.
//!
//! **Cool-down:** while a measured task runs, up to `UNIT` tasks after its
//! unit run in detail too (unmeasured), so the unit's last tasks meet the
//! other workers' traffic as in the full run instead of an idle machine.
//! Bounded: an overloaded service's measured tasks never all end in time,
//! and unbounded it would run every task in detail.
//!
//! Before the first warmed task after a detailed stretch, the event loop
//! is drained: every task of the stretch, and so every measured task, runs
//! to its end in detail. A detailed stretch starts at the later of its
//! first arrival and the drained clock.
//!
//! The summary's time averages are over the detailed stretches' span
//! (the clock moves on through warming), and a worker, channel or link
//! busy all through them is named saturated: a queue that grows without
//! bound in the full run is drained at every switch to warming.
//!
//! The estimates are the trace replay's ([`crate::estimate`]): means are
//! ratios of the units' sums, p50/p99 the pooled quantiles with
//! Woodruff's interval, at 99.7%. Background jobs, preload and shard moves
//! are refused: their timing spans phases that warming does not time.

use std::collections::VecDeque;

use crate::estimate;
use crate::results::Sampled;
use crate::timing::{Phase, Sample};

use super::state::{TaskSampling, Unit};
use super::{TaskEngine, TaskError, TaskRecord, TaskTrace};

impl TaskEngine<'_> {
    /// Samples the run (see the module's doc). Bounded warming (the
    /// shape's `functional`) is for trace replays.
    pub fn set_sample(&mut self, shape: Sample) -> Result<(), TaskError> {
        if let Some(f) = shape.functional {
            return Err(TaskError::SampleBounded(f));
        }
        shape.check().map_err(|e| TaskError::SampleShape {
            unit: e.unit,
            period: e.period,
            warm: e.warm,
            offset: e.offset,
        })?;
        self.sampling = Some(Box::new(TaskSampling {
            shape,
            units: Vec::new(),
            latencies: Vec::new(),
            detailed: 0,
            warmed: 0,
            warming: false,
            queues: vec![VecDeque::new(); self.served],
            stretch_from: None,
            measuring: 0,
            cooling: 0,
            span_ps: 0,
            busy: vec![(0, 0); self.served],
            busy_total: 0,
        }));
        Ok(())
    }

    /// Before a sampled run: nothing set beside the tasks that spans
    /// phases, and at least two units among the trace's tasks (unit k
    /// starts at task `offset + k·period`).
    pub(super) fn check_sample(&self, trace: &TaskTrace) -> Result<(), TaskError> {
        let Some(s) = self.sampling.as_ref() else {
            return Ok(());
        };
        if !self.jobs.is_empty() || self.preload.is_some() || self.moves.is_some() {
            return Err(TaskError::SampleBeside);
        }
        let (n, offset) = (trace.tasks.len() as u64, s.shape.offset);
        let units = n
            .checked_sub(offset + 1)
            .map_or(0, |x| x / s.shape.period + 1);
        if units < 2 {
            return Err(TaskError::TooFewUnits { units, offset });
        }
        Ok(())
    }

    /// In a sampled run, whether trace task `i` (arriving at `t_ps`) is
    /// warmed: then it has been, after the detailed stretch before it ran
    /// to its end. A task to run in detail ends warming first.
    pub(super) fn sample_warm(
        &mut self,
        trace: &TaskTrace,
        i: usize,
        t_ps: u64,
        sink: &mut impl FnMut(&TaskRecord),
    ) -> Result<bool, TaskError> {
        let Some(s) = self.sampling.as_ref() else {
            return Ok(false);
        };
        // Until a task has ended in detail, warming's queues have no
        // service time to charge: the run's first tasks run in detail.
        // While a measured task runs, up to UNIT tasks after its unit do
        // too (the cool-down): its end meets the traffic it meets in the
        // full run. Bounded, so that an overloaded service, whose measured
        // tasks never all end, is still sampled (then drained).
        let phase = s.shape.phase(i as u64);
        let cooling = s.measuring > 0 && s.cooling > 0;
        let functional =
            s.detailed > 0 && !cooling && matches!(phase, Phase::Functional | Phase::Skip);
        if !functional {
            self.set_warming(false);
            let from = t_ps.max(self.clock_ps);
            if let Some(s) = self.sampling.as_mut() {
                s.stretch_from.get_or_insert(from);
                match phase {
                    Phase::Unit(_) => {
                        s.measuring += 1;
                        s.cooling = s.shape.unit;
                    }
                    _ if cooling => s.cooling -= 1,
                    _ => {}
                }
            }
            return Ok(false);
        }
        if !s.warming {
            while !self.heap.is_empty() {
                self.event(trace, sink)?;
            }
            self.set_warming(true);
        }
        let task = &trace.tasks[i];
        let t = t_ps.max(self.clock_ps);
        let (w, _) = self.pick(task, i, t)?;
        if let Some(s) = self.sampling.as_mut() {
            // The workers' busy time a detailed task: its service, or a
            // batch's duration over its members.
            let mean = s.busy_total.checked_div(s.detailed as u128).unwrap_or(0) as u64;
            let q = &mut s.queues[w];
            let end = q.back().map_or(t, |&e| e.max(t)).saturating_add(mean);
            q.push_back(end);
        }
        let core = self.workers[w].core;
        for (a, _) in &task.accesses {
            self.engine.warm_on(core, a);
        }
        if let Some(node) = self.data_node(task, 0) {
            self.key_node.insert(task.key, node);
        }
        if let Some(s) = self.sampling.as_mut() {
            s.warmed += 1;
        }
        Ok(true)
    }

    /// Warming begins (the detailed stretch before it has drained: its
    /// span ends at the clock) or ends.
    fn set_warming(&mut self, on: bool) {
        if on {
            self.end_stretch();
        }
        if let Some(s) = self.sampling.as_mut()
            && s.warming != on
        {
            s.warming = on;
            // Empty: the drain ran every detailed task to its end, and
            // warmed tasks are timed from the drained clock on.
            s.queues.iter_mut().for_each(VecDeque::clear);
            self.engine.set_warming(on);
        }
    }

    /// While warming: each worker's (queued, running) tasks at `t_ps` in
    /// warming's queues.
    pub(super) fn warming_queues(&mut self, t_ps: u64) -> Option<Vec<(usize, usize)>> {
        let s = self.sampling.as_mut().filter(|s| s.warming)?;
        let counts = s.queues.iter_mut().map(|q| {
            while q.front().is_some_and(|&e| e <= t_ps) {
                q.pop_front();
            }
            (q.len().saturating_sub(1), q.len().min(1))
        });
        Some(counts.collect())
    }

    /// At the end of a sampled run (every task ended): the last detailed
    /// stretch's span, and the run's books back from warming.
    pub(super) fn finish_sample(&mut self) {
        self.end_stretch();
        self.set_warming(false);
    }

    /// The detailed stretch under way, drained, ends at the clock.
    fn end_stretch(&mut self) {
        let clock = self.clock_ps;
        if let Some(s) = self.sampling.as_mut()
            && let Some(from) = s.stretch_from.take()
        {
            s.span_ps = s.span_ps.saturating_add(clock.saturating_sub(from));
        }
    }

    /// A task that ended in detail: whether it is measured (then it is
    /// added to its unit). Every task is, in a run that is not sampled.
    pub(super) fn measured(&mut self, i: usize, r: &TaskRecord) -> bool {
        let Some(s) = self.sampling.as_mut() else {
            return true;
        };
        s.detailed += 1;
        // A worker's busy time: the union of its tasks' runs (a batch's
        // members overlap).
        if let Some((busy, last)) = s.busy.get_mut(r.worker as usize) {
            let more = r.end_ps.saturating_sub(r.start_ps.max(*last));
            *busy = busy.saturating_add(more);
            *last = (*last).max(r.end_ps);
            s.busy_total += more as u128;
        }
        let Phase::Unit(k) = s.shape.phase(i as u64) else {
            return false;
        };
        s.measuring -= 1;
        let k = k as usize;
        if s.units.len() <= k {
            s.units.resize(k + 1, Unit::default());
        }
        let u = &mut s.units[k];
        u.tasks += 1;
        u.latency_ps += r.latency_ps() as u128;
        u.queue_ps += r.queue_ps() as u128;
        u.service_ps += r.service_ps() as u128;
        u.accesses += r.accesses;
        u.memory_lines += r.memory_lines;
        s.latencies.push((k as u64, r.latency_ps().max(1)));
        true
    }

    /// The sampled run's estimates (None unless [`TaskEngine::set_sample`]
    /// was called); an interval needs at least two units.
    pub fn sampled(&self) -> Result<Option<Sampled>, TaskError> {
        let Some(s) = self.sampling.as_ref() else {
            return Ok(None);
        };
        let units: Vec<&Unit> = s.units.iter().filter(|u| u.tasks > 0).collect();
        if units.len() < 2 {
            return Err(TaskError::TooFewUnits {
                units: units.len() as u64,
                offset: s.shape.offset,
            });
        }
        let ns = |ps: u128| ps as f64 / 1000.0;
        let ratio = |f: &dyn Fn(&Unit) -> (f64, f64)| estimate::ratio_over(&units, |u| f(u));
        let tasks = |u: &Unit| u.tasks as f64;
        let ratios = [
            ("latency_mean_ns", ratio(&|u| (ns(u.latency_ps), tasks(u)))),
            ("queue_mean_ns", ratio(&|u| (ns(u.queue_ps), tasks(u)))),
            ("service_mean_ns", ratio(&|u| (ns(u.service_ps), tasks(u)))),
            (
                "memory_share",
                ratio(&|u| (u.memory_lines as f64, u.accesses as f64)),
            ),
        ];
        let counted: Vec<u64> = (s.units.iter().enumerate())
            .filter(|(_, u)| u.tasks > 0)
            .map(|(k, _)| k as u64)
            .collect();
        let ratios = ratios.map(|(name, e)| (name.to_string(), e)).into();
        let (metrics, not_estimated) = estimate::sampled_metrics(ratios, &s.latencies, &counted);
        Ok(Some(Sampled {
            units: units.len() as u64,
            measured: units.iter().map(|u| u.tasks).sum(),
            detailed: s.detailed,
            warmed: s.warmed,
            metrics,
            not_estimated,
            counts: "tasks".into(),
            ..s.shape.report()
        }))
    }

    /// The memory system's summary of the detailed tasks, with the sampled
    /// run's estimates if sampled: then its time averages are over the
    /// detailed stretches' span, and the queues saturated in them are
    /// named — channels, links and workers. A worker busy all through the
    /// detailed stretches is the sign of a service whose queue grows
    /// without bound in the full run, which the drains between stretches
    /// hide from the units.
    pub fn summary(&self) -> Result<crate::results::Summary, TaskError> {
        let Some(s) = self.sampling.as_ref() else {
            return Ok(self.engine.summary());
        };
        let mut summary = self.engine.summary_over(s.span_ps);
        let mut x = self.sampled()?.expect("sampled run");
        x.span_ns = Some(s.span_ps as f64 / 1000.0);
        x.saturated = crate::results::saturated(&summary.memory.channels, &summary.links);
        let span = s.span_ps.max(1) as f64;
        for (w, &(busy, _)) in s.busy.iter().enumerate() {
            let utilization = busy as f64 / span;
            if utilization >= crate::results::SATURATED {
                let queue = format!("worker {w}");
                x.saturated
                    .push(crate::results::Busy { queue, utilization });
            }
        }
        summary.sampled = Some(x);
        Ok(summary)
    }
}
