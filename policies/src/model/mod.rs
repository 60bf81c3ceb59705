//! Learned predictors: the model file format, inference, training, and
//! import of XGBoost JSON models.
//!
//! Every tree model (a single tree, a forest, gradient-boosted trees, or an
//! imported XGBoost model) is a list of flat binary trees; inference walks
//! them and reports how many nodes it evaluated, which is what the
//! simulator charges as prediction cost. A logistic model is weights over
//! standardised features. Files are JSON with `"format": "numasim-model"`
//! and a `"version"`; the binary reads them, this module parses text.

mod file;
pub mod linfa_fit;
pub mod lstm;
pub mod lstm_fit;
pub mod train;
pub mod xgboost;

use serde::{Deserialize, Serialize};

use crate::error::ModelError;

/// Model file format version.
pub const VERSION: u32 = 1;

/// One binary tree in flat arrays; node `i` is a leaf when `left[i] == LEAF`.
/// Inner nodes go left when `x[feature] < threshold` (XGBoost's rule).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub feature: Vec<u32>,
    pub threshold: Vec<f64>,
    pub left: Vec<u32>,
    pub right: Vec<u32>,
    pub value: Vec<f64>,
}

/// Marks a leaf in `Tree::left`.
pub const LEAF: u32 = u32::MAX;

impl Tree {
    /// A single leaf.
    pub fn leaf(v: f64) -> Tree {
        Tree {
            feature: vec![0],
            threshold: vec![0.0],
            left: vec![LEAF],
            right: vec![LEAF],
            value: vec![v],
        }
    }

    /// (leaf value, nodes evaluated).
    #[inline]
    pub fn eval(&self, x: &[f64]) -> (f64, u32) {
        let mut i = 0usize;
        let mut n = 1;
        while self.left[i] != LEAF {
            let f = self.feature[i] as usize;
            i = if x.get(f).copied().unwrap_or(0.0) < self.threshold[i] {
                self.left[i]
            } else {
                self.right[i]
            } as usize;
            n += 1;
        }
        (self.value[i], n)
    }

    fn check(&self, features: usize) -> Result<(), ModelError> {
        let n = self.left.len();
        if n == 0
            || [
                self.feature.len(),
                self.threshold.len(),
                self.right.len(),
                self.value.len(),
            ]
            .iter()
            .any(|&l| l != n)
        {
            return Err(ModelError::TreeArrays);
        }
        for i in 0..n {
            if self.left[i] != LEAF {
                let (l, r) = (self.left[i] as usize, self.right[i] as usize);
                // Children after parents: walks terminate.
                if l <= i || r <= i || l >= n || r >= n {
                    return Err(ModelError::Children(i));
                }
                if self.feature[i] as usize >= features {
                    return Err(ModelError::FeatureRange {
                        node: i,
                        feature: self.feature[i],
                    });
                }
            }
        }
        Ok(())
    }
}

/// How tree outputs combine into a probability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Link {
    /// Sum the trees and the base, then the logistic function (boosting).
    Logistic,
    /// Average the trees' leaf probabilities (a tree, a forest).
    Mean,
}

/// The model body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Body {
    Trees {
        link: Link,
        base: f64,
        trees: Vec<Tree>,
    },
    Logistic {
        mean: Vec<f64>,
        scale: Vec<f64>,
        weights: Vec<f64>,
        bias: f64,
    },
    /// A small LSTM over the history windows ([`lstm`]).
    Lstm {
        /// Per step (oldest window first), its input columns.
        steps: Vec<Vec<u32>>,
        /// Columns beside the sequence, into the output.
        statics: Vec<u32>,
        mean: Vec<f64>,
        scale: Vec<f64>,
        hidden: u32,
        /// Gates i, f, g, o: 4·hidden rows of (inputs, hidden) weights.
        w: Vec<f64>,
        b: Vec<f64>,
        out_w: Vec<f64>,
        out_b: f64,
    },
}

