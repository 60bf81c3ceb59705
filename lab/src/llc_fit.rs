//! Fits how many fills from the LLC the stride table keeps in flight per
//! core (`core.prefetch.llc_fills`, the table's `l=`) to the fingerprint's
//! stride walks inside the LLC, by simulating them. A host runs a stride
//! whose lines its LLC holds less far ahead than one from memory (the
//! walks' ns per load against the LLC's latency say a few lines, where the
//! memory walks say 5–26); the model's lookahead comes from the memory
//! walks, so without a limit its lines from the LLC arrive in time where
//! the host's do not. Each limit from none through [`MAX_FILLS`] runs the
//! walks ([`live::fingerprint::llc_fit_walks`]: ascending strides the
//! table follows) through the model, and the one nearest the host (least
//! sum of |log(sim/live)|; none on a tie) stands. The descending walks,
//! the streamer's strides and every other level's walks are not fitted
//! to: they are the held-out check (`tests/prefetch_fidelity.rs`).
//! Deterministic: the same fingerprint and machine give the same limit.

use crate::dependent::{ReplayError, walk_ns};

/// The largest limit tried (the hosts recorded fit 3–5).
pub const MAX_FILLS: u8 = 8;

/// Timed loads per walk (after a warm-up of the whole set).
const TIMED: u64 = 20_000;

/// The fitted limit (0: none), and a note of what the host and the model gave.
pub struct Fit {
    pub fills: u8,
    pub note: String,
}

/// The fit, or `None` when the machine has no LLC or no calibrated
/// prefetchers, or the fingerprint no walks to fit.
pub fn fit(
    spec: &sim::machine::MachineSpec,
    fp: &live::fingerprint::Fingerprint,
) -> Result<Option<Fit>, ReplayError> {
    let Some(llc) = spec.nodes.first().and_then(|n| n.llc.as_ref()) else {
        return Ok(None);
    };
    let walks = live::fingerprint::llc_fit_walks(fp, &llc.name);
    let set = fp.levels.iter().find(|l| l.level == llc.name);
    let (Some(set), false) = (set, walks.is_empty()) else {
        return Ok(None);
    };
    if !spec.core.prefetch.as_ref().is_some_and(|p| p.detected) {
        return Ok(None);
    }
    let p = (set.bytes / 64).max(1) as i64;
    // Warm-up and timed halves alike (`walk_ns` times the second half):
    // the warm-up covers the whole set, so that it sits in the LLC.
    let half = (p as u64).max(TIMED);
    let orders: Vec<Vec<u32>> = walks
        .iter()
        .map(|&(s, _)| {
            (0..2 * half)
                .map(|k| (k as i64 * s).rem_euclid(p) as u32)
                .collect()
        })
        .collect();
    let mut errors = Vec::new();
    let mut sims = Vec::new();
    for fills in 0..=MAX_FILLS {
        let mut s = spec.clone();
        live::fingerprint::apply_llc_fills(&mut s, fp, fills);
        let model = s
            .core
            .prefetch
            .as_ref()
            .map(|p| p.model.clone())
            .unwrap_or_default();
        let m = sim::Machine::new(s).map_err(ReplayError::Machine)?;
        let ns = orders
            .iter()
            .map(|o| walk_ns(&m, &model, o))
            .collect::<Result<Vec<_>, _>>()?;
        let err = ns
            .iter()
            .zip(&walks)
            .map(|(s, l)| (s / l.1).ln().abs())
            .sum::<f64>();
        errors.push(err);
        sims.push(ns);
    }
    let best = (0..errors.len())
        .min_by(|&a, &b| errors[a].total_cmp(&errors[b]))
        .unwrap_or(0);
    let median = |v: Vec<f64>| live::fingerprint::median(v);
    let host = median(walks.iter().map(|w| w.1).collect());
    let fills = best as u8;
    let limit = |f: u8| {
        if f == 0 {
            "no limit".to_string()
        } else {
            format!("{f}")
        }
    };
    let model = if fills == 0 {
        format!(
            "model with no limit {:.1}, nearer than with any of 1–{MAX_FILLS}",
            median(sims[0].clone())
        )
    } else {
        format!(
            "model with no limit {:.1}, with {fills} {:.1}",
            median(sims[0].clone()),
            median(sims[best].clone())
        )
    };
    let note = format!(
        "stride table's fills from the LLC in flight per core: {} (fitted by simulation to the {} ascending stride walks inside {} it follows, median ns per load: host {host:.1}; {model}; the descending walks are held out)",
        limit(fills),
        walks.len(),
        llc.name,
    );
    Ok(Some(Fit { fills, note }))
}
