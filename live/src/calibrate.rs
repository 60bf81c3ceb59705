//! Calibration microbenchmarks in the manner of lmbench's `lat_mem_rd`,
//! Intel MLC and core-to-core-latency:
//!
//! - **pointer chase**: one random cycle through every 64-byte line of a
//!   working set (Sattolo's algorithm, so hardware prefetchers cannot follow
//!   it), dependent loads, ≥ the given count per point, the median of
//!   repeats; latency vs working-set size and the sizes where it steps;
//! - **core-to-core**: two pinned threads bouncing one cache line with
//!   compare-and-swap; half a round trip is one transfer;
//! - **bandwidth**: streaming reads of a large buffer by 1..N pinned threads.
//!
//! Timing uses the TSC ([`crate::tsc`]: `lfence; rdtsc` … `rdtscp; lfence`,
//! converted with a measured rate) around at least 10⁵ operations, never
//! around single loads; medians absorb preemption.

use crate::LiveError;
use crate::os::{PageBuf, pin_current_thread};
use crate::tsc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Latency (ns per dependent load) for one working-set size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    pub bytes: u64,
    pub ns: f64,
    /// Spread of the repeats: (max − min) / median.
    pub spread: f64,
}

pub(crate) fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// ns per load of a pointer chase over `bytes`, median of `repeats` runs of `loads` loads.
pub fn chase(bytes: u64, loads: u64, repeats: usize, seed: u64) -> Result<Point, LiveError> {
    chase_in(PageBuf::new(bytes as usize)?, bytes, loads, repeats, seed).map(|(p, _)| p)
}

/// As [`chase`], in memory advised to use transparent huge pages; also
/// returns the share of the buffer the kernel actually backed with them.
pub fn chase_huge(
    bytes: u64,
    loads: u64,
    repeats: usize,
    seed: u64,
) -> Result<(Point, f64), LiveError> {
    let before = crate::os::anon_huge_bytes();
    let buf = PageBuf::huge(bytes as usize)?;
    let len = buf.len() as f64;
    let (p, after) = chase_in(buf, bytes, loads, repeats, seed)?;
    Ok((p, ((after.saturating_sub(before)) as f64 / len).min(1.0)))
}

/// The chase over `buf`; also returns the process's huge-page bytes while
/// the buffer was live.
fn chase_in(
    mut buf: PageBuf,
    bytes: u64,
    loads: u64,
    repeats: usize,
    seed: u64,
) -> Result<(Point, u64), LiveError> {
    let order = random_cycle((bytes as usize / 64).max(2), seed);
    let (ns, spread) = walk_cycle(&mut buf, &order, loads, repeats);
    let huge = crate::os::anon_huge_bytes();
    Ok((Point { bytes, ns, spread }, huge))
}

/// A single random cycle over `lines` lines (Sattolo's algorithm on
/// splitmix64).
pub(crate) fn random_cycle(lines: usize, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut s = seed;
    for i in (1..lines).rev() {
        let j = (splitmix(&mut s) % i as u64) as usize;
        order.swap(i, j);
    }
    order
}

/// ns per dependent load walking the lines of `buf` in the cyclic `order`
/// (line indices): (median of `repeats` runs of `loads` loads, spread).
pub(crate) fn walk_cycle(
    buf: &mut PageBuf,
    order: &[u32],
    loads: u64,
    repeats: usize,
) -> (f64, f64) {
    const LINE: usize = 64;
    let lines = order.len();
    let words = buf.as_slice_u64();
    let stride = LINE / 8;
    for k in 0..lines {
        let from = order[k] as usize;
        let to = order[(k + 1) % lines] as usize;
        words[from * stride] = (to * stride) as u64;
    }
    let mut times = Vec::with_capacity(repeats);
    let mut p = order[0] as usize * stride;
    // Warm: one pass over the cycle, by the timed loop's instruction.
    // SAFETY: every stored index is a valid word index of `words`.
    p = unsafe { crate::chase::chase(words.as_ptr(), p, lines.min(loads as usize)) };
    for _ in 0..repeats.max(1) {
        let t = tsc::start();
        // SAFETY: every stored index is a valid word index of `words`.
        p = unsafe { crate::chase::chase(words.as_ptr(), p, loads as usize) };
        times.push(tsc::ns(t, tsc::stop()) / loads as f64);
    }
    std::hint::black_box(p);
    times.sort_by(f64::total_cmp);
    let med = times[times.len() / 2];
    (med, (times[times.len() - 1] - times[0]) / med)
}

