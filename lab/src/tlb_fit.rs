//! The host's data TLBs (`[core.tlb]`), fitted by simulation to the page
//! walks of the calibration (`live::fingerprint::page_walks`: one line on
//! each of N pages, the data in L1 or L2 while the translations outgrow
//! the TLBs). Why: on this project's VMs the hypervisor backs the guest's
//! huge pages with 4 KiB pages, so a walk over a few hundred KiB pays for
//! translation even in huge pages (`docs/live.md`, "Address translation
//! in this VM"), and a machine file with no TLB puts that cost nowhere —
//! or, worse, into the LLC's and memory's latencies, which every access
//! then pays, translated or not.
//!
//! Each candidate is a first level of E1 entries (its hits cost nothing
//! beyond the L1D's latency) and a second of E2 entries, with a second-
//! level hit latency and a walk latency. The walks are dependent loads in
//! a random page order with no prefetcher that follows them, so a
//! translation's cost adds to the load's: the model's ns per load is the
//! walk without a TLB plus (second-level hits × its latency + walks × the
//! walk's) / loads. The counts come from the TLB alone (`sim::tlb`), the
//! rest from the engine once per walk, and the latencies are then chosen
//! on a grid of tenths of a ns. The machine kept is walked again through
//! the engine with its TLB (not interpolated), and kept only if it comes
//! nearer the host than no TLB.

use sim::machine::MachineSpec;
use sim::spec::{TlbLevelSpec, TlbSpec};

use crate::dependent::{ReplayError, walk_split_ns};

/// The fit: the TLB kept (`None`: none came nearer the host than no TLB,
/// or there were no page walks), a note for the machine's `sources`, and
/// the error (mean |ln(model / host)| over the walks) of the machine with
/// it, walked again.
pub struct TlbFit {
    pub tlb: Option<TlbSpec>,
    pub note: String,
    pub error: f64,
}

/// The first level's candidate entries: fully associative up to 48,
/// then 16 sets (64 entries 4-way … 512 entries 32-way).
const FIRST: [u32; 10] = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512];

/// The second level's candidate entries, 128 sets each (256 2-way …
/// 8 192 64-way).
const SECOND: [u32; 10] = [256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192];

/// The latencies tried (tenths of a ns): a second-level hit up to 10 ns,
/// a walk up to 60.
const SECOND_MAX_TENTHS: u32 = 100;
const WALK_MAX_TENTHS: u32 = 600;

/// The most pages a walk may have (its lines' indices fit a `u32`).
const MAX_PAGES: u32 = 1 << 20;

/// Bytes a translation covers: 4 KiB, the walks' page.
const PAGE: u64 = 4096;

/// Where the model's walks sit (the dependent replay's base).
const BASE: u64 = 0x4000_0000;

fn first_level(entries: u32) -> TlbLevelSpec {
    TlbLevelSpec {
        name: "DTLB".into(),
        entries,
        assoc: if entries <= 48 { entries } else { entries / 16 },
        latency_ns: 0.0,
    }
}

fn second_level(entries: u32, latency_ns: f64) -> TlbLevelSpec {
    TlbLevelSpec {
        name: "STLB".into(),
        entries,
        assoc: entries / 128,
        latency_ns,
    }
}

/// A walk through the model: two whole cycles to warm, then whole cycles
/// (at least 64 loads) timed. Once warm, a cyclic walk through LRU caches
/// and TLBs hits or misses the same way every cycle.
fn split(order: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let cycles = 64usize.div_ceil(order.len()).max(1);
    let warm = order
        .iter()
        .cycle()
        .take(2 * order.len())
        .copied()
        .collect();
    let timed = order
        .iter()
        .cycle()
        .take(cycles * order.len())
        .copied()
        .collect();
    (warm, timed)
}

/// A walk's lines, warming and timed ([`split`]).
type Split = (Vec<u32>, Vec<u32>);

/// (second-level hits, walks, loads) of the timed part of a walk through
/// a TLB of `first` and `second` entries alone.
fn counts(first: u32, second: u32, (warm, timed): &Split) -> (u64, u64, u64) {
    let spec = TlbSpec {
        page_size: PAGE,
        levels: vec![first_level(first), second_level(second, 1.0)],
        walk_ns: 1.0,
    };
    let mut tlb = sim::tlb::Tlb::new(&spec);
    let at = |l: u32| BASE + l as u64 * 64;
    for &l in warm {
        tlb.lookup(at(l));
    }
    let (mut hits, mut walks) = (0, 0);
    for &l in timed {
        match tlb.lookup(at(l)) {
            0 => {}
            1 => hits += 1,
            _ => walks += 1,
        }
    }
    (hits, walks, timed.len() as u64)
}

