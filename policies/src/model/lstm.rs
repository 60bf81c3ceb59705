//! A small LSTM over the preload's history windows — the sequence model the
//! seed article suggests in place of its GBDT.
//!
//! The preload's features hold, per past batch of the worker (window *k*,
//! 0 the newest), its hit rate, the MB it read and the drift of its mean
//! address (`hit_rate_k`, `read_mb_k`, `addr_delta_mb_k`). The LSTM reads
//! those windows oldest first, one step each; its last hidden state,
//! beside the features that are no window's (remote, queue length, cached
//! share), goes through a logistic output. Inputs are standardised with the
//! training rows' means and deviations.
//!
//! This file is the network (inference and back-propagation); training
//! and the feature layout are [`super::lstm_fit`]'s. What a prediction
//! costs is reported in the learned preload's cost units (a unit is what
//! one tree node costs its clock): its multiply-adds over
//! [`MACS_PER_UNIT`] plus [`EXP_UNITS`] per exponential (each gate's
//! sigmoid or tanh).

/// Hidden units.
pub const HIDDEN: usize = 8;

/// Multiply-adds per cost unit: the learned preload charges a tree node's
/// time (5 ns) for this many.
pub const MACS_PER_UNIT: usize = 16;

/// Cost units per exponential (sigmoid, tanh): about 20 ns. With
/// [`MACS_PER_UNIT`], the seed's LSTM (10 steps, 8 hidden) is charged
/// 10.1 µs a prediction; measured p50 6.9-11.8 µs over several runs
/// (2026-12-02, 2-vCPU Intel Xeon VM; `docs/prefetch.md`).
pub const EXP_UNITS: usize = 4;

/// The LSTM's parameters (the model body's fields, borrowed).
pub struct Net<'a> {
    pub steps: &'a [Vec<u32>],
    pub statics: &'a [u32],
    pub mean: &'a [f64],
    pub scale: &'a [f64],
    pub hidden: usize,
    /// Gates i, f, g, o stacked: 4H rows of (inputs, then H recurrent).
    pub w: &'a [f64],
    pub b: &'a [f64],
    /// Over the last hidden state, then the statics.
    pub out_w: &'a [f64],
    pub out_b: f64,
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// One step's values, kept for back-propagation.
struct Step {
    x: Vec<f64>,
    h_prev: Vec<f64>,
    c_prev: Vec<f64>,
    i: Vec<f64>,
    f: Vec<f64>,
    g: Vec<f64>,
    o: Vec<f64>,
    c: Vec<f64>,
}

