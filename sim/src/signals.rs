//! What a scheduler may know of one worker, kept and read the same way by
//! both engines that dispatch (the request model and the task engine), so
//! a scheduler sees one definition of every signal of
//! [`WorkerView`](crate::policy::WorkerView):
//!
//! - `outstanding` = queued + running; `idle_fraction` = max(0, 1 −
//!   outstanding / slots), where `slots` is what the worker runs at once
//!   (a batch in the request model, one task in the task engine);
//! - `utilization`: the busy fraction averaged with time constant
//!   [`UTIL_TAU_PS`], folded at every busy/idle change and decayed to the
//!   moment of the view;
//! - `stall_ms` and `stall_ewma_ms`: the memory stall of the worker's last
//!   batch or task and its average (α = [`EWMA_ALPHA`]), each counted only
//!   from the moment it becomes known (a batch's once its data has
//!   arrived, a task's once it has ended): nothing known only later.

use crate::policy::WorkerView;

/// Weight of a new stall in the worker's average (EWMA).
pub const EWMA_ALPHA: f64 = 0.2;
/// Time constant of the averaged busy fraction (ps): 100 ms.
pub const UTIL_TAU_PS: f64 = 100e9;

/// One worker's observable state.
#[derive(Clone, Debug)]
pub struct Signals {
    /// NUMA node of the worker's core.
    pub node: u32,
    busy: bool,
    util: f64,
    util_t_ps: u64,
    last_stall_ms: f64,
    ewma_stall_ms: f64,
    /// A stall (ms) that becomes known at a time (ps), not yet folded in.
    pending: Option<(u64, f64)>,
}

impl Signals {
    /// An idle worker on `node` that has run nothing.
    pub fn new(node: u32) -> Signals {
        Signals {
            node,
            busy: false,
            util: 0.0,
            util_t_ps: 0,
            last_stall_ms: 0.0,
            ewma_stall_ms: 0.0,
            pending: None,
        }
    }

    /// Whether it is running something now.
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// The averaged busy fraction at `t_ps`.
    pub fn utilization(&self, t_ps: u64) -> f64 {
        let dt = t_ps.saturating_sub(self.util_t_ps) as f64;
        let decay = (-dt / UTIL_TAU_PS).exp();
        if self.busy {
            1.0 - (1.0 - self.util) * decay
        } else {
            self.util * decay
        }
    }

    /// It starts (`true`) or stops running at `t_ps`.
    pub fn set_busy(&mut self, busy: bool, t_ps: u64) {
        self.util = self.utilization(t_ps);
        self.util_t_ps = t_ps;
        self.busy = busy;
    }

    /// The stall of what it runs now, known from `at_ps` on (the earlier
    /// one, if still pending, is folded in first).
    pub fn stall_known_at(&mut self, at_ps: u64, stall_ms: f64) {
        self.fold();
        self.pending = Some((at_ps, stall_ms));
    }

    /// Folds a pending stall into the last stall and its average.
    pub fn fold(&mut self) {
        if let Some((_, s)) = self.pending.take() {
            self.last_stall_ms = s;
            self.ewma_stall_ms = EWMA_ALPHA * s + (1.0 - EWMA_ALPHA) * self.ewma_stall_ms;
        }
    }

    /// (last stall, its average) in ms as known at `t_ps`.
    pub fn stall_at(&self, t_ps: u64) -> (f64, f64) {
        match self.pending {
            Some((at, s)) if at <= t_ps => {
                (s, EWMA_ALPHA * s + (1.0 - EWMA_ALPHA) * self.ewma_stall_ms)
            }
            _ => (self.last_stall_ms, self.ewma_stall_ms),
        }
    }

    /// The view of worker `id` at `t_ps` with `queued` waiting, `running`
    /// running and `slots` run at once.
    pub fn view(
        &self,
        id: usize,
        queued: usize,
        running: usize,
        slots: u32,
        t_ps: u64,
    ) -> WorkerView {
        let outstanding = queued + running;
        let (stall_ms, stall_ewma_ms) = self.stall_at(t_ps);
        WorkerView {
            id,
            node: self.node,
            queued,
            busy: self.busy,
            outstanding,
            idle_fraction: (1.0 - outstanding as f64 / slots.max(1) as f64).max(0.0),
            utilization: self.utilization(t_ps),
            stall_ms,
            stall_ewma_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_counts_only_once_known_and_utilization_decays() {
        let mut s = Signals::new(1);
        s.set_busy(true, 0);
        s.stall_known_at(1_000, 5.0);
        assert_eq!(s.stall_at(999), (0.0, 0.0), "not known yet");
        assert_eq!(s.stall_at(1_000), (5.0, 1.0));
        s.stall_known_at(2_000, 10.0);
        assert_eq!(s.stall_at(1_500), (5.0, 1.0), "the first, folded");
        assert_eq!(s.stall_at(2_000), (10.0, 0.2 * 10.0 + 0.8 * 1.0));
        // Busy for one time constant from 0: 1 − e^-1.
        let u = s.utilization(UTIL_TAU_PS as u64);
        assert!((u - (1.0 - (-1.0f64).exp())).abs() < 1e-12);
        let v = s.view(3, 2, 1, 16, 0);
        assert_eq!((v.id, v.node, v.outstanding), (3, 1, 3));
        assert!((v.idle_fraction - (1.0 - 3.0 / 16.0)).abs() < 1e-12);
        assert_eq!(s.view(0, 0, 1, 1, 0).idle_fraction, 0.0, "one slot, taken");
    }
}
