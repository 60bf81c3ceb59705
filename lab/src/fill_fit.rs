//! Fits how many fills the stride table keeps in flight per core from each
//! cache level below it (`core.prefetch.fills`, the table's `f.LEVEL=N`)
//! to the fingerprint's stride walks inside that level, by simulating
//! them. A host runs a stride whose lines a cache holds less far ahead
//! than one from memory (a walk inside its 7 MB LLC at 13 ns per load
//! against a 42 ns LLC hit: three lines in flight, where the walks over
//! memory say 5–26 ahead); the model's lookahead comes from the memory
//! walks, so without a limit its lines from the caches arrive in time
//! where the host's do not. For each level in turn (the private levels
//! below the table's, then the LLC), each limit from none through
//! [`TRIED_UP_TO`] runs the level's walks
//! ([`live::fingerprint::fill_fit_walks`]: ascending strides of the
//! table's curve) through the model, and the one nearest the host (least sum of
//! |log(sim/live)|; none on a tie) stands. The descending walks, the
//! streamer's strides and the other walks are not fitted to: they are the
//! held-out check (`tests/prefetch_fidelity.rs`). Deterministic: the same
//! fingerprint and machine give the same limits.

use crate::dependent::{ReplayError, sweep};

/// The largest limit tried (the hosts recorded fit up to 4).
pub const TRIED_UP_TO: u8 = 8;

/// Timed loads per walk (after a warm-up of the whole set).
const TIMED: u64 = 20_000;

/// One level's fitted limit (0: none), and a note of what the host and
/// the model gave.
pub struct Fit {
    pub level: String,
    pub fills: u8,
    pub note: String,
}

fn detected(spec: &sim::machine::MachineSpec) -> bool {
    spec.core.prefetch.as_ref().is_some_and(|p| p.detected)
}

/// The (level, stride) walks the fit reads: not held out (none when the
/// machine has no calibrated prefetchers, as [`fit`] fits nothing then).
pub fn fitted(
    spec: &sim::machine::MachineSpec,
    fp: &live::fingerprint::Fingerprint,
) -> Vec<(String, i64)> {
    if !detected(spec) {
        return Vec::new();
    }
    sim::machine::fill_levels(spec)
        .into_iter()
        .flat_map(|l| {
            live::fingerprint::fill_fit_walks(fp, l)
                .into_iter()
                .map(move |w| (l.to_string(), w.0))
        })
        .collect()
}

/// The fit of every level with walks to fit, each with the fits of the
/// levels before it in force; none when the machine has no calibrated
/// prefetchers.
pub fn fit(
    spec: &sim::machine::MachineSpec,
    fp: &live::fingerprint::Fingerprint,
) -> Result<Vec<Fit>, ReplayError> {
    if !detected(spec) {
        return Ok(Vec::new());
    }
    let mut spec = spec.clone();
    let mut fits = Vec::new();
    let levels: Vec<String> = sim::machine::fill_levels(&spec)
        .into_iter()
        .map(str::to_string)
        .collect();
    for level in levels {
        if let Some(f) = fit_level(&spec, fp, &level)? {
            live::fingerprint::apply_fills(&mut spec, fp, &level, f.fills);
            fits.push(f);
        }
    }
    Ok(fits)
}

fn fit_level(
    spec: &sim::machine::MachineSpec,
    fp: &live::fingerprint::Fingerprint,
    level: &str,
) -> Result<Option<Fit>, ReplayError> {
    let walks = live::fingerprint::fill_fit_walks(fp, level);
    let set = fp.levels.iter().find(|l| l.level == level);
    let (Some(set), false) = (set, walks.is_empty()) else {
        return Ok(None);
    };
    let p = (set.bytes / 64).max(1) as i64;
    // Warm-up and timed halves alike (`walk_ns` times the second half):
    // the warm-up covers the whole set, so that it sits in the level.
    let half = (p as u64).max(TIMED);
    let orders: Vec<Vec<u32>> = walks
        .iter()
        .map(|&(s, _)| {
            (0..2 * half)
                .map(|k| (k as i64 * s).rem_euclid(p) as u32)
                .collect()
        })
        .collect();
    let host: Vec<f64> = walks.iter().map(|w| w.1).collect();
    let (best, sims) = sweep(
        spec,
        0..=TRIED_UP_TO,
        |s, n| live::fingerprint::apply_fills(s, fp, level, n),
        &orders,
        &host,
    )?;
    let median = |v: &[f64]| live::fingerprint::median(v.to_vec());
    let host = median(&host);
    let fills = best as u8;
    let (limit, model) = if fills == 0 {
        (
            "no limit".to_string(),
            format!(
                "model with no limit {:.1}, nearer than with any of 1–{TRIED_UP_TO}",
                median(&sims[0])
            ),
        )
    } else {
        (
            fills.to_string(),
            format!(
                "model with no limit {:.1}, with {fills} {:.1}",
                median(&sims[0]),
                median(&sims[best])
            ),
        )
    };
    let note = format!(
        "stride table's fills from {level} in flight per core: {limit} (fitted by simulation to the {} ascending stride walks inside {level} in its curve, median ns per load: host {host:.1}; {model}; the descending walks are held out)",
        walks.len(),
    );
    Ok(Some(Fit {
        level: level.to_string(),
        fills,
        note,
    }))
}
