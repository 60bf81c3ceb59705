//! Sampled replay (SMARTS, Wunderlich et al., ISCA 2003): `unit` records
//! measured every `period` records, the first at record `offset`; the
//! `warm` records before each unit, less the unit's cut (`sample.rs`),
//! are simulated in detail but not
//! measured (meant to bring the queues and the cores' misses in flight
//! back to a running state; the validation in docs/performance.md is what
//! shows how well); every other record is *warmed functionally*: it goes
//! through the same caches, directory and page placement, in trace order,
//! at a frozen clock, with the channels and links (their occupancy is not
//! warmed), the statistics and the time series left alone. Between phases
//! the event loop is drained. Prefetchers are warmed too: they see the
//! warmed accesses and fill what they ask for, and those fills have
//! landed when a detailed phase begins (warming has no time).
//!
//! Each measured access adds to its unit's sums (latency, where it was
//! served, invalidations it caused, its span in time); the estimates with
//! their intervals come from [`crate::estimate`]. Warmed records never
//! enter the run's books, so the plain summary counts what was simulated
//! in detail.

use traces::{Access, Kind};

use crate::results::Sampled;

use super::cores::Served;
use super::parts::{PartResult, estimates};
use super::sample::{Part, Phase, UnitSums};

use super::sample::{MAX_MEASURED, MAX_UNITS};
use super::{Engine, EngineError};

