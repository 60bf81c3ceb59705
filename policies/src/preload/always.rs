//! `always[:MS]`: preload every request, MS before its batch is expected
//! to start (an upper bound on benefit, and on cost).

use sim::policy::{Preload, PreloadDecision};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Preload every request.
pub struct Always {
    pub window_ns: u64,
}

impl Preload for Always {
    fn name(&self) -> String {
        format!("always:{}", self.window_ns / 1_000_000)
    }
    fn window_ns(&self) -> u64 {
        self.window_ns
    }
    fn decide(&mut self, _f: &[f64], _truth: Option<bool>) -> PreloadDecision {
        PreloadDecision {
            preload: true,
            cost_ns: 0,
            fallback: false,
            probability: 1.0,
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Preload> = Entry {
    name: "always",
    params: "[:MS]",
    help: "preload every request, MS (default 120) before its batch",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Preload>, PolicyError> {
    let window_ms = match spec.rest {
        Some(ms) => super::window_ms(spec, ms)?,
        None => super::DEFAULT_WINDOW_MS,
    };
    Ok(Box::new(Always {
        window_ns: (window_ms * 1e6) as u64,
    }))
}
