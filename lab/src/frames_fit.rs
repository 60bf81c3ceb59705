//! Whether a host's caches read as indexed by frames the kernel (or the
//! hypervisor) scattered, and how large its LLC is: the calibration's
//! pointer chase, walked through the model twice — with `frames =
//! "identity"` and the private levels at the sizes where the chase steps
//! up, and with `frames = "random"` and the private levels at their
//! nominal (sysfs) sizes — each with its LLC fitted by simulation to the
//! chase, and the machine nearer the measured curve kept. On a host whose
//! frames are scattered, a physically indexed L2 overfills some page
//! colours well before its size, so the chase climbs gradually from well
//! below it; with identity frames the model can only step at one size
//! (`docs/live.md`, "Physical frames and posted stores"). That climb is no
//! plateau: the plateau rule can read it as the LLC (a 4 MB LLC at 35.6
//! ns on a host whose chase stays off memory to 8 MB), so the LLC's size
//! and latency are fitted to the whole chase instead.

use live::calibrate::Point;
use sim::machine::{CacheSpec, MachineSpec};

use crate::dependent::{ReplayError, walk_split_ns};

/// Chase points larger than this are left out of the comparison (their
/// cost is memory's either way, and they take the longest).
const MAX_BYTES: u64 = 32 << 20;

/// The fit: the machine kept, and a note for its `sources`.
pub struct FramesFit {
    pub spec: MachineSpec,
    pub note: String,
    /// The kept machine's mean |ln(model / host)| over the chase.
    pub error: f64,
}

/// A cyclic random order of `n` lines (Sattolo's algorithm, seeded): the
/// chase's one cycle, walked twice (warm, then timed).
fn chase(n: usize, seed: u64) -> Vec<u32> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (next() % i as u64) as usize;
        order.swap(i, j);
    }
    // `order` is a cyclic permutation: walk it from line 0.
    let mut walk = Vec::with_capacity(2 * n);
    let mut at = 0u32;
    for _ in 0..2 * n {
        walk.push(at);
        at = order[at as usize];
    }
    walk
}

/// Loads timed at most at each chase point, after a whole cycle that
/// warms: once warm, a cyclic chase through LRU caches hits or misses on
/// each line the same way every cycle, so a part of the cycle (its lines
/// in random order) measures the whole.
const TIMED: usize = 1 << 16;

/// The model's ns per load on the chase at each of `points` (the points
/// on threads of their own; each walk is the same on any).
fn walks(spec: &MachineSpec, points: &[Point], line: u64) -> Result<Vec<f64>, ReplayError> {
    use rayon::prelude::*;
    let m = sim::Machine::new(spec.clone()).map_err(ReplayError::Machine)?;
    points
        .par_iter()
        .enumerate()
        .map(|(k, p)| {
            let lines = (p.bytes / line).max(2) as usize;
            let walk = chase(lines, 1000 + k as u64);
            let (warm, next) = walk.split_at(lines);
            walk_split_ns(&m, &[], warm, &next[..lines.min(TIMED)])
        })
        .collect()
}

/// Mean |ln(model / host)| of the model's `ns` against `points`.
fn error(ns: &[f64], points: &[Point]) -> f64 {
    let sum: f64 = ns
        .iter()
        .zip(points)
        .map(|(x, p)| (x / p.ns).ln().abs())
        .sum();
    sum / points.len().max(1) as f64
}

/// Steps a doubling of the LLC candidates' sizes is cut into.
const LLC_STEPS_PER_DOUBLING: f64 = 4.0;

