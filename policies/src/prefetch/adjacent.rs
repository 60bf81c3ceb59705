//! `adjacent[:mem]`: the adjacent-line (spatial) prefetcher of Intel's L2:
//! a demand miss brings the other half of its aligned 128-byte pair, so the
//! pair arrives together whichever half is touched first. With `:mem`,
//! only misses that memory serves do (the pairing `live calibrate`
//! measures is of lines from memory; nothing it runs shows whether lines
//! from the LLC pair too).

use sim::policy::{AccessView, Prefetcher};

use crate::error::{PolicyError, SpecProblem};
use crate::registry::{Ctx, Entry, Spec};

pub struct Adjacent {
    /// Only misses served by memory.
    memory_only: bool,
}

impl Prefetcher for Adjacent {
    fn name(&self) -> String {
        if self.memory_only {
            "adjacent:mem".to_string()
        } else {
            "adjacent".to_string()
        }
    }
    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        if seen.miss && (seen.from_memory || !self.memory_only) {
            out.push(line ^ 1);
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "adjacent",
    params: "[:mem]",
    help: "on a miss (:mem: one memory serves), the other line of its 128-byte pair",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let memory_only = match spec.rest {
        None => false,
        Some("mem") => true,
        Some(_) => {
            return Err(spec.error("prefetcher", SpecProblem::OnlyMem));
        }
    };
    Ok(Box::new(Adjacent { memory_only }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::seen;

    #[test]
    fn a_miss_brings_the_other_half_of_its_pair() {
        let mut p = Adjacent { memory_only: false };
        let mut out = Vec::new();
        p.on_access(seen(None, 11 * 64, true), 11, &mut out);
        p.on_access(seen(None, 12 * 64, true), 12, &mut out);
        p.on_access(seen(None, 14 * 64, false), 14, &mut out);
        assert_eq!(out, vec![10, 13], "hits bring nothing");
        // `:mem`: a miss the LLC serves brings nothing, one memory serves does.
        let mut m = Adjacent { memory_only: true };
        out.clear();
        m.on_access(seen(None, 11 * 64, true), 11, &mut out);
        let mut mem = seen(None, 12 * 64, true);
        mem.from_memory = true;
        m.on_access(mem, 12, &mut out);
        assert_eq!(out, vec![13]);
        assert_eq!(m.name(), "adjacent:mem");
    }
}
