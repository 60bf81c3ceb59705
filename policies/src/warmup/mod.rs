//! Warm-up policies for moved shards, registered by name.

use sim::serve::Warmup;

use crate::PolicyError;

/// Names accepted by [`create`].
pub const NAMES: &[(&str, &str)] = &[
    (
        "none",
        "traffic switches at once; the first request fetches the shard's state cold",
    ),
    (
        "sequential",
        "read the shard's state sequentially on the new node, then switch traffic",
    ),
];

/// Switch at once.
pub struct NoWarmup;

impl Warmup for NoWarmup {
    fn name(&self) -> String {
        "none".into()
    }
    fn prefetch_before_traffic(&self) -> bool {
        false
    }
}

/// Pre-read sequentially, then switch.
pub struct Sequential;

impl Warmup for Sequential {
    fn name(&self) -> String {
        "sequential".into()
    }
    fn prefetch_before_traffic(&self) -> bool {
        true
    }
}

pub fn create(name: &str) -> Result<Box<dyn Warmup>, PolicyError> {
    match name {
        "none" => Ok(Box::new(NoWarmup)),
        "sequential" => Ok(Box::new(Sequential)),
        _ => Err(PolicyError(format!(
            "unknown warm-up {name:?}; expected none or sequential"
        ))),
    }
}
