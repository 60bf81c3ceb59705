//! `ip-stride[:D[:K[:R]]]`: the classic PC-indexed stride prefetcher (Baer
//! and Chen's reference prediction table). Per core and PC it remembers the
//! last address and stride; a stride seen twice in a row is confirmed, and
//! each access then prefetches D lines along it, starting K strides ahead
//! (at least the next line when the stride is within one line). Strides
//! longer than R lines (R = 0, the default: none) get F lines instead of D
//! (F = 0, the default: they are not followed) — the reach and the
//! lookahead beyond it that `numasim live calibrate` measures on the host.

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
    /// Longest stride given `degree` lines (bytes; 0: every stride).
    reach: u64,
    /// Lines prefetched along a stride beyond `reach` (0: none).
    far_degree: u32,
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
            reach: 0,
            far_degree: 0,
            line_bits,
            table: vec![HashMap::new(); cores.max(1)],
        }
    }
}

impl IpStride {
    /// Gives strides beyond `lines` lines (0: none) `far_degree` lines
    /// instead of the degree (0: not followed).
    pub fn with_reach(mut self, lines: u64, far_degree: u32) -> Self {
        self.reach = lines << self.line_bits;
        self.far_degree = far_degree;
        self
    }
}

impl Prefetcher for IpStride {
    fn name(&self) -> String {
        if self.reach == 0 {
            format!("ip-stride:{}:{}", self.degree, self.distance)
        } else {
            format!(
                "ip-stride:{}:{}:{}:{}",
                self.degree,
                self.distance,
                self.reach >> self.line_bits,
                self.far_degree
            )
        }
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
        let degree = if self.reach > 0 && e.stride.unsigned_abs() > self.reach {
            self.far_degree
        } else {
            self.degree
        };
        let lb = self.line_bits;
        let step = e.stride;
        if step.unsigned_abs() >= 1 << lb {
            // Stride of at least a line: D targets, K strides ahead.
            for k in 0..degree as i64 {
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
    params: "[:D[:K[:R[:F]]]]",
    help: "per PC, a confirmed stride: D lines starting K strides ahead; F lines (0: none) for strides over R lines (0: no limit)",
    build,
};

fn build(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let (degree, distance, more) = super::degree_distance_and(spec, 2, &["R", "F"])?;
    let far = more.get(1).copied().unwrap_or(0);
    if far > 64 {
        return Err(PolicyError(format!(
            "prefetcher {:?}: F must be 0..=64",
            spec.full
        )));
    }
    Ok(Box::new(
        IpStride::new(degree, distance, ctx.line.max(1).trailing_zeros(), ctx.cores)
            .with_reach(more.first().copied().unwrap_or(0), far as u32),
    ))
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

    #[test]
    fn strides_beyond_the_reach_get_the_far_degree() {
        // Reach 4 lines, degree 2, far degree 1 (then 0: not followed).
        for (stride, far, want) in [(4u64, 1, 2), (5, 1, 1), (5, 0, 0)] {
            let stride = stride * 64;
            let mut p = IpStride::new(2, 1, 6, 1).with_reach(4, far);
            let mut out = Vec::new();
            for k in 0..4 {
                out.clear();
                let a = 0x10000 + k * stride;
                p.on_access(seen(Some(0x400), a, true), a >> 6, &mut out);
            }
            let want: Vec<u64> = (1..=want).map(|j| (0x10000 + (3 + j) * stride) >> 6).collect();
            assert_eq!(out, want, "stride {stride} far {far}");
        }
        assert_eq!(
            IpStride::new(3, 2, 6, 1).with_reach(9, 1).name(),
            "ip-stride:3:2:9:1"
        );
    }
}
