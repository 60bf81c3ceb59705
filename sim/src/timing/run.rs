//! The event loop: records are queued on their threads as they are fed,
//! and accesses run in global issue-time order — a min-heap keyed by
//! `(time, thread index)` ([`Events`](crate::events::Events)), so ties
//! break deterministically. An event runs only when no thread that is still
//! waiting for records could issue before it (or when the buffer is full),
//! so results do not depend on how the input is cut into batches.

use std::cmp::Reverse;

use traces::horizon::HORIZON_PS;
use traces::{Access, Batch, Kind};

use super::cores::Served;
use super::sample::Phase;
use super::{Engine, EngineError};

/// Records queued between two simulation steps within a batch.
const FEED_CHUNK: usize = 2048;

/// How far ahead functional warming asks the host for the next records'
/// directory slots and sets (in records; not for records it will skip).
const WARM_AHEAD: usize = 16;

impl Engine<'_> {
    /// Adds a batch of records and simulates as far as is safe.
    pub fn feed(&mut self, batch: &Batch) -> Result<(), EngineError> {
        let mut from = 0;
        if self.cfg.shortcuts && self.threads.len() <= 1 && self.sampling.is_none() {
            from = self.feed_lone(batch)?;
        }
        let has_time = batch.fields().time;
        let has_pc = batch.fields().pc;
        for (i, a) in batch.acc.iter().enumerate().skip(from) {
            let record = self.records_in;
            self.records_in += 1;
            let time = if has_time { batch.time[i] } else { 0 };
            let pc = if has_pc { batch.pc_of(i) } else { None };
            if self.sampling.is_some() {
                if self.mem.functional
                    && let Some(ahead) = batch.acc.get(i + WARM_AHEAD)
                    && self
                        .sampling
                        .as_ref()
                        .is_some_and(|s| s.phase(record + WARM_AHEAD as u64) == Phase::Functional)
                {
                    self.prefetch_record(ahead);
                }
                if self.sample_functional(a, record, pc)? {
                    continue;
                }
            }
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
        self.advance(false)?;
        self.check_windows()
    }

    /// Queues a record on its thread (pinning a new thread first) and
    /// schedules the thread if it was idle.
    #[inline(always)]
    pub(super) fn enqueue(
        &mut self,
        a: &Access,
        time: u64,
        record: u64,
        pc: Option<u64>,
    ) -> Result<(), EngineError> {
        let t = match self.threads.find(a.thread) {
            Some(t) => t,
            None => {
                // A new thread starts at the time the run has reached:
                // first simulate what the records before it allow, so that
                // time does not depend on where the input's batches happen
                // to end.
                self.advance(false)?;
                self.threads
                    .pin(self.m, &self.cfg.pin, a.thread, record, self.now_ps)?
            }
        };
        let th = &mut self.threads[t];
        th.queue.push_back((*a, time, record, pc));
        self.buffered += 1;
        if !th.scheduled {
            self.schedule(t)?;
        }
        Ok(())
    }

    /// Simulates everything still buffered (end of input).
    pub fn finish(&mut self) -> Result<(), EngineError> {
        self.advance(true)?;
        self.finish_sample()?;
        self.check_windows()
    }

    /// The time series stayed within its limit.
    fn check_windows(&self) -> Result<(), EngineError> {
        if self.stats.overflow {
            return Err(EngineError::TooManyWindows {
                max: self.stats.max_windows(),
                window_ns: self.stats.window_ps / 1000,
                reached_ms: self.now_ps as f64 / 1e9,
            });
        }
        Ok(())
    }

    /// Computes thread `t`'s next issue time and pushes it on the heap.
    pub(super) fn schedule(&mut self, t: usize) -> Result<(), EngineError> {
        if let Some(issue) = self.issue_time(t)? {
            self.heap.push(issue, t);
        }
        Ok(())
    }

    /// Thread `t`'s next issue time (None with nothing buffered); marks the
    /// thread scheduled, and the caller puts it on the heap or runs it.
    #[inline(always)]
    pub(super) fn issue_time(&mut self, t: usize) -> Result<Option<u64>, EngineError> {
        let Some(&(a, time, record, _)) = self.threads[t].queue.front() else {
            return Ok(None);
        };
        let issue = self.threads[t].issue_of(&a, time, record, self.mlp, self.cycle_ps)?;
        self.threads[t].scheduled = true;
        Ok(Some(issue))
    }

    /// Whether an event at `t` may run now: a thread with no buffered
    /// record might still issue before `t` once its records arrive (`bound`),
    /// unless the buffer is full.
    #[inline]
    pub(super) fn may_run(&self, t: u64, bound: u64) -> bool {
        t <= bound || self.buffered >= self.cfg.max_buffered
    }

    pub(super) fn advance(&mut self, end: bool) -> Result<(), EngineError> {
        let mut bound = if end {
            u64::MAX
        } else {
            self.threads.blocked_bound()
        };
        // The thread that runs stays at the top of the heap while it runs;
        // its next issue time then replaces it there (one sift-down, none
        // when it is still first in (time, thread) order).
        while let Some((t, idx)) = self.heap.peek() {
            if !self.may_run(t, bound) {
                break;
            }
            let th = &mut self.threads[idx];
            th.scheduled = false;
            let Some((a, _, th_record, pc)) = th.queue.pop_front() else {
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
            let invalidations = self.stats.counters.invalidations;
            let (lat, served) = self.access(core, &a, t, pc);
            let posted = self.cfg.posted_stores && a.kind == Kind::Store;
            let lat = if posted {
                self.cores[core]
                    .level_ps
                    .first()
                    .map_or(lat, |&l1| lat.min(l1))
            } else {
                lat
            };
            let done = t.saturating_add(lat);
            if done > HORIZON_PS {
                return Err(EngineError::ClockPastHorizon {
                    record: th_record,
                    thread: self.threads[idx].id,
                    ps: done,
                });
            }
            let th = &mut self.threads[idx];
            th.accesses += 1;
            th.latency_ps += lat as u128;
            th.last_done = th.last_done.max(done);
            if posted {
                self.waited = false;
            } else if !matches!(served, Served::Private(0)) || std::mem::take(&mut self.waited) {
                th.inflight.push(Reverse(done));
            }
            self.stats.elapsed_ps = self.stats.elapsed_ps.max(done);
            self.stats.record(&a, t, lat, served);
            if self.sampling.is_some() {
                let caused = self.stats.counters.invalidations - invalidations;
                self.measure(th_record, &a, t, lat, served, caused)?;
            }
            // A sampled run measures access by access: no runs of hits.
            let next = match self.issue_time(idx)? {
                Some(issue) if self.sampling.is_some() => Some(issue),
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

    /// Hints the host to fetch the directory slot and the sets record `a`
    /// will touch, if its thread is pinned. Changes nothing.
    #[inline]
    fn prefetch_record(&mut self, a: &Access) {
        let Some(t) = self.threads.find(a.thread) else {
            return;
        };
        self.prefetch_sets(self.threads[t].core, self.phys_line(a.addr), 0);
    }

    /// Hints the host to fetch `line`'s directory slot and its sets in
    /// `core`'s private levels from `from` on and in its node's LLC.
    #[inline]
    fn prefetch_sets(&self, core: usize, line: u64, from: usize) {
        let cs = &self.cores[core];
        self.dir.prefetch(line);
        for c in cs.levels.iter().skip(from) {
            c.prefetch(line);
        }
        if let Some(c) = &self.llc[cs.node as usize] {
            c.prefetch(line);
        }
    }

    /// Hints the host to fetch what thread `idx`'s next access will read
    /// beyond its L1 — the directory slot, the L2 and LLC sets — while
    /// other threads run (with many threads the simulated caches outgrow
    /// the host's). Nothing when a shortcut will answer it. Changes nothing.
    #[inline]
    pub(super) fn prefetch_front(&self, idx: usize) {
        let th = &self.threads[idx];
        let Some(&(a, ..)) = th.queue.front() else {
            return;
        };
        // The records after it, read when this one has run (a lagging
        // thread's queue is long and has left the host's caches).
        for k in [1, 2] {
            if let Some(r) = th.queue.get(k) {
                traces::hint::prefetch(r);
            }
        }
        if self.shortcut(th.core, &a).is_some() {
            return;
        }
        self.prefetch_sets(th.core, self.phys_line(a.addr), 1);
    }
}
