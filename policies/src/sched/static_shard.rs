//! `static`: a shard's requests always go to its worker.

use sim::policy::{RequestView, Scheduler, WorkerView};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

pub struct Static;

impl Scheduler for Static {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn pick(&mut self, req: &RequestView, _w: &[WorkerView]) -> usize {
        req.home_worker
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "static",
    params: "",
    help: "a key's requests always go to its home worker (data bound to compute)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(Static))
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
