//! `learned:FILE[:BASE]`: a learned prefetch filter. A base prefetcher
//! (default `delta:2`) proposes lines; a model trained on a trace's
//! candidates (`numasim dataset TRACE`) keeps those it predicts will be used
//! (p ≥ 0.5). Each prediction costs the core simulated time: a fixed part
//! plus a part per tree node (or weight) evaluated.
//!
//! Features of a candidate, from what the core has seen so far (⚑ nothing
//! of the future): its distance in lines from the demanded line and its rank
//! among the base's proposals; the last [`HISTORY`] line deltas of the core
//! and whether each of those accesses missed the prefetcher's level (the
//! seed's "address delta and hit rate" windows); how many of those deltas
//! equal the candidate's distance.

use sim::policy::{AccessView, Prefetcher};

use crate::error::{PolicyError, SpecProblem};
use crate::registry::{Ctx, Entry, Spec};

use crate::model::Model;

/// Accesses of history in the default features.
pub const HISTORY: usize = 10;

/// Deltas are clipped to ± this many lines (far jumps look alike).
const CLIP: i64 = 1 << 20;

/// The feature names with `history` past accesses, in order (the columns
/// of a trace dataset).
pub fn feature_names(history: usize) -> Vec<String> {
    let mut v = vec!["cand_delta".to_string(), "cand_rank".to_string()];
    v.extend((0..history).map(|k| format!("delta_{k}")));
    v.extend((0..history).map(|k| format!("miss_{k}")));
    v.push("cand_repeats".into());
    v
}

/// The history length whose names are exactly `names` (a model's), if any.
pub fn history_of(names: &[String]) -> Option<usize> {
    let h = names.len().checked_sub(3)? / 2;
    (feature_names(h) == names).then_some(h)
}

/// One core's recent accesses: a ring of line deltas and miss flags.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct History {
    last_line: Option<u64>,
    deltas: Vec<i64>,
    misses: Vec<bool>,
    /// Slot of the most recent entry; `len` entries are valid.
    head: usize,
    len: usize,
}

impl History {
    /// A restored history (a checkpoint's) is a ring of `like`'s length
    /// with its head and count inside it.
    fn same_shape(&self, like: &History) -> bool {
        let n = like.deltas.len();
        self.deltas.len() == n && self.misses.len() == n && self.head < n.max(1) && self.len <= n
    }
}

impl Default for History {
    fn default() -> Self {
        History::new(HISTORY)
    }
}

fn clip(d: i64) -> i64 {
    d.clamp(-CLIP, CLIP)
}

impl History {
    /// A ring of `n` past accesses.
    pub fn new(n: usize) -> History {
        History {
            last_line: None,
            deltas: vec![0; n],
            misses: vec![false; n],
            head: 0,
            len: 0,
        }
    }

    /// Records an access to `line` (after its candidates were judged).
    pub fn push(&mut self, line: u64, miss: bool) {
        let d = self
            .last_line
            .map_or(0, |l| clip(line.wrapping_sub(l) as i64));
        self.last_line = Some(line);
        let n = self.deltas.len();
        if n == 0 {
            return;
        }
        self.head = (self.head + 1) % n;
        self.deltas[self.head] = d;
        self.misses[self.head] = miss;
        self.len = (self.len + 1).min(n);
    }

    /// The features of candidate `cand` (rank `rank`) proposed at an access
    /// to `line`, appended to `out` (cleared first).
    pub fn features(&self, line: u64, cand: u64, rank: usize, out: &mut Vec<f64>) {
        out.clear();
        let cd = clip(cand.wrapping_sub(line) as i64);
        out.push(cd as f64);
        out.push(rank as f64);
        let n = self.deltas.len();
        let at = |k: usize| (self.head + n - k) % n;
        for k in 0..n {
            out.push(if k < self.len {
                self.deltas[at(k)] as f64
            } else {
                0.0
            });
        }
        for k in 0..n {
            out.push(if k < self.len {
                self.misses[at(k)] as u8 as f64
            } else {
                0.0
            });
        }
        let repeats = (0..self.len).filter(|&k| self.deltas[at(k)] == cd).count();
        out.push(repeats as f64);
    }
}

/// Simulated cost of one prediction (ps).
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub fixed_ps: u64,
    pub per_node_ps: u64,
}

impl Default for Cost {
    /// 1 ns to gather the features plus 0.1 ns per node: a small tree costs
    /// a few cycles, a big ensemble as much as an L2 hit.
    fn default() -> Self {
        Cost {
            fixed_ps: 1_000,
            per_node_ps: 100,
        }
    }
}

