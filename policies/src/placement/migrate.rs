//! `migrate:K`: first touch, then migrate a page to a node whose cores have
//! read it from memory remotely K times since it last moved (in the spirit
//! of Linux AutoNUMA, which migrates on sampled remote faults).
//!
//! It observes only memory accesses as they happen (which node read which
//! page), as NUMA hinting faults let a kernel do.

// Checkpointed: a fixed hasher, so that saved state repeats byte for byte.
use sim::directory::DetMap as HashMap;

use sim::{Machine, PageView, Placement};

use crate::error::{Bound, PolicyError, SpecProblem};
use crate::registry::{Ctx, Entry, Spec};

pub struct MigrateOnRemote {
    k: u32,
    /// Page → (node counting remote reads, count). Only pages read remotely.
    counts: HashMap<u64, (u32, u32)>,
}

impl MigrateOnRemote {
    pub fn new(k: u32) -> Self {
        MigrateOnRemote {
            k,
            counts: HashMap::default(),
        }
    }
}

impl Placement for MigrateOnRemote {
    fn name(&self) -> String {
        format!("migrate:{}", self.k)
    }

    fn place(&mut self, _page: u64, from: u32, _m: &Machine) -> u32 {
        from
    }

    fn on_memory_access(&mut self, seen: PageView, m: &Machine) -> Option<u32> {
        if seen.from == seen.home || m.spec.nodes[seen.from as usize].memory.is_none() {
            return None;
        }
        let e = self.counts.entry(seen.page).or_insert((seen.from, 0));
        if e.0 != seen.from {
            // Another node is now the remote reader: start counting for it.
            *e = (seen.from, 0);
        }
        e.1 += 1;
        if e.1 >= self.k {
            self.counts.remove(&seen.page);
            Some(seen.from)
        } else {
            None
        }
    }

    fn save_state(&self) -> Vec<u8> {
        sim::checkpoint::encode(&self.counts)
    }

    fn load_state(&mut self, state: &[u8]) -> Result<(), sim::checkpoint::CheckpointError> {
        self.counts = sim::checkpoint::decode(state)?;
        Ok(())
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Placement> = Entry {
    name: "migrate",
    params: ":K",
    help: "first touch, then move a page to a node whose cores read it from memory remotely K times (AutoNUMA-like)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Placement>, PolicyError> {
    let k = super::number(spec, "64")?;
    if k == 0 || k > u32::MAX as u64 {
        return Err(spec.error(
            "placement",
            SpecProblem::Range {
                param: "K",
                range: Bound::Within {
                    min: 1,
                    max: u32::MAX as u64,
                },
            },
        ));
    }
    Ok(Box::new(MigrateOnRemote::new(k as u32)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_after_k_remote_reads_from_one_node() {
        let m = Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
        let mut p = MigrateOnRemote::new(3);
        let seen = |from, home| PageView {
            page: 7,
            from,
            home,
            now_ps: 0,
        };
        assert_eq!(p.on_memory_access(seen(1, 0), &m), None);
        assert_eq!(
            p.on_memory_access(seen(0, 0), &m),
            None,
            "local reads do not count"
        );
        assert_eq!(p.on_memory_access(seen(1, 0), &m), None);
        assert_eq!(p.on_memory_access(seen(1, 0), &m), Some(1));
        assert_eq!(
            p.on_memory_access(seen(0, 1), &m),
            None,
            "counting starts again after a move"
        );
    }
}
