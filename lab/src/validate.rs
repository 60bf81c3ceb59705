//! `validate`'s measurements: a trace simulated as the live replay runs it
//! (one thread, every load miss blocking, stores posted, a warming pass then a timed one, per
//! chunk of accesses) and replayed live on a pinned CPU several times,
//! the live side corrected by the harness's own overhead and the host's
//! memory-latency drift recorded beside it.

use traces::Access;

use crate::LabError;

/// What can stop a validation.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The simulated replay does not build (its prefetchers).
    #[error(transparent)]
    Replay(#[from] crate::dependent::ReplayError),
    #[error("{trace}: {error}")]
    Engine {
        trace: String,
        error: sim::EngineError,
    },
    #[error(transparent)]
    Live(#[from] live::LiveError),
    #[error(transparent)]
    Lab(#[from] LabError),
}

type Result<T> = std::result::Result<T, ValidateError>;

/// One line of `validate.csv`.
#[derive(serde::Serialize, Default)]
pub struct ValidateRow {
    pub trace: String,
    pub metric: &'static str,
    #[serde(serialize_with = "analysis::table::f3")]
    pub sim: f64,
    /// The median of the live runs (the error is this one's).
    #[serde(serialize_with = "analysis::table::f3")]
    pub live: f64,
    /// The least and the greatest of the live runs: the host's noise.
    #[serde(serialize_with = "analysis::table::f3")]
    pub live_min: f64,
    #[serde(serialize_with = "analysis::table::f3")]
    pub live_max: f64,
    /// How many live runs the three come from.
    pub runs: usize,
    #[serde(serialize_with = "analysis::table::f2")]
    pub error_pct: f64,
    /// The live replay's loop: `chain` or `ops` (see `live::replay`).
    pub harness: &'static str,
    /// The host's memory latency around this trace's live replays (see
    /// [`memory_now`]), beside the machine file's: how far the host has
    /// drifted since it was calibrated.
    #[serde(serialize_with = "analysis::table::f2")]
    pub memory_now_ns: f64,
    /// The same chase just before and just after the trace's live runs:
    /// the drift during them.
    #[serde(serialize_with = "analysis::table::f2")]
    pub memory_before_ns: f64,
    #[serde(serialize_with = "analysis::table::f2")]
    pub memory_after_ns: f64,
    #[serde(serialize_with = "analysis::table::f2")]
    pub memory_model_ns: f64,
}

/// The host's memory latency over a whole validation: (at the start, at
/// the end, least, greatest), from every trace's before and after.
pub fn memory_drift(rows: &[ValidateRow]) -> Option<(f64, f64, f64, f64)> {
    let m: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.memory_before_ns, r.memory_after_ns])
        .collect();
    let (lo, hi) = m
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    Some((*m.first()?, *m.last()?, lo, hi))
}

/// A live metric over several runs, the harness's overhead taken off each:
/// (least, median, greatest), never below 0.
pub fn spread(runs: &[f64], overhead: f64) -> (f64, f64, f64) {
    let less = |x: f64| (x - overhead).max(0.0);
    let min = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (
        less(min),
        less(live::fingerprint::median(runs.to_vec())),
        less(max),
    )
}

/// One line of `prefetch.csv`: what each simulated prefetcher did on a
/// trace's timed pass.
#[derive(serde::Serialize, Default)]
pub struct PrefetchRow {
    pub trace: String,
    pub prefetcher: String,
    pub level: String,
    pub issued: u64,
    pub useful: u64,
    pub late: u64,
    pub useless: u64,
    pub dropped: u64,
}

/// What each live replay loop adds to an access beyond the load itself:
/// its per-access time over 16 KiB (L1-resident) minus the pointer chase's
/// time there, each the least of several runs (noise on a shared VM only
/// adds: a median of five once put the overhead at 2.7 ns, against 0.6 ns
/// in the run before it). The chain harness is measured on 256 lines
/// visited 8 times each (its limit), the op-list one on 256 lines visited
/// 781 times.
pub struct Overhead {
    pub chain: f64,
    pub ops: f64,
}

