//! A sampled run split into parts (`replay --parts`): what one part's
//! run hands on ([`PartResult`]) and the merge of the parts into one
//! run's estimates, computed by the code the unsplit run uses
//! ([`estimates`]).

use super::sample::{MAX_MEASURED, Part, Sample, UnitSums};
use crate::estimate;
use crate::machine::Machine;
use crate::results::Sampled;

/// One part's run of a split sample ([`Engine::part_result`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PartResult {
    pub part: Part,
    /// Its measured units, by unit number.
    pub units: Vec<(u64, UnitSums)>,
    /// Every measured data access: (unit, latency ps).
    pub latencies: Vec<(u64, u64)>,
    /// Records simulated in detail, warmed functionally, skipped.
    pub counts: [u64; 3],
    pub summary: crate::results::Summary,
}

/// Parts that do not merge into one sample.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(
        "part {index}: it covers records {from}..{to}, the split asks for {want_from}..{want_to}"
    )]
    Range {
        index: usize,
        from: u64,
        to: u64,
        want_from: u64,
        want_to: u64,
    },
    #[error("part {index}: unit {unit} is also in an earlier part, or out of order")]
    Unit { index: usize, unit: u64 },
    #[error("the parts measured {units} unit(s); an interval needs two")]
    TooFewUnits { units: u64 },
    #[error("{got} part(s) given, the split has {want}")]
    Count { got: usize, want: usize },
    #[error(
        "the parts measured more than {measured} accesses; a sample is meant to be small (lengthen the period or shorten the unit)"
    )]
    TooLarge { measured: u64 },
}

/// The estimates of a sample split into `parts` (in order, each the
/// [`PartResult`] of the matching [`Sample::parts`] entry): the units of
/// all parts, as if one run had measured them; the queues named saturated
/// are those any part's detailed phases held at least
/// [`crate::results::SATURATED`] busy, at the most any part saw.
pub fn merge_parts(
    m: &Machine,
    shape: &Sample,
    want: &[Part],
    parts: &[PartResult],
) -> Result<Sampled, MergeError> {
    let mut units: Vec<(u64, &UnitSums)> = Vec::new();
    let mut latencies = Vec::new();
    let mut counts = [0u64; 3];
    let mut saturated: Vec<crate::results::Busy> = Vec::new();
    if parts.len() != want.len() {
        return Err(MergeError::Count {
            got: parts.len(),
            want: want.len(),
        });
    }
    // The unsplit run's bound, over all parts together.
    let measured: usize = parts.iter().map(|r| r.latencies.len()).sum();
    if measured as u64 > MAX_MEASURED {
        return Err(MergeError::TooLarge {
            measured: MAX_MEASURED,
        });
    }
    latencies.reserve_exact(measured);
    for (index, (r, w)) in parts.iter().zip(want).enumerate() {
        if r.part != *w {
            return Err(MergeError::Range {
                index,
                from: r.part.from,
                to: r.part.to,
                want_from: w.from,
                want_to: w.to,
            });
        }
        for (k, u) in &r.units {
            if units.last().is_some_and(|(last, _)| last >= k) {
                return Err(MergeError::Unit { index, unit: *k });
            }
            units.push((*k, u));
        }
        latencies.extend_from_slice(&r.latencies);
        for (c, x) in counts.iter_mut().zip(r.counts) {
            *c += x;
        }
        let s = &r.summary;
        for b in crate::results::saturated(&s.memory.channels, &s.links) {
            match saturated.iter_mut().find(|x| x.queue == b.queue) {
                Some(x) => x.utilization = x.utilization.max(b.utilization),
                None => saturated.push(b),
            }
        }
    }
    if units.len() < 2 {
        return Err(MergeError::TooFewUnits {
            units: units.len() as u64,
        });
    }
    let mut sampled = estimates(m, shape, &units, &latencies, counts);
    sampled.saturated = saturated;
    Ok(sampled)
}

/// The estimates from the measured `units` (by unit number, ascending) and
/// their data accesses' `latencies`; `counts`: records in detail, warmed,
/// skipped.
pub(super) fn estimates(
    m: &Machine,
    shape: &Sample,
    units: &[(u64, &UnitSums)],
    latencies: &[(u64, u64)],
    counts: [u64; 3],
) -> Sampled {
    let counted: Vec<u64> = units.iter().map(|(k, _)| *k).collect();
    let units: Vec<&UnitSums> = units.iter().map(|(_, u)| *u).collect();
    let ratio = |f: &dyn Fn(&UnitSums) -> (f64, f64)| estimate::ratio_over(&units, |u| f(u));
    let p = m.spec.core.caches.len().max(1);
    let mem = |u: &UnitSums| (u.served[p + 2] + u.served[p + 3]) as f64;
    let line = m.spec.line_size as f64;
    let mut ratios = vec![
        (
            "latency_mean_ns".to_string(),
            ratio(&|u| (u.latency_ps as f64 / 1000.0, u.data as f64)),
        ),
        (
            "llc_miss_rate".into(),
            ratio(&|u| (mem(u), u.served[p] as f64 + mem(u))),
        ),
        (
            "hit_rate_LLC".into(),
            ratio(&|u| (u.served[p] as f64, u.served[p] as f64 + mem(u))),
        ),
        (
            "invalidations_per_1k".into(),
            ratio(&|u| (u.invalidations as f64, u.accesses as f64 / 1000.0)),
        ),
        (
            // Bytes per ns is GB/s.
            "read_bandwidth_gbps".into(),
            ratio(&|u| {
                let span_ns = u.last_done.saturating_sub(u.first_issue) as f64 / 1000.0;
                (mem(u) * line, span_ns)
            }),
        ),
    ];
    for (i, c) in m.spec.core.caches.iter().enumerate() {
        let e = ratio(&|u| (u.served[i] as f64, u.served[i..].iter().sum::<u64>() as f64));
        ratios.push((format!("hit_rate_{}", c.name), e));
    }
    // No latency: a unit of instruction fetches only.
    let (metrics, not_estimated) = estimate::sampled_metrics(ratios, latencies, &counted);
    Sampled {
        units: units.len() as u64,
        measured: units.iter().map(|u| u.accesses).sum(),
        detailed: counts[0],
        warmed: counts[1],
        skipped: counts[2],
        metrics,
        not_estimated,
        ..shape.report()
    }
}
