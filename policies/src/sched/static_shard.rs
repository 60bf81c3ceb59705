//! `static`: a shard's requests always go to its worker.

use sim::serve::{RequestView, Scheduler, WorkerView};

pub struct Static;

impl Scheduler for Static {
    fn name(&self) -> String {
        "static".into()
    }
    fn pick(&mut self, req: &RequestView, _w: &[WorkerView]) -> usize {
        req.shard_worker
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{request, worker};

    #[test]
    fn always_the_shards_worker_however_loaded() {
        let ws = vec![worker(0, 0, 0, 0.0, 0.0), worker(1, 0, 99, 1.0, 50.0)];
        assert_eq!(Static.pick(&request(3, 0, 1), &ws), 1);
    }
}