impl Overhead {
    pub fn measure(cpu: u32) -> Result<Overhead> {
        live::os::pin_current_thread(cpu)?;
        let chase = (0..5)
            .map(|k| live::calibrate::chase(16 << 10, 200_000, 3, 7 + k).map(|p| p.ns))
            .collect::<std::result::Result<Vec<_>, _>>()?
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        let loop_of = |n: u64, warm: usize| -> Result<f64> {
            let lines: Vec<Access> = (0..n)
                .map(|i| Access::new(0, traces::Kind::Load, (i % 256) * 64, 8))
                .collect();
            let least = (0..9)
                .map(|_| live::replay::replay(&lines, &[cpu], warm, true).map(|r| r.p50_ns))
                .collect::<std::result::Result<Vec<_>, _>>()?
                .into_iter()
                .fold(f64::INFINITY, f64::min);
            Ok((least - chase).max(0.0))
        };
        Ok(Overhead {
            chain: loop_of(256 * 8, 100)?,
            ops: loop_of(200_000, 1)?,
        })
    }

    pub fn of(&self, h: live::replay::Harness) -> f64 {
        match h {
            live::replay::Harness::Chain => self.chain,
            live::replay::Harness::Ops => self.ops,
        }
    }
}

/// The host's memory latency now: a random chase over 64 MiB in huge pages
/// (as `live calibrate --huge-pages` measures memory). A shared VM's
/// memory latency moved from 190 to 264 ns between a calibration and a
/// validation minutes later; a live latency is only comparable with the
/// model of a host that has not moved since.
pub fn memory_now() -> Result<f64> {
    Ok(live::calibrate::chase_huge(64 << 20, 200_000, 3, 0x3E3)?
        .0
        .ns)
}

/// The prefetchers the simulated run uses: those `given` (`none` for
/// none); else the machine's calibrated ones (`core.prefetch.model`), none
/// if calibration found none, or `stream:16:16` if it was not looked for.
pub fn prefetchers(given: &[String], m: &sim::Machine) -> Vec<String> {
    let chosen: Vec<String> = if !given.is_empty() {
        given.to_vec()
    } else {
        match &m.spec.core.prefetch {
            Some(p) if p.detected && !p.model.is_empty() => p.model.clone(),
            Some(p) if !p.detected => Vec::new(),
            _ => vec!["stream:16:16".to_string()],
        }
    };
    chosen.into_iter().filter(|p| p != "none").collect()
}

/// One trace validated: its `validate.csv` lines, its `prefetch.csv`
/// lines and its plot point (footprint bytes, simulated mean, live mean).
pub struct Validated {
    pub rows: Vec<ValidateRow>,
    pub prefetch: Vec<PrefetchRow>,
    pub point: (u64, f64, f64),
}

/// How to validate.
pub struct Ask<'a> {
    pub machine: &'a sim::Machine,
    /// Simulated prefetchers ([`prefetchers`]).
    pub prefetchers: &'a [String],
    pub prefetch_queue: usize,
    pub cpu: u32,
    pub live_runs: usize,
    pub overheads: &'a Overhead,
    /// A random load over memory by the machine file (ns): memory's
    /// latency, plus a page walk when it has `[core.tlb]`.
    pub memory_model_ns: f64,
    pub log: &'a crate::InputLog,
}

/// Trace `name`'s data accesses `acc` simulated as `validate` does: one
/// thread, every load miss blocking (as the live loads are dependent),
/// stores posted (nothing in the live loop waits for them), two
/// passes, the first to warm the caches as the live replay does; the
/// second timed per chunk of accesses, as the live replay is. Returns the
/// replay (its prefetchers' counts) and the second pass's ns per access of
/// each chunk.
pub fn simulate<'a>(
    m: &'a sim::Machine,
    prefetchers: &[String],
    prefetch_queue: usize,
    log: &crate::InputLog,
    name: &str,
    acc: &[Access],
) -> Result<(crate::dependent::DependentReplay<'a>, Vec<f64>)> {
    let mut sim_replay =
        crate::dependent::DependentReplay::new(m, prefetchers, prefetch_queue, log)?;
    let mut chunks = Vec::with_capacity(acc.len() / live::replay::CHUNK + 1);
    for pass in 0..2 {
        for chunk in acc.chunks(live::replay::CHUNK) {
            let (n, ns) = sim_replay
                .run(chunk)
                .map_err(|error| ValidateError::Engine {
                    trace: name.to_string(),
                    error,
                })?;
            if pass == 1 && n > 0 {
                chunks.push(ns / n as f64);
            }
        }
        if pass == 0 {
            sim_replay.clear_stats();
        }
    }
    Ok((sim_replay, chunks))
}

