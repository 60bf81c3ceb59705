//! Preload policies for the request-level model (the seed's
//! "model-triggered preload"): `none`, `always[:WINDOW_MS]`, and learned
//! models (`learned:FILE[:WINDOW_MS]`, built by the binary from the file).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use sim::serve::{FeatureSet, Preload, PreloadDecision};

use crate::PolicyError;
use crate::model::Model;

/// The article's preload window: 120 ms before the task is dispatched.
pub const DEFAULT_WINDOW_MS: f64 = 120.0;

/// Never preload.
pub struct NoPreload;

impl Preload for NoPreload {
    fn name(&self) -> String {
        "none".into()
    }
    fn window_ns(&self) -> u64 {
        0
    }
    fn decide(&mut self, _f: &[f64]) -> PreloadDecision {
        PreloadDecision::default()
    }
}

/// Preload every request (an upper bound on benefit, and on cost).
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
    fn decide(&mut self, _f: &[f64]) -> PreloadDecision {
        PreloadDecision {
            preload: true,
            cost_ns: 0,
            fallback: false,
            probability: 1.0,
        }
    }
}

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
    /// Real wall-clock time of each prediction (ns): reported, never simulated.
    pub wall_ns: Arc<Mutex<Vec<u64>>>,
}

impl Learned {
    pub fn new(model: Model, name: String, window_ms: f64, cost: Cost) -> Learned {
        Learned {
            fset: FeatureSet::from_names(&model.features).unwrap_or_default(),
            model,
            name,
            window_ns: (window_ms * 1e6) as u64,
            cost,
            wall_ns: Arc::new(Mutex::new(Vec::new())),
        }
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
        let t0 = Instant::now();
        let (p, nodes) = self.model.predict(f);
        if let Ok(mut w) = self.wall_ns.lock() {
            w.push(t0.elapsed().as_nanos() as u64);
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

/// `none` or `always[:WINDOW_MS]`; `learned:...` needs a model file and is
/// built with [`Learned::new`].
pub fn create(spec: &str) -> Result<Box<dyn Preload>, PolicyError> {
    let (base, arg) = spec
        .split_once(':')
        .map_or((spec, None), |(b, a)| (b, Some(a)));
    let window = match arg {
        Some(a) => a.parse::<f64>().map_err(|_| {
            PolicyError(format!(
                "preload {spec:?}: window {a:?} is not a number of ms"
            ))
        })?,
        None => DEFAULT_WINDOW_MS,
    };
    match base {
        "none" => Ok(Box::new(NoPreload)),
        "always" => Ok(Box::new(Always {
            window_ns: (window * 1e6) as u64,
        })),
        _ => Err(PolicyError(format!(
            "unknown preload {spec:?}; expected none, always[:MS] or learned:FILE[:MS]"
        ))),
    }
}

#[cfg(test)]
mod tests {
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
        let mut l = Learned::new(stump(3), "learned:test".into(), 120.0, Cost::default());
        let d = l.decide(&[1.0]);
        // 3 trees × 2 nodes = 6 nodes: 2 µs + 6 × 100 ns.
        assert!(d.preload && !d.fallback);
        assert_eq!(d.cost_ns, 2_600);
        assert!(!l.decide(&[0.0]).preload);
        assert_eq!(l.wall_ns.lock().unwrap().len(), 2);
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

    #[test]
    fn names() {
        assert_eq!(create("none").unwrap().name(), "none");
        assert_eq!(create("always:50").unwrap().window_ns(), 50_000_000);
        assert!(create("sometimes").is_err());
        assert!(create("always:x").is_err());
    }
}
