//! Issuing an access from outside the event loop: the task engine keeps
//! its own clock per worker (dispatch, queues, closed-loop issue) and asks
//! the memory system what each access costs. The access goes through the
//! same path as a trace's (shortcuts, private levels, directory, LLC,
//! channels, links, placement) and counts in the same statistics.

use traces::Access;

use super::Engine;
use super::cores::Served;

impl Engine<'_> {
    /// Applies access `a` on `core` at `t_ps`; returns its latency (ps) and
    /// whether it was an L1 hit that did not wait for a prefetch in flight
    /// (one that never occupies a miss slot).
    /// Calls must come in non-decreasing `t_ps` order for the queues.
    pub fn issue_on(&mut self, core: usize, a: &Access, t_ps: u64, pc: Option<u64>) -> (u64, bool) {
        let (lat, served) = self.access(core, a, t_ps, pc);
        self.now_ps = self.now_ps.max(t_ps);
        self.stats.elapsed_ps = self.stats.elapsed_ps.max(t_ps.saturating_add(lat));
        self.stats.record(a, t_ps, lat, served);
        let waited = std::mem::take(&mut self.waited);
        (lat, matches!(served, Served::Private(0)) && !waited)
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

    /// The node holding page-of `addr`, if it has been placed.
    pub fn page_node(&self, addr: u64) -> Option<u32> {
        self.mem.node_of(addr)
    }
}
