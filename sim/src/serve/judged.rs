//! How good a preload policy's "will miss" calls were, judged against what
//! happened when each call's truth became known (its preload fired, or its
//! batch ran): a confusion matrix, and the calls' probabilities binned by
//! outcome so the ROC AUC comes out in bounded memory, whatever the run's
//! length. Mergeable over seeds. Also the bitsets of what happened (a bit
//! a request: it missed) that an oracle is told and calls are judged by.

/// Probability bins for the AUC (a score's bin is ⌊p · BINS⌋, p = 1 in the last).
pub const PROB_BINS: usize = 1000;

/// The judged calls of one run (or of several, merged).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Judged {
    /// Called miss and missed / called miss and hit / called hit and
    /// missed / called hit and hit.
    pub tp: u64,
    pub fp: u64,
    pub fn_: u64,
    pub tn: u64,
    /// Calls by probability bin, of requests that missed and that did not
    /// (empty until the first call).
    pub pos: Vec<u64>,
    pub neg: Vec<u64>,
}

impl Judged {
    /// Counts one call: probability `p` of a miss, the call `predicted`,
    /// the outcome `missed`.
    pub fn add(&mut self, p: f64, predicted: bool, missed: bool) {
        match (predicted, missed) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, true) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
        if self.pos.is_empty() {
            self.pos = vec![0; PROB_BINS];
            self.neg = vec![0; PROB_BINS];
        }
        let b = ((p.clamp(0.0, 1.0) * PROB_BINS as f64) as usize).min(PROB_BINS - 1);
        if missed {
            self.pos[b] += 1;
        } else {
            self.neg[b] += 1;
        }
    }

    /// Adds another run's calls.
    pub fn merge(&mut self, o: &Judged) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
        self.tn += o.tn;
        if self.pos.is_empty() {
            self.pos = vec![0; o.pos.len()];
            self.neg = vec![0; o.neg.len()];
        }
        for (a, b) in self.pos.iter_mut().zip(&o.pos) {
            *a += b;
        }
        for (a, b) in self.neg.iter_mut().zip(&o.neg) {
            *a += b;
        }
    }

    /// Calls judged.
    pub fn calls(&self) -> u64 {
        self.tp + self.fp + self.fn_ + self.tn
    }

    /// Share of calls that came true.
    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.tp + self.tn, self.calls())
    }

    /// Of the calls "will miss", the share that missed.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    /// Of the requests that missed, the share called "will miss".
    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// ROC AUC: the chance that a request that missed got a higher
    /// probability than one that did not, ties (same bin) counted half.
    /// None without both outcomes.
    pub fn auc(&self) -> Option<f64> {
        let (np, nn) = (self.pos.iter().sum::<u64>(), self.neg.iter().sum::<u64>());
        if np == 0 || nn == 0 {
            return None;
        }
        let mut below = 0u64; // negatives in lower bins
        let mut u = 0.0f64;
        for (p, n) in self.pos.iter().zip(&self.neg) {
            u += *p as f64 * (below as f64 + 0.5 * *n as f64);
            below += n;
        }
        Some(u / (np as f64 * nn as f64))
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Bit `id` of a bitset (the outcomes an oracle is told).
pub(super) fn bit(bits: &[u64], id: u64) -> bool {
    bits.get((id / 64) as usize)
        .is_some_and(|w| w >> (id % 64) & 1 == 1)
}

/// Sets bit `id` of a bitset, growing it as needed.
pub(super) fn set_bit(bits: &mut Vec<u64>, id: u64) {
    let i = (id / 64) as usize;
    if bits.len() <= i {
        bits.resize(i + 1, 0);
    }
    bits[i] |= 1 << (id % 64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusion_and_auc_by_hand() {
        let mut j = Judged::default();
        assert_eq!(j.auc(), None);
        // Scores 0.9 (miss), 0.8 (hit), 0.7 (miss), 0.1 (hit): of the 4
        // (miss, hit) pairs, 3 are ordered right: AUC 0.75.
        j.add(0.9, true, true);
        j.add(0.8, true, false);
        j.add(0.7, true, true);
        j.add(0.1, false, false);
        assert_eq!(j.auc(), Some(0.75));
        assert_eq!((j.tp, j.fp, j.fn_, j.tn), (2, 1, 0, 1));
        assert_eq!(j.precision(), Some(2.0 / 3.0));
        assert_eq!(j.recall(), Some(1.0));
        assert_eq!(j.accuracy(), Some(0.75));
        // "Always" gives every request p = 1: all ties, AUC one half.
        let mut a = Judged::default();
        for m in [true, false, true] {
            a.add(1.0, true, m);
        }
        assert_eq!(a.auc(), Some(0.5));
        // Merging is adding.
        let mut m = j.clone();
        m.merge(&a);
        assert_eq!(m.calls(), 7);
        assert_eq!(m.pos.iter().sum::<u64>(), 4);
    }
}
