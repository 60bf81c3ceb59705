//! Attached cache prefetchers (one per private level, as in ChampSim) and
//! their books: what each demand access shows them, the lines they ask
//! for, how those are brought in (from a lower private level, the LLC or
//! memory, within the core's prefetch queue), and whether each prefetched
//! line was used, late or lost. Metrics are defined in
//! [`crate::prefetch`].

use std::cmp::Reverse;

use traces::{Access, Kind};

use crate::directory::NO_AGENT;
use crate::policy::AccessView;
use crate::prefetch::PrefetchStats;

use super::Engine;
use super::cores::Served;

/// Evicted fills in flight kept per prefetcher before the completed ones
/// are dropped (a bound, not a limit on what is tracked: every fill
/// completes within a memory latency).
const EVICTED_INFLIGHT_MAX: usize = 4096;

impl Engine<'_> {
    /// Prefetch accounting and issue for one demand data line, for every
    /// attached prefetcher. Returns the demand's latency, raised if it used
    /// a prefetch still in flight or a prefetcher spent time deciding.
    /// `[line, vline]`: the line, physical and virtual. A prefetcher sees
    /// virtual addresses and names virtual lines (as a core's prefetchers
    /// see its loads' addresses); the books and fills are physical
    /// (`crate::frames`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn prefetch_after(
        &mut self,
        core: usize,
        a: &Access,
        [line, vline]: [u64; 2],
        s: Served,
        lat: u64,
        t: u64,
        tlb_ps: u64,
        pc: Option<u64>,
    ) -> u64 {
        let mut lat = lat;
        // The demand looks for the line once translated; `lat` is counted
        // from then.
        let at = t + tlb_ps;
        for k in 0..self.pf.len() {
            let level = self.pf[k].level;
            let hit_at_level = matches!(s, Served::Private(h) if (h as usize) <= level);
            let mut covered = false;
            if let Some(&(ready, who)) = self.pf[k].lines.get(&line)
                && who as usize == core
            {
                self.pf[k].lines.remove(&line);
                let books = self.outcome_books(k, ready);
                if hit_at_level {
                    covered = true;
                    books.useful += 1;
                    if ready > at {
                        books.late += 1;
                        lat = lat.max(ready - at);
                        self.waited = true;
                    }
                } else {
                    // Gone from the level before its use; a copy below it
                    // is still in flight until the fill completes.
                    books.useless += 1;
                    books.early += 1;
                    if ready > at {
                        lat = lat.max(ready - at);
                        self.waited = true;
                    }
                }
            }
            let slot = &mut self.pf[k];
            if !hit_at_level && !covered {
                slot.stats.demand_misses += 1;
                // Evicted from the level before its fill completed: the
                // copy below is still in flight, and the demand waits.
                if let Some((ready, who)) = slot.evicted_inflight.remove(&line)
                    && who as usize == core
                    && ready > at
                {
                    lat = lat.max(ready - at);
                    self.waited = true;
                }
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
            let seen = AccessView {
                from_memory: matches!(s, Served::LocalMem | Served::RemoteMem),
                core,
                pc,
                addr: a.addr,
                miss: !hit_at_level,
                prefetch_hit: covered,
                write: matches!(a.kind, Kind::Store | Kind::Modify),
            };
            // A prefetcher that computes (a learned one) stalls its core.
            lat += self.consult(k, core, seen, vline, t);
        }
        lat
    }

    /// Shows prefetcher `k` one access (its virtual line `line`) and issues
    /// the (virtual) lines it names;
    /// returns the simulated time it spent deciding. Line buffers come from
    /// a pool (consulting nests: a prefetch request is shown to the levels
    /// below), so steady state allocates nothing.
    pub(super) fn consult(
        &mut self,
        k: usize,
        core: usize,
        seen: AccessView,
        line: u64,
        t: u64,
    ) -> u64 {
        let mut want = self.pf_bufs.pop().unwrap_or_default();
        want.clear();
        self.pf[k].p.on_access(seen, line, &mut want);
        let cost = self.pf[k].p.take_cost_ps();
        self.pf[k].stats.predict_cost_ps += cost;
        for &target in &want {
            self.issue_prefetch(k, core, target, seen.addr, t);
        }
        self.pf_bufs.push(want);
        cost
    }

    /// Brings virtual line `vline` into `core`'s level of prefetcher `k`
    /// (and the levels below it) unless it is already there, in flight, or
    /// modified in another core; from a cache, within the fills in flight
    /// the prefetcher allows from it.
    pub(super) fn issue_prefetch(
        &mut self,
        k: usize,
        core: usize,
        vline: u64,
        trigger: u64,
        t: u64,
    ) {
        let line = self.frames.line(vline, self.line_bits);
        let lvl = self.pf[k].level;
        if self.cores[core].levels[..=lvl]
            .iter()
            .any(|c| c.contains(line))
            || self.pf[k].lines.contains_key(&line)
            || self.pf[k]
                .evicted_inflight
                .get(&line)
                .is_some_and(|&(ready, _)| ready > t)
        {
            return;
        }
        if let Some(e) = self.dir.get(line)
            && e.owner != NO_AGENT
            && e.owner as usize != core
        {
            return;
        }
        // The request is translated before its line can come (`Tlb::peek`:
        // at the cost of where a lookup would find the page, filling no
        // level) unless it stays in the page of the access that triggered
        // it, whose translation is paid. The queues and fill slots are
        // charged at the issue time, as for a demand; the translation
        // delays the line's arrival. Without it a page-crossing prefetch
        // hid every walk of a strided walk over memory behind its flight
        // (`docs/live.md`, "The TLBs fitted to page walks").
        let translate = self.cores[core].tlb.as_ref().map_or(0, |tlb| {
            let addr = vline << self.line_bits;
            if tlb.same_page(addr, trigger) {
                0
            } else {
                self.tlb_ps[tlb.peek(addr)]
            }
        });
        // The request passes the levels below: their prefetchers see it (as
        // ChampSim's L2 prefetcher sees the L1's prefetch requests).
        for j in 0..self.pf.len() {
            if self.pf[j].level > lvl {
                self.observe_prefetch(j, core, [line, vline], t);
            }
        }
        let node = self.cores[core].node as usize;
        let nlev = self.cores[core].levels.len();
        // A private level below the prefetch level has it: an on-chip copy
        // up, at that level's latency, no memory traffic.
        if let Some(h) = (lvl + 1..nlev).find(|&i| self.cores[core].levels[i].contains(line)) {
            let latency = self.cache_fill(k, core, h, t, self.cores[core].level_ps[h]);
            self.pf[k].stats.issued += 1;
            for i in (lvl..h).rev() {
                if let Some(v) = self.cores[core].levels[i].fill(line, false) {
                    self.evicted_private(core, i, v.block, v.dirty, t);
                }
            }
            let ready = self.prefetch_ready(t, latency + translate);
            self.pf[k].lines.insert(line, (ready, core as u16));
            return;
        }
        // Beyond the private levels: only as many in flight as the core's
        // queue holds — one queue for all its prefetchers, as a core has one
        // set of fill buffers. (Warming has no time: nothing stays in
        // flight, nothing is dropped.)
        if let Some(limit) = self.cfg.prefetch_queue.filter(|_| !self.mem.functional) {
            let mut busy = 0;
            for slot in &mut self.pf {
                let q = &mut slot.inflight[core];
                while q.peek().is_some_and(|&Reverse(d)| d <= t) {
                    q.pop();
                }
                busy += q.len();
            }
            if busy >= limit.max(1) {
                self.pf[k].stats.dropped += 1;
                return;
            }
        }
        let latency = if self.llc[node]
            .as_mut()
            .is_some_and(|c| c.probe(line, false))
        {
            self.cache_fill(k, core, nlev, t, self.llc_ps[node])
        } else {
            let home = self.mem.home_of(self.m, &mut self.stats, line, node);
            let l = self
                .mem
                .memory_read(self.m, &mut self.stats, node, home, line, t);
            self.fill_llc(node, line, false, t);
            l
        };
        if self.cfg.prefetch_queue.is_some() && !self.mem.functional {
            self.pf[k].inflight[core].push(Reverse(t.saturating_add(latency + translate)));
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
        let ready = self.prefetch_ready(t, latency + translate);
        self.pf[k].lines.insert(line, (ready, core as u16));
    }

    /// The latency of a fill issued at `t` for prefetcher `k` of `core`
    /// from cache level `from` (a private level's index, or their count for
    /// the LLC) of latency `lat`: `lat` once the earliest of the fill slots
    /// the prefetcher allows from that level is free
    /// ([`crate::policy::Prefetcher::fills_from`]); at once with no limit,
    /// or in functional warming, which has no time.
    fn cache_fill(&mut self, k: usize, core: usize, from: usize, t: u64, lat: u64) -> u64 {
        if self.mem.functional {
            return lat;
        }
        let caches = &self.m.spec.core.caches;
        let name = match caches.get(from) {
            Some(c) => c.name.as_str(),
            None => match &self.m.spec.nodes[self.cores[core].node as usize].llc {
                Some(l) => l.name.as_str(),
                None => return lat,
            },
        };
        let Some(n) = self.pf[k].p.fills_from(name).filter(|&n| n > 0) else {
            return lat;
        };
        let levels = &mut self.pf[k].fill_free[core];
        if levels.len() <= from {
            levels.resize(from + 1, Vec::new());
        }
        let free = &mut levels[from];
        if free.len() < n {
            free.resize(n, 0);
        }
        let first = (0..n).min_by_key(|&i| free[i]).unwrap_or(0);
        let done = free[first].max(t).saturating_add(lat);
        free[first] = done;
        done - t
    }

    /// When a prefetch issued at `t` lands: after its latency, except in
    /// functional warming, which has no time (`sampled.rs`) — there it
    /// has landed (at 0, which also marks it as warming's) when the next
    /// access looks, and a detailed phase never meets a warming prefetch
    /// still in flight at the frozen clock.
    fn prefetch_ready(&self, t: u64, latency: u64) -> u64 {
        if self.mem.functional {
            0
        } else {
            t.saturating_add(latency)
        }
    }

    /// Prefetcher `j` sees a prefetch request from a level above it pass
    /// through its level (not a demand: its counts do not change).
    pub(super) fn observe_prefetch(
        &mut self,
        j: usize,
        core: usize,
        [line, vline]: [u64; 2],
        t: u64,
    ) {
        let lvl = self.pf[j].level;
        let hit = self.cores[core].levels[..=lvl]
            .iter()
            .any(|c| c.contains(line));
        let seen = AccessView {
            from_memory: false,
            core,
            pc: None,
            addr: vline << self.line_bits,
            miss: !hit,
            prefetch_hit: false,
            write: false,
        };
        // Not a demand: its decision time is counted, not charged to one.
        self.consult(j, core, seen, vline, t);
    }

    /// [`Engine::prefetch_lost`] for an eviction at `t` from the level: a
    /// fill still in flight is remembered until it completes.
    pub(super) fn prefetch_evicted(&mut self, k: usize, core: usize, block: u64, t: u64) {
        let slot = &mut self.pf[k];
        let Some(&(ready, who)) = slot.lines.get(&block) else {
            return;
        };
        if ready > t && who as usize == core {
            if slot.evicted_inflight.len() >= EVICTED_INFLIGHT_MAX {
                slot.evicted_inflight.retain(|_, v| v.0 > t);
            }
            slot.evicted_inflight.insert(block, (ready, who));
        }
        self.prefetch_lost(k, core, block);
    }

    /// A line prefetcher `k` brought in left `core`'s level unused: useless, early.
    pub(super) fn prefetch_lost(&mut self, k: usize, core: usize, block: u64) {
        let slot = &mut self.pf[k];
        if let Some(&(ready, who)) = slot.lines.get(&block)
            && who as usize == core
            && !self.cores[core].levels[slot.level].contains(block)
        {
            slot.lines.remove(&block);
            let books = self.outcome_books(k, ready);
            books.useless += 1;
            books.early += 1;
        }
    }

    /// The counts a prefetched line's outcome goes to: its issue's, so that
    /// `useful + useless = issued` holds in the run's books. In a sampled
    /// run a line issued while warming has landed at 0
    /// ([`Engine::prefetch_ready`]); its outcome goes to warming's books
    /// even when a detailed phase sees it, and the outcome of a line issued
    /// in detail goes to the run's even when warming sees it.
    fn outcome_books(&mut self, k: usize, ready: u64) -> &mut PrefetchStats {
        let issued_warming = ready == 0;
        if issued_warming != self.mem.functional
            && let Some(x) = self.sampling.as_mut().and_then(|s| s.pf_scratch.get_mut(k))
        {
            return x;
        }
        &mut self.pf[k].stats
    }
}
