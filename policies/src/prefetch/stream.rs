//! `stream[:D[:K[:T[:C]]]]`: per core, up to T tracked 4 KiB regions
//! (default 16; `numasim live calibrate` measures the host's); C steps
//! (default 1) to the next or a near line in one direction, after the one
//! that set the direction, confirm a stream, and each further access
//! prefetches D lines K ahead in that direction (a simplified IBM POWER /
//! Intel L2 streamer). A larger C costs each new stream more training
//! (`live calibrate` fits it to the host's ramp walks) and lets fewer
//! random near pairs pass for a stream.

use sim::policy::{AccessView, Prefetcher};

use crate::error::{Bound, PolicyError, SpecProblem};
use crate::registry::{Ctx, Entry, Spec};

#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Tracker {
    region: u64,
    last: u64,
    dir: i64,
    confidence: u8,
    age: u64,
}

pub struct Stream {
    degree: u32,
    distance: u32,
    /// Regions tracked per core.
    tracked: usize,
    /// Same-direction near steps that confirm a stream.
    confirm: u8,
    trackers: Vec<Vec<Tracker>>,
    clock: u64,
}

const TRACKERS: usize = 16;

impl Stream {
    pub fn new(degree: u32, distance: u32, cores: usize) -> Self {
        Stream {
            degree,
            distance: distance.max(1),
            tracked: TRACKERS,
            confirm: 1,
            trackers: vec![Vec::new(); cores.max(1)],
            clock: 0,
        }
    }
}

impl Stream {
    /// Tracks `n` regions per core (at least 1).
    pub fn with_trackers(mut self, n: usize) -> Self {
        self.tracked = n.max(1);
        self
    }

    /// Confirms a stream after `c` same-direction near steps (1..=8).
    pub fn with_confirm(mut self, c: u8) -> Self {
        self.confirm = c.clamp(1, super::MAX_CONFIRM);
        self
    }
}

impl Prefetcher for Stream {
    fn name(&self) -> String {
        if self.confirm != 1 {
            format!(
                "stream:{}:{}:{}:{}",
                self.degree, self.distance, self.tracked, self.confirm
            )
        } else if self.tracked == TRACKERS {
            format!("stream:{}:{}", self.degree, self.distance)
        } else {
            format!("stream:{}:{}:{}", self.degree, self.distance, self.tracked)
        }
    }

    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        self.clock += 1;
        let region = seen.addr >> 12;
        let n = self.trackers.len();
        let ts = &mut self.trackers[seen.core % n];
        let Some(t) = ts.iter_mut().find(|t| t.region == region) else {
            if ts.len() >= self.tracked {
                let oldest = (0..ts.len()).min_by_key(|&i| ts[i].age).unwrap_or(0);
                ts.swap_remove(oldest);
            }
            ts.push(Tracker {
                region,
                last: line,
                dir: 0,
                confidence: 0,
                age: self.clock,
            });
            return;
        };
        t.age = self.clock;
        let d = line as i64 - t.last as i64;
        if d == 0 {
            return;
        }
        let dir = d.signum();
        if d.unsigned_abs() <= super::NEAR_STEP_LINES && dir == t.dir {
            t.confidence = (t.confidence + 1).min(self.confirm.max(3));
        } else {
            t.dir = dir;
            t.confidence = 0;
        }
        t.last = line;
        if t.confidence >= self.confirm {
            for k in 0..self.degree as i64 {
                out.push(line.wrapping_add((dir * (self.distance as i64 + k)) as u64));
            }
        }
    }

    fn save_state(&self) -> Vec<u8> {
        sim::checkpoint::encode(&(&self.trackers, self.clock))
    }

    fn load_state(&mut self, state: &[u8]) -> Result<(), sim::checkpoint::CheckpointError> {
        let (trackers, clock): (Vec<Vec<Tracker>>, u64) = sim::checkpoint::decode(state)?;
        sim::checkpoint::same_len("cores' trackers", trackers.len(), self.trackers.len())?;
        (self.trackers, self.clock) = (trackers, clock);
        Ok(())
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "stream",
    params: "[:D[:K[:T[:C]]]]",
    help: "per 4 KiB region (T tracked, default 16), a run confirmed by C near steps (default 1), ascending or descending: D lines K ahead",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let (degree, distance, more) = super::degree_distance_and(spec, 2, &["T", "C"])?;
    let tracked = more.first().copied();
    if tracked == Some(0) || tracked.is_some_and(|t| t > 1024) {
        return Err(spec.error(
            "prefetcher",
            SpecProblem::Range {
                param: "T (regions tracked)",
                range: Bound::Within { min: 1, max: 1024 },
            },
        ));
    }
    let confirm = more.get(1).copied().unwrap_or(1);
    if !(1..=super::MAX_CONFIRM as u64).contains(&confirm) {
        return Err(spec.error(
            "prefetcher",
            SpecProblem::Range {
                param: "C (steps that confirm a stream)",
                range: Bound::Within {
                    min: 1,
                    max: super::MAX_CONFIRM as u64,
                },
            },
        ));
    }
    Ok(Box::new(
        Stream::new(degree, distance, ctx.cores)
            .with_trackers(tracked.unwrap_or(TRACKERS as u64) as usize)
            .with_confirm(confirm as u8),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::{create, seen};

    #[test]
    fn ascending_and_descending_runs() {
        let mut p = Stream::new(2, 1, 1);
        let mut out = Vec::new();
        for l in [100u64, 101, 102] {
            out.clear();
            p.on_access(seen(None, l * 64, true), l, &mut out);
        }
        assert_eq!(out, vec![103, 104]);
        let mut q = Stream::new(1, 2, 1);
        for l in [300u64, 299, 298] {
            out.clear();
            q.on_access(seen(None, l * 64, true), l, &mut out);
        }
        assert_eq!(out, vec![296]);
    }

    #[test]
    fn c_near_steps_confirm_a_stream() {
        for c in [1usize, 4] {
            let mut p = create(&format!("stream:1:1:16:{c}"), 64, 1).unwrap();
            // The first access opens the region, the second sets the
            // direction, each after it is a confirming step.
            let first = (0..10u64)
                .position(|k| {
                    let mut out = Vec::new();
                    p.on_access(seen(None, (640 + k) * 64, true), 640 + k, &mut out);
                    !out.is_empty()
                })
                .unwrap();
            assert_eq!(first, c + 1, "C={c}");
        }
        assert_eq!(
            create("stream:1:1:16:4", 64, 1).unwrap().name(),
            "stream:1:1:16:4"
        );
        for bad in ["stream:1:1:16:0", "stream:1:1:16:9", "stream:1:1:16:2:1"] {
            assert!(create(bad, 64, 1).is_err(), "{bad}");
        }
    }

    #[test]
    fn it_follows_as_many_streams_as_it_tracks() {
        // Three streams in three pages walked round-robin: three trackers
        // follow all of them; two lose each one before it confirms.
        for (tracked, prefetches) in [(3usize, true), (2, false)] {
            let mut p = Stream::new(1, 1, 1).with_trackers(tracked);
            let mut issued = 0;
            for k in 0..8u64 {
                for region in [10u64, 30, 20] {
                    let mut out = Vec::new();
                    let line = region * 64 + k;
                    p.on_access(seen(None, line * 64, true), line, &mut out);
                    issued += out.len();
                }
            }
            assert_eq!(issued > 0, prefetches, "{tracked} trackers: {issued}");
        }
    }
}
