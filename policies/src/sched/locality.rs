//! `locality`: the worker on the node that holds the request's data (the
//! shard's home node) with the least queued work; any node if none there.

use sim::serve::{RequestView, Scheduler, WorkerView};

use super::backlog;

pub struct Locality;

impl Scheduler for Locality {
    fn name(&self) -> String {
        "locality".into()
    }
    fn pick(&mut self, req: &RequestView, w: &[WorkerView]) -> usize {
        let local = w.iter().any(|x| x.node == req.shard_node);
        let mut best: Option<usize> = None;
        for (i, x) in w.iter().enumerate() {
            if local && x.node != req.shard_node {
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
