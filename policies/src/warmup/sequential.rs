//! `sequential`: the new node reads a moved shard's state sequentially,
//! and traffic switches only when it is resident.

use sim::policy::Warmup;

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Pre-read sequentially, then switch.
pub struct Sequential;

impl Warmup for Sequential {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn prefetch_before_traffic(&self) -> bool {
        true
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Warmup> = Entry {
    name: "sequential",
    params: "",
    help: "read the shard's state sequentially on the new node, then switch traffic",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Warmup>, PolicyError> {
    spec.no_arguments("warm-up")?;
    Ok(Box::new(Sequential))
}
