//! `delta[:D]`: delta correlation (a Markov predictor over line deltas, in
//! the manner of Nesbit and Smith's delta-correlating prediction tables).
//! Per core it remembers, for each delta, the delta that followed it last
//! time; on each access it chains predictions from the current delta D
//! times and prefetches those lines.

// Checkpointed: a fixed hasher, so that saved state repeats byte for byte.
use sim::directory::DetMap as HashMap;

use sim::policy::{AccessView, Prefetcher};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
struct CoreState {
    last: Option<u64>,
    prev_delta: Option<i64>,
    next: HashMap<i64, i64>,
}

pub struct DeltaCorrelation {
    degree: u32,
    cores: Vec<CoreState>,
}

const TABLE_ENTRIES: usize = 4096;

impl DeltaCorrelation {
    pub fn new(degree: u32, cores: usize) -> Self {
        DeltaCorrelation {
            degree,
            cores: vec![CoreState::default(); cores.max(1)],
        }
    }
}

impl Prefetcher for DeltaCorrelation {
    fn name(&self) -> String {
        format!("delta:{}", self.degree)
    }

    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        let n = self.cores.len();
        let c = &mut self.cores[seen.core % n];
        let Some(last) = c.last.replace(line) else {
            return;
        };
        let d = line as i64 - last as i64;
        if d == 0 {
            return;
        }
        if let Some(p) = c.prev_delta {
            if c.next.len() >= TABLE_ENTRIES && !c.next.contains_key(&p) {
                c.next.clear();
            }
            c.next.insert(p, d);
        }
        c.prev_delta = Some(d);
        let (mut at, mut cur) = (line as i64, d);
        for _ in 0..self.degree {
            let Some(&nd) = c.next.get(&cur) else { break };
            at += nd;
            if at < 0 {
                break;
            }
            out.push(at as u64);
            cur = nd;
        }
    }

    fn save_state(&self) -> Vec<u8> {
        sim::checkpoint::encode(&self.cores)
    }

    fn load_state(&mut self, state: &[u8]) -> Result<(), sim::checkpoint::CheckpointError> {
        let cores: Vec<CoreState> = sim::checkpoint::decode(state)?;
        sim::checkpoint::same_len("cores' tables", cores.len(), self.cores.len())?;
        self.cores = cores;
        Ok(())
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "delta",
    params: "[:D]",
    help: "delta correlation: the delta that followed the current one last time, chained D times",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let (degree, _) = super::degree_distance(spec, 2)?;
    Ok(Box::new(DeltaCorrelation::new(degree, ctx.cores)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::seen;

    #[test]
    fn learns_a_repeating_delta_pattern() {
        // Deltas +1, +3, +1, +3, ...: after one round it predicts both.
        let mut p = DeltaCorrelation::new(2, 1);
        let mut out = Vec::new();
        let lines = [10u64, 11, 14, 15, 18, 19];
        for l in lines {
            out.clear();
            p.on_access(seen(None, l * 64, true), l, &mut out);
        }
        // At 19 (delta +1): next +3 → 22, then +1 → 23.
        assert_eq!(out, vec![22, 23]);
    }
}
