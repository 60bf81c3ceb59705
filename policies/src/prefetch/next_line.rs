//! `next-line[:D]`: tagged next-line prefetching (A. J. Smith, 1982): on a
//! demand miss, or on the first use of a line it prefetched, prefetch the
//! next D lines — so a sequential stream keeps triggering it.

use sim::policy::{AccessView, Prefetcher};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

pub struct NextLine {
    degree: u32,
}

impl NextLine {
    pub fn new(degree: u32) -> Self {
        NextLine { degree }
    }
}

impl Prefetcher for NextLine {
    fn name(&self) -> String {
        format!("next-line:{}", self.degree)
    }
    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        if seen.miss || seen.prefetch_hit {
            out.extend((1..=self.degree as u64).map(|k| line + k));
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "next-line",
    params: "[:D]",
    help: "on a miss or the first use of a prefetched line, the next D lines (tagged)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let (degree, _) = super::degree_distance(spec, 1)?;
    Ok(Box::new(NextLine::new(degree)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::seen;

    #[test]
    fn on_misses_and_first_uses_of_prefetched_lines() {
        let mut p = NextLine::new(2);
        let mut out = Vec::new();
        p.on_access(seen(None, 640, false), 10, &mut out);
        assert!(out.is_empty(), "a plain hit does not trigger");
        p.on_access(seen(None, 640, true), 10, &mut out);
        assert_eq!(out, vec![11, 12]);
        out.clear();
        let mut tagged = seen(None, 704, false);
        tagged.prefetch_hit = true;
        p.on_access(tagged, 11, &mut out);
        assert_eq!(out, vec![12, 13]);
    }
}