/// `spec`'s LLC, fitted by simulation to the chase `points`. Geometries:
/// the one the plateau rule gave (first, kept on a tie), and valid
/// geometries of the nominal LLC `nominal` (size, ways) on a grid of four
/// a doubling from just past the largest private level to the largest
/// chase point or the nominal size, whichever is less — every other one
/// of the grid, then the two beside the best (the plateau's counts as its
/// nearest). Latencies: every tenth of a nanosecond strictly between the
/// private levels' and memory's, and the plateau's own if it lies there.
/// The chase is one dependent load at a time with no prefetchers, so a
/// walk's ns is linear in the LLC's latency: two runs a geometry give it
/// at every latency. A geometry the machine rejects (a PLRU LLC with
/// ways not a power of two) is skipped. Returns the walks of the machine
/// kept (run again, not interpolated) and a note; `spec` is left as it is
/// when it or `nominal` has no LLC.
fn fit_llc(
    spec: &mut MachineSpec,
    nominal: Option<(u64, u32)>,
    points: &[Point],
) -> Result<(Vec<f64>, String), ReplayError> {
    let line = spec.line_size;
    let (Some(plateau), Some((size, assoc))) = (llc(spec).cloned(), nominal) else {
        return Ok((walks(spec, points, line)?, "LLC not fitted".into()));
    };
    // The walks run on node 0's first core.
    let memory = spec
        .nodes
        .first()
        .and_then(|n| n.memory.as_ref())
        .map_or(plateau.latency_ns, |m| m.latency_ns);
    let private = spec.core.caches.iter();
    let lo_ns = private.clone().map(|c| c.latency_ns).fold(0.0, f64::max);
    let lo_bytes = private.map(|c| c.size.0).max().unwrap_or(line);
    let hi_bytes = points.iter().map(|p| p.bytes).max().unwrap_or(0).min(size);
    // Grid point k is the geometry nearest lo_bytes · 2^(k/4), k ≥ 1.
    let target = |k: u32| (lo_bytes as f64 * 2f64.powf(k as f64 / LLC_STEPS_PER_DOUBLING)) as u64;
    let geometry = |k: u32| -> Option<(u64, u32)> {
        let g = live::calibrate::effective_geometry(size, assoc, line, target(k));
        (k >= 1 && target(k) <= hi_bytes && g.0 > lo_bytes).then_some(g)
    };
    let inside = |ns: f64| ns > lo_ns && ns < memory;
    let mut latencies: Vec<f64> = ((lo_ns * 10.0).floor() as i64 + 1
        ..(memory * 10.0).ceil() as i64)
        .map(|t| t as f64 / 10.0)
        .filter(|&ns| inside(ns))
        .collect();
    if inside(plateau.latency_ns) {
        latencies.insert(0, plateau.latency_ns);
    }
    let (x0, x1) = (lo_ns, memory.max(lo_ns + 1.0));
    // The least error of a geometry over the latencies, and its latency;
    // `None` if the machine rejects the geometry or no latency lies
    // between the private levels' and memory's.
    let eval = |(bytes, ways): (u64, u32)| -> Result<Option<(f64, f64)>, ReplayError> {
        if latencies.is_empty() {
            return Ok(None);
        }
        let at = |lat: f64| {
            let mut s = spec.clone();
            set_llc(&mut s, bytes, ways, lat);
            walks(&s, points, line)
        };
        let (a, b) = match (at(x0), at(x1)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(ReplayError::Machine(_)), _) | (_, Err(ReplayError::Machine(_))) => {
                return Ok(None);
            }
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let mut best: Option<(f64, f64)> = None;
        for &lat in &latencies {
            let ns: Vec<f64> = a
                .iter()
                .zip(&b)
                .map(|(a, b)| a + (b - a) * (lat - x0) / (x1 - x0))
                .collect();
            let e = error(&ns, points);
            if best.is_none_or(|(be, _)| e < be) {
                best = Some((e, lat));
            }
        }
        Ok(best)
    };
    let plateau_g = (plateau.size.0, plateau.assoc);
    // The plateau's geometry as it is (its latency too): the fallback.
    let kept = walks(spec, points, line)?;
    let mut best = (error(&kept, points), plateau_g, plateau.latency_ns);
    // Each geometry tried once, in order; the least error kept, the first
    // on a tie.
    let mut tried: Vec<(u64, u32)> = Vec::new();
    let try_g = |g: (u64, u32),
                 best: &mut (f64, (u64, u32), f64),
                 tried: &mut Vec<(u64, u32)>|
     -> Result<(), ReplayError> {
        if tried.contains(&g) {
            return Ok(());
        }
        tried.push(g);
        if let Some((e, lat)) = eval(g)?
            && e < best.0
        {
            *best = (e, g, lat);
        }
        Ok(())
    };
    try_g(plateau_g, &mut best, &mut tried)?;
    let mut k = 2;
    while target(k - 1) <= hi_bytes {
        if let Some(g) = geometry(k) {
            try_g(g, &mut best, &mut tried)?;
        }
        k += 2;
    }
    // The grid point nearest the best geometry so far, and its two
    // neighbours.
    let near = (1..=k)
        .filter_map(|k| geometry(k).map(|g| (k, g)))
        .min_by_key(|(_, g)| g.0.abs_diff(best.1.0));
    if let Some((k, _)) = near {
        for k in [k.saturating_sub(1), k, k + 1] {
            if let Some(g) = geometry(k) {
                try_g(g, &mut best, &mut tried)?;
            }
        }
    }
    let count = tried.len();
    let (_, (bytes, ways), lat) = best;
    if (bytes, ways, lat) == (plateau_g.0, plateau_g.1, plateau.latency_ns) {
        return Ok((
            kept,
            format!(
                "LLC kept as the plateau rule gave it, {bytes} B {ways}-way at {lat} ns (nearest of {count} geometries fitted by simulation)"
            ),
        ));
    }
    set_llc(spec, bytes, ways, lat);
    let note = format!(
        "LLC {bytes} B {ways}-way at {lat} ns (fitted by simulation over {count} geometries; the plateau rule's {} B {}-way at {} ns)",
        plateau.size.0, plateau.assoc, plateau.latency_ns
    );
    Ok((walks(spec, points, line)?, note))
}

