//! `least-loaded`: the worker with the least outstanding work — the seed's
//! "dynamic load balancing", which moves work by CPU load and knows nothing
//! about where data lives. Ties: lower averaged utilisation, then lower id.
//! (`least_utilized.rs` is the same balancer on the averaged utilisation.)

use sim::policy::{RequestView, Scheduler, WorkerView};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

use super::backlog;

pub struct LeastLoaded {
    pub by_utilization: bool,
}

impl Scheduler for LeastLoaded {
    fn name(&self) -> String {
        if self.by_utilization {
            "least-utilized".into()
        } else {
            ENTRY.name.into()
        }
    }
    fn pick(&mut self, _req: &RequestView, w: &[WorkerView]) -> usize {
        let key = |x: &WorkerView| {
            if self.by_utilization {
                (x.utilization, backlog(x) as f64)
            } else {
                (backlog(x) as f64, x.utilization)
            }
        };
        let mut best = 0;
        for i in 1..w.len() {
            if key(&w[i]) < key(&w[best]) {
                best = i;
            }
        }
        best
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "least-loaded",
    params: "",
    help: "the worker with the least outstanding work (the seed's \"dynamic load balancing\": by CPU load, blind to where data lives)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(LeastLoaded { by_utilization: false }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{request, worker};

    #[test]
    fn least_outstanding_then_lowest_utilisation() {
        let ws = vec![
            worker(0, 0, 3, 0.5, 0.0),
            worker(1, 1, 1, 0.9, 40.0),
            worker(2, 0, 1, 0.2, 0.0),
        ];
        assert_eq!(
            LeastLoaded {
                by_utilization: false
            }
            .pick(&request(0, 0, 0), &ws),
            2
        );
        // By utilisation: worker 2 (0.2) even though worker 1 had as little queued.
        let ws = vec![
            worker(0, 0, 0, 0.5, 0.0),
            worker(1, 1, 0, 0.3, 0.0),
            worker(2, 0, 5, 0.2, 0.0),
        ];
        assert_eq!(
            LeastLoaded {
                by_utilization: true
            }
            .pick(&request(0, 0, 0), &ws),
            2
        );
        assert_eq!(
            LeastLoaded {
                by_utilization: false
            }
            .pick(&request(0, 0, 0), &ws),
            1
        );
    }
}