/// The default sweep: 8 KiB to `max` bytes, four points per doubling.
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = 8192f64;
    while s <= max as f64 {
        v.push((s as u64) / 64 * 64);
        s *= 2f64.powf(0.25);
    }
    v
}

/// A plateau of the latency curve: a cache level or memory.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Level {
    /// Median latency of the plateau (ns).
    pub ns: f64,
    /// The largest working set still on this plateau (its effective capacity).
    pub capacity: u64,
    /// The smallest working set on this plateau.
    pub from: u64,
    /// Curve points on the plateau.
    pub points: usize,
}

/// A plateau must span at least this factor of working-set sizes (a real
/// level covers a doubling or more; a stretch shorter than that between
/// two levels is a ramp — page colouring, a victim cache — not a level).
pub const MIN_SPAN: u64 = 2;

/// Splits the curve into plateaus. A point within `jump` (e.g. 0.4 = 40%)
/// of the current plateau's median so far joins it (plateaus drift up a
/// little as a level fills); a point above that starts
/// a new plateau only if the next point is within `jump` of it too (a flat
/// region); otherwise it is on the ramp between levels and is skipped.
pub fn levels(curve: &[Point], jump: f64) -> Vec<Level> {
    fn close(cur: &[&Point]) -> Level {
        let mut ns: Vec<f64> = cur.iter().map(|q| q.ns).collect();
        ns.sort_by(f64::total_cmp);
        Level {
            ns: ns[ns.len() / 2],
            capacity: cur.last().map_or(0, |q| q.bytes),
            from: cur.first().map_or(0, |q| q.bytes),
            points: cur.len(),
        }
    }
    let mut out: Vec<Level> = Vec::new();
    let mut cur: Vec<&Point> = Vec::new();
    for (i, p) in curve.iter().enumerate() {
        if cur.is_empty() {
            cur.push(p);
            continue;
        }
        let b = close(&cur).ns;
        if p.ns <= b * (1.0 + jump) {
            cur.push(p);
            continue;
        }
        let flat_next = curve
            .get(i + 1)
            .is_none_or(|q| q.ns <= p.ns * (1.0 + jump) && q.ns * (1.0 + jump) >= p.ns);
        if flat_next {
            out.push(close(&cur));
            cur = vec![p];
        }
    }
    if !cur.is_empty() {
        out.push(close(&cur));
    }
    // Short plateaus between longer ones are ramps; the last (memory) stays.
    let last = out.len().saturating_sub(1);
    out.into_iter()
        .enumerate()
        .filter(|&(i, l)| l.capacity >= MIN_SPAN * l.from || i == last || i == 0)
        .map(|(_, l)| l)
        .collect()
}

/// The capacity a cache level shows on the curve, as a valid geometry
/// (a power-of-two set count, whole ways) as near the step as one comes:
/// keep the set count (the index bits) and the nearest number of ways, at
/// most the nominal, if that leaves at least two; else the power-of-two set
/// count whose nearest whole number of ways (2 to twice the nominal) comes
/// nearest the step, ties to the ways nearer the nominal. Nearest, not
/// below: rounding every level down made the model's caches up to half
/// the measured size (the held-out set of issue 29).
pub fn effective_geometry(size: u64, assoc: u32, line: u64, step: u64) -> (u64, u32) {
    let sets = (size / (assoc as u64 * line)).max(1);
    let ways = (step + sets * line / 2) / (sets * line);
    if ways >= 2 {
        let ways = ways.min(assoc as u64) as u32;
        return (sets * line * ways as u64, ways);
    }
    let max_ways = 2 * assoc.max(1) as u64;
    let mut best: Option<(u64, u64, u64)> = None;
    let mut s = 1u64;
    while s <= sets {
        let ways = ((step + s * line / 2) / (s * line)).clamp(2, max_ways);
        let size = s * line * ways;
        let key = (size.abs_diff(step), ways.abs_diff(assoc as u64));
        if best.is_none_or(|(e, d, _)| key < (e, d)) {
            best = Some((key.0, key.1, s));
        }
        s *= 2;
    }
    let (_, _, s) = best.expect("at least one set count");
    let ways = ((step + s * line / 2) / (s * line)).clamp(2, max_ways);
    (s * line * ways, ways as u32)
}

