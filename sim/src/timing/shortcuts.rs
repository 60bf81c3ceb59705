//! The exact fast paths ([`Config::shortcuts`](super::Config::shortcuts)).
//! A load to the line its core's last data access touched, a write to it
//! while it is dirty, and a fetch from the line it fetched last (when no
//! prefetcher is attached and the level's policy leaves a repeated hit
//! unchanged) are answered as the L1 hits they are, without the lookup
//! ([`Engine::shortcut`]; every invalidation of such a line clears it).
//! Runs of them skip the event loop's general steps ([`Engine::run_hits`]),
//! and while the trace has one thread, `feed` settles them as it reads them,
//! without queueing ([`Engine::feed_lone`]). Their counts are added up once
//! per run. None of this changes a result: `the_fast_paths_change_nothing`
//! compares every shortcut against the general path.

use traces::{Access, Batch, Kind};

use super::stats::HitRun;
use super::{Engine, EngineError};

/// What [`Engine::direct_hit`] did with a record.
pub(super) enum Direct {
    /// Settled as a hit.
    Done,
    /// Queued with its issue time (outside the current window).
    Queued,
    /// Not a direct hit: queue it as usual.
    No,
}

impl Engine<'_> {
    /// The latency of `a` if a shortcut answers it — an L1 hit that changes
    /// no cache state: a load to the line this core's last data access
    /// touched (still the most recent in its L1D set: only this core's own
    /// data accesses fill its L1D, and an invalidation from another core or
    /// a back-invalidation from its own L2 clears `last_line`), a write to
    /// that line while it is dirty (no upgrade needed), a fetch from the
    /// line it fetched last (likewise for the L1I). `None`: the full path.
    #[inline(always)]
    pub(super) fn shortcut(&self, core: usize, a: &Access) -> Option<u64> {
        let line = a.addr >> self.line_bits;
        let last = a.addr.saturating_add(a.size.max(1) as u64 - 1) >> self.line_bits;
        let cs = &self.cores[core];
        if line != last {
            return None;
        }
        // `last_line` is physical (`crate::frames`).
        let line = self.frames.line(line, self.line_bits);
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
    pub(super) fn shortcut_effect(&mut self, core: usize, a: &Access) {
        if matches!(a.kind, Kind::Store | Kind::Modify) {
            let off = a.addr & ((1 << self.line_bits) - 1);
            let line = self.frames.line(a.addr >> self.line_bits, self.line_bits);
            self.note_write(core, line, off, off + (a.size as u64).max(1));
        }
    }

    /// [`Engine::feed`] while the trace has (at most) one thread: a record
    /// a shortcut answers is settled as it arrives ([`Engine::direct_hit`]),
    /// any other is queued and run at once, which leaves the queue empty
    /// for the next (results do not depend on where the simulation steps
    /// fall). Returns the index of the first record of a second thread
    /// (the general path takes over there), or the batch length.
    pub(super) fn feed_lone(&mut self, batch: &Batch) -> Result<usize, EngineError> {
        let has_time = batch.fields().time;
        let has_pc = batch.fields().pc;
        // Hits settled, not yet counted.
        let mut run = HitRun::default();
        let mut stop = batch.acc.len();
        for (i, a) in batch.acc.iter().enumerate() {
            if self.threads.len() == 1 && !self.threads.is_last(a.thread) {
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

    /// The direct path of [`Engine::feed`] while the trace has one thread
    /// and nothing of it is queued: a record a shortcut answers
    /// ([`Engine::shortcut`]) is settled at once, as [`Engine::run_hits`]
    /// would settle it from the queue (the one thread is always first and
    /// may always run), its counts added to `run`. `No`: the caller queues
    /// the record as usual. `Queued`: its issue time was computed but it
    /// falls outside the current time-series window, so it went on the
    /// queue and the heap with that time, as `schedule` would have put it.
    #[inline(always)]
    pub(super) fn direct_hit(
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
        let issue = self.threads[0].issue_of(a, time, record, self.mlp, self.cycle_ps)?;
        let (win_start, win_end, _) = self.stats.win_span;
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
    pub(super) fn settle_hit(
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
    pub(super) fn run_hits(
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
        let (win_start, win_end, _) = self.stats.win_span;
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
    pub(super) fn apply_run(&mut self, idx: usize, core: usize, run: &HitRun) {
        if run.data + run.ifetches > 0 {
            self.add_run(idx, core, run);
        }
    }

    pub(super) fn add_run(&mut self, idx: usize, core: usize, run: &HitRun) {
        let data_ps = self.cores[core].level_ps[0];
        let lat_ps = self.stats.record_hits(run, data_ps);
        let th = &mut self.threads[idx];
        th.accesses += run.data + run.ifetches;
        th.latency_ps += lat_ps;
        th.last_done = th.last_done.max(run.last_done);
        self.now_ps = self.now_ps.max(run.last_issue);
    }
}
