//! `adjacent`: the adjacent-line (spatial) prefetcher of Intel's L2: a
//! demand miss brings the other half of its aligned 128-byte pair, so the
//! pair arrives together whichever half is touched first.

use sim::policy::{AccessView, Prefetcher};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

pub struct Adjacent;

impl Prefetcher for Adjacent {
    fn name(&self) -> String {
        "adjacent".to_string()
    }
    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        if seen.miss {
            out.push(line ^ 1);
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "adjacent",
    params: "",
    help: "on a miss, the other line of its 128-byte pair",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    if spec.rest.is_some() {
        return Err(PolicyError(format!(
            "prefetcher {:?}: takes no parameters",
            spec.full
        )));
    }
    Ok(Box::new(Adjacent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::seen;

    #[test]
    fn a_miss_brings_the_other_half_of_its_pair() {
        let mut p = Adjacent;
        let mut out = Vec::new();
        p.on_access(seen(None, 11 * 64, true), 11, &mut out);
        p.on_access(seen(None, 12 * 64, true), 12, &mut out);
        p.on_access(seen(None, 14 * 64, false), 14, &mut out);
        assert_eq!(out, vec![10, 13], "hits bring nothing");
    }
}
