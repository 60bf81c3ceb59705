//! Fits the confirmation count of a calibrated machine's prefetchers
//! (`core.prefetch.confirm`: the repeats of a stride, or steps of a
//! stream, before they run ahead) to the fingerprint's ramp walks, by
//! simulating them: each count from 1 to 8 runs the walks through the
//! model, and the one whose latencies are nearest the host's (least sum of
//! |log(sim/live)| over runs of 16, 32 and 64 lines) stands. The walks are
//! runs of consecutive lines at random places; a count that is too small
//! lets each new stream get ahead sooner than on the host. Deterministic:
//! the same fingerprint and machine give the same count.

use crate::dependent::{ReplayError, sweep};

/// Run lengths (lines) the fit compares: long enough that the stream is
/// established within the run, so the run's cost is the ramp, not the
/// next-line pairing of its first lines.
const FIT_RUNS: [u32; 3] = [16, 32, 64];

/// Loads simulated per walk (half warming, half timed).
const LOADS: usize = 60_000;

/// The fitted count, and a note of what the host and the model gave.
pub struct Fit {
    pub confirm: u8,
    pub note: String,
}

/// The fit, or `None` when the fingerprint has no ramp walks or the
/// machine no calibrated prefetchers.
pub fn fit(
    spec: &sim::machine::MachineSpec,
    fp: &live::fingerprint::Fingerprint,
) -> Result<Option<Fit>, ReplayError> {
    let live_ns: Vec<(u32, f64)> = FIT_RUNS
        .iter()
        .filter_map(|&l| fp.ramps.iter().find(|r| r.0 == l).copied())
        .filter(|r| r.1 > 0.0)
        .collect();
    if live_ns.is_empty() || !spec.core.prefetch.as_ref().is_some_and(|p| p.detected) {
        return Ok(None);
    }
    let lines = (fp.bytes / 64) as usize;
    let orders: Vec<Vec<u32>> = live_ns
        .iter()
        .map(|&(l, _)| {
            let mut o = live::fingerprint::ramp_order(lines, l, 0xF17 + l as u64);
            o.truncate(LOADS);
            o
        })
        .collect();
    let host: Vec<f64> = live_ns.iter().map(|l| l.1).collect();
    let (best, sims) = sweep(
        spec,
        1..=policies::prefetch::MAX_CONFIRM,
        |s, c| live::fingerprint::apply_confirm(s, fp, c),
        &orders,
        &host,
    )?;
    let show = |ns: &[f64]| {
        live_ns
            .iter()
            .zip(ns)
            .map(|(l, s)| format!("{} lines {s:.1}", l.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let host = show(&host);
    // The counts tried run from 1.
    let confirm = best as u8 + 1;
    let note = format!(
        "prefetchers' confirmation count {confirm} (fitted by simulation to the ramp walks, runs of lines at random places, ns per load: host {host}; model with 1: {}; with {confirm}: {})",
        show(&sims[0]),
        show(&sims[best])
    );
    Ok(Some(Fit { confirm, note }))
}