/// Latency of the curve at working set `bytes` (the first point at or above it).
fn curve_at(curve: &[Point], bytes: u64) -> f64 {
    curve
        .iter()
        .find(|p| p.bytes >= bytes)
        .or(curve.last())
        .map_or(0.0, |p| p.ns)
}

/// The points of a curve file as `live calibrate` writes it
/// (`bytes,ns,spread[,...]` after a header line); `None` if a line does
/// not read so.
pub fn read_curve_csv(text: &str) -> Option<Vec<Point>> {
    text.lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(',');
            Some(Point {
                bytes: f.next()?.parse().ok()?,
                ns: f.next()?.parse().ok()?,
                spread: f.next()?.parse().ok()?,
            })
        })
        .collect()
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Writes a measured curve into a machine description; returns notes on
/// what it changed. With a plateau for every data cache level (private
/// levels, then the LLC) and one more for memory, level *i* takes plateau
/// *i*'s latency and, where the step comes well before the nominal size
/// (under 3/4 of it, as in a VM — with four points per doubling the true
/// step lies up to 19% past the plateau's last point), the step's capacity; memory takes the next plateau. Plateaus
/// beyond that (page walks once the working set outgrows the TLB's reach)
/// are noted, not modelled. With fewer plateaus, each cache takes the curve
/// at half its nominal size and memory the last plateau. The instruction
/// cache takes the L1D's latency.
pub fn apply(
    spec: &mut sim::machine::MachineSpec,
    curve: &[Point],
    levels: &[Level],
) -> Vec<String> {
    let mut notes = Vec::new();
    let line = spec.line_size;
    let private = spec.core.caches.len();
    let has_llc = spec.nodes.iter().any(|n| n.llc.is_some());
    let k = private + has_llc as usize;
    let mut fit = |c: &mut sim::machine::CacheSpec, l: &Level| {
        c.latency_ns = round2(l.ns);
        if l.capacity * 4 < c.size.0 * 3 {
            let (size, ways) = effective_geometry(c.size.0, c.assoc, line, l.capacity);
            notes.push(format!(
                "{}: {} B {}-way nominally; the latency step comes at {} B: modelled as {} B {}-way",
                c.name, c.size.0, c.assoc, l.capacity, size, ways
            ));
            c.size = sim::machine::Bytes(size);
            c.assoc = ways;
        }
    };
    let dram;
    if levels.len() > k {
        for (c, l) in spec.core.caches.iter_mut().zip(levels) {
            fit(c, l);
        }
        for n in spec.nodes.iter_mut() {
            if let Some(llc) = n.llc.as_mut() {
                fit(llc, &levels[private]);
            }
        }
        dram = levels[k].ns;
        for l in &levels[k + 1..] {
            notes.push(format!(
                "a further plateau at {:.1} ns beyond {} B (TLB reach; not modelled)",
                l.ns, l.capacity
            ));
        }
    } else {
        for c in spec.core.caches.iter_mut() {
            c.latency_ns = round2(curve_at(curve, c.size.0 / 2));
        }
        for n in spec.nodes.iter_mut() {
            if let Some(llc) = n.llc.as_mut() {
                llc.latency_ns = round2(curve_at(curve, llc.size.0 / 2));
            }
        }
        dram = levels
            .last()
            .map_or_else(|| curve_at(curve, u64::MAX), |l| l.ns);
        notes.push(format!(
            "only {} plateaus for {k} cache levels and memory: latencies read off the curve at half each nominal size",
            levels.len()
        ));
    }
    if let (Some(l1i), Some(l1d)) = (spec.core.l1i.as_mut(), spec.core.caches.first()) {
        l1i.latency_ns = l1d.latency_ns;
    }
    for n in spec.nodes.iter_mut() {
        if let Some(m) = n.memory.as_mut() {
            m.latency_ns = round2(dram);
        }
    }
    notes
}

