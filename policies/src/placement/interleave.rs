//! `interleave`: pages round-robin over the memory nodes, in order of first touch.

use sim::{Machine, Placement};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

#[derive(Default)]
pub struct Interleave {
    next: usize,
}

impl Placement for Interleave {
    fn name(&self) -> String {
        ENTRY.name.into()
    }

    fn place(&mut self, _page: u64, _from: u32, m: &Machine) -> u32 {
        let nodes = m.memory_nodes();
        let n = nodes[self.next % nodes.len()];
        self.next += 1;
        n
    }

    fn save_state(&self) -> Vec<u8> {
        sim::checkpoint::encode(&self.next)
    }

    fn load_state(&mut self, state: &[u8]) -> Result<(), sim::checkpoint::CheckpointError> {
        self.next = sim::checkpoint::decode(state)?;
        Ok(())
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Placement> = Entry {
    name: "interleave",
    params: "",
    help: "pages round-robin over the nodes with memory, in order of first touch (numactl --interleave=all)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Placement>, PolicyError> {
    spec.no_arguments("placement")?;
    Ok(Box::new(Interleave::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_over_memory_nodes() {
        let m = Machine::from_toml(sim::presets::preset("epyc-4numa").unwrap()).unwrap();
        let mut p = Interleave::default();
        let homes: Vec<u32> = (0..6).map(|pg| p.place(pg, 0, &m)).collect();
        assert_eq!(homes, vec![0, 1, 2, 3, 0, 1]);
    }
}
