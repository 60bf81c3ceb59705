//! The shape of a sampled replay: which records are measured (units),
//! simulated in detail before them (warm-up), warmed functionally, or
//! skipped — a pure function of the record's index — and the spec
//! `UNIT:PERIOD[:WARM[:FUNCTIONAL]]` it is asked for with. The run itself
//! is in `sampled.rs`; its state (the units' sums) is here.
//!
//! **Each unit's warm-up has its own length**, `WARM` less a cut drawn
//! per unit from the seed, uniform in `0..=WARM/2` (the cut records are
//! warmed functionally). With one length for all, every unit would meet
//! the detailed model the same number of records after the switch from
//! warming: where the timing state has a long memory, the units' errors
//! are then one error repeated, which no interval covers. A stream
//! prefetcher's late fills are such state (docs/performance.md, "Sampled
//! replay with prefetchers").

use super::stats::Stats;

/// Most units a sampled run measures.
pub const MAX_UNITS: u64 = 1_000_000;
/// Most accesses a sampled run measures (16 bytes each are kept).
pub const MAX_MEASURED: u64 = 50_000_000;

/// Unit, warm-up and bounded functional warming that do not fit the period.
#[derive(Debug, thiserror::Error)]
#[error(
    "sample {unit}:{period}:{warm}:{functional}: a unit is at least one record, and unit, warm-up and bounded functional warming fit in the period (the first unit at record {offset}, below the period)"
)]
pub struct SampleShapeError {
    pub unit: u64,
    pub period: u64,
    pub warm: u64,
    /// Bounded functional warming (0: unbounded).
    pub functional: u64,
    pub offset: u64,
}

/// Which records a sampled run measures (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub unit: u64,
    pub period: u64,
    pub warm: u64,
    pub offset: u64,
    /// Records warmed functionally before each unit's detailed warm-up;
    /// `None`: every record between units. Records before those are
    /// skipped: only their threads' pinning and their pages' placement
    /// happen (bounded warming, as MRRL's reuse window bounds it).
    pub functional: Option<u64>,
    /// Seed of the units' warm-up cuts (see the module's doc); `None`:
    /// every warm-up is `warm` records.
    pub jitter: Option<u64>,
}

/// splitmix64's output function: the sample's draws from a seed.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A sample as asked for, `UNIT:PERIOD[:WARM]` (records); [`SampleSpec::place`]
/// puts it at an offset drawn from a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleSpec {
    pub unit: u64,
    pub period: u64,
    /// Detailed warm-up before each unit; default twice the unit (as in
    /// SMARTS' 2 000-instruction warm-up of 1 000-instruction units), eight
    /// times with prefetchers (their lead, landed while warming, must be
    /// used up: docs/performance.md), within the period.
    pub warm: Option<u64>,
    /// Bounded functional warming (see [`Sample::functional`]).
    pub functional: Option<u64>,
}

/// A sample spec that does not parse.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0:?}: expected UNIT:PERIOD, UNIT:PERIOD:WARM or UNIT:PERIOD:WARM:FUNCTIONAL, counts of records (e.g. 1000:100000)"
)]
pub struct SampleSpecError(String);

impl std::str::FromStr for SampleSpec {
    type Err = SampleSpecError;
    fn from_str(s: &str) -> Result<SampleSpec, SampleSpecError> {
        let bad = || SampleSpecError(s.to_string());
        let n: Vec<u64> = s
            .split(':')
            .map(|x| x.trim().parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        if !(2..=4).contains(&n.len()) {
            return Err(bad());
        }
        Ok(SampleSpec {
            unit: n[0],
            period: n[1],
            warm: n.get(2).copied(),
            functional: n.get(3).copied(),
        })
    }
}

impl SampleSpec {
    /// The sample with its first unit at an offset in `0..period` drawn
    /// from `seed` (splitmix64): seeds place the units differently.
    /// `prefetchers`: the run has some (the default warm-up is longer).
    pub fn place(&self, seed: u64, prefetchers: bool) -> Sample {
        let z = mix(seed);
        let room = self.period.saturating_sub(self.unit);
        let times = if prefetchers { 8 } else { 2 };
        let warm = self
            .warm
            .unwrap_or_else(|| self.unit.saturating_mul(times).min(room));
        Sample {
            unit: self.unit,
            period: self.period,
            warm,
            offset: z % self.period.max(1),
            functional: self.functional,
            jitter: Some(mix(z)),
        }
    }
}

/// What a record is in a sampled run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Skipped: pinning and page placement only (bounded warming).
    Skip,
    /// Warmed functionally (no timing).
    Functional,
    /// Simulated in detail before a unit, not measured.
    Warm,
    /// Measured, in unit k.
    Unit(u64),
}

