//! `bind:N`: every page on node N.

use sim::{Machine, Placement};

use crate::error::{PolicyError, SpecProblem};
use crate::registry::{Ctx, Entry, Spec};

pub struct Bind(pub u32);

impl Placement for Bind {
    fn name(&self) -> String {
        format!("bind:{}", self.0)
    }

    fn place(&mut self, _page: u64, _from: u32, _m: &Machine) -> u32 {
        self.0
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Placement> = Entry {
    name: "bind",
    params: ":N",
    help: "every page on node N (numactl --membind=N)",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Placement>, PolicyError> {
    let node = super::number(spec, "1")? as u32;
    let mem = ctx.machine(spec)?.memory_nodes();
    if !mem.contains(&node) {
        return Err(spec.error(
            "placement",
            SpecProblem::NoMemory { node, memory: mem },
        ));
    }
    Ok(Box::new(Bind(node)))
}
