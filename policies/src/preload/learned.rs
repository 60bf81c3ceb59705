//! `learned:FILE[:MS]`: a trained model (`numasim train` on a dataset of
//! dispatch decisions) predicts whether a request's data will miss on its
//! worker's node; preload when p > 0.5. Each prediction costs simulated
//! time — a fixed part plus a part per tree node or weight — and one that
//! would cost more than the budget falls back to no preload (the article's
//! 5 ms circuit breaker). Its real prediction time is measured with the
//! clock the binary passes in ([`Timer`]) and reported, never simulated.

use sim::policy::{FeatureSet, GROUPS, Preload, PreloadDecision};

use crate::error::PolicyError;
use crate::model::Model;
use crate::registry::{Ctx, Entry, Spec, Timer};

/// Simulated cost of one prediction: a fixed part (feature extraction) and
/// a part per tree node (or weight) evaluated; deterministic.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub fixed_ns: u64,
    pub per_node_ns: u64,
    /// Circuit breaker: a prediction costing more than this falls back to
    /// "no preload" (the article's 5 ms timeout).
    pub budget_ns: u64,
}

impl Default for Cost {
    fn default() -> Self {
        Cost {
            fixed_ns: 2_000,
            per_node_ns: 100,
            budget_ns: 5_000_000,
        }
    }
}

/// A learned model deciding preloads.
pub struct Learned {
    model: Model,
    name: String,
    window_ns: u64,
    cost: Cost,
    /// The features the model was trained on (from its names; the default
    /// set if they name none — callers check with `FeatureSet::from_names`).
    fset: FeatureSet,
    /// Where real prediction times go, if anywhere.
    timer: Option<Timer>,
}

impl Learned {
    pub fn new(model: Model, name: String, window_ms: f64, cost: Cost) -> Learned {
        Learned {
            fset: FeatureSet::from_names(&model.features).unwrap_or_default(),
            model,
            name,
            window_ns: (window_ms * 1e6) as u64,
            cost,
            timer: None,
        }
    }

    /// Measures every prediction's real time with `timer`.
    pub fn timed(mut self, timer: Option<Timer>) -> Learned {
        self.timer = timer;
        self
    }
}

impl Preload for Learned {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn features(&self) -> FeatureSet {
        self.fset.clone()
    }
    fn window_ns(&self) -> u64 {
        self.window_ns
    }
    fn decide(&mut self, f: &[f64]) -> PreloadDecision {
        let t0 = self.timer.as_ref().map(|t| (t.clock)());
        let (p, nodes) = self.model.predict(f);
        if let (Some(t), Some(t0)) = (&self.timer, t0)
            && let Ok(mut w) = t.samples.lock()
        {
            w.push((t.clock)().saturating_sub(t0));
        }
        let cost_ns = self.cost.fixed_ns + nodes as u64 * self.cost.per_node_ns;
        if cost_ns > self.cost.budget_ns {
            // The prediction took too long: fall back to the no-preload path.
            return PreloadDecision {
                preload: false,
                cost_ns: self.cost.budget_ns,
                fallback: true,
                probability: p,
            };
        }
        PreloadDecision {
            preload: p > 0.5,
            cost_ns,
            fallback: false,
            probability: p,
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Preload> = Entry {
    name: "learned",
    params: ":FILE[:MS]",
    help: "a trained model (numasim train) predicts which requests will miss; preload those, MS before their batch",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Preload>, PolicyError> {
    let Some(rest) = spec.rest.filter(|r| !r.is_empty()) else {
        return Err(PolicyError(format!(
            "preload {:?}: learned needs a model file, learned:FILE[:MS]",
            spec.full
        )));
    };
    // FILE or FILE:WINDOW_MS (the window is a number after the last colon).
    let (file, window_ms) = match rest.rsplit_once(':') {
        Some((f, w)) if w.parse::<f64>().is_ok() => (f, super::window_ms(spec, w)?),
        _ => (rest, super::DEFAULT_WINDOW_MS),
    };
    let model = ctx.load(spec, file)?;
    if FeatureSet::from_names(&model.features).is_none() {
        return Err(PolicyError(format!(
            "{file}: the model's features are not a set of the request model's decision features (remote_shard, outstanding, then {}_K per past batch K; numasim dataset writes them)",
            GROUPS.join("_K, ")
        )));
    }
    let l = Learned::new(model, format!("learned:{file}"), window_ms, Cost::default());
    Ok(Box::new(l.timed(ctx.timer.cloned())))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::model::{Body, Link, Tree, VERSION};

    fn stump(trees: usize) -> Model {
        Model {
            format: "numasim-model".into(),
            version: VERSION,
            trainer: "test".into(),
            features: vec!["remote".into()],
            body: Body::Trees {
                link: Link::Logistic,
                base: 0.0,
                trees: vec![
                    Tree {
                        feature: vec![0, 0, 0],
                        threshold: vec![0.5, 0.0, 0.0],
                        left: vec![1, u32::MAX, u32::MAX],
                        right: vec![2, u32::MAX, u32::MAX],
                        value: vec![0.0, -1.0, 1.0]
                    };
                    trees
                ],
            },
        }
    }

    #[test]
    fn learned_decides_by_the_model_and_charges_per_node() {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let timer = Timer {
            clock: || 5,
            samples: samples.clone(),
        };
        let mut l = Learned::new(stump(3), "learned:test".into(), 120.0, Cost::default())
            .timed(Some(timer));
        let d = l.decide(&[1.0]);
        // 3 trees × 2 nodes = 6 nodes: 2 µs + 6 × 100 ns.
        assert!(d.preload && !d.fallback);
        assert_eq!(d.cost_ns, 2_600);
        assert!(!l.decide(&[0.0]).preload);
        assert_eq!(*samples.lock().unwrap(), [0, 0]);
        assert_eq!(l.window_ns(), 120_000_000);
    }

    #[test]
    fn circuit_breaker_falls_back_when_over_budget() {
        // 2000 trees × 2 nodes × 100 ns + 2 µs = 402 µs > a 100 µs budget.
        let cost = Cost {
            budget_ns: 100_000,
            ..Cost::default()
        };
        let mut l = Learned::new(stump(2000), "learned:big".into(), 50.0, cost);
        let d = l.decide(&[1.0]);
        assert!(d.fallback && !d.preload);
        assert_eq!(d.cost_ns, 100_000);
    }

}