impl Sample {
    /// A sampled run's report of this shape at 99.7%, counting records,
    /// with no unit measured yet: the run fills in the rest.
    pub fn report(&self) -> crate::results::Sampled {
        crate::results::Sampled {
            unit: self.unit,
            period: self.period,
            warm: self.warm,
            offset: self.offset,
            units: 0,
            confidence: 0.9973,
            measured: 0,
            detailed: 0,
            warmed: 0,
            skipped: 0,
            functional: self.functional,
            metrics: Default::default(),
            not_estimated: Vec::new(),
            saturated: Vec::new(),
            span_ns: None,
            counts: "records".into(),
        }
    }

    /// Checks the shape: a unit of at least one record, and unit and warm-up
    /// within the period, the offset inside it.
    pub fn check(&self) -> Result<(), SampleShapeError> {
        let functional = self.functional.unwrap_or(0);
        if self.unit == 0
            || self.period
                < self
                    .unit
                    .saturating_add(self.warm)
                    .saturating_add(functional)
            || self.offset >= self.period
        {
            return Err(SampleShapeError {
                unit: self.unit,
                period: self.period,
                warm: self.warm,
                functional,
                offset: self.offset,
            });
        }
        Ok(())
    }

    /// Records unit `k`'s warm-up is shorter than `warm`: uniform in
    /// `0..=warm/2`, drawn from the jitter seed (see the module's doc).
    #[inline]
    pub fn cut(&self, k: u64) -> u64 {
        match self.jitter {
            Some(seed) if self.warm >= 2 => mix(seed ^ k) % (self.warm / 2 + 1),
            _ => 0,
        }
    }

    /// The phase of record `r` (0-based, in trace order). Unit k is records
    /// `offset + k·period ..+ unit`, its warm-up the `warm - cut(k)`
    /// records before, and with bounded warming the `functional` records
    /// before those.
    #[inline]
    pub fn phase(&self, r: u64) -> Phase {
        let f = self.functional.unwrap_or(0);
        let rest = if self.functional.is_some() {
            Phase::Skip
        } else {
            Phase::Functional
        };
        let x = r.saturating_add(self.warm).saturating_add(f);
        if x < self.offset {
            return rest;
        }
        let d = x - self.offset;
        let pos = d % self.period;
        let cut = self.cut(d / self.period);
        if pos < cut {
            rest
        } else if pos < cut + f {
            Phase::Functional
        } else if pos < f + self.warm {
            Phase::Warm
        } else if pos < f + self.warm + self.unit {
            Phase::Unit(d / self.period)
        } else {
            rest
        }
    }
}

/// One part of a sampled run split into independent parts (`replay
/// --parts`): the units whose windows lie in records `from..to`, each part
/// simulated by its own engine. The part's records before `from` are
/// skipped (pinning and page placement only) except the last `warming`,
/// which are warmed functionally; the records from `from` on have the
/// sample's phases. A window (unit k's records from
/// [`Sample::window_start`]) never straddles two parts, so every unit is
/// measured by exactly one part; what differs from the unsplit run is the
/// state each part starts from (docs/performance.md measures the bias).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Part {
    pub from: u64,
    /// One past the part's last record (`u64::MAX`: the trace's end).
    pub to: u64,
    pub warming: u64,
}

