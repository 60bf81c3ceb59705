//! Training the LSTM of [`super::lstm`] and laying it over a model's
//! feature columns. Deterministic: weights drawn from a seeded SplitMix64,
//! mini-batches in a seeded order, back-propagation through time and Adam,
//! one thread.

use traces::workload::{splitmix, unit};

use super::lstm::{Grad, HIDDEN, Net};
use super::train::Data;
use super::{Body, Model, VERSION};

/// The window a feature name belongs to: `hit_rate_3` → (`hit_rate`, 3).
fn window_of(name: &str) -> Option<(&str, usize)> {
    let (base, k) = name.rsplit_once('_')?;
    let k = k.parse().ok()?;
    ["hit_rate", "read_mb", "addr_delta_mb"]
        .contains(&base)
        .then_some((base, k))
}

/// The LSTM's layout over a model's feature columns: per step (oldest
/// window first) the columns of its input, and the columns beside the
/// sequence.
pub fn layout(names: &[String]) -> (Vec<Vec<u32>>, Vec<u32>) {
    let windows = names
        .iter()
        .filter_map(|n| window_of(n))
        .map(|(_, k)| k + 1)
        .max()
        .unwrap_or(0);
    let mut steps = vec![Vec::new(); windows];
    let mut statics = Vec::new();
    for (i, n) in names.iter().enumerate() {
        match window_of(n) {
            Some((_, k)) => steps[windows - 1 - k].push(i as u32),
            None => statics.push(i as u32),
        }
    }
    // Every step has the same inputs: a window lacking a column its
    // neighbours have gives its columns to the statics instead.
    let width = steps.iter().map(Vec::len).max().unwrap_or(0);
    for s in steps.iter_mut().filter(|s| s.len() != width) {
        statics.append(s);
    }
    statics.sort_unstable();
    steps.retain(|s| s.len() == width);
    (steps, statics)
}

/// Training settings.
#[derive(Clone, Copy, Debug)]
pub struct Fit {
    pub epochs: usize,
    pub batch: usize,
    pub rate: f64,
    pub seed: u64,
}

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            epochs: 20,
            batch: 64,
            rate: 0.01,
            seed: 1,
        }
    }
}

