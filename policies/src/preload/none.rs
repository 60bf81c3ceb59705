//! `none`: never preload (the baseline every preload row is paired with).

use sim::policy::{Preload, PreloadDecision};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Never preload.
pub struct NoPreload;

impl Preload for NoPreload {
    fn name(&self) -> String {
        ENTRY.name.into()
    }
    fn window_ns(&self) -> u64 {
        0
    }
    fn decide(&mut self, _f: &[f64], _truth: Option<bool>) -> PreloadDecision {
        PreloadDecision::default()
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Preload> = Entry {
    name: "none",
    params: "",
    help: "never preload",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Preload>, PolicyError> {
    spec.no_arguments("preload")?;
    Ok(Box::new(NoPreload))
}