/// The first node's LLC.
fn llc(spec: &MachineSpec) -> Option<&CacheSpec> {
    spec.nodes.iter().find_map(|n| n.llc.as_ref())
}

/// Every node's LLC given `bytes`, `ways` and `latency_ns`.
fn set_llc(spec: &mut MachineSpec, bytes: u64, ways: u32, latency_ns: f64) {
    for l in spec.nodes.iter_mut().filter_map(|n| n.llc.as_mut()) {
        l.size = sim::machine::Bytes(bytes);
        l.assoc = ways;
        l.latency_ns = latency_ns;
    }
}

/// `fitted` (the machine with the chase's levels applied, identity
/// frames) against the same with random frames and the private levels'
/// geometry of `nominal` (the probed machine; their fitted latencies
/// kept), on the chase `curve`, each with its LLC fitted to the chase
/// ([`fit_llc`]); the nearer is kept. Nothing changes without private
/// levels or chase points.
pub fn fit(
    fitted: &MachineSpec,
    nominal: &MachineSpec,
    curve: &[Point],
) -> Result<FramesFit, ReplayError> {
    let line = fitted.line_size;
    let points: Vec<Point> = curve
        .iter()
        .filter(|p| p.bytes <= MAX_BYTES && p.ns > 0.0 && p.bytes >= 2 * line)
        .copied()
        .collect();
    if points.is_empty() || fitted.core.caches.is_empty() {
        return Ok(FramesFit {
            spec: fitted.clone(),
            note: "physical frames: not fitted (no chase points or no private levels)".into(),
            error: f64::NAN,
        });
    }
    let nominal_llc = llc(nominal).map(|c| (c.size.0, c.assoc));
    let mut identity = fitted.clone();
    let (ns_id, llc_id) = fit_llc(&mut identity, nominal_llc, &points)?;
    let mut random = fitted.clone();
    random.frames = sim::frames::FrameMapping::Random;
    for (c, n) in random.core.caches.iter_mut().zip(&nominal.core.caches) {
        c.size = n.size;
        c.assoc = n.assoc;
    }
    let (ns_rnd, llc_rnd) = fit_llc(&mut random, nominal_llc, &points)?;
    let (e_id, e_rnd) = (error(&ns_id, &points), error(&ns_rnd, &points));
    let keep_random = e_rnd < e_id;
    let sizes = |s: &MachineSpec| {
        s.core
            .caches
            .iter()
            .map(|c| format!("{} {} B {}-way", c.name, c.size.0, c.assoc))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let note = format!(
        "physical frames: the chase ({} sizes up to {} B) walked through the model, mean |ln(model/host)| {:.3} with identity frames ({}, {llc_id}) and {:.3} with random frames ({}, {llc_rnd}): modelled as {}",
        points.len(),
        points.last().map_or(0, |p| p.bytes),
        e_id,
        sizes(&identity),
        e_rnd,
        sizes(&random),
        if keep_random { "random" } else { "identity" }
    );
    Ok(FramesFit {
        spec: if keep_random { random } else { identity },
        note,
        error: e_id.min(e_rnd),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dependent::walk_ns;

    /// One core: L1D 4 KiB 4-way, L2 256 KiB 4-way (16 page colours),
    /// LLC 2 MiB, memory 100 ns; with `frames` and the L2 at `l2` ways.
    fn spec(frames: &str, l2_ways: u32) -> MachineSpec {
        let l2 = 1024 * 64 * l2_ways as u64;
        sim::Machine::from_toml(&format!(
            r#"name = "fit-test"
frames = "{frames}"
c2c_latency_ns = 40.0
[core]
freq_ghz = 2.0
mlp = 1
caches = [
  {{ name = "L1D", size = "4K", assoc = 4, latency_ns = 1.0 }},
  {{ name = "L2", size = {l2}, assoc = {l2_ways}, latency_ns = 5.0 }},
]
[[nodes]]
cores = 1
llc = {{ name = "LLC", size = "2M", assoc = 16, latency_ns = 30.0 }}
memory = {{ capacity = "1G", channels = 1, channel_gbps = 100.0, latency_ns = 100.0, interleave = 4096 }}
"#
        ))
        .expect("test machine")
        .spec
    }

    /// The "host": `truth` walking chases (other orders than the fit's)
    /// at two sizes a doubling from 32 KiB to 4 MiB.
    fn host_curve(truth: &MachineSpec) -> Vec<Point> {
        host_curve_at(truth, 2)
    }

    /// The same at `per_doubling` sizes a doubling.
    fn host_curve_at(truth: &MachineSpec, per_doubling: u32) -> Vec<Point> {
        let m = sim::Machine::new(truth.clone()).unwrap();
        (0..=7 * per_doubling as u64)
            .map(|k| {
                let bytes =
                    ((32u64 << 10) as f64 * 2f64.powf(k as f64 / per_doubling as f64)) as u64 / 64
                        * 64;
                let ns = walk_ns(&m, &[], &chase((bytes / 64) as usize, 77 + k)).unwrap();
                Point {
                    bytes,
                    ns,
                    spread: 0.0,
                }
            })
            .collect()
    }

    /// A host whose caches see scattered frames: its chase climbs before
    /// the L2's 256 KiB, where the calibration reads an L2 of 3 ways
    /// (192 KiB). The fit must find the frames and give the L2 its 4 ways
    /// back.
    #[test]
    fn scattered_frames_are_found() {
        let truth = spec("random", 4);
        let fitted = spec("identity", 3);
        assert_random(
            &fit(&fitted, &truth, &host_curve(&truth)).unwrap(),
            &truth.core.caches,
        );
    }

    /// The fit chose random frames and gave the private levels `nominal`.
    fn assert_random(f: &FramesFit, nominal: &[CacheSpec]) {
        assert_eq!(
            f.spec.frames,
            sim::frames::FrameMapping::Random,
            "{}",
            f.note
        );
        assert_eq!(f.spec.core.caches, nominal);
        assert!(f.note.ends_with("modelled as random"), "{}", f.note);
    }

    /// The 2-vCPU Xeon VM of 2026-12-05, morning (the held-out run's
    /// calibrated machine, L2 1.31 MB 10-way from the chase's step, and
    /// the huge-page chase it came from, copied from
    /// `bench/out/heldout-gnr` into `tests/fixtures/curves/`): the chase
    /// reads as a 2 MiB 16-way L2 (sysfs) over scattered frames
    /// (`docs/live.md`).
    #[test]
    fn this_vm_reads_as_scattered_frames() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/curves");
        let fitted = crate::machines::load(
            dir.join("xeon-vm-2026-12-05.toml").to_str().unwrap(),
            &crate::InputLog::default(),
        )
        .unwrap()
        .spec;
        // sysfs: L2 2 MiB 16-way; L3 480 MiB 16-way, modelled as 256 MiB.
        let mut nominal = fitted.clone();
        nominal.core.caches[1].size = sim::machine::Bytes(2 << 20);
        nominal.core.caches[1].assoc = 16;
        let l3 = nominal.nodes[0].llc.as_mut().unwrap();
        l3.size = sim::machine::Bytes(256 << 20);
        l3.assoc = 16;
        let text = std::fs::read_to_string(dir.join("xeon-vm-2026-12-05-huge.csv")).unwrap();
        let curve = live::calibrate::read_curve_csv(&text).expect("curve fixture");
        let f = fit(&fitted, &nominal, &curve).unwrap();
        assert_random(&f, &nominal.core.caches);
        // The plateau rule's LLC (12 MB 23-way at 57.9 ns) with these
        // frames walked the chase at 0.145; the fitted LLC comes nearer.
        assert!(f.error < 0.12, "{}", f.note);
    }

    /// A host that steps exactly at its L2's size (caches indexed as the
    /// model indexes them by default): the fit keeps identity frames.
    #[test]
    fn a_sharp_step_keeps_identity_frames() {
        let truth = spec("identity", 4);
        let f = fit(&truth, &truth, &host_curve(&truth)).unwrap();
        assert_eq!(f.spec, truth, "{}", f.note);
    }

    /// A host made of `spec(frames, 4)` with its LLC `(bytes, ways)` at
    /// 30 ns, whose chase (`per_doubling` sizes a doubling) the plateau
    /// rule read as identity frames, an L2 of `l2_ways` ways and an LLC of
    /// 2 MiB 16-way at 40 ns: the fit must give the host back exactly.
    fn assert_llc_found(frames: &str, llc: (u64, u32), l2_ways: u32, per_doubling: u32) {
        let mut truth = spec(frames, 4);
        set_llc(&mut truth, llc.0, llc.1, 30.0);
        let mut plateau = spec("identity", l2_ways);
        set_llc(&mut plateau, 2 << 20, 16, 40.0);
        let f = fit(
            &plateau,
            &spec(frames, 4),
            &host_curve_at(&truth, per_doubling),
        )
        .unwrap();
        assert_eq!(f.spec, truth, "{}", f.note);
        assert!(f.error < 1e-9, "{}", f.note);
    }

    /// A 1 MiB 8-way LLC, a point of the first pass's grid.
    #[test]
    fn the_llc_is_fitted_to_the_chase() {
        assert_llc_found("identity", (1 << 20, 8), 4, 4);
    }

    /// A 1.25 MiB 10-way LLC (the grid's ninth point), which the first
    /// pass skips and the second finds beside the best of the first.
    #[test]
    fn an_llc_between_the_first_pass_points_is_found() {
        assert_llc_found("identity", (1280 << 10, 10), 4, 8);
    }

    /// With scattered frames, and an L2 read as 3 ways: the frames, the
    /// L2 and the LLC found together.
    #[test]
    fn the_llc_is_fitted_with_scattered_frames() {
        assert_llc_found("random", (1 << 20, 8), 3, 4);
    }

    #[test]
    fn the_chase_is_one_cycle_through_every_line() {
        let w = chase(1000, 7);
        assert_eq!(w.len(), 2000);
        let mut seen = vec![false; 1000];
        for &l in &w[..1000] {
            assert!(!seen[l as usize], "line {l} twice in one cycle");
            seen[l as usize] = true;
        }
        assert_eq!(&w[..1000], &w[1000..]);
    }
}