/// [`apply`] for a curve measured in huge pages: there are no page walks
/// in the guest, so of the plateaus past the LLC's, memory is the one that
/// spans the most points, and the others are noted, not modelled. On the
/// 2-core VM both kinds of stray plateau were seen: a short blend of LLC
/// hits and misses just past the LLC (131 ns up to 4 MiB, before memory's
/// 217 ns), and a short rise at the largest sizes (279 ns at 225–256 MiB,
/// after memory's 193 ns: the hypervisor's own page walks).
pub fn apply_huge(
    spec: &mut sim::machine::MachineSpec,
    curve: &[Point],
    levels: &[Level],
) -> Vec<String> {
    let private = spec.core.caches.len();
    let has_llc = spec.nodes.iter().any(|n| n.llc.is_some());
    let k = private + has_llc as usize;
    if levels.len() <= k + 1 {
        return apply(spec, curve, levels);
    }
    let mem = (k..levels.len())
        .max_by_key(|&i| (levels[i].points, std::cmp::Reverse(i)))
        .unwrap_or(k);
    let mut keep: Vec<Level> = levels[..k].to_vec();
    keep.push(levels[mem]);
    let mut notes = apply(spec, curve, &keep);
    for (i, l) in levels.iter().enumerate().skip(k) {
        if i != mem {
            notes.push(format!(
                "a plateau at {:.1} ns up to {} B beside memory's {:.1} ns (huge pages, so not the guest's page walks; not modelled)",
                l.ns, l.capacity, levels[mem].ns
            ));
        }
    }
    notes
}

/// Core-to-core transfer latency (ns): two threads pinned to `a` and `b`
/// alternately CAS one line from odd to even and back, `rounds` times.
pub fn core_to_core(a: u32, b: u32, rounds: u64) -> Result<f64, LiveError> {
    #[repr(align(128))]
    struct Line(AtomicU64);
    let line = Arc::new(Line(AtomicU64::new(0)));
    let l2 = line.clone();
    // The allowed set must be known before this thread pins itself.
    crate::os::allowed_cpus()?;
    let other = std::thread::spawn(move || -> Result<(), LiveError> {
        pin_current_thread(b)?;
        for i in 0..rounds {
            while l2
                .0
                .compare_exchange(2 * i + 1, 2 * i + 2, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                std::hint::spin_loop();
            }
        }
        Ok(())
    });
    pin_current_thread(a)?;
    let t = tsc::start();
    let mut spins = 0u64;
    for i in 0..rounds {
        while line
            .0
            .compare_exchange(2 * i, 2 * i + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
            spins += 1;
            // The partner failed (e.g. could not pin): stop instead of spinning forever.
            if spins.is_multiple_of(1 << 20) && other.is_finished() {
                return other
                    .join()
                    .map_err(|_| LiveError::Panicked("ping-pong"))?
                    .map(|_| f64::NAN);
            }
        }
    }
    while line.0.load(Ordering::Acquire) != 2 * rounds {
        std::hint::spin_loop();
    }
    let ns = tsc::ns(t, tsc::stop());
    other
        .join()
        .map_err(|_| LiveError::Panicked("ping-pong"))??;
    // Each round is two transfers of the line.
    Ok(ns / (2 * rounds) as f64)
}

/// Fills `buf` (its first touch) and reads it `passes` times, two words of
/// every line; returns (seconds, bytes read).
fn stream_read(buf: &mut PageBuf, passes: usize) -> (f64, u64) {
    let w = buf.as_slice_u64();
    for (i, x) in w.iter_mut().enumerate() {
        *x = i as u64;
    }
    let t = tsc::start();
    let mut sum = 0u64;
    for _ in 0..passes {
        sum = sum.wrapping_add(
            w.chunks_exact(8)
                .map(|c| c[0] ^ c[4])
                .fold(0u64, u64::wrapping_add),
        );
    }
    std::hint::black_box(sum);
    (tsc::ns(t, tsc::stop()) / 1e9, (w.len() * 8 * passes) as u64)
}

