//! `none`: traffic switches to a moved shard's new worker at once; its
//! first request fetches the shard's state cold.

use sim::policy::Warmup;

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Switch at once.
pub struct NoWarmup;

impl Warmup for NoWarmup {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn prefetch_before_traffic(&self) -> bool {
        false
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Warmup> = Entry {
    name: "none",
    params: "",
    help: "traffic switches at once; the first request fetches the shard's state cold",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Warmup>, PolicyError> {
    spec.no_arguments("warm-up")?;
    Ok(Box::new(NoWarmup))
}
