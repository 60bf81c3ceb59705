//! `oracle[:MS]`: preloads exactly the requests that will miss — it is told
//! (from a paired run of the same seed and scheduler without preload) the
//! outcome a learned model is trained to predict. Not a policy a real
//! system could run: the upper bound a predictor is measured against,
//! flagged as such in every table.

use sim::policy::{Preload, PreloadDecision};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Preload the requests that will miss, knowing which.
pub struct Oracle {
    pub window_ns: u64,
}

impl Preload for Oracle {
    fn name(&self) -> String {
        format!("oracle:{}", self.window_ns / 1_000_000)
    }
    fn window_ns(&self) -> u64 {
        self.window_ns
    }
    fn oracle(&self) -> bool {
        true
    }
    fn decide(&mut self, _f: &[f64], truth: Option<bool>) -> PreloadDecision {
        let miss = truth.unwrap_or(false);
        PreloadDecision {
            preload: miss,
            cost_ns: 0,
            fallback: false,
            probability: if miss { 1.0 } else { 0.0 },
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Preload> = Entry {
    name: "oracle",
    params: "[:MS]",
    help: "UPPER BOUND, not runnable for real: told which requests will miss (a paired run without preload), preloads those, MS (default 120) before their batch",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Preload>, PolicyError> {
    let window_ms = match spec.rest {
        Some(ms) => super::window_ms(spec, ms)?,
        None => super::DEFAULT_WINDOW_MS,
    };
    Ok(Box::new(Oracle {
        window_ns: (window_ms * 1e6) as u64,
    }))
}