/// Latency and bandwidth from `cpu` to memory bound (`mbind`, before first
/// touch) to node `node`: a pointer chase over `bytes` (ns per load, median
/// of `repeats`) and one thread's streaming read of `bytes` (GB/s).
pub fn node_pair(
    cpu: u32,
    node: u32,
    bytes: u64,
    loads: u64,
    repeats: usize,
    sysfs_root: &std::path::Path,
) -> Result<(Point, f64), LiveError> {
    pin_current_thread(cpu)?;
    let mut buf = PageBuf::new(bytes as usize)?;
    crate::os::bind_to_node(&mut buf, node, sysfs_root)?;
    let (p, _) = chase_in(buf, bytes, loads, repeats, 0x5EED + node as u64)?;
    let mut buf = PageBuf::new(bytes as usize)?;
    crate::os::bind_to_node(&mut buf, node, sysfs_root)?;
    let (secs, read) = stream_read(&mut buf, 3);
    Ok((p, read as f64 / secs / 1e9))
}

/// Streaming read bandwidth (GB/s) of `threads` threads pinned to `cpus`,
/// each summing its own `bytes_per_thread` buffer `passes` times.
pub fn read_bandwidth(
    cpus: &[u32],
    bytes_per_thread: usize,
    passes: usize,
) -> Result<f64, LiveError> {
    let handles: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::spawn(move || -> Result<(f64, u64), LiveError> {
                pin_current_thread(cpu)?;
                let mut buf = PageBuf::new(bytes_per_thread)?;
                Ok(stream_read(&mut buf, passes))
            })
        })
        .collect();
    let mut secs = 0.0f64;
    let mut bytes = 0u64;
    for h in handles {
        let (s, b) = h.join().map_err(|_| LiveError::Panicked("bandwidth"))??;
        secs = secs.max(s);
        bytes += b;
    }
    Ok(bytes as f64 / secs / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This host's steps (issue 29's held-out set): L1D 48 KiB 12-way
    /// stepping at 11 584 B, L2 2 MiB 16-way at 32 704 B, LLC 60 MiB
    /// 15-way at 1 482 880 B — each modelled at the nearest valid size
    /// (12 KiB 3-way, 32 KiB 16-way, 1 024 sets × 23 ways = 1 507 328 B),
    /// where rounding down gave 8 KiB, 16 KiB and 983 040 B.
    #[test]
    fn geometry_nearest_the_step() {
        assert_eq!(effective_geometry(49152, 12, 64, 11584), (12288, 3));
        assert_eq!(effective_geometry(2 << 20, 16, 64, 32704), (32768, 16));
        assert_eq!(effective_geometry(62914560, 15, 64, 1482880), (1507328, 23));
        // A step at a whole number of the nominal sets' ways keeps them.
        assert_eq!(effective_geometry(49152, 12, 64, 8 * 4096), (32768, 8));
    }

    #[test]
    fn plateaus_from_a_synthetic_curve() {
        let mk = |v: &[(u64, f64)]| {
            v.iter()
                .map(|&(bytes, ns)| Point {
                    bytes,
                    ns,
                    spread: 0.0,
                })
                .collect::<Vec<_>>()
        };
        // L1 to 32K at 1.5 ns, a ramp, L2 to 1M at 5, a two-point ramp, LLC to 16M at 20, DRAM 90.
        let c = mk(&[
            (8192, 1.5),
            (16384, 1.5),
            (32768, 1.6),
            (65536, 6.0),
            (131072, 5.0),
            (262144, 5.1),
            (1 << 20, 5.3),
            (3 << 19, 12.0),
            (2 << 20, 13.0),
            (4 << 20, 20.0),
            (8 << 20, 20.5),
            (16 << 20, 21.0),
            (32 << 20, 60.0),
            (64 << 20, 90.0),
            (128 << 20, 92.0),
        ]);
        let l = levels(&c, 0.4);
        let ns: Vec<f64> = l.iter().map(|x| x.ns).collect();
        let cap: Vec<u64> = l.iter().map(|x| x.capacity).collect();
        assert_eq!(cap, vec![32768, 1 << 20, 16 << 20, 128 << 20], "{l:?}");
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "{ns:?}");
    }

    #[test]
    fn a_vm_curve_maps_level_by_level_onto_the_machine() {
        // The levels this 1.25 MiB-L2, 48 MiB-LLC VM measured (2026-11-29).
        let levels = [
            (1.50, 38912),
            (4.86, 524224),
            (22.27, 3526912),
            (131.16, 159612672),
            (202.45, 268435392),
        ]
        .map(|(ns, capacity)| Level {
            ns,
            capacity,
            from: capacity / 4,
            points: 5,
        });
        let text = sim::presets::preset("one-channel").unwrap();
        let mut spec: sim::machine::MachineSpec = toml::from_str(text).unwrap();
        spec.core.caches = vec![cache("L1D", 48 << 10, 12), cache("L2", 1280 << 10, 20)];
        spec.nodes[0].llc = Some(cache("LLC", 48 << 20, 12));
        let notes = apply(&mut spec, &[], &levels);
        let c = &spec.core.caches;
        // L1D: the step at 38912 B is within 3/4 of 48 KiB: nominal size kept.
        assert_eq!(
            (c[0].size.0, c[0].assoc, c[0].latency_ns),
            (48 << 10, 12, 1.5)
        );
        // L2: 1024 sets kept, 524224 / 65536 = 7.999 ways: 8, the nearest.
        assert_eq!(
            (c[1].size.0, c[1].assoc, c[1].latency_ns),
            (8 << 16, 8, 4.86)
        );
        // LLC: 65536 sets × 64 B exceed the step; the nearest valid size is
        // 4096 sets × 13 ways (3407872 B, 3526912 − 119040; 8192 × 7 is
        // 143104 over).
        let llc = spec.nodes[0].llc.as_ref().unwrap();
        assert_eq!(
            (llc.size.0, llc.assoc, llc.latency_ns),
            (4096 * 13 * 64, 13, 22.27)
        );
        assert_eq!(spec.nodes[0].memory.as_ref().unwrap().latency_ns, 131.16);
        assert!(notes.iter().any(|n| n.contains("TLB")), "{notes:?}");
        // Measured in huge pages, memory is the widest plateau past the
        // LLC's, the other is noted; the caches map as before.
        let before = spec.core.caches.clone();
        let mut wide_last = levels;
        wide_last[3].points = 2;
        wide_last[4].points = 12;
        let notes = apply_huge(&mut spec, &[], &wide_last);
        assert_eq!(spec.core.caches, before);
        assert_eq!(spec.nodes[0].memory.as_ref().unwrap().latency_ns, 202.45);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("131.2 ns") && n.contains("beside memory's 202.4 ns")),
            "{notes:?}"
        );
        let mut wide_first = levels;
        wide_first[3].points = 12;
        wide_first[4].points = 2;
        apply_huge(&mut spec, &[], &wide_first);
        assert_eq!(spec.nodes[0].memory.as_ref().unwrap().latency_ns, 131.16);
        // With one plateau per level and memory there is nothing to drop.
        let notes = apply_huge(&mut spec, &[], &levels[..4]);
        assert_eq!(spec.nodes[0].memory.as_ref().unwrap().latency_ns, 131.16);
        assert!(!notes.iter().any(|n| n.contains("beside")));
    }

    #[test]
    fn a_recorded_vm_curve_gives_three_caches_memory_and_a_tlb_step() {
        // Measured by `numasim live calibrate` on this kind of VM (sysfs: 48 KiB
        // L1D, 1.25 MiB L2, 48 MiB L3); the ramp after L2 (page colouring) is
        // a 3-point stretch that must not count as a level.
        let text = include_str!("../../tests/fixtures/curves/vm-l2-1.25M-llc-48M.csv");
        let curve = read_curve_csv(text).expect("curve fixture");
        let l = levels(&curve, 0.4);
        let ns: Vec<f64> = l.iter().map(|x| x.ns).collect();
        assert_eq!(l.len(), 5, "{l:?}");
        assert!((1.0..2.0).contains(&ns[0]), "L1 {ns:?}");
        assert!((3.0..6.0).contains(&ns[1]), "L2 {ns:?}");
        assert!((15.0..40.0).contains(&ns[2]), "LLC {ns:?}");
        assert!((80.0..150.0).contains(&ns[3]), "DRAM {ns:?}");
        assert!(ns[4] > ns[3], "page walks beyond the TLB's reach {ns:?}");
    }

    fn cache(name: &str, size: u64, assoc: u32) -> sim::machine::CacheSpec {
        sim::machine::CacheSpec {
            name: name.into(),
            size: sim::machine::Bytes(size),
            assoc,
            latency_ns: 0.0,
            replacement: sim::cache::Replacement::Lru,
        }
    }
}
