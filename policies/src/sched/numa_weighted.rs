//! `numa-weighted` / `numa-weighted-ewma`: the seed's NUMA-aware dispatcher.
//! weight = 1 / (recent memory latency in ms + 1) × CPU idle fraction; the
//! highest weight wins. "Recent memory latency" is the data stall of the
//! worker's last batch (plain) or its exponential average (EWMA, as the
//! article suggests); the idle fraction is the share of a batch's slots not
//! taken by outstanding requests. Ties: less outstanding work, then lower id.

use sim::policy::{RequestView, Scheduler, WorkerView};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

use super::backlog;

pub struct NumaWeighted {
    pub ewma: bool,
}

impl NumaWeighted {
    /// The seed's weight.
    pub fn weight(&self, w: &WorkerView) -> f64 {
        let lat = if self.ewma {
            w.stall_ewma_ms
        } else {
            w.stall_ms
        };
        (1.0 / (lat + 1.0)) * w.idle_fraction
    }
}

impl Scheduler for NumaWeighted {
    fn name(&self) -> String {
        if self.ewma {
            "numa-weighted-ewma".into()
        } else {
            ENTRY.name.into()
        }
    }
    fn pick(&mut self, _req: &RequestView, w: &[WorkerView]) -> usize {
        let mut best = 0;
        for i in 1..w.len() {
            let (wa, wb) = (self.weight(&w[i]), self.weight(&w[best]));
            if wa > wb || (wa == wb && backlog(&w[i]) < backlog(&w[best])) {
                best = i;
            }
        }
        best
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "numa-weighted",
    params: "",
    help: "highest (1 / (last batch's memory stall ms + 1)) × CPU idle fraction (the seed's dispatcher)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(NumaWeighted { ewma: false }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{request, worker};

    #[test]
    fn highest_weight_wins() {
        // Idle fractions (batch 16): 1 − 0/16 = 1, 1 − 8/16 = 0.5, 1 − 4/16 = 0.75.
        // Weights: 1/(4+1)·1 = 0.2; 1/(0+1)·0.5 = 0.5; 1/(1+1)·0.75 = 0.375.
        let ws = vec![
            worker(0, 0, 0, 0.1, 4.0),
            worker(1, 0, 8, 0.5, 0.0),
            worker(2, 1, 4, 0.2, 1.0),
        ];
        let mut p = NumaWeighted { ewma: false };
        assert!((p.weight(&ws[0]) - 0.2).abs() < 1e-12);
        assert_eq!(p.pick(&request(0, 0, 0), &ws), 1);
        // EWMA latencies are half here: 1/3·1 = 0.333, 0.5, 1/1.5·0.75 = 0.5 (tie: less outstanding → 2).
        let mut e = NumaWeighted { ewma: true };
        assert_eq!(e.pick(&request(0, 0, 0), &ws), 2);
    }
}
