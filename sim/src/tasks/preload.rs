//! Preload in the task engine: the request model's preload at line level.
//! At a task's dispatch a [`Preload`] policy decides from what a real
//! dispatcher could know then (the same features the request model gives
//! it, `crate::serve::preload`); a preload fires a lead window before the
//! task's batch is expected to start (never before its arrival) and brings
//! the task's lines into its worker's node LLC — the line model's feature
//! cache — from their home memory, loading the channels and links
//! ([`crate::Engine::preload_llc`]). The batch waits for its members'
//! preloads to land, as the request model's does. What differs from the
//! request model is listed in `docs/fidelity.md`.
//!
//! The features, at line level:
//! - `remote_shard`: the node the key's data was last found on (what the
//!   scheduler sees) is not the worker's;
//! - `outstanding`: tasks queued and running on the worker;
//! - `cached_share`: the share of the task's lines the node's LLC holds
//!   (as the request model's share of items its feature cache holds);
//! - per past batch of the worker, most recent first, known once it has
//!   ended: the share of its lines memory did not serve, the MB its tasks
//!   read, and the change of its mean line offset within the key's region
//!   (MB).

use std::collections::VecDeque;

use crate::policy::{FeatureSet, Preload};

/// Preload counts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreloadStats {
    pub decisions: u64,
    pub fallbacks: u64,
    /// Preloads fired (a decision to preload a task still queued).
    pub preloads: u64,
    /// Lines read into an LLC by them.
    pub lines: u64,
}

/// A worker's past batches as a preload policy sees them.
#[derive(Default)]
struct Past {
    /// (share of lines not from memory, MB read, mean offset delta MB),
    /// most recent first.
    history: VecDeque<(f64, f64, f64)>,
    /// Mean line offset (MB) of the last batch, if there was one.
    last_mean: Option<f64>,
    last_batch_ps: u64,
    /// Decision costs not yet charged (delay the worker's next batch).
    pending_cost_ps: u64,
}

/// A preload policy and its state in a task engine.
pub struct TaskPreload {
    policy: Box<dyn Preload>,
    fset: FeatureSet,
    /// For an oracle: whether each task (by trace index) misses.
    truth: Option<Vec<bool>>,
    /// A line's offset in its key's region is `(addr - base) % region`.
    base: u64,
    region: u64,
    /// When each task's preload lands (0: none).
    ready_ps: Vec<u64>,
    past: Vec<Past>,
    pub stats: PreloadStats,
}

/// A task preload that cannot be set.
#[derive(Debug, thiserror::Error)]
pub enum PreloadError {
    #[error("preload {0} is an oracle: it needs the paired run's outcomes")]
    NoTruth(String),
    #[error("preload outcomes: {0} given for {1} tasks")]
    TruthLength(usize, usize),
}

impl TaskPreload {
    /// `policy` on a trace of `tasks` tasks whose keys' regions are
    /// `region` bytes apart from `base`; `truth` (an oracle's) says which
    /// tasks miss, from a paired run without preload
    /// ([`super::TaskRecord::missed`]).
    pub fn new(
        policy: Box<dyn Preload>,
        tasks: usize,
        base: u64,
        region: u64,
        truth: Option<Vec<bool>>,
    ) -> Result<TaskPreload, PreloadError> {
        match &truth {
            None if policy.oracle() => return Err(PreloadError::NoTruth(policy.name())),
            Some(t) if t.len() != tasks => return Err(PreloadError::TruthLength(t.len(), tasks)),
            _ => {}
        }
        Ok(TaskPreload {
            fset: policy.features(),
            policy,
            truth,
            base,
            region: region.max(1),
            ready_ps: vec![0; tasks],
            past: Vec::new(),
            stats: PreloadStats::default(),
        })
    }

    fn past(&mut self, w: usize) -> &mut Past {
        if self.past.len() <= w {
            self.past.resize_with(w + 1, Past::default);
        }
        &mut self.past[w]
    }

