//! `round-robin`: workers in turn.

use sim::policy::{RequestView, Scheduler, WorkerView};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

#[derive(Default)]
pub struct RoundRobin {
    next: usize,
}

impl Scheduler for RoundRobin {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn pick(&mut self, _req: &RequestView, w: &[WorkerView]) -> usize {
        let i = self.next % w.len();
        self.next += 1;
        i
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "round-robin",
    params: "",
    help: "workers in turn",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(RoundRobin::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{request, worker};

    #[test]
    fn cycles() {
        let ws: Vec<_> = (0..3).map(|i| worker(i, 0, 0, 0.0, 0.0)).collect();
        let mut p = RoundRobin::default();
        let picks: Vec<usize> = (0..7).map(|_| p.pick(&request(0, 0, 0), &ws)).collect();
        assert_eq!(picks, vec![0, 1, 2, 0, 1, 2, 0]);
    }
}