impl Net<'_> {
    fn inputs(&self) -> usize {
        self.steps.first().map_or(0, Vec::len)
    }

    fn std(&self, row: &[f64], col: u32) -> f64 {
        let c = col as usize;
        (row.get(c).copied().unwrap_or(0.0) - self.mean[c]) / self.scale[c]
    }

    /// Runs the sequence; (logit, the last hidden state, the steps if
    /// `keep`).
    fn run(&self, row: &[f64], keep: bool) -> (f64, Vec<f64>, Vec<Step>) {
        let (h_n, n_in) = (self.hidden, self.inputs());
        let width = n_in + h_n;
        let mut h = vec![0.0; h_n];
        let mut c = vec![0.0; h_n];
        let mut kept = Vec::new();
        let mut z = vec![0.0; 4 * h_n];
        let mut x = vec![0.0; n_in];
        for cols in self.steps {
            for (xi, &col) in x.iter_mut().zip(cols) {
                *xi = self.std(row, col);
            }
            for (r, zr) in z.iter_mut().enumerate() {
                let w = &self.w[r * width..(r + 1) * width];
                let mut s = self.b[r];
                for (wi, xi) in w[..n_in].iter().zip(&x) {
                    s += wi * xi;
                }
                for (wi, hi) in w[n_in..].iter().zip(&h) {
                    s += wi * hi;
                }
                *zr = s;
            }
            // Gates in place: i, f and o squashed, g through tanh.
            for (r, zr) in z.iter_mut().enumerate() {
                *zr = if (2 * h_n..3 * h_n).contains(&r) {
                    zr.tanh()
                } else {
                    sigmoid(*zr)
                };
            }
            let c_prev = keep.then(|| c.clone());
            let h_prev = keep.then(|| h.clone());
            for k in 0..h_n {
                c[k] = z[h_n + k] * c[k] + z[k] * z[2 * h_n + k];
                h[k] = z[3 * h_n + k] * c[k].tanh();
            }
            if let (Some(c_prev), Some(h_prev)) = (c_prev, h_prev) {
                kept.push(Step {
                    x: x.clone(),
                    h_prev,
                    c_prev,
                    i: z[..h_n].to_vec(),
                    f: z[h_n..2 * h_n].to_vec(),
                    g: z[2 * h_n..3 * h_n].to_vec(),
                    o: z[3 * h_n..].to_vec(),
                    c: c.clone(),
                });
            }
        }
        let mut logit = self.out_b;
        for (wi, hi) in self.out_w[..h_n].iter().zip(&h) {
            logit += wi * hi;
        }
        for (wi, &col) in self.out_w[h_n..].iter().zip(self.statics) {
            logit += wi * self.std(row, col);
        }
        (logit, h, kept)
    }

    /// Probability of a miss and the prediction's cost units.
    pub fn predict(&self, row: &[f64]) -> (f64, u32) {
        let (logit, _, _) = self.run(row, false);
        let macs =
            self.steps.len() * 4 * self.hidden * (self.inputs() + self.hidden) + self.out_w.len();
        let exps = self.steps.len() * 5 * self.hidden + 1;
        let units = macs.div_ceil(MACS_PER_UNIT) + EXP_UNITS * exps;
        (sigmoid(logit), units as u32)
    }

    /// Adds the gradient of the log loss of `row` (label `y`) to the
    /// gradient buffers (same shapes as `w`, `b`, `out_w`, `out_b`);
    /// returns the loss.
    pub(super) fn backprop(&self, row: &[f64], y: bool, grad: &mut Grad) -> f64 {
        let (h_n, n_in) = (self.hidden, self.inputs());
        let width = n_in + h_n;
        let (logit, h, steps) = self.run(row, true);
        let p = sigmoid(logit);
        let t = if y { 1.0 } else { 0.0 };
        let loss = -(t * p.max(1e-12).ln() + (1.0 - t) * (1.0 - p).max(1e-12).ln());
        let dlogit = p - t;
        grad.out_b += dlogit;
        for (g, hk) in grad.out_w[..h_n].iter_mut().zip(&h) {
            *g += dlogit * hk;
        }
        for (j, &col) in self.statics.iter().enumerate() {
            grad.out_w[h_n + j] += dlogit * self.std(row, col);
        }
        let mut dh: Vec<f64> = self.out_w[..h_n].iter().map(|w| dlogit * w).collect();
        let mut dc = vec![0.0; h_n];
        let mut dz = vec![0.0; 4 * h_n];
        for st in steps.iter().rev() {
            for k in 0..h_n {
                let tc = st.c[k].tanh();
                let dck = dh[k] * st.o[k] * (1.0 - tc * tc) + dc[k];
                let (di, df, dg, do_) =
                    (dck * st.g[k], dck * st.c_prev[k], dck * st.i[k], dh[k] * tc);
                dz[k] = di * st.i[k] * (1.0 - st.i[k]);
                dz[h_n + k] = df * st.f[k] * (1.0 - st.f[k]);
                dz[2 * h_n + k] = dg * (1.0 - st.g[k] * st.g[k]);
                dz[3 * h_n + k] = do_ * st.o[k] * (1.0 - st.o[k]);
                dc[k] = dck * st.f[k];
            }
            let mut dh_prev = vec![0.0; h_n];
            for (r, &dzr) in dz.iter().enumerate() {
                grad.b[r] += dzr;
                let gw = &mut grad.w[r * width..(r + 1) * width];
                for (g, xi) in gw[..n_in].iter_mut().zip(&st.x) {
                    *g += dzr * xi;
                }
                for (g, hi) in gw[n_in..].iter_mut().zip(&st.h_prev) {
                    *g += dzr * hi;
                }
                let w = &self.w[r * width + n_in..(r + 1) * width];
                for (d, wi) in dh_prev.iter_mut().zip(w) {
                    *d += dzr * wi;
                }
            }
            dh = dh_prev;
        }
        loss
    }
}

/// Gradient (or Adam moment) buffers in the parameters' shapes.
#[derive(Clone)]
pub(super) struct Grad {
    pub w: Vec<f64>,
    pub b: Vec<f64>,
    pub out_w: Vec<f64>,
    pub out_b: f64,
}

impl Grad {
    pub(super) fn zeros(w: usize, b: usize, out_w: usize) -> Grad {
        Grad {
            w: vec![0.0; w],
            b: vec![0.0; b],
            out_w: vec![0.0; out_w],
            out_b: 0.0,
        }
    }

    pub(super) fn clear(&mut self) {
        self.w.fill(0.0);
        self.b.fill(0.0);
        self.out_w.fill(0.0);
        self.out_b = 0.0;
    }
}
