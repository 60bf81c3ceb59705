//! Deterministic tree trainers: a CART tree, a bagged forest and
//! gradient-boosted trees (second-order, XGBoost-style split gain).
//! Logistic regression is linfa's ([`super::linfa_fit`]).
//!
//! Trees split on up to 32 quantile thresholds per feature, computed once
//! from the training rows (histogram split finding). Randomness (bootstrap
//! samples, feature subsets) comes from a seeded SplitMix64.

use traces::workload::splitmix;

use super::{Body, LEAF, Link, Model, Tree, VERSION};

/// Training data: rows of features and binary labels.
#[derive(Clone, Debug, Default)]
pub struct Data {
    pub names: Vec<String>,
    pub x: Vec<Vec<f64>>,
    pub y: Vec<bool>,
}

impl Data {
    /// Each column's mean and standard deviation over the rows (1 for a
    /// column with variance at most 1e-12): what the logistic model and
    /// the LSTM standardise their inputs by.
    pub fn standardisation(&self) -> (Vec<f64>, Vec<f64>) {
        let nf = self.names.len();
        let n = self.x.len().max(1) as f64;
        let mean: Vec<f64> = (0..nf)
            .map(|f| self.x.iter().map(|r| r[f]).sum::<f64>() / n)
            .collect();
        let scale = (0..nf)
            .map(|f| {
                let v = self.x.iter().map(|r| (r[f] - mean[f]).powi(2)).sum::<f64>() / n;
                if v > 1e-12 { v.sqrt() } else { 1.0 }
            })
            .collect();
        (mean, scale)
    }
}

const BINS: usize = 32;

