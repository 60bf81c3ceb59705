//! `ip-stride[:D[:K]]`: the classic PC-indexed stride prefetcher (Baer and
//! Chen's reference prediction table). Per core and PC it remembers the last
//! address and stride; a stride seen twice in a row is confirmed, and each
//! access then prefetches D lines along it, starting K strides ahead (at
//! least the next line when the stride is within one line).

use std::collections::HashMap;

use sim::policy::{AccessView, Prefetcher};

use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

#[derive(Clone, Copy, Default)]
struct PcEntry {
    last: u64,
    stride: i64,
    confidence: u8,
}

pub struct IpStride {
    degree: u32,
    distance: u32,
    line_bits: u32,
    /// Per core: PC → entry. Bounded per core (a real table has 256 entries).
    table: Vec<HashMap<u64, PcEntry>>,
}

const TABLE_ENTRIES: usize = 1024;

impl IpStride {
    pub fn new(degree: u32, distance: u32, line_bits: u32, cores: usize) -> Self {
        IpStride {
            degree,
            distance: distance.max(1),
            line_bits,
            table: vec![HashMap::new(); cores.max(1)],
        }
    }
}

impl Prefetcher for IpStride {
    fn name(&self) -> String {
        format!("ip-stride:{}:{}", self.degree, self.distance)
    }

    fn on_access(&mut self, seen: AccessView, line: u64, out: &mut Vec<u64>) {
        let Some(pc) = seen.pc else { return };
        let n = self.table.len();
        let t = &mut self.table[seen.core % n];
        if t.len() >= TABLE_ENTRIES && !t.contains_key(&pc) {
            // Full: start over (a direct-mapped table would evict one entry).
            t.clear();
        }
        let e = t.entry(pc).or_default();
        let stride = seen.addr.wrapping_sub(e.last) as i64;
        if e.last != 0 && stride == e.stride && stride != 0 {
            e.confidence = (e.confidence + 1).min(3);
        } else {
            e.confidence = 0;
            e.stride = stride;
        }
        e.last = seen.addr;
        if e.confidence < 1 {
            return;
        }
        let lb = self.line_bits;
        let step = e.stride;
        if step.unsigned_abs() >= 1 << lb {
            // Stride of at least a line: D targets, K strides ahead.
            for k in 0..self.degree as i64 {
                let a = seen
                    .addr
                    .wrapping_add((step * (self.distance as i64 + k)) as u64);
                out.push(a >> lb);
            }
        } else {
            // Within a line: the next lines in the stride's direction.
            let dir = step.signum();
            for k in 0..self.degree as i64 {
                out.push(line.wrapping_add((dir * (self.distance as i64 + k)) as u64));
            }
        }
    }
}

/// Registry entry.
pub const ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "ip-stride",
    params: "[:D[:K]]",
    help: "per PC, a confirmed stride: D lines starting K strides ahead",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let (degree, distance) = super::degree_distance(spec, 2)?;
    Ok(Box::new(IpStride::new(degree, distance, ctx.line.max(1).trailing_zeros(), ctx.cores)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::seen;

    #[test]
    fn confirms_a_stride_then_prefetches_along_it() {
        let mut p = IpStride::new(2, 1, 6, 1);
        let mut out = Vec::new();
        // Stride 256 B at PC 0x400: first access learns, second sets the stride, third confirms.
        for (i, a) in [0x1000u64, 0x1100, 0x1200].iter().enumerate() {
            out.clear();
            p.on_access(seen(Some(0x400), *a, true), a >> 6, &mut out);
            if i < 2 {
                assert!(out.is_empty(), "step {i}: {out:?}");
            }
        }
        assert_eq!(out, vec![0x1300 >> 6, 0x1400 >> 6]);
        // Another PC with another stride does not disturb it.
        p.on_access(seen(Some(0x500), 0x9000, true), 0x9000 >> 6, &mut out);
        out.clear();
        p.on_access(seen(Some(0x400), 0x1300, false), 0x1300 >> 6, &mut out);
        assert_eq!(out, vec![0x1400 >> 6, 0x1500 >> 6]);
        // No PC: nothing.
        out.clear();
        p.on_access(seen(None, 0x1400, true), 0x1400 >> 6, &mut out);
        assert!(out.is_empty());
    }
}
