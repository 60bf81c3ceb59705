//! Issuing an access from outside the event loop: the task engine keeps
//! its own clock per worker (dispatch, queues, closed-loop issue) and asks
//! the memory system what each access costs. The access goes through the
//! same path as a trace's (shortcuts, private levels, directory, LLC,
//! channels, links, placement) and counts in the same statistics.

use traces::Access;

use super::Engine;
use super::cores::{Issued, Served};

impl Engine<'_> {
    /// Applies access `a` on `core` at `t_ps`: its latency, whether it was
    /// an L1 hit that did not wait for a prefetch in flight (one that never
    /// occupies a miss slot), and whether memory served it.
    /// Calls must come in non-decreasing `t_ps` order for the queues.
    pub fn issue_on(&mut self, core: usize, a: &Access, t_ps: u64, pc: Option<u64>) -> Issued {
        let (lat, served) = self.access(core, a, t_ps, pc);
        self.now_ps = self.now_ps.max(t_ps);
        self.stats.elapsed_ps = self.stats.elapsed_ps.max(t_ps.saturating_add(lat));
        self.stats.record(a, t_ps, lat, served);
        let waited = std::mem::take(&mut self.waited);
        Issued {
            latency_ps: lat,
            l1_hit: matches!(served, Served::Private(0)) && !waited,
            from_memory: matches!(served, Served::LocalMem | Served::RemoteMem),
        }
    }

    /// Whether `node`'s LLC holds the line of `addr` (no side effect: no
    /// replacement state changes).
    pub fn llc_holds(&self, node: usize, addr: u64) -> bool {
        self.llc
            .get(node)
            .and_then(|c| c.as_ref())
            .is_some_and(|c| c.contains(self.phys_line(addr)))
    }

    /// A preload: brings the line of `addr` into `node`'s LLC at `t_ps`,
    /// read from its home memory through the channels and links as any
    /// miss is; no core's private levels or the directory change. Nothing
    /// is read if the LLC holds it (its replacement state is touched, as a
    /// use) or a core holds it modified. Returns when the line has landed
    /// (`t_ps` if nothing was read) and whether it was read. Calls come in
    /// non-decreasing time order with [`Engine::issue_on`]'s.
    pub fn preload_llc(&mut self, node: usize, addr: u64, t_ps: u64) -> (u64, bool) {
        let line = self.phys_line(addr);
        let Some(c) = self.llc.get_mut(node).and_then(|c| c.as_mut()) else {
            return (t_ps, false);
        };
        if c.probe(line, false) {
            return (t_ps, false);
        }
        if self
            .dir
            .get(line)
            .is_some_and(|e| e.owner != crate::directory::NO_AGENT)
        {
            return (t_ps, false);
        }
        self.now_ps = self.now_ps.max(t_ps);
        let home = self.mem.home_of(self.m, &mut self.stats, line, node);
        let lat = self
            .mem
            .memory_read(self.m, &mut self.stats, node, home, line, t_ps);
        self.fill_llc(node, line, false, t_ps);
        (t_ps.saturating_add(lat), true)
    }

    /// Runs `accesses` on `core` untimed, before anything else: the
    /// caches, directory, pages and prefetcher tables take them, while the
    /// queues, the lines in flight and the statistics end as if nothing
    /// had run (every access is applied at time 0, then the queues are
    /// emptied, in-flight fills count as landed, and lines the warm-up
    /// prefetched count as ordinary lines). A recorded program's
    /// start-up before its first task.
    pub fn warm(&mut self, core: usize, accesses: &[Access]) {
        for a in accesses {
            self.access(core, a, 0, None);
        }
        self.waited = false;
        self.mem.reset_queues();
        for slot in &mut self.pf {
            // Lines the warm-up prefetched are ordinary cached lines to the
            // run: neither in flight nor counted as its prefetches.
            slot.lines.clear();
            slot.evicted_inflight.clear();
            for q in &mut slot.inflight {
                q.clear();
            }
            for f in slot.fill_free.iter_mut().flatten() {
                f.fill(0);
            }
        }
        self.clear_stats();
    }

    /// Picoseconds per core cycle (the least time between two accesses of a core).
    pub fn cycle_ps(&self) -> u64 {
        self.cycle_ps
    }

    /// The outstanding-miss limit per core in force.
    pub fn mlp(&self) -> usize {
        self.mlp
    }

    /// Changes the machine at `at_ps`: from then on every memory channel
    /// serves a line `factor` times slower (its part of a line's service
    /// after `at_ps`; page migrations keep their speed). For the test that
    /// no scheduler sees the future: no dispatch before `at_ps` may change.
    pub fn slow_memory_after(&mut self, at_ps: u64, factor: u32) {
        self.mem.slow_after(at_ps, factor);
    }

    /// Starts (`true`) or ends functional warming for a driver outside the
    /// trace replay (the task engine's sampled replay, `sim::tasks`): as in
    /// a sampled trace replay (`sampled.rs`), accesses warmed meanwhile go
    /// through caches, directory, prefetchers and page placement at a
    /// frozen clock, with the channels and links stopped, and count in
    /// scratch books, never in the run's.
    pub fn set_warming(&mut self, on: bool) {
        if on == self.mem.functional {
            return;
        }
        if self.sampling.is_none() {
            self.sampling = Some(Box::new(self.books_only()));
        }
        self.swap_books(on);
    }

    /// Warms access `a` on `core` (between [`Engine::set_warming`]`(true)`
    /// and `(false)`).
    pub fn warm_on(&mut self, core: usize, a: &Access) {
        debug_assert!(self.mem.functional, "warm_on outside warming");
        self.access(core, a, self.now_ps, None);
        self.waited = false;
    }

    /// The node holding page-of `addr`, if it has been placed.
    pub fn page_node(&self, addr: u64) -> Option<u32> {
        self.mem.node_of(addr)
    }
}
