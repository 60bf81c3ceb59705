//! `stream[:D[:K]]`: per core, up to 16 tracked 4 KiB regions; two accesses
//! to consecutive or near lines in one direction confirm a stream, and each
//! further access prefetches D lines K ahead in that direction (a simplified
//! IBM POWER / Intel L2 streamer).

use sim::policy::{AccessView, Prefetcher};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

#[derive(Clone, Copy)]
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
    trackers: Vec<Vec<Tracker>>,
    clock: u64,
}

const TRACKERS: usize = 16;

impl Stream {
    pub fn new(degree: u32, distance: u32, cores: usize) -> Self {
        Stream {
            degree,
            distance: distance.max(1),
            trackers: vec![Vec::new(); cores.max(1)],
            clock: 0,
        }
    }
}

impl Prefetcher for Stream {
    fn name(&self) -> String {
        format!("stream:{}:{}", self.degree, self.distance)
    }

    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        self.clock += 1;
        let region = seen.addr >> 12;
        let n = self.trackers.len();
        let ts = &mut self.trackers[seen.core % n];
        let Some(t) = ts.iter_mut().find(|t| t.region == region) else {
            if ts.len() == TRACKERS {
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
        if d.abs() <= 2 && dir == t.dir {
            t.confidence = (t.confidence + 1).min(3);
        } else {
            t.dir = dir;
            t.confidence = 0;
        }
        t.last = line;
        if t.confidence >= 1 {
            for k in 0..self.degree as i64 {
                out.push(line.wrapping_add((dir * (self.distance as i64 + k)) as u64));
            }
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "stream",
    params: "[:D[:K]]",
    help: "per 4 KiB region, a confirmed ascending or descending run: D lines K ahead",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let (degree, distance) = super::degree_distance(spec, 2)?;
    Ok(Box::new(Stream::new(degree, distance, ctx.cores)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::seen;

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
}
