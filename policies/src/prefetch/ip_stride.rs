//! `ip-stride[:D[:K[:R]]]`: the classic PC-indexed stride prefetcher (Baer
//! and Chen's reference prediction table). Per core and PC it remembers the
//! last address and stride; a stride seen twice in a row is confirmed, and
//! each access then prefetches D lines along it, starting K strides ahead
//! (at least the next line when the stride is within one line). Strides
//! longer than R lines (R = 0, the default: none) get F lines instead of D
//! (F = 0, the default: they are not followed) — the reach and the
//! lookahead beyond it that `numasim live calibrate` measures on the host.
//!
//! `ip-stride-table[:c=C][:r=R][:f.LEVEL=N...]:S=A[:S=A...]`: the same table, with a
//! lookahead per stride: a confirmed stride of s lines prefetches A(s)
//! lines along it, from one stride ahead, A interpolated linearly in log2 s
//! between the listed strides (ascending, in lines; the first entry's A
//! below it, the last's above it, |s| for descending strides) — the curve
//! `live calibrate` measures, one entry per stride walked. A stride is
//! confirmed once seen C + 1 times in a row (C = 1, the default: twice) —
//! the training a new stream costs before the prefetcher runs ahead, which
//! `live calibrate` fits to the host's ramp walks. A stride longer than R
//! lines is not followed (R = 0, the default: every stride is) — the
//! largest stride the host's walks show it following when a longer one
//! walked was not. The cache level named LEVEL (a private level below
//! the table's, or the LLC) serves at most N of its fills at once per core
//! (default: no limit; fills from the LLC are still bounded by the
//! prefetch queue, as fills from memory are) along a stride longer
//! than the region streamer's near step — how far ahead a host runs a
//! stride whose lines that level holds, which `live calibrate` fits to
//! the host's stride walks inside the level (a host's streamer runs the
//! near strides far ahead from its caches too).

// Checkpointed: a fixed hasher, so that saved state repeats byte for byte.
use sim::directory::DetMap as HashMap;

use sim::policy::{AccessView, Prefetcher};

use super::{MAX_CONFIRM, MAX_FILLS};
use crate::error::{Bound, PolicyError, SpecProblem};
use crate::registry::{Ctx, Entry, Spec};

#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
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
    /// (log2 stride in lines, lines ahead), ascending: when not empty, the
    /// degree for each stride (`ip-stride-table`).
    curve: Vec<(f64, f64)>,
    line_bits: u32,
    /// Repeats of a stride after the first before it is followed.
    confirm: u8,
    /// Per core: PC → entry. Bounded per core (a real table has 256 entries).
    table: Vec<HashMap<u64, PcEntry>>,
    /// Fills in flight per core from each level named (no entry: no
    /// limit) for strides longer than [`super::NEAR_STEP_LINES`].
    fills: Vec<(String, u8)>,
    /// The last access's lines are held to `fills`.
    limited: bool,
}

const TABLE_ENTRIES: usize = 1024;



