//! Logistic regression trained by linfa-logistic (L-BFGS), converted into
//! numasim's model format: fitted on standardised features, which is
//! numasim's logistic body as it is; linfa models P(its "positive" class),
//! numasim P(label = 1), so the sign follows linfa's class mapping.
//!
//! Why the trees are not linfa's: linfa-trees 0.8 keeps class counts in a
//! `std` `HashMap` (random hasher) and sums them in `f32` in iteration
//! order, so near-tied splits come out differently from run to run — two
//! fits of the same linfa-ensemble forest with the same seed differed in a
//! test here — which breaks numasim's "same inputs, same bytes". The tree,
//! forest and boosted trainers are numasim's own ([`super::train`]).

use linfa::prelude::*;
use ndarray::{Array1, Array2};

use super::train::{Data, model};
use super::{Body, Model};
use std::sync::Arc;

use crate::error::{ModelError, PolicyError};

fn err(what: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> PolicyError {
    ModelError::Fit {
        what,
        error: Arc::new(e),
    }
    .into()
}

/// The rows standardised by (`mean`, `scale`), and the labels.
fn arrays(
    d: &Data,
    mean: &[f64],
    scale: &[f64],
) -> Result<(Array2<f64>, Array1<bool>), PolicyError> {
    let nf = d.names.len();
    let flat: Vec<f64> =
        d.x.iter()
            .flat_map(|r| (0..nf).map(move |f| (r[f] - mean[f]) / scale[f]))
            .collect();
    let x = Array2::from_shape_vec((d.x.len(), nf), flat).map_err(|e| err("training rows", e))?;
    Ok((x, Array1::from(d.y.clone())))
}

/// L2-regularised logistic regression (α = 1e-3) on standardised features.
pub fn logistic(d: &Data) -> Result<Model, PolicyError> {
    let (mean, scale) = d.standardisation();
    let (x, y) = arrays(d, &mean, &scale)?;
    let ds = Dataset::new(x, y);
    let fitted = linfa_logistic::LogisticRegression::default()
        .alpha(1e-3)
        .max_iterations(200)
        .fit(&ds)
        .map_err(|e| err("linfa-logistic", e))?;
    // linfa models P(its "positive" class); numasim's is P(label = 1).
    let sign = if fitted.labels().pos.class { 1.0 } else { -1.0 };
    Ok(model(
        d,
        "logistic (linfa-logistic)",
        Body::Logistic {
            mean,
            scale,
            weights: fitted.params().iter().map(|w| sign * w).collect(),
            bias: sign * fitted.intercept(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Label = x0 > 0.5 (x1 is noise), 400 rows on a grid.
    fn data() -> Data {
        let mut d = Data {
            names: vec!["x0".into(), "x1".into()],
            ..Default::default()
        };
        for i in 0..400u32 {
            let (a, b) = ((i % 20) as f64 / 20.0, (i / 20) as f64 / 20.0);
            d.x.push(vec![a, b]);
            d.y.push(a > 0.5);
        }
        d
    }

    #[test]
    fn the_converted_model_scores_the_planted_rule_and_is_deterministic() {
        let d = data();
        let m = logistic(&d).unwrap();
        // Every row on the right side of the rule.
        for (x, &y) in d.x.iter().zip(&d.y) {
            let p = m.predict(x).0;
            assert_eq!(p >= 0.5, y, "at {x:?}: p = {p}");
        }
        // The rule is on x0: its weight is positive and dominates x1's.
        let Body::Logistic { weights, .. } = &m.body else {
            panic!("a logistic model")
        };
        assert!(
            weights[0] > 0.0 && weights[0] > 10.0 * weights[1].abs(),
            "{weights:?}"
        );
        assert_eq!(m, logistic(&d).unwrap());
    }
}