/// The filter. Counters are public for reports.
pub struct Learned {
    base: Box<dyn Prefetcher>,
    model: Model,
    name: String,
    cost: Cost,
    hist: Vec<History>,
    feats: Vec<f64>,
    pending_ps: u64,
    pub predictions: u64,
    pub kept: u64,
}

impl Learned {
    /// `name` is the model's name in reports (its file); `cores` histories
    /// as long as the model's features say ([`history_of`]; the default if
    /// they do not — callers check).
    pub fn new(
        model: Model,
        name: &str,
        base: Box<dyn Prefetcher>,
        cores: usize,
        cost: Cost,
    ) -> Learned {
        let h = history_of(&model.features).unwrap_or(HISTORY);
        Learned {
            name: format!("learned:{name}:{}", base.name()),
            base,
            model,
            cost,
            hist: vec![History::new(h); cores.max(1)],
            feats: Vec::with_capacity(feature_names(h).len()),
            pending_ps: 0,
            predictions: 0,
            kept: 0,
        }
    }
}

impl Prefetcher for Learned {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        let start = out.len();
        self.base.on_access(seen, line, out);
        let core = seen.core.min(self.hist.len() - 1);
        let mut keep = start;
        for i in start..out.len() {
            let cand = out[i];
            self.hist[core].features(line, cand, i - start, &mut self.feats);
            let (p, nodes) = self.model.predict(&self.feats);
            self.predictions += 1;
            self.pending_ps += self.cost.fixed_ps + self.cost.per_node_ps * nodes as u64;
            if p >= 0.5 {
                out[keep] = cand;
                keep += 1;
            }
        }
        self.kept += (keep - start) as u64;
        out.truncate(keep);
        self.hist[core].push(line, seen.miss);
    }

    fn take_cost_ps(&mut self) -> u64 {
        std::mem::take(&mut self.pending_ps)
    }

    fn save_state(&self) -> Vec<u8> {
        sim::checkpoint::encode(&(
            self.base.save_state(),
            &self.hist,
            self.pending_ps,
            self.predictions,
            self.kept,
        ))
    }

    fn load_state(&mut self, state: &[u8]) -> Result<(), sim::checkpoint::CheckpointError> {
        let (base, hist, pending, predictions, kept): (Vec<u8>, Vec<History>, u64, u64, u64) =
            sim::checkpoint::decode(state)?;
        sim::checkpoint::same_len("cores' histories", hist.len(), self.hist.len())?;
        if !hist.iter().all(|h| h.same_shape(&self.hist[0])) {
            return Err(sim::checkpoint::CheckpointError::Malformed {
                what: "a malformed prefetch history",
            });
        }
        self.base.load_state(&base)?;
        (self.hist, self.pending_ps, self.predictions, self.kept) = (hist, pending, predictions, kept);
        Ok(())
    }
}

/// One row of a trace dataset: a candidate the base prefetcher proposed.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateRow {
    /// Index of the access that proposed it (a trace has no clock).
    pub index: u64,
    pub features: Vec<f64>,
    /// The candidate line was accessed within `window` accesses after.
    pub label: bool,
}

/// Builds a trace dataset: every line the base prefetcher proposes at every
/// data access, with the features [`Learned`] will see and whether the line
/// was then used within `window` accesses — what a filter should learn.
pub struct RowBuilder {
    base: Box<dyn Prefetcher>,
    hist: History,
    window: u64,
    max_rows: usize,
    /// Candidate line → rows still waiting for it (with their access index).
    pending: std::collections::HashMap<u64, Vec<usize>>,
    rows: Vec<CandidateRow>,
    loads: u64,
    buf: Vec<u64>,
}

impl RowBuilder {
    /// Rows with `history` past accesses in their features.
    pub fn new(
        base: Box<dyn Prefetcher>,
        window: u64,
        max_rows: usize,
        history: usize,
    ) -> RowBuilder {
        RowBuilder {
            base,
            hist: History::new(history),
            window: window.max(1),
            max_rows,
            pending: Default::default(),
            rows: Vec::new(),
            loads: 0,
            buf: Vec::new(),
        }
    }

    /// Whether the row limit is reached (later accesses only label).
    pub fn full(&self) -> bool {
        self.rows.len() >= self.max_rows
    }

