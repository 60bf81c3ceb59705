//! `power-of-two`: sample two distinct workers uniformly (seeded), send the
//! request to the one with less queued work (ties: lower utilisation, then
//! the first sampled). Mitzenmacher's "power of two choices".

use sim::policy::{RequestView, Scheduler, WorkerView};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};
use traces::workload::splitmix;

use super::backlog;

pub struct PowerOfTwo {
    state: u64,
}

impl PowerOfTwo {
    pub fn new(seed: u64) -> Self {
        PowerOfTwo {
            state: seed ^ 0x5EED_0F2C,
        }
    }

    /// The two candidates for the next pick.
    fn sample(&mut self, n: usize) -> (usize, usize) {
        let a = (splitmix(&mut self.state) % n as u64) as usize;
        if n == 1 {
            return (a, a);
        }
        let mut b = (splitmix(&mut self.state) % (n as u64 - 1)) as usize;
        if b >= a {
            b += 1;
        }
        (a, b)
    }
}

impl Scheduler for PowerOfTwo {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn pick(&mut self, _req: &RequestView, w: &[WorkerView]) -> usize {
        let (a, b) = self.sample(w.len());
        if (backlog(&w[b]), w[b].utilization) < (backlog(&w[a]), w[a].utilization) {
            b
        } else {
            a
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "power-of-two",
    params: "",
    help: "two workers at random (seeded), the one with less queued work",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(PowerOfTwo::new(ctx.seed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{request, worker};

    #[test]
    fn never_picks_the_worse_of_its_two_samples() {
        let ws: Vec<_> = (0..6)
            .map(|i| worker(i, 0, (i * 7) % 5, 0.1 * i as f64, 0.0))
            .collect();
        let mut p = PowerOfTwo::new(42);
        let mut shadow = PowerOfTwo::new(42);
        for _ in 0..1000 {
            let (a, b) = shadow.sample(ws.len());
            assert_ne!(a, b);
            let got = p.pick(&request(0, 0, 0), &ws);
            assert!(got == a || got == b);
            let other = if got == a { b } else { a };
            assert!(backlog(&ws[got]) <= backlog(&ws[other]));
        }
    }
}