impl Sample {
    /// The first record of unit `k`'s window: the records its warm-up's
    /// cut leaves, its bounded warming, its warm-up, the unit, and the
    /// records after it up to unit k + 1's window (0 for a window that
    /// would start before the trace).
    pub fn window_start(&self, k: u64) -> u64 {
        let f = self.functional.unwrap_or(0);
        (self.offset.saturating_add(k.saturating_mul(self.period)))
            .saturating_sub(self.warm.saturating_add(f))
    }

    /// The sample split into `n` parts of about as many units each, over a
    /// trace of `records` records (at most one part per unit, at least
    /// one), each warmed over the `warming` records before it.
    pub fn parts(&self, records: u64, n: u64, warming: u64) -> Vec<Part> {
        let units = self.units_in(records);
        let n = n.clamp(1, units.max(1));
        let first = |p: u64| (p as u128 * units as u128 / n as u128) as u64;
        (0..n)
            .map(|p| Part {
                from: if p == 0 {
                    0
                } else {
                    self.window_start(first(p))
                },
                to: if p + 1 == n {
                    u64::MAX
                } else {
                    self.window_start(first(p + 1))
                },
                warming,
            })
            .collect()
    }

    /// Units that start in a trace of `records` records.
    pub fn units_in(&self, records: u64) -> u64 {
        records
            .saturating_sub(self.offset)
            .div_ceil(self.period.max(1))
    }
}

/// One unit's sums.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UnitSums {
    pub accesses: u64,
    pub data: u64,
    pub latency_ps: u128,
    /// Per served slot (private levels, LLC, remote cache, local, remote memory).
    pub served: Vec<u64>,
    pub invalidations: u64,
    pub first_issue: u64,
    pub last_done: u64,
}

/// A sampled run's state: the shape, the phase the run is in, and the units.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Sampling {
    pub shape: Sample,
    /// The books warmed records write into (read by nothing).
    pub scratch: Box<Stats>,
    /// The prefetchers' counts while warming (read by nothing).
    pub pf_scratch: Vec<crate::prefetch::PrefetchStats>,
    pub units: Vec<UnitSums>,
    /// Every measured data access: (unit, latency ps); sorted at the end,
    /// this is each unit's latencies in order.
    pub latencies: Vec<(u64, u64)>,
    pub detailed: u64,
    pub warmed: u64,
    pub skipped: u64,
    pub slots: usize,
    /// Only the scratch books, for warming driven from outside
    /// ([`super::Engine::set_warming`]): no units, no estimates. Never
    /// saved: a task engine saves its state before it warms.
    #[serde(skip)]
    pub books_only: bool,
    /// The part of a split run this engine simulates (never saved: a
    /// checkpoint of a part is refused).
    #[serde(skip)]
    pub part: Option<Part>,
}

impl Sampling {
    pub fn new(shape: Sample, scratch: Stats, slots: usize) -> Sampling {
        Sampling {
            shape,
            scratch: Box::new(scratch),
            pf_scratch: Vec::new(),
            units: Vec::new(),
            latencies: Vec::new(),
            detailed: 0,
            warmed: 0,
            skipped: 0,
            slots,
            books_only: false,
            part: None,
        }
    }

    /// The phase of record `r` in this run ([`Sample::phase_in`]).
    #[inline]
    pub fn phase(&self, r: u64) -> Phase {
        self.shape.phase_in(r, self.part)
    }
}