/// A model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub format: String,
    pub version: u32,
    /// What trained it: tree, forest, gbdt, logistic, lstm, xgboost.
    pub trainer: String,
    pub features: Vec<String>,
    #[serde(flatten)]
    pub body: Body,
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl Model {
    /// Probability of the positive class and the number of tree nodes (or
    /// weights) evaluated.
    pub fn predict(&self, x: &[f64]) -> (f64, u32) {
        match &self.body {
            Body::Trees { link, base, trees } => {
                let mut sum = 0.0;
                let mut nodes = 0;
                for t in trees {
                    let (v, n) = t.eval(x);
                    sum += v;
                    nodes += n;
                }
                let p = match link {
                    Link::Logistic => sigmoid(base + sum),
                    Link::Mean => {
                        if trees.is_empty() {
                            *base
                        } else {
                            sum / trees.len() as f64
                        }
                    }
                };
                (p, nodes)
            }
            Body::Logistic {
                mean,
                scale,
                weights,
                bias,
            } => {
                let z = bias
                    + weights
                        .iter()
                        .enumerate()
                        .map(|(i, w)| w * (x.get(i).copied().unwrap_or(0.0) - mean[i]) / scale[i])
                        .sum::<f64>();
                (sigmoid(z), weights.len() as u32)
            }
            Body::Lstm {
                steps,
                statics,
                mean,
                scale,
                hidden,
                w,
                b,
                out_w,
                out_b,
            } => lstm::Net {
                steps,
                statics,
                mean,
                scale,
                hidden: *hidden as usize,
                w,
                b,
                out_w,
                out_b: *out_b,
            }
            .predict(x),
        }
    }

    pub(crate) fn check(&self) -> Result<(), ModelError> {
        let nf = self.features.len();
        match &self.body {
            Body::Trees { trees, .. } => {
                for (i, t) in trees.iter().enumerate() {
                    t.check(nf).map_err(|e| ModelError::Tree {
                        index: i,
                        error: Box::new(e),
                    })?;
                }
            }
            Body::Logistic {
                mean,
                scale,
                weights,
                ..
            } => {
                if mean.len() != nf || scale.len() != nf || weights.len() != nf {
                    return Err(ModelError::LogisticShape);
                }
                if scale.iter().any(|s| *s == 0.0 || !s.is_finite()) {
                    return Err(ModelError::LogisticScale);
                }
            }
            Body::Lstm {
                steps,
                statics,
                mean,
                scale,
                hidden,
                w,
                b,
                out_w,
                ..
            } => {
                let h = *hidden as usize;
                let n_in = steps.first().map_or(0, Vec::len);
                let cols_ok = steps
                    .iter()
                    .flatten()
                    .chain(statics)
                    .all(|&c| (c as usize) < nf);
                if h == 0
                    || h > 1024
                    || steps.len() > sim::policy::MAX_HISTORY
                    || steps.iter().any(|s| s.len() != n_in)
                    || !cols_ok
                    || mean.len() != nf
                    || scale.len() != nf
                    || w.len() != 4 * h * (n_in + h)
                    || b.len() != 4 * h
                    || out_w.len() != h + statics.len()
                {
                    return Err(ModelError::LstmShape);
                }
                if scale.iter().any(|s| *s == 0.0 || !s.is_finite()) {
                    return Err(ModelError::LogisticScale);
                }
            }
        }
        Ok(())
    }

    /// The model as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Precision, recall and ROC AUC of scores against labels at threshold 0.5.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Scores {
    pub precision: f64,
    pub recall: f64,
    pub auc: f64,
    pub positives: usize,
    pub n: usize,
}

/// ROC AUC by the rank statistic (Mann–Whitney U), ties averaged.
pub fn auc(scores: &[f64], labels: &[bool]) -> f64 {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let mut ranks = vec![0.0; scores.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && scores[idx[j + 1]] == scores[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            ranks[idx[k]] = r;
        }
        i = j + 1;
    }
    let pos = labels.iter().filter(|&&l| l).count() as f64;
    let neg = labels.len() as f64 - pos;
    if pos == 0.0 || neg == 0.0 {
        return 0.5;
    }
    let sum: f64 = ranks
        .iter()
        .zip(labels)
        .filter(|(_, l)| **l)
        .map(|(r, _)| r)
        .sum();
    (sum - pos * (pos + 1.0) / 2.0) / (pos * neg)
}

pub fn score(probs: &[f64], labels: &[bool]) -> Scores {
    let tp = probs
        .iter()
        .zip(labels)
        .filter(|(p, l)| **p > 0.5 && **l)
        .count() as f64;
    let fp = probs
        .iter()
        .zip(labels)
        .filter(|(p, l)| **p > 0.5 && !**l)
        .count() as f64;
    let pos = labels.iter().filter(|&&l| l).count();
    Scores {
        precision: if tp + fp == 0.0 { 0.0 } else { tp / (tp + fp) },
        recall: if pos == 0 { 0.0 } else { tp / pos as f64 },
        auc: auc(probs, labels),
        positives: pos,
        n: labels.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_by_hand() {
        // Positives score 0.9, 0.4; negatives 0.5, 0.1: pairs ranked right 3 of 4.
        assert_eq!(
            auc(&[0.9, 0.5, 0.4, 0.1], &[true, false, true, false]),
            0.75
        );
        assert_eq!(auc(&[0.9, 0.8, 0.2], &[true, true, false]), 1.0);
        assert_eq!(auc(&[0.5, 0.5], &[true, false]), 0.5);
    }

    #[test]
    fn save_load_predicts_identically_and_bad_files_are_errors() {
        let m = Model {
            format: "numasim-model".into(),
            version: VERSION,
            trainer: "gbdt".into(),
            features: vec!["a".into(), "b".into()],
            body: Body::Trees {
                link: Link::Logistic,
                base: -0.5,
                trees: vec![Tree {
                    feature: vec![0, 0, 0],
                    threshold: vec![1.5, 0.0, 0.0],
                    left: vec![1, LEAF, LEAF],
                    right: vec![2, LEAF, LEAF],
                    value: vec![0.0, -1.0, 2.0],
                }],
            },
        };
        let back = Model::from_json(&m.to_json()).unwrap();
        assert_eq!(back, m);
        for x in [[0.0, 0.0], [2.0, 5.0], [1.5, 0.0]] {
            assert_eq!(back.predict(&x), m.predict(&x));
        }
        // x0 = 2 ≥ 1.5 → right leaf 2: sigmoid(-0.5 + 2) = 0.8176; 2 nodes.
        let (p, n) = m.predict(&[2.0, 0.0]);
        assert!((p - 1.0 / (1.0 + (-1.5f64).exp())).abs() < 1e-12 && n == 2);
        let mut j: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
        j["version"] = 9.into();
        assert!(
            Model::from_json(&j.to_string())
                .unwrap_err()
                .to_string()
                .contains("newer")
        );
        j["version"] = 1.into();
        j["trees"][0]["left"][0] = 0.into();
        assert!(
            Model::from_json(&j.to_string())
                .unwrap_err()
                .to_string()
                .contains("children")
        );
        assert!(Model::from_json("{").is_err());
    }
}