/// Trace `name`'s data accesses `acc` simulated ([`simulate`]) and
/// replayed live.
pub fn one(ask: &Ask, name: &str, acc: &[Access]) -> Result<Validated> {
    let m = ask.machine;
    let footprint: std::collections::HashSet<u64> = acc.iter().map(|x| x.addr >> 6).collect();
    let (sim_replay, mut chunks) =
        simulate(m, ask.prefetchers, ask.prefetch_queue, ask.log, name, acc)?;
    let s = live::replay::chunk_stats(&mut chunks);
    let prefetch = sim_replay
        .engine()
        .prefetchers()
        .into_iter()
        .map(|(pf, level, st)| PrefetchRow {
            trace: name.to_string(),
            prefetcher: pf,
            level: m.spec.core.caches[level].name.clone(),
            issued: st.issued,
            useful: st.useful,
            late: st.late,
            useless: st.useless,
            dropped: st.dropped,
        })
        .collect();
    // The live side, `live_runs` times: each metric's least, median and
    // greatest; the host's memory latency just before and just after.
    let before = memory_now()?;
    let runs = (0..ask.live_runs.max(1))
        .map(|_| live::replay::replay(acc, &[ask.cpu], 1, true))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let after = memory_now()?;
    let harness = runs[0].harness;
    let overhead = ask.overheads.of(harness);
    let of = |f: fn(&live::replay::LiveResult) -> f64| {
        spread(&runs.iter().map(f).collect::<Vec<_>>(), overhead)
    };
    let (mean, p50, p99) = (of(|r| r.mean_ns), of(|r| r.p50_ns), of(|r| r.p99_ns));
    let rows = [
        ("mean_ns", s.0, mean),
        ("p50_ns", s.1, p50),
        ("p99_ns", s.2, p99),
    ]
    .into_iter()
    .map(|(metric, sim, (live_min, live, live_max))| ValidateRow {
        trace: name.to_string(),
        metric,
        sim,
        live,
        live_min,
        live_max,
        runs: runs.len(),
        error_pct: if live == 0.0 {
            0.0
        } else {
            100.0 * (sim - live) / live
        },
        harness: harness.name(),
        memory_now_ns: (before + after) / 2.0,
        memory_before_ns: before,
        memory_after_ns: after,
        memory_model_ns: ask.memory_model_ns,
    })
    .collect();
    Ok(Validated {
        rows,
        prefetch,
        point: (footprint.len() as u64 * 64, s.0, mean.1),
    })
}

#[cfg(test)]
mod tests {
    use super::spread;

    #[test]
    fn the_drift_runs_from_the_first_measure_to_the_last() {
        let row = |b, a| super::ValidateRow {
            memory_before_ns: b,
            memory_after_ns: a,
            ..Default::default()
        };
        let rows = [row(150.0, 140.0), row(190.0, 160.0)];
        assert_eq!(
            super::memory_drift(&rows),
            Some((150.0, 160.0, 140.0, 190.0))
        );
        assert_eq!(super::memory_drift(&[]), None);
    }

    #[test]
    fn the_spread_is_least_median_greatest_less_the_overhead() {
        assert_eq!(spread(&[9.0, 5.0, 7.0], 1.0), (4.0, 6.0, 8.0));
        // An even count's median is the mean of the middle two.
        assert_eq!(spread(&[4.0, 1.0, 3.0, 2.0], 0.0), (1.0, 2.5, 4.0));
        // Never below 0: the overhead can exceed a fast run.
        assert_eq!(spread(&[0.5, 3.0, 2.0], 1.0), (0.0, 1.0, 2.0));
    }
}