    /// One data access to `line` (line number) by `pc`; `miss`: it missed
    /// the level the prefetcher would fill.
    pub fn access(&mut self, pc: Option<u64>, addr: u64, line: u64, miss: bool, write: bool) {
        let i = self.loads;
        self.loads += 1;
        if let Some(waiting) = self.pending.remove(&line) {
            for r in waiting {
                if i - self.rows[r].index <= self.window {
                    self.rows[r].label = true;
                }
            }
        }
        if i > 0 && i.is_multiple_of(self.window) {
            let (w, rows) = (self.window, &self.rows);
            self.pending
                .retain(|_, v| v.last().is_some_and(|&r| i - rows[r].index <= w));
        }
        let seen = AccessView {
            from_memory: false,
            core: 0,
            pc,
            addr,
            miss,
            prefetch_hit: false,
            write,
        };
        self.buf.clear();
        self.base.on_access(seen, line, &mut self.buf);
        if !self.full() {
            let mut f = Vec::new();
            for (rank, &cand) in self.buf.iter().enumerate() {
                self.hist.features(line, cand, rank, &mut f);
                self.pending.entry(cand).or_default().push(self.rows.len());
                self.rows.push(CandidateRow {
                    index: i,
                    features: f.clone(),
                    label: false,
                });
            }
        }
        self.hist.push(line, miss);
    }

    /// The rows, labelled.
    pub fn finish(self) -> Vec<CandidateRow> {
        self.rows
    }
}

/// The base a learned filter wraps when its spec names none.
pub const DEFAULT_BASE: &str = "delta:2";

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "learned",
    params: ":FILE[:BASE]",
    help: "a trained model (numasim train) keeps the candidates of BASE (default delta:2) it predicts will be used",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let Some(rest) = spec.rest.filter(|r| !r.is_empty()) else {
        return Err(spec.error(
            "prefetcher",
            SpecProblem::NeedsModel {
                name: "learned",
                syntax: "learned:FILE[:BASE]",
            },
        ));
    };
    // FILE or FILE:BASE (BASE may hold colons of its own: ip-stride:2:1).
    let (file, base) = rest.split_once(':').unwrap_or((rest, DEFAULT_BASE));
    if base.starts_with("learned") {
        return Err(spec.error("prefetcher", SpecProblem::NestedFilter));
    }
    let model = ctx.load(spec, file)?;
    if history_of(&model.features).is_none() {
        return Err(PolicyError::Features {
            file: file.to_string(),
            expected: crate::error::Features::PrefetchFilter(feature_names(2)),
        });
    }
    let base = super::PREFETCHERS.build(base, ctx)?;
    Ok(Box::new(Learned::new(
        model,
        file,
        base,
        ctx.cores,
        Cost::default(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_the_named_columns_newest_first() {
        let mut h = History::default();
        let mut f = Vec::new();
        h.features(100, 101, 0, &mut f);
        assert_eq!(f.len(), feature_names(HISTORY).len());
        assert!(f[2..].iter().all(|&x| x == 0.0), "empty history: {f:?}");
        // Lines 10, 12, 14, 13 (misses, hit, miss, miss): deltas 0, +2, +2, −1.
        for (l, m) in [(10, true), (12, false), (14, true), (13, true)] {
            h.push(l, m);
        }
        h.features(13, 15, 1, &mut f);
        assert_eq!(&f[..2], &[2.0, 1.0]);
        assert_eq!(&f[2..7], &[-1.0, 2.0, 2.0, 0.0, 0.0]);
        assert_eq!(&f[12..17], &[1.0, 1.0, 0.0, 1.0, 0.0]);
        assert_eq!(f[22], 2.0, "the candidate's delta +2 appeared twice");
        // The ring keeps only the last HISTORY accesses.
        for l in 0..30u64 {
            h.push(100 + 3 * l, false);
        }
        h.features(187, 190, 0, &mut f);
        assert!(f[2..12].iter().all(|&d| d == 3.0), "{f:?}");
        assert_eq!(f[22], 10.0);
    }

    #[test]
    fn rows_are_labelled_by_what_came_next() {
        // Tagged next-line on misses: lines 0..50 in order, every access a
        // miss: each proposes line+1, used by the next access — all but the
        // last row are positive. Then line 1000 and 5000 (candidates 1001
        // and 5001 never come): negative.
        let mut b = RowBuilder::new(Box::new(crate::prefetch::next_line::NextLine::new(1)), 100, 1000, 3);
        for l in 0..50u64 {
            b.access(None, l * 64, l, true, false);
        }
        b.access(None, 1000 * 64, 1000, true, false);
        b.access(None, 5000 * 64, 5000, true, false);
        let rows = b.finish();
        assert_eq!(rows.len(), 52);
        let pos: Vec<bool> = rows.iter().map(|r| r.label).collect();
        assert!(pos[..49].iter().all(|&x| x));
        assert!(!pos[49] && !pos[50] && !pos[51]);
        assert_eq!(rows[10].features[0], 1.0, "candidate distance");
        // Used too late: window 2, the candidate line comes 3 accesses later.
        let mut b = RowBuilder::new(Box::new(crate::prefetch::next_line::NextLine::new(1)), 2, 1000, 3);
        for l in [10u64, 500, 600, 11] {
            b.access(None, l * 64, l, true, false);
        }
        assert!(!b.finish()[0].label);
    }
}