/// Candidate thresholds per feature: distinct quantiles of the training values.
fn thresholds(d: &Data) -> Vec<Vec<f64>> {
    let nf = d.names.len();
    (0..nf)
        .map(|f| {
            let mut v: Vec<f64> = d.x.iter().map(|r| r[f]).collect();
            v.sort_by(f64::total_cmp);
            let mut t: Vec<f64> = (1..BINS)
                .map(|k| v[(k * v.len() / BINS).min(v.len() - 1)])
                .collect();
            t.dedup();
            // A threshold equal to the minimum splits nothing.
            t.retain(|&x| x > v[0]);
            t
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Criterion {
    /// g = label, h = 1: Gini impurity reduction; leaf = positive fraction.
    Gini,
    /// g, h = gradient and hessian of the logistic loss; leaf = −G/(H+λ)·η.
    Newton { lambda: f64, eta: f64 },
}

impl Criterion {
    fn score(self, g: f64, h: f64) -> f64 {
        match self {
            // Negative impurity of a node with G positives of H: −2·G·(H−G)/H.
            Criterion::Gini => {
                if h == 0.0 {
                    0.0
                } else {
                    -2.0 * g * (h - g) / h
                }
            }
            Criterion::Newton { lambda, .. } => g * g / (h + lambda),
        }
    }
    fn leaf(self, g: f64, h: f64) -> f64 {
        match self {
            Criterion::Gini => {
                if h == 0.0 {
                    0.0
                } else {
                    g / h
                }
            }
            Criterion::Newton { lambda, eta } => -g / (h + lambda) * eta,
        }
    }
}

struct Builder<'a> {
    d: &'a Data,
    th: &'a [Vec<f64>],
    g: &'a [f64],
    h: &'a [f64],
    crit: Criterion,
    max_depth: u32,
    min_h: f64,
    /// Features tried per split (all, or a random subset for forests).
    feature_subset: usize,
    rng: u64,
    tree: Tree,
}

impl Builder<'_> {
    fn node(&mut self, rows: &[usize], depth: u32) -> u32 {
        let id = self.tree.left.len() as u32;
        let (gs, hs): (f64, f64) = rows
            .iter()
            .fold((0.0, 0.0), |(a, b), &i| (a + self.g[i], b + self.h[i]));
        self.tree.feature.push(0);
        self.tree.threshold.push(0.0);
        self.tree.left.push(LEAF);
        self.tree.right.push(LEAF);
        self.tree.value.push(self.crit.leaf(gs, hs));
        if depth >= self.max_depth || hs < 2.0 * self.min_h {
            return id;
        }
        let nf = self.d.names.len();
        let mut feats: Vec<usize> = (0..nf).collect();
        if self.feature_subset < nf {
            for i in (1..nf).rev() {
                let j = (splitmix(&mut self.rng) % (i as u64 + 1)) as usize;
                feats.swap(i, j);
            }
            feats.truncate(self.feature_subset);
            feats.sort_unstable();
        }
        let parent = self.crit.score(gs, hs);
        let mut best: Option<(f64, usize, f64)> = None;
        for &f in &feats {
            let t = &self.th[f];
            if t.is_empty() {
                continue;
            }
            let mut bg = vec![0.0; t.len() + 1];
            let mut bh = vec![0.0; t.len() + 1];
            for &i in rows {
                let b = t.partition_point(|&c| c <= self.d.x[i][f]);
                bg[b] += self.g[i];
                bh[b] += self.h[i];
            }
            let (mut lg, mut lh) = (0.0, 0.0);
            for k in 0..t.len() {
                lg += bg[k];
                lh += bh[k];
                let (rg, rh) = (gs - lg, hs - lh);
                if lh < self.min_h || rh < self.min_h {
                    continue;
                }
                let gain = self.crit.score(lg, lh) + self.crit.score(rg, rh) - parent;
                if gain > 1e-12 && best.is_none_or(|(b, _, _)| gain > b) {
                    best = Some((gain, f, t[k]));
                }
            }
        }
        let Some((_, f, thr)) = best else { return id };
        // Left: values below the threshold (x < thr goes left at inference).
        let (l, r): (Vec<usize>, Vec<usize>) = rows.iter().partition(|&&i| self.d.x[i][f] < thr);
        if l.is_empty() || r.is_empty() {
            return id;
        }
        let li = self.node(&l, depth + 1);
        let ri = self.node(&r, depth + 1);
        let n = id as usize;
        self.tree.feature[n] = f as u32;
        self.tree.threshold[n] = thr;
        self.tree.left[n] = li;
        self.tree.right[n] = ri;
        id
    }
}

#[allow(clippy::too_many_arguments)]
fn build(
    d: &Data,
    th: &[Vec<f64>],
    rows: &[usize],
    g: &[f64],
    h: &[f64],
    crit: Criterion,
    depth: u32,
    min_h: f64,
    subset: usize,
    seed: u64,
) -> Tree {
    let mut b = Builder {
        d,
        th,
        g,
        h,
        crit,
        max_depth: depth,
        min_h,
        feature_subset: subset,
        rng: seed,
        tree: Tree {
            feature: vec![],
            threshold: vec![],
            left: vec![],
            right: vec![],
            value: vec![],
        },
    };
    b.node(rows, 0);
    b.tree
}

/// A trained model in numasim's format, carrying `d`'s feature names.
pub(super) fn model(d: &Data, trainer: &str, body: Body) -> Model {
    Model {
        format: "numasim-model".into(),
        version: VERSION,
        trainer: trainer.into(),
        features: d.names.clone(),
        body,
    }
}

fn labels(d: &Data) -> Vec<f64> {
    d.y.iter().map(|&y| y as u8 as f64).collect()
}

/// One CART tree (Gini), depth 6: leaves hold the positive fraction.
pub fn tree(d: &Data) -> Model {
    let th = thresholds(d);
    let rows: Vec<usize> = (0..d.y.len()).collect();
    let ones = vec![1.0; d.y.len()];
    let t = build(
        d,
        &th,
        &rows,
        &labels(d),
        &ones,
        Criterion::Gini,
        6,
        10.0,
        usize::MAX,
        0,
    );
    model(
        d,
        "tree",
        Body::Trees {
            link: Link::Mean,
            base: 0.0,
            trees: vec![t],
        },
    )
}

/// A random forest: `n` CART trees of depth 8 on bootstrap samples, √f
/// features per split; leaves average.
pub fn forest(d: &Data, n: usize, seed: u64) -> Model {
    let th = thresholds(d);
    let y = labels(d);
    let ones = vec![1.0; d.y.len()];
    let subset = ((d.names.len() as f64).sqrt().ceil() as usize).max(1);
    let mut s = seed;
    let trees = (0..n)
        .map(|k| {
            let rows: Vec<usize> = (0..d.y.len())
                .map(|_| (splitmix(&mut s) % d.y.len() as u64) as usize)
                .collect();
            build(
                d,
                &th,
                &rows,
                &y,
                &ones,
                Criterion::Gini,
                8,
                5.0,
                subset,
                seed ^ (k as u64 + 1),
            )
        })
        .collect();
    model(
        d,
        "forest",
        Body::Trees {
            link: Link::Mean,
            base: 0.0,
            trees,
        },
    )
}

/// Gradient-boosted trees on the logistic loss: `rounds` trees of depth 3,
/// learning rate 0.2, λ = 1 (Newton leaf values, XGBoost-style gain).
pub fn gbdt(d: &Data, rounds: usize) -> Model {
    let th = thresholds(d);
    let n = d.y.len();
    let pos = d.y.iter().filter(|&&y| y).count() as f64;
    let p0 = ((pos + 1.0) / (n as f64 + 2.0)).clamp(1e-6, 1.0 - 1e-6);
    let base = (p0 / (1.0 - p0)).ln();
    let rows: Vec<usize> = (0..n).collect();
    let mut margin = vec![base; n];
    let mut trees = Vec::with_capacity(rounds);
    let crit = Criterion::Newton {
        lambda: 1.0,
        eta: 0.2,
    };
    for _ in 0..rounds {
        let p: Vec<f64> = margin.iter().map(|m| 1.0 / (1.0 + (-m).exp())).collect();
        let g: Vec<f64> = p
            .iter()
            .zip(&d.y)
            .map(|(p, &y)| p - y as u8 as f64)
            .collect();
        let h: Vec<f64> = p.iter().map(|p| (p * (1.0 - p)).max(1e-6)).collect();
        let t = build(d, &th, &rows, &g, &h, crit, 3, 1.0, usize::MAX, 0);
        for (i, x) in d.x.iter().enumerate() {
            margin[i] += t.eval(x).0;
        }
        trees.push(t);
    }
    model(
        d,
        "gbdt",
        Body::Trees {
            link: Link::Logistic,
            base,
            trees,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{auc, score};

    /// A planted pattern: label = (x0 > 0.6 and x2 < 0.3) or x1 > 0.9, with
    /// 5% label noise, and two noise features.
    fn planted(n: usize, seed: u64) -> Data {
        let mut s = seed;
        let mut u = || (splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64;
        let mut d = Data {
            names: (0..5).map(|i| format!("x{i}")).collect(),
            ..Default::default()
        };
        for _ in 0..n {
            let x: Vec<f64> = (0..5).map(|_| u()).collect();
            let mut y = (x[0] > 0.6 && x[2] < 0.3) || x[1] > 0.9;
            if u() < 0.05 {
                y = !y;
            }
            d.x.push(x);
            d.y.push(y);
        }
        d
    }

    #[test]
    fn every_trainer_beats_a_constant_on_held_out_data() {
        let train = planted(6000, 1);
        let test = planted(3000, 2);
        for m in [
            tree(&train),
            forest(&train, 20, 7),
            gbdt(&train, 40),
            super::super::linfa_fit::logistic(&train).unwrap(),
        ] {
            let p: Vec<f64> = test.x.iter().map(|x| m.predict(x).0).collect();
            let a = auc(&p, &test.y);
            // A constant predictor has AUC 0.5.
            let floor = if m.trainer.starts_with("logistic") {
                0.7
            } else {
                0.9
            };
            assert!(a > floor, "{}: held-out AUC {a}", m.trainer);
            let s = score(&p, &test.y);
            assert!(s.n == 3000 && s.positives > 300);
            // Save + load predicts identically.
            let back = Model::from_json(&m.to_json()).unwrap();
            for x in test.x.iter().take(200) {
                assert_eq!(back.predict(x), m.predict(x), "{}", m.trainer);
            }
        }
    }

    #[test]
    fn training_is_deterministic() {
        let d = planted(2000, 3);
        assert_eq!(gbdt(&d, 10).to_json(), gbdt(&d, 10).to_json());
        assert_eq!(forest(&d, 5, 9).to_json(), forest(&d, 5, 9).to_json());
        assert_ne!(forest(&d, 5, 9).to_json(), forest(&d, 5, 10).to_json());
    }
}