/// The engine's ns per load on each walk (threads of their own).
fn engine_walks(spec: &MachineSpec, walks: &[Split]) -> Result<Vec<f64>, ReplayError> {
    use rayon::prelude::*;
    let m = sim::Machine::new(spec.clone()).map_err(ReplayError::Machine)?;
    walks
        .par_iter()
        .map(|(warm, timed)| walk_split_ns(&m, &[], warm, timed))
        .collect()
}

/// Mean |ln(model / host)|.
fn error(model: &[f64], host: &[f64]) -> f64 {
    let sum: f64 = model
        .iter()
        .zip(host)
        .map(|(m, h)| (m / h).ln().abs())
        .sum();
    sum / host.len().max(1) as f64
}

/// `spec`'s data TLBs fitted to the page walks `walks` ((pages, host ns
/// per load)); `spec`'s own `[core.tlb]` is ignored.
pub fn fit(spec: &MachineSpec, walks: &[(u32, f64)]) -> Result<TlbFit, ReplayError> {
    let walks: Vec<(u32, f64)> = walks
        .iter()
        .copied()
        .filter(|&(p, ns)| (2..=MAX_PAGES).contains(&p) && ns.is_finite() && ns > 0.0)
        .collect();
    if walks.len() < 4 {
        return Ok(TlbFit {
            tlb: None,
            note: "no page walks recorded: no [core.tlb] fitted".into(),
            error: 0.0,
        });
    }
    // The walks' lines sit at one offset a page, so a cache indexed by the
    // walk's own addresses would fold 2 048 of them onto 64 of its sets and
    // send them to memory; the host's frames are the kernel's (or the
    // hypervisor's) and scatter them. The walks are walked with random
    // frames, which leave the L1 (indexed within the page) as it is.
    let mut bare = spec.clone();
    bare.core.tlb = None;
    bare.frames = sim::frames::FrameMapping::Random;
    let splits: Vec<Split> = walks
        .iter()
        .map(|&(p, _)| split(&live::fingerprint::page_order(p, 0xF3 ^ p as u64)))
        .collect();
    let host: Vec<f64> = walks.iter().map(|w| w.1).collect();
    let base = engine_walks(&bare, &splits)?;
    let none = error(&base, &host);
    // (error, first, second, second-level tenths, walk tenths)
    let mut best: Option<(f64, u32, u32, u32, u32)> = None;
    let mut model = vec![0.0; host.len()];
    for &e1 in &FIRST {
        for &e2 in SECOND.iter().filter(|&&e2| e2 >= 4 * e1) {
            let c: Vec<(f64, f64)> = splits
                .iter()
                .map(|o| {
                    let (h, w, n) = counts(e1, e2, o);
                    (h as f64 / n as f64, w as f64 / n as f64)
                })
                .collect();
            for s in 0..=SECOND_MAX_TENTHS {
                for w in 0..=WALK_MAX_TENTHS {
                    let (sn, wn) = (s as f64 / 10.0, w as f64 / 10.0);
                    for (k, x) in model.iter_mut().enumerate() {
                        *x = base[k] + c[k].0 * sn + c[k].1 * wn;
                    }
                    let e = error(&model, &host);
                    if best.is_none_or(|b| e < b.0) {
                        best = Some((e, e1, e2, s, w));
                    }
                }
            }
        }
    }
    let Some((_, e1, e2, s, w)) = best else {
        unreachable!("the candidate lists are not empty")
    };
    let tlb = TlbSpec {
        page_size: PAGE,
        levels: vec![first_level(e1), second_level(e2, s as f64 / 10.0)],
        walk_ns: w as f64 / 10.0,
    };
    let mut with = bare.clone();
    with.core.tlb = Some(tlb.clone());
    let kept = engine_walks(&with, &splits)?;
    let err = error(&kept, &host);
    let shown = |ns: &[f64]| {
        walks
            .iter()
            .zip(ns)
            .filter(|((p, _), _)| [64, 128, 512, 2048, 8192].contains(p))
            .map(|((p, _), x)| format!("{p} pages {x:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let measured = format!(
        "page walks (one line on each of N pages, huge pages), ns per load: host {}; model with no TLB {}",
        shown(&host),
        shown(&base)
    );
    if err >= none {
        return Ok(TlbFit {
            tlb: None,
            note: format!(
                "no [core.tlb]: the best TLB fitted to the {measured} comes no nearer (mean |ln(model/host)| {err:.3} against {none:.3} with none)"
            ),
            error: none,
        });
    }
    let edge = if s == SECOND_MAX_TENTHS || w == WALK_MAX_TENTHS {
        "; a latency at the edge of the grid tried"
    } else if e2 == SECOND[SECOND.len() - 1] {
        "; the walks never outgrow the largest STLB tried, so its walk latency is not measured"
    } else {
        ""
    };
    let note = format!(
        "[core.tlb] fitted by simulation to the {measured}, with the TLB {}: DTLB {} entries {}-way, STLB {} entries {}-way at {:.1} ns, walks {:.1} ns (mean |ln(model/host)| {err:.3}; {none:.3} with none{edge})",
        shown(&kept),
        tlb.levels[0].entries,
        tlb.levels[0].assoc,
        tlb.levels[1].entries,
        tlb.levels[1].assoc,
        tlb.levels[1].latency_ns,
        tlb.walk_ns,
    );
    Ok(TlbFit {
        tlb: Some(tlb),
        note,
        error: err,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One core: L1D 48 KiB 12-way (the 64 sets the walks spread over),
    /// L2 1 MiB, LLC 8 MiB, memory 100 ns, random frames (as the fit
    /// walks); no TLB.
    fn spec() -> MachineSpec {
        sim::Machine::from_toml(
            r#"name = "tlb-fit-test"
frames = "random"
c2c_latency_ns = 40.0
[core]
freq_ghz = 2.0
mlp = 1
caches = [
  { name = "L1D", size = "48K", assoc = 12, latency_ns = 1.4 },
  { name = "L2", size = "1M", assoc = 16, latency_ns = 4.5 },
]
[[nodes]]
cores = 1
llc = { name = "LLC", size = "8M", assoc = 16, latency_ns = 40.0 }
memory = { capacity = "1G", channels = 1, channel_gbps = 100.0, latency_ns = 100.0, interleave = 4096 }
"#,
        )
        .expect("test machine")
        .spec
    }

    /// `spec()` with a TLB of `first` and `second` entries (the fit's
    /// shapes), `stlb` and `walk` ns.
    fn with_tlb(first: u32, second: u32, stlb: f64, walk: f64) -> MachineSpec {
        let mut s = spec();
        s.core.tlb = Some(TlbSpec {
            page_size: PAGE,
            levels: vec![first_level(first), second_level(second, stlb)],
            walk_ns: walk,
        });
        s
    }

    /// The "host": `truth` on the page walks, in other page orders than
    /// the fit's.
    fn host(truth: &MachineSpec) -> Vec<(u32, f64)> {
        let pages = live::fingerprint::PAGE_WALK_PAGES;
        let splits: Vec<Split> = pages
            .iter()
            .map(|&p| split(&live::fingerprint::page_order(p, 0x5EED + p as u64)))
            .collect();
        let ns = engine_walks(truth, &splits).unwrap();
        pages.iter().copied().zip(ns).collect()
    }

    #[test]
    fn a_model_made_hosts_tlb_is_found() {
        for (first, second, stlb, walk) in [(64, 1024, 2.5, 12.0), (96, 2048, 1.9, 9.4)] {
            let walks = host(&with_tlb(first, second, stlb, walk));
            let f = fit(&spec(), &walks).unwrap();
            let t = f.tlb.expect("a TLB");
            assert_eq!(
                (t.levels[0].entries, t.levels[1].entries),
                (first, second),
                "{}",
                f.note
            );
            assert!((t.levels[1].latency_ns - stlb).abs() < 0.05, "{}", f.note);
            assert!((t.walk_ns - walk).abs() < 0.05, "{}", f.note);
            assert!(f.error < 0.001, "{}", f.note);
        }
    }

    #[test]
    fn walks_that_show_no_translation_cost_fit_no_tlb() {
        let f = fit(&spec(), &host(&spec())).unwrap();
        assert!(f.tlb.is_none(), "{}", f.note);
        assert!(f.note.starts_with("no [core.tlb]"), "{}", f.note);
        let none = fit(&spec(), &[]).unwrap();
        assert!(none.tlb.is_none() && none.note.starts_with("no page walks"));
    }

    /// The page walks of this project's development host (the 2-vCPU Xeon
    /// VM, family 6 model 167), 2026-12-05 21:02 UTC (`cargo run
    /// --release -p lab --example tlb_fit -- host.toml`, median of 5
    /// rounds): a step of 1.95 ns past 96 pages, the data leaving the
    /// 48 KiB L1 past 768, and walks past about 1 536.
    #[test]
    fn this_vms_page_walks_fit_a_96_entry_dtlb() {
        let walks = [
            (8, 1.392),
            (16, 1.392),
            (32, 1.392),
            (48, 1.392),
            (64, 1.392),
            (80, 1.392),
            (96, 1.392),
            (112, 2.792),
            (128, 3.358),
            (160, 3.349),
            (192, 3.340),
            (256, 3.340),
            (384, 3.340),
            (512, 3.340),
            (768, 3.342),
            (1024, 6.429),
            (1536, 6.835),
            (2048, 9.276),
            (3072, 13.144),
            (4096, 13.628),
            (6144, 14.228),
            (8192, 14.543),
        ];
        let f = fit(&spec(), &walks).unwrap();
        let t = f.tlb.expect("a TLB");
        assert_eq!(t.levels[0].entries, 96, "{}", f.note);
        assert!((1.8..=2.1).contains(&t.levels[1].latency_ns), "{}", f.note);
        assert!(f.error < 0.06, "{}", f.note);
    }
}