impl Engine<'_> {
    /// In a sampled run, whether record `record` is warmed functionally —
    /// then it has been, after draining the event loop if the run was in
    /// detail. A record to simulate in detail ends functional warming first.
    #[inline]
    pub(super) fn sample_functional(
        &mut self,
        a: &Access,
        record: u64,
        pc: Option<u64>,
    ) -> Result<bool, EngineError> {
        let Some(s) = self.sampling.as_ref() else {
            return Ok(false);
        };
        let phase = s.phase(record);
        let functional = matches!(phase, Phase::Functional | Phase::Skip);
        if functional != self.mem.functional {
            if functional {
                self.enter_functional()?;
            } else {
                self.leave_functional();
            }
        }
        match phase {
            Phase::Functional => self.warm_record(a, record, pc)?,
            Phase::Skip => self.skip_record(a, record)?,
            _ => {}
        }
        Ok(functional)
    }

    /// One record through caches, directory and pages at the
    /// frozen clock.
    fn warm_record(&mut self, a: &Access, record: u64, pc: Option<u64>) -> Result<(), EngineError> {
        let t = match self.threads.find(a.thread) {
            Some(t) => t,
            None => self
                .threads
                .pin(self.m, &self.cfg.pin, a.thread, record, self.now_ps)?,
        };
        let th = &mut self.threads[t];
        let pc = if a.kind == Kind::IFetch {
            th.last_ifetch = Some(a.addr);
            None
        } else {
            pc.or(th.last_ifetch)
        };
        let core = th.core;
        self.access(core, a, self.now_ps, pc);
        self.waited = false;
        if let Some(s) = self.sampling.as_mut() {
            s.warmed += 1;
        }
        Ok(())
    }

    /// A skipped record: its thread is pinned and its page placed (by the
    /// core that touches it first, as first-touch needs), nothing else.
    fn skip_record(&mut self, a: &Access, record: u64) -> Result<(), EngineError> {
        let t = match self.threads.find(a.thread) {
            Some(t) => t,
            None => self
                .threads
                .pin(self.m, &self.cfg.pin, a.thread, record, self.now_ps)?,
        };
        let node = self.cores[self.threads[t].core].node as usize;
        let line = self.phys_line(a.addr);
        self.mem.home_of(self.m, &mut self.stats, line, node);
        if let Some(s) = self.sampling.as_mut() {
            s.skipped += 1;
        }
        Ok(())
    }

    /// A sampling state that only holds the scratch books
    /// ([`Engine::set_warming`]).
    pub(super) fn books_only(&self) -> super::sample::Sampling {
        let queues = self.mem.queue_counts();
        let scratch = super::stats::Stats::scratch(self.m, queues, self.cfg.window_ns);
        let shape = super::Sample {
            unit: 1,
            period: 1,
            warm: 0,
            offset: 0,
            functional: None,
            jitter: None,
        };
        let mut s = super::sample::Sampling::new(shape, scratch, self.stats.counters.served.len());
        s.books_only = true;
        s
    }

    /// Drains the event loop, then routes the books to the scratch copy and
    /// stops the channels and links.
    fn enter_functional(&mut self) -> Result<(), EngineError> {
        self.advance(true)?;
        self.swap_books(true);
        Ok(())
    }

    /// Back to detail: the run's books return, with the pages placed
    /// meanwhile.
    pub(super) fn leave_functional(&mut self) {
        self.swap_books(false);
    }

    /// Swaps the run's books, the prefetchers' counts among them, with
    /// the scratch copy (the page counts go along) and sets the memory's
    /// functional mode.
    pub(super) fn swap_books(&mut self, functional: bool) {
        let s = self.sampling.as_mut().expect("sampled run");
        std::mem::swap(&mut self.stats, &mut s.scratch);
        s.pf_scratch.resize(self.pf.len(), Default::default());
        for (slot, scratch) in self.pf.iter_mut().zip(&mut s.pf_scratch) {
            std::mem::swap(&mut slot.stats, scratch);
        }
        let pages = &s.scratch.counters.pages_on_node;
        self.stats.counters.pages_on_node.clone_from(pages);
        self.mem.functional = functional;
    }

    /// Adds an access simulated in detail to its unit, if it is in one.
    /// A sample is meant to be small: more than [`MAX_UNITS`] units or
    /// [`MAX_MEASURED`] measured accesses is an error, not unbounded memory.
    #[inline]
    pub(super) fn measure(
        &mut self,
        record: u64,
        a: &Access,
        t: u64,
        lat: u64,
        served: Served,
        invalidations: u64,
    ) -> Result<(), EngineError> {
        let slot = self.stats.served_slot(served);
        let Some(s) = self.sampling.as_mut() else {
            return Ok(());
        };
        s.detailed += 1;
        let Phase::Unit(k) = s.phase(record) else {
            return Ok(());
        };
        if k >= MAX_UNITS || s.latencies.len() as u64 >= MAX_MEASURED {
            return Err(EngineError::SampleTooLarge {
                units: MAX_UNITS,
                measured: MAX_MEASURED,
            });
        }
        let k = k as usize;
        if s.units.len() <= k {
            let slots = s.slots;
            s.units.resize_with(k + 1, || UnitSums {
                accesses: 0,
                data: 0,
                latency_ps: 0,
                served: vec![0; slots],
                invalidations: 0,
                first_issue: u64::MAX,
                last_done: 0,
            });
        }
        let u = &mut s.units[k];
        u.accesses += 1;
        u.served[slot] += 1;
        u.invalidations += invalidations;
        u.first_issue = u.first_issue.min(t);
        u.last_done = u.last_done.max(t.saturating_add(lat));
        if a.kind != Kind::IFetch {
            u.data += 1;
            u.latency_ps += lat as u128;
            s.latencies.push((k as u64, lat.max(1)));
        }
        Ok(())
    }

    /// At the end of a sampled run: at least two units measured (an
    /// interval needs two), and the run's books back from warming.
    pub(super) fn finish_sample(&mut self) -> Result<(), EngineError> {
        if self.sampling.is_none() {
            return Ok(());
        }
        if self.mem.functional {
            self.leave_functional();
        }
        let s = self.sampling.as_ref().expect("sampled run");
        let units = s.units.iter().filter(|u| u.accesses > 0).count() as u64;
        // A part's units are counted when the parts are merged.
        if units < 2 && s.part.is_none() {
            return Err(EngineError::TooFewUnits {
                units,
                records: self.records_in,
                offset: s.shape.offset,
            });
        }
        Ok(())
    }

    /// The sampled run's estimates (None unless `Config::sample` was set).
    /// A part's estimates are the merge's ([`merge_parts`]): None.
    pub(super) fn sampled(&self) -> Option<Sampled> {
        let s = (self.sampling.as_ref()).filter(|s| !s.books_only && s.part.is_none())?;
        let units: Vec<(u64, &UnitSums)> = (s.units.iter().enumerate())
            .filter(|(_, u)| u.accesses > 0)
            .map(|(k, u)| (k as u64, u))
            .collect();
        let counts = [s.detailed, s.warmed, s.skipped];
        Some(estimates(self.m, &s.shape, &units, &s.latencies, counts))
    }

    /// Simulates only `part` of the sample (`replay --parts`): see [`Part`].
    pub fn set_part(&mut self, part: Part) -> Result<(), EngineError> {
        match self.sampling.as_mut() {
            Some(s) if !s.books_only => {
                s.part = Some(part);
                Ok(())
            }
            _ => Err(EngineError::NotSampled),
        }
    }

    /// What a part's run adds to the merged estimates (after
    /// [`Engine::finish`]): its units, their latencies and counts, and its
    /// own summary (the detailed phases' books, without estimates). The
    /// units and latencies are moved out: a second call has none.
    pub fn part_result(&mut self) -> Option<PartResult> {
        let summary = self.summary();
        let s = self.sampling.as_mut()?;
        let part = s.part?;
        Some(PartResult {
            part,
            units: (std::mem::take(&mut s.units).into_iter().enumerate())
                .filter(|(_, u)| u.accesses > 0)
                .map(|(k, u)| (k as u64, u))
                .collect(),
            latencies: std::mem::take(&mut s.latencies),
            counts: [s.detailed, s.warmed, s.skipped],
            summary,
        })
    }
}
