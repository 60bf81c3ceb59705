//! `numa-weighted-ewma`: [`NumaWeighted`] with the stall exponentially
//! averaged over the worker's recent batches (α = 0.2), as the article
//! suggests.

use sim::policy::Scheduler;

use super::numa_weighted::NumaWeighted;
use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "numa-weighted-ewma",
    params: "",
    help: "as numa-weighted, with the stall averaged over recent batches (EWMA)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(NumaWeighted { ewma: true }))
}
