//! `learned:FILE[:MS[:P]]`: a trained model (`numasim train` on a dataset of
//! dispatch decisions) predicts whether a request's data will miss on its
//! worker's node; preload when p > P (default 0.5: the likelier outcome; a
//! higher P preloads fewer requests, trading latency for bytes). Each prediction costs simulated
//! time — a fixed part plus a part per tree node or weight — and one that
//! would cost more than the budget falls back to no preload (the article's
//! 5 ms circuit breaker). Its real prediction time is measured with the
//! clock the binary passes in ([`Timer`]) and reported, never simulated.

use sim::policy::{FeatureSet, Preload, PreloadDecision};

use crate::error::{Bound, PolicyError, SpecProblem};
use crate::model::Model;
use crate::registry::{Ctx, Entry, Spec, Timer};

/// Simulated cost of one prediction: a fixed part (feature extraction) and
/// a part per tree node (or weight) evaluated; deterministic. Calibrated
/// (2026-12-01) on the real prediction time `compare` reports: the seed's
/// GBDT (about 240 nodes per call) takes 0.8 µs at p50 on the development
/// VM, about 3 ns per node; 5 ns per node and 1 µs fixed err on the slow
/// side (the previous 100 ns per node made a prediction 30× the measured).
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
            fixed_ns: 1_000,
            per_node_ns: 5,
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
    /// Preload when the predicted probability of a miss exceeds this.
    threshold: f64,
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
            threshold: 0.5,
        }
    }

    /// Preloads when p exceeds `p` instead of 0.5.
    pub fn threshold(mut self, p: f64) -> Learned {
        self.threshold = p;
        self
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
    fn decide(&mut self, f: &[f64], _truth: Option<bool>) -> PreloadDecision {
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
            preload: p > self.threshold,
            cost_ns,
            fallback: false,
            probability: p,
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Preload> = Entry {
    name: "learned",
    params: ":FILE[:MS[:P]]",
    help: "a trained model (numasim train) predicts which requests will miss; preload those with p > P (default 0.5), MS before their batch",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Preload>, PolicyError> {
    let Some(rest) = spec.rest.filter(|r| !r.is_empty()) else {
        return Err(spec.error(
            "preload",
            SpecProblem::NeedsModel {
                name: "learned",
                syntax: "learned:FILE[:MS[:P]]",
            },
        ));
    };
    // FILE, FILE:MS or FILE:MS:P (numbers after the last colons).
    let number = |x: &str| x.parse::<f64>().is_ok();
    let (file, window_ms, p) = match rest.rsplit_once(':') {
        Some((head, b)) if number(b) => match head.rsplit_once(':') {
            Some((f, a)) if number(a) => (f, super::window_ms(spec, a)?, Some(b)),
            _ => (head, super::window_ms(spec, b)?, None),
        },
        _ => (rest, super::DEFAULT_WINDOW_MS, None),
    };
    let threshold = match p.map(str::parse::<f64>) {
        None => 0.5,
        Some(Ok(p)) if (0.0..1.0).contains(&p) => p,
        Some(_) => {
            return Err(spec.error(
                "preload",
                SpecProblem::Range {
                    param: "threshold P",
                    range: Bound::Probability,
                },
            ));
        }
    };
    let model = ctx.load(spec, file)?;
    if FeatureSet::from_names(&model.features).is_none() {
        return Err(PolicyError::Features {
            file: file.to_string(),
            expected: crate::error::Features::Decision,
        });
    }
    let l = Learned::new(model, format!("learned:{file}"), window_ms, Cost::default())
        .threshold(threshold);
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
            clock: std::sync::Arc::new(|| 5),
            samples: samples.clone(),
        };
        let mut l = Learned::new(stump(3), "learned:test".into(), 120.0, Cost::default())
            .timed(Some(timer));
        let d = l.decide(&[1.0], None);
        // 3 trees × 2 nodes = 6 nodes: 1 µs + 6 × 5 ns.
        assert!(d.preload && !d.fallback);
        assert_eq!(d.cost_ns, 1_030);
        assert!(!l.decide(&[0.0], None).preload);
        assert_eq!(*samples.lock().unwrap(), [0, 0]);
        assert_eq!(l.window_ns(), 120_000_000);
    }

    #[test]
    fn circuit_breaker_falls_back_when_over_budget() {
        // 2000 trees × 2 nodes × 5 ns + 1 µs = 21 µs > a 10 µs budget.
        let cost = Cost {
            budget_ns: 10_000,
            ..Cost::default()
        };
        let mut l = Learned::new(stump(2000), "learned:big".into(), 50.0, cost);
        let d = l.decide(&[1.0], None);
        assert!(d.fallback && !d.preload);
        assert_eq!(d.cost_ns, 10_000);
    }

}