impl IpStride {
    pub fn new(degree: u32, distance: u32, line_bits: u32, cores: usize) -> Self {
        IpStride {
            degree,
            distance: distance.max(1),
            reach: 0,
            far_degree: 0,
            curve: Vec::new(),
            line_bits,
            confirm: 1,
            table: vec![HashMap::default(); cores.max(1)],
            fills: Vec::new(),
            limited: false,
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

impl IpStride {
    /// Follows a stride once it has repeated `c` times (1..=8).
    pub fn with_confirm(mut self, c: u8) -> Self {
        self.confirm = c.clamp(1, MAX_CONFIRM);
        self
    }

    /// The lookahead (lines) for a stride of `bytes`, from the curve.
    fn curve_degree(&self, bytes: u64) -> u32 {
        let x = ((bytes >> self.line_bits).max(1) as f64).log2();
        let c = &self.curve;
        let a = match c.iter().position(|p| p.0 >= x) {
            None => c[c.len() - 1].1,
            Some(0) => c[0].1,
            Some(i) => {
                let (x0, a0) = c[i - 1];
                let (x1, a1) = c[i];
                a0 + (a1 - a0) * (x - x0) / (x1 - x0)
            }
        };
        a.round().clamp(1.0, 64.0) as u32
    }
}

impl Prefetcher for IpStride {
    fn name(&self) -> String {
        if !self.curve.is_empty() {
            let pts: Vec<String> = self
                .curve
                .iter()
                .map(|&(x, a)| format!("{}={a}", x.exp2().round()))
                .collect();
            let c = if self.confirm == 1 {
                String::new()
            } else {
                format!("c={}:", self.confirm)
            };
            let r = if self.reach == 0 {
                String::new()
            } else {
                format!("r={}:", self.reach >> self.line_bits)
            };
            let l: String = self
                .fills
                .iter()
                .map(|(level, n)| format!("f.{level}={n}:"))
                .collect();
            format!("ip-stride-table:{c}{r}{l}{}", pts.join(":"))
        } else if self.reach == 0 {
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
        self.limited = false;
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
            e.confidence = (e.confidence + 1).min(self.confirm.max(3));
        } else {
            e.confidence = 0;
            e.stride = stride;
        }
        e.last = seen.addr;
        if e.confidence < self.confirm {
            return;
        }
        let step = e.stride;
        self.limited = step.unsigned_abs() > super::NEAR_STEP_LINES << self.line_bits;
        let degree = if !self.curve.is_empty() {
            if self.reach > 0 && step.unsigned_abs() > self.reach {
                return;
            }
            self.curve_degree(step.unsigned_abs())
        } else if self.reach > 0 && step.unsigned_abs() > self.reach {
            self.far_degree
        } else {
            self.degree
        };
        let lb = self.line_bits;
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

    fn fills_from(&self, from: &str) -> Option<usize> {
        if !self.limited {
            return None;
        }
        let n = self.fills.iter().find(|f| f.0 == from)?.1;
        Some(n as usize)
    }

    fn save_state(&self) -> Vec<u8> {
        sim::checkpoint::encode(&self.table)
    }

    fn load_state(&mut self, state: &[u8]) -> Result<(), sim::checkpoint::CheckpointError> {
        let table: Vec<HashMap<u64, PcEntry>> = sim::checkpoint::decode(state)?;
        sim::checkpoint::same_len("cores' PC tables", table.len(), self.table.len())?;
        self.table = table;
        Ok(())
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
        return Err(spec.error(
            "prefetcher",
            SpecProblem::Range {
                param: "F",
                range: Bound::Within { min: 0, max: 64 },
            },
        ));
    }
    Ok(Box::new(
        IpStride::new(degree, distance, ctx.line.max(1).trailing_zeros(), ctx.cores)
            .with_reach(more.first().copied().unwrap_or(0), far as u32),
    ))
}

/// Registry entry of the per-stride form.
pub const TABLE_ENTRY: Entry<dyn Prefetcher> = Entry {
    name: "ip-stride-table",
    params: "[:c=C][:r=R][:f.LEVEL=N...]:S=A[:S=A...]",
    help: "ip-stride with A(s) lines ahead for a stride of s lines, interpolated in log2 s (a calibrated curve); a stride followed once repeated C times (default 1), none longer than R lines (default: no limit), at most N fills in flight per core from the cache level LEVEL along strides over 2 lines (default: no limit)",
    build: build_table,
};

fn build_table(spec: &Spec, ctx: &Ctx) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let bad = |why: &'static str| spec.error("prefetcher", SpecProblem::StrideTable(why));
    let rest = spec.rest.ok_or_else(|| bad("no curve"))?;
    let mut curve: Vec<(f64, f64)> = Vec::new();
    let (mut confirm, mut reach) = (1, 0);
    let mut fills: Vec<(String, u8)> = Vec::new();
    for (i, pt) in rest.split(':').enumerate() {
        let (st, a) = pt.split_once('=').ok_or_else(|| bad("an entry without '='"))?;
        if st == "c" {
            confirm = a
                .parse::<u8>()
                .ok()
                .filter(|c| i == 0 && (1..=MAX_CONFIRM).contains(c))
                .ok_or_else(|| bad("c= not first or not 1..=8"))?;
            continue;
        }
        if st == "r" {
            reach = a
                .parse::<u64>()
                .ok()
                .filter(|&r| {
                    curve.is_empty() && reach == 0 && fills.is_empty() && (1..=1 << 20).contains(&r)
                })
                .ok_or_else(|| bad("r= after a stride, twice, or not 1..=1048576"))?;
            continue;
        }
        if let Some(level) = st.strip_prefix("f.") {
            let n = a
                .parse::<u8>()
                .ok()
                .filter(|&n| {
                    curve.is_empty()
                        && !level.is_empty()
                        && !fills.iter().any(|f| f.0 == level)
                        && (1..=MAX_FILLS).contains(&n)
                })
                .ok_or_else(|| bad("f.LEVEL= after a stride, twice for a level, or not 1..=64 (MAX_FILLS)"))?;
            if let Some(m) = ctx.machine
                && !sim::machine::fill_levels(&m.spec).contains(&level)
            {
                return Err(bad("f.LEVEL= names no cache level of the machine below its first"));
            }
            fills.push((level.to_string(), n));
            continue;
        }
        let st: u64 = st.parse().map_err(|_| bad("a stride that is not a number"))?;
        let a: f64 = a.parse().map_err(|_| bad("a lookahead that is not a number"))?;
        if st == 0 || !(1.0..=64.0).contains(&a) {
            return Err(bad("a stride of 0 or a lookahead out of range"));
        }
        let x = (st as f64).log2();
        if curve.last().is_some_and(|p| p.0 >= x) {
            return Err(bad("strides not ascending"));
        }
        curve.push((x, a));
    }
    if curve.is_empty() {
        return Err(bad("no curve"));
    }
    let mut p = IpStride::new(1, 1, ctx.line.max(1).trailing_zeros(), ctx.cores)
        .with_confirm(confirm)
        .with_reach(reach, 0);
    p.curve = curve;
    p.fills = fills;
    Ok(Box::new(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::tests::{create, seen};

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
    fn the_table_interpolates_the_lookahead_in_log_stride() {
        let p = create("ip-stride-table:1=20:4=10:64=4", 64, 1).unwrap();
        assert_eq!(p.name(), "ip-stride-table:1=20:4=10:64=4");
        let mut t = IpStride::new(1, 1, 6, 1);
        t.curve = vec![(0.0, 20.0), (2.0, 10.0), (6.0, 4.0)];
        // 1 line: 20; 2 lines: halfway to 4 lines in log2: 15; 16 lines:
        // halfway from 4 to 64: 7; beyond the last: 4; within a line: 20.
        for (lines, want) in [(1u64, 20), (2, 15), (4, 10), (16, 7), (4096, 4)] {
            assert_eq!(t.curve_degree(lines * 64), want, "{lines} lines");
        }
        assert_eq!(t.curve_degree(8), 20);
        // A confirmed stride of 2 lines prefetches 15 lines along it.
        let mut out = Vec::new();
        for k in 0..3u64 {
            out.clear();
            let a = 0x10000 + k * 128;
            t.on_access(seen(Some(0x400), a, true), a >> 6, &mut out);
        }
        assert_eq!(out.len(), 15);
        assert_eq!(out[0], (0x10000 + 3 * 128) >> 6);
        for bad in [
            "ip-stride-table",
            "ip-stride-table:4=2:1=3",
            "ip-stride-table:1=0",
            "ip-stride-table:x=1",
            "ip-stride-table:c=3",
            "ip-stride-table:1=2:c=3",
            "ip-stride-table:c=9:1=2",
            "ip-stride-table:c=0:1=2",
            "ip-stride-table:r=4",
            "ip-stride-table:1=2:r=4",
            "ip-stride-table:r=0:1=2",
            "ip-stride-table:r=4:r=8:1=2",
            "ip-stride-table:r=4:c=3:1=2",
            "ip-stride-table:f.LLC=0:1=2",
            "ip-stride-table:f.LLC=65:1=2",
            "ip-stride-table:1=2:f.LLC=3",
            "ip-stride-table:f.LLC=2:r=4:1=2",
            "ip-stride-table:f.LLC=2:f.LLC=3:1=2",
            "ip-stride-table:f.=2:1=2",
        ] {
            assert!(create(bad, 64, 1).is_err(), "{bad}");
        }
    }

    #[test]
    fn fill_limits_per_level_are_parameters_of_the_table() {
        let spec = "ip-stride-table:c=2:r=63:f.L2=2:f.LLC=4:1=18:32=2";
        let mut p = create(spec, 64, 1).unwrap();
        assert_eq!(p.name(), spec);
        // Along a stride of 3 lines, held to 2 from L2 and 4 from the
        // LLC; of 2 lines (the region streamer's near step), not.
        let mut out = Vec::new();
        for (stride, l2, llc) in [(3u64, Some(2), Some(4)), (2, None, None)] {
            for k in 0..4u64 {
                let a = 0x10000 + k * stride * 64;
                p.on_access(seen(Some(0x400), a, true), a >> 6, &mut out);
            }
            assert_eq!(p.fills_from("L2"), l2, "stride {stride}");
            assert_eq!(p.fills_from("LLC"), llc, "stride {stride}");
            assert_eq!(p.fills_from("L3"), None, "stride {stride}");
        }
        let p = create("ip-stride-table:1=18", 64, 1).unwrap();
        assert_eq!(p.fills_from("LLC"), None);
    }

    #[test]
    fn the_table_follows_no_stride_beyond_its_reach() {
        let spec = "ip-stride-table:c=2:r=63:1=18:32=2";
        let mut p = create(spec, 64, 1).unwrap();
        assert_eq!(p.name(), spec);
        // Strides of 63 and 64 lines, ascending and descending, from
        // their own PCs: after two repeats 63 lines gets the last entry's
        // 2 lines ahead, 64 lines nothing.
        for (pc, stride, want) in [(0x400u64, 63i64, 2usize), (0x500, 64, 0), (0x600, -63, 2), (0x700, -64, 0)] {
            let mut out = Vec::new();
            for k in 0..4i64 {
                out.clear();
                let a = (1i64 << 30) + k * stride * 64;
                p.on_access(seen(Some(pc), a as u64, true), (a >> 6) as u64, &mut out);
            }
            assert_eq!(out.len(), want, "stride {stride}");
            if want > 0 {
                assert_eq!(out[0] as i64, ((1i64 << 30) >> 6) + 4 * stride);
            }
        }
    }

    #[test]
    fn a_stride_is_followed_after_c_repeats() {
        for c in [1usize, 3] {
            let spec = format!("ip-stride-table:c={c}:1=2");
            let mut p = create(&spec, 64, 1).unwrap();
            let want = if c == 1 { "ip-stride-table:1=2" } else { spec.as_str() };
            assert_eq!(p.name(), want);
            // Unit stride: the k-th access (from 0) has seen the stride
            // repeat k − 1 times.
            let first = (0..8u64)
                .position(|k| {
                    let mut out = Vec::new();
                    p.on_access(seen(Some(0x400), k * 64, true), k, &mut out);
                    !out.is_empty()
                })
                .unwrap();
            assert_eq!(first, c + 1, "c={c}");
        }
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
