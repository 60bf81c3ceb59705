//! `locality`: the worker on the node that holds the request's data (the
//! shard's home node) with the least queued work; any node if none there.

use sim::policy::{RequestView, Scheduler, WorkerView};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

use super::backlog;

pub struct Locality;

impl Scheduler for Locality {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn pick(&mut self, req: &RequestView, w: &[WorkerView]) -> usize {
        let local = w.iter().any(|x| x.node == req.data_node);
        let mut best: Option<usize> = None;
        for (i, x) in w.iter().enumerate() {
            if local && x.node != req.data_node {
                continue;
            }
            if best.is_none_or(|b| (backlog(x), x.utilization) < (backlog(&w[b]), w[b].utilization))
            {
                best = Some(i);
            }
        }
        best.unwrap_or(0)
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "locality",
    params: "",
    help: "the least-queued worker on the node that holds the key's data",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(Locality))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{request, worker};

    #[test]
    fn stays_on_the_data_node() {
        let ws = vec![
            worker(0, 0, 5, 0.9, 0.0),
            worker(1, 1, 0, 0.0, 0.0),
            worker(2, 0, 2, 0.5, 0.0),
        ];
        assert_eq!(Locality.pick(&request(0, 0, 0), &ws), 2);
        assert_eq!(Locality.pick(&request(0, 1, 0), &ws), 1);
    }
}