/// Trains an LSTM on `d` (its feature names give the layout).
pub fn train(d: &Data, fit: Fit) -> Model {
    let (steps, statics) = layout(&d.names);
    let (mean, scale) = d.standardisation();
    let h_n = HIDDEN;
    let n_in = steps.first().map_or(0, Vec::len);
    let width = n_in + h_n;
    let mut rng = fit.seed ^ 0x15_7A;
    let mut draw = |fan: usize| (unit(splitmix(&mut rng)) * 2.0 - 1.0) / (fan.max(1) as f64).sqrt();
    let mut w: Vec<f64> = (0..4 * h_n * width).map(|_| draw(width)).collect();
    // The forget gate starts open (bias 1), the usual start.
    let mut b: Vec<f64> = (0..4 * h_n)
        .map(|r| {
            if (h_n..2 * h_n).contains(&r) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let mut out_w: Vec<f64> = (0..h_n + statics.len())
        .map(|_| draw(h_n + statics.len()))
        .collect();
    let mut out_b = 0.0;
    let mut grad = Grad::zeros(w.len(), b.len(), out_w.len());
    let (mut m1, mut m2) = (grad.clone(), grad.clone());
    let (beta1, beta2, eps) = (0.9f64, 0.999f64, 1e-8);
    let mut order: Vec<usize> = (0..d.x.len()).collect();
    let mut t = 0i32;
    for _ in 0..fit.epochs {
        // A seeded shuffle (Fisher–Yates).
        for i in (1..order.len()).rev() {
            let j = (splitmix(&mut rng) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        for chunk in order.chunks(fit.batch.max(1)) {
            grad.clear();
            {
                let net = Net {
                    steps: &steps,
                    statics: &statics,
                    mean: &mean,
                    scale: &scale,
                    hidden: h_n,
                    w: &w,
                    b: &b,
                    out_w: &out_w,
                    out_b,
                };
                for &i in chunk {
                    net.backprop(&d.x[i], d.y[i], &mut grad);
                }
            }
            t += 1;
            let k = 1.0 / chunk.len() as f64;
            let (c1, c2) = (1.0 - beta1.powi(t), 1.0 - beta2.powi(t));
            let adam = |p: &mut f64, g: f64, m: &mut f64, v: &mut f64| {
                let g = g * k;
                *m = beta1 * *m + (1.0 - beta1) * g;
                *v = beta2 * *v + (1.0 - beta2) * g * g;
                *p -= fit.rate * (*m / c1) / ((*v / c2).sqrt() + eps);
            };
            for (((p, g), m), v) in w.iter_mut().zip(&grad.w).zip(&mut m1.w).zip(&mut m2.w) {
                adam(p, *g, m, v);
            }
            for (((p, g), m), v) in b.iter_mut().zip(&grad.b).zip(&mut m1.b).zip(&mut m2.b) {
                adam(p, *g, m, v);
            }
            for (((p, g), m), v) in out_w
                .iter_mut()
                .zip(&grad.out_w)
                .zip(&mut m1.out_w)
                .zip(&mut m2.out_w)
            {
                adam(p, *g, m, v);
            }
            adam(&mut out_b, grad.out_b, &mut m1.out_b, &mut m2.out_b);
        }
    }
    Model {
        format: "numasim-model".into(),
        version: VERSION,
        trainer: "lstm".into(),
        features: d.names.clone(),
        body: Body::Lstm {
            steps,
            statics,
            mean,
            scale,
            hidden: h_n as u32,
            w,
            b,
            out_w,
            out_b,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of a 4-window history (`hit_rate_3` … `hit_rate_0`) and one
    /// static column, labelled by the oldest window: the label needs the
    /// LSTM to carry it through three more steps.
    fn memory_task(n: usize, seed: u64) -> Data {
        let mut names: Vec<String> = vec!["queue".into()];
        for k in 0..4 {
            names.push(format!("hit_rate_{k}"));
        }
        let mut s = seed;
        let mut x = Vec::new();
        let mut y = Vec::new();
        for _ in 0..n {
            let row: Vec<f64> = (0..5).map(|_| unit(splitmix(&mut s))).collect();
            // Column 4 is hit_rate_3, the oldest window.
            y.push(row[4] > 0.5);
            x.push(row);
        }
        Data { names, x, y }
    }

    #[test]
    fn the_layout_reads_windows_oldest_first_and_keeps_the_rest_static() {
        let names: Vec<String> = [
            "remote",
            "hit_rate_0",
            "read_mb_0",
            "hit_rate_1",
            "read_mb_1",
            "queue",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (steps, statics) = layout(&names);
        assert_eq!(steps, vec![vec![3, 4], vec![1, 2]]);
        assert_eq!(statics, vec![0, 5]);
        // A window short of a column: its columns join the statics.
        let names: Vec<String> = ["hit_rate_0", "read_mb_0", "hit_rate_1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(layout(&names), (vec![vec![0, 1]], vec![2]));
        // No history: no steps, every column static.
        let names: Vec<String> = ["remote", "queue"].iter().map(|s| s.to_string()).collect();
        assert_eq!(layout(&names), (vec![], vec![0, 1]));
    }

    #[test]
    fn the_gradient_is_the_numerical_one() {
        let d = memory_task(1, 3);
        let m = train(
            &d,
            Fit {
                epochs: 1,
                ..Fit::default()
            },
        );
        let Body::Lstm {
            steps,
            statics,
            mean,
            scale,
            hidden,
            w,
            b,
            out_w,
            out_b,
        } = &m.body
        else {
            panic!("an LSTM");
        };
        let loss = |w: &[f64], b: &[f64], out_w: &[f64], out_b: f64| {
            let net = Net {
                steps,
                statics,
                mean,
                scale,
                hidden: *hidden as usize,
                w,
                b,
                out_w,
                out_b,
            };
            let mut g = Grad::zeros(w.len(), b.len(), out_w.len());
            (net.backprop(&d.x[0], d.y[0], &mut g), g)
        };
        let (_, g) = loss(w, b, out_w, *out_b);
        let e = 1e-6;
        // Central differences on a spread of weights, biases and outputs.
        for i in (0..w.len()).step_by(7) {
            let (mut up, mut down) = (w.clone(), w.clone());
            up[i] += e;
            down[i] -= e;
            let num = (loss(&up, b, out_w, *out_b).0 - loss(&down, b, out_w, *out_b).0) / (2.0 * e);
            assert!(
                (num - g.w[i]).abs() < 1e-6 * (1.0 + num.abs()),
                "w[{i}]: {num} vs {}",
                g.w[i]
            );
        }
        for i in 0..b.len() {
            let (mut up, mut down) = (b.clone(), b.clone());
            up[i] += e;
            down[i] -= e;
            let num = (loss(w, &up, out_w, *out_b).0 - loss(w, &down, out_w, *out_b).0) / (2.0 * e);
            assert!(
                (num - g.b[i]).abs() < 1e-6 * (1.0 + num.abs()),
                "b[{i}]: {num} vs {}",
                g.b[i]
            );
        }
        for i in 0..out_w.len() {
            let (mut up, mut down) = (out_w.clone(), out_w.clone());
            up[i] += e;
            down[i] -= e;
            let num = (loss(w, b, &up, *out_b).0 - loss(w, b, &down, *out_b).0) / (2.0 * e);
            assert!(
                (num - g.out_w[i]).abs() < 1e-6 * (1.0 + num.abs()),
                "out_w[{i}]"
            );
        }
    }

    #[test]
    fn it_learns_what_the_oldest_window_says_and_is_seeded() {
        let train_d = memory_task(3000, 1);
        let test_d = memory_task(1000, 2);
        let fit = Fit {
            epochs: 15,
            ..Fit::default()
        };
        let m = train(&train_d, fit);
        let p: Vec<f64> = test_d.x.iter().map(|x| m.predict(x).0).collect();
        let auc = super::super::auc(&p, &test_d.y);
        assert!(auc > 0.97, "held-out AUC {auc}");
        assert_eq!(m, train(&train_d, fit), "deterministic");
        // Round trip through the model file.
        let back = Model::from_json(&m.to_json()).unwrap();
        assert_eq!(back.predict(&test_d.x[0]), m.predict(&test_d.x[0]));
        // A file whose weights do not fit its shape is refused.
        let mut j: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
        j["w"].as_array_mut().unwrap().pop();
        let e = Model::from_json(&j.to_string()).unwrap_err().to_string();
        assert!(e.contains("lstm model"), "{e}");
    }
}
