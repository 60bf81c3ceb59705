//! `first-touch`: a page lives on the node of the core that touches it first.

use sim::{Machine, Placement};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

pub struct FirstTouch;

impl Placement for FirstTouch {
    fn name(&self) -> String {
        ENTRY.name.into()
    }

    fn place(&mut self, _page: u64, from: u32, _m: &Machine) -> u32 {
        // A node without memory (e.g. a CPU-only node) gets the engine's
        // nearest-memory fallback.
        from
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Placement> = Entry {
    name: "first-touch",
    params: "",
    help: "a page lives on the node of the core that touches it first (Linux default)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Placement>, PolicyError> {
    spec.no_arguments("placement")?;
    Ok(Box::new(FirstTouch))
}