impl Sample {
    /// The phase of record `r` in `part` (if any): the sample's inside it;
    /// before it skipped or, its last `warming` records, warmed; after it
    /// skipped.
    #[inline]
    pub fn phase_in(&self, r: u64, part: Option<Part>) -> Phase {
        match part {
            Some(p) if r < p.from => {
                if r.saturating_add(p.warming) >= p.from {
                    Phase::Functional
                } else {
                    Phase::Skip
                }
            }
            Some(p) if r >= p.to => Phase::Skip,
            _ => self.phase(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records 0..30 as letters: s(kip), f(unctional), w(arm), unit number.
    fn letters(s: &Sample) -> String {
        (0..30)
            .map(|r| match s.phase(r) {
                Phase::Skip => 's',
                Phase::Functional => 'f',
                Phase::Warm => 'w',
                Phase::Unit(k) => char::from(b'0' + k as u8),
            })
            .collect()
    }

    /// Unit 2, period 10, warm 3, offset 4; no bounded warming, no cuts.
    fn by_hand() -> Sample {
        Sample {
            unit: 2,
            period: 10,
            warm: 3,
            offset: 4,
            functional: None,
            jitter: None,
        }
    }

    /// Records 0..30 with unit 2, period 10, warm 3, offset 4: units at
    /// 4–5, 14–15, 24–25, each after three warm records (the first's warm-up
    /// 1–3), the rest functional.
    #[test]
    fn phases_by_hand() {
        let s = by_hand();
        s.check().unwrap();
        assert_eq!(letters(&s), "fwww00fffffwww11fffffwww22ffff");
        // Bounded: two functional records before each warm-up (unit 3 at 34:
        // 29–30), the rest skipped.
        let b = Sample {
            functional: Some(2),
            ..s
        };
        b.check().unwrap();
        assert_eq!(letters(&b), "fwww00sssffwww11sssffwww22sssf");
    }

    /// With a jitter seed, unit k's warm-up is `warm - cut(k)` records,
    /// `cut(k) ≤ warm/2`; the records before it are functional (or, with
    /// bounded warming, `functional` of them, the rest skipped); the cuts
    /// take every value of their range over many units.
    #[test]
    fn warm_ups_cut_per_unit() {
        for (functional, rest) in [(None, Phase::Functional), (Some(5), Phase::Skip)] {
            let s = Sample {
                unit: 3,
                period: 40,
                warm: 20,
                offset: 7,
                functional,
                jitter: Some(42),
            };
            s.check().unwrap();
            let f = functional.unwrap_or(0);
            let mut seen = [false; 11];
            for k in 1..400u64 {
                let c = s.cut(k);
                assert!(c <= 10, "cut {c} of unit {k}");
                seen[c as usize] = true;
                let first = 7 + k * 40;
                for r in first..first + 3 {
                    assert_eq!(s.phase(r), Phase::Unit(k));
                }
                // Back to the end of unit k - 1.
                for back in 1..=37 {
                    let want = if back <= 20 - c {
                        Phase::Warm
                    } else if back <= 20 - c + f {
                        Phase::Functional
                    } else {
                        rest
                    };
                    assert_eq!(
                        s.phase(first - back),
                        want,
                        "unit {k} cut {c}, {back} before"
                    );
                }
            }
            assert!(seen.iter().all(|&x| x), "every cut in 0..=10: {seen:?}");
        }
    }

    /// `place` draws the cuts (a jitter seed, different per sample seed)
    /// and picks the default warm-up: 2×UNIT, 8×UNIT with prefetchers,
    /// never past the period's room.
    #[test]
    fn placing_draws_cuts_and_default_warm_ups() {
        let spec: SampleSpec = "250:5000".parse().unwrap();
        assert_eq!(spec.place(0, false).warm, 500);
        assert_eq!(spec.place(0, true).warm, 2000);
        let tight: SampleSpec = "250:1000".parse().unwrap();
        assert_eq!(tight.place(0, true).warm, 750);
        let (a, b) = (spec.place(0, true), spec.place(1, true));
        assert!(a.jitter.is_some() && b.jitter.is_some() && a.jitter != b.jitter);
        assert_eq!(spec.place(0, true), spec.place(0, true));
    }

    /// Units 2 every 10, warm 3, offset 4 over 60 records: windows start at
    /// 1, 11, 21, … (unit k at 4 + 10k, after 3 warm records); 3 parts of
    /// the 6 units take two windows each, and a part's phases are the
    /// sample's inside it, warming for the `warming` records before, skipping
    /// earlier and after.
    #[test]
    fn parts_by_hand() {
        let s = by_hand();
        assert_eq!(
            (s.window_start(0), s.window_start(1), s.window_start(5)),
            (1, 11, 51)
        );
        let parts = s.parts(60, 3, 4);
        let ranges: Vec<(u64, u64)> = parts.iter().map(|p| (p.from, p.to)).collect();
        assert_eq!(ranges, vec![(0, 21), (21, 41), (41, u64::MAX)]);
        // At most one part per unit; a trace shorter than a unit: one part.
        assert_eq!(s.parts(60, 100, 0).len(), 6);
        assert_eq!(s.parts(3, 4, 0).len(), 1);
        let letters: String = (10..45)
            .map(|r| match s.phase_in(r, Some(parts[1])) {
                Phase::Skip => 's',
                Phase::Functional => 'f',
                Phase::Warm => 'w',
                Phase::Unit(k) => char::from(b'0' + k as u8),
            })
            .collect();
        // Records 10..45: skipped to 16, warmed 17–20, units 2 and 3 (24–25,
        // 34–35) as in the unsplit run, skipped from 41.
        assert_eq!(letters, "sssssssffffwww22fffffwww33fffffssss");
    }

    /// Random shapes (bounded warming, jittered warm-ups or not), traces
    /// and splits: the parts follow each other from record 0 to the end;
    /// inside its part a record has the unsplit run's phase, so each unit
    /// is measured in exactly one part, and whole; before a part its
    /// `warming` records are warmed and earlier ones skipped, after it
    /// every record is skipped.
    #[test]
    fn parts_keep_the_unsplit_phases_on_random_shapes() {
        for seed in 0..300u64 {
            let d = |i: u64, m: u64| mix(seed * 16 + i) % m;
            let (unit, warm) = (1 + d(0, 5), d(1, 9));
            let functional = (d(2, 2) == 0).then(|| d(3, 6));
            let period = unit + warm + functional.unwrap_or(0) + d(4, 12);
            let s = Sample {
                unit,
                period,
                warm,
                offset: d(5, period),
                functional,
                jitter: (d(6, 2) == 0).then_some(seed),
            };
            s.check().unwrap();
            let (records, n, warming) = (d(7, 500), 1 + d(8, 9), d(9, 40));
            let parts = s.parts(records, n, warming);
            assert_eq!(parts[0].from, 0);
            assert_eq!(parts.last().unwrap().to, u64::MAX);
            assert!(parts.len() as u64 <= s.units_in(records).max(1));
            for w in parts.windows(2) {
                assert!(
                    w[0].from < w[0].to && w[0].to == w[1].from,
                    "{s:?} {parts:?}"
                );
            }
            let mut unit_part = std::collections::BTreeMap::new();
            let mut warm_part = None;
            for r in 0..records {
                let mine: Vec<usize> = (0..parts.len())
                    .filter(|&i| parts[i].from <= r && r < parts[i].to)
                    .collect();
                assert_eq!(mine.len(), 1, "record {r} of {s:?} in {parts:?}");
                match s.phase(r) {
                    Phase::Unit(k) => {
                        let first = *unit_part.entry(k).or_insert(mine[0]);
                        assert_eq!(first, mine[0], "unit {k} split: {s:?} {parts:?}");
                        // Its detailed warm-up ran in the part measuring it.
                        if let Some(w) = warm_part.take() {
                            assert_eq!(w, mine[0], "unit {k}'s warm-up: {s:?} {parts:?}");
                        }
                    }
                    Phase::Warm => warm_part = warm_part.or(Some(mine[0])),
                    _ => {}
                }
                for p in &parts {
                    let got = s.phase_in(r, Some(*p));
                    let want = if r >= p.to {
                        Phase::Skip
                    } else if r >= p.from {
                        s.phase(r)
                    } else if r + warming >= p.from {
                        Phase::Functional
                    } else {
                        Phase::Skip
                    };
                    assert_eq!(got, want, "record {r} of {s:?} in {p:?}");
                }
            }
        }
    }

    #[test]
    fn shapes_refused() {
        for (unit, period, warm, offset, functional) in [
            (0, 10, 0, 0, None),
            (5, 10, 6, 0, None),
            (5, 10, 0, 10, None),
            (5, 10, 3, 0, Some(3)),
        ] {
            let s = Sample {
                unit,
                period,
                warm,
                offset,
                functional,
                jitter: None,
            };
            assert!(s.check().is_err(), "{s:?}");
        }
    }
}