    /// The decision features of `task` about to join a worker on `node`
    /// (worker `w`, `outstanding` tasks) whose key's data was last found
    /// on `data_node` and is now at its addresses plus `shift` (a move's).
    pub(super) fn features(
        &mut self,
        engine: &crate::Engine,
        task: &traces::tasks::Task,
        (w, node, outstanding): (usize, u32, usize),
        (data_node, shift): (u32, u64),
    ) -> Vec<f64> {
        let fs = self.fset.clone();
        let mut v = Vec::with_capacity(3 + 3 * fs.history);
        v.push((data_node != node) as u8 as f64);
        v.push(outstanding as f64);
        if fs.cached {
            let lines = task.accesses.iter().filter(|(a, _)| a.kind.is_data());
            let (mut n, mut held) = (0usize, 0usize);
            for (a, _) in lines {
                n += 1;
                held += engine.llc_holds(node as usize, a.addr.wrapping_add(shift)) as usize;
            }
            v.push(if n == 0 { 1.0 } else { held as f64 / n as f64 });
        }
        let mut past = self.past(w).history.iter().copied();
        for _ in 0..fs.history {
            let (h, mb, d) = past.next().unwrap_or((1.0, 0.0, 0.0));
            for (x, on) in [h, mb, d].into_iter().zip(fs.groups) {
                if on {
                    v.push(x);
                }
            }
        }
        v
    }

    /// Decides for trace task `i` joining worker `w`; returns whether to
    /// preload and the policy's lead window (ps).
    pub(super) fn decide(&mut self, i: usize, w: usize, features: &[f64]) -> Option<u64> {
        let truth = self.truth.as_ref().map(|t| t[i]);
        let d = self.policy.decide(features, truth);
        self.stats.decisions += 1;
        self.stats.fallbacks += d.fallback as u64;
        let cost = d.cost_ns.saturating_mul(1000);
        let p = self.past(w);
        p.pending_cost_ps = p.pending_cost_ps.saturating_add(cost);
        (d.preload && !d.fallback).then(|| self.policy.window_ns().saturating_mul(1000))
    }

    /// When worker `w` (busy since `started`, if it is; `queued` tasks
    /// ahead, batches of `batch`) is expected to start a task joining at
    /// `t`: the running batch ends after the last batch's duration (not
    /// before `t`), then one such duration per full batch queued ahead.
    pub(super) fn start_estimate(
        &mut self,
        w: usize,
        t: u64,
        started: Option<u64>,
        queued: usize,
        batch: usize,
    ) -> u64 {
        let Some(s) = started else {
            return t;
        };
        let d = self.past(w).last_batch_ps;
        let end = s.saturating_add(d).max(t);
        end.saturating_add(((queued / batch.max(1)) as u64).saturating_mul(d))
    }

    /// Task `i`'s preload has landed by `ready`.
    pub(super) fn fired(&mut self, i: usize, ready: u64, lines: u64) {
        self.ready_ps[i] = ready;
        self.stats.preloads += 1;
        self.stats.lines += lines;
    }

    /// When a batch of `members` (trace indices) may issue its first
    /// access, from `t`: after the worker's pending decision costs, and
    /// once its preloads have landed.
    pub(super) fn batch_ready(&mut self, w: usize, members: &[usize], t: u64) -> u64 {
        // The costs delay the batch's start; the preloads land meanwhile.
        let start = t.saturating_add(std::mem::take(&mut self.past(w).pending_cost_ps));
        members
            .iter()
            .map(|&i| self.ready_ps[i])
            .fold(start, u64::max)
    }

    /// Worker `w`'s batch ran `lines` line reads of which `memory` came
    /// from memory, at a mean offset `mean_offset` bytes, for `batch_ps`.
    pub(super) fn batch_ended(
        &mut self,
        w: usize,
        (lines, memory, mean_offset): (u64, u64, f64),
        batch_ps: u64,
    ) {
        let hist = self.fset.history;
        let p = self.past(w);
        let share = if lines == 0 {
            1.0
        } else {
            lines.saturating_sub(memory) as f64 / lines as f64
        };
        let mean = mean_offset / 1e6;
        let delta = p.last_mean.map_or(0.0, |m| mean - m);
        p.last_mean = Some(mean);
        p.history
            .push_front((share, lines as f64 * 64.0 / 1e6, delta));
        p.history.truncate(hist);
        p.last_batch_ps = batch_ps;
    }

    /// A line's offset in its key's region.
    pub(super) fn offset(&self, addr: u64) -> u64 {
        addr.wrapping_sub(self.base) % self.region
    }
}
