//! The data TLBs (`[core.tlb]`) against hand-worked cases: which level a
//! cyclic walk's translations come from, and that translation adds exactly
//! its latency to each load (the same walk on the same machine without a
//! TLB is the oracle for everything else).

use sim::{Config, Engine, Machine};
use traces::{Batch, Fields, Kind, Record};

/// One core, a 1 KiB L1D (8 sets of 2 ways), memory behind it; with
/// `tlb`, a 4-entry fully associative DTLB and an 8-entry fully
/// associative STLB (2 ns) in front of it, walks 10 ns.
fn machine(tlb: bool) -> Machine {
    let t = if tlb {
        r#"tlb = { walk_ns = 10.0, levels = [
  { name = "DTLB", entries = 4, assoc = 4 },
  { name = "STLB", entries = 8, assoc = 8, latency_ns = 2.0 },
] }"#
    } else {
        ""
    };
    Machine::from_toml(&format!(
        r#"name = "tlb-test"
description = "test machine"
sources = ["made up"]
line_size = 64
page_size = 4096
c2c_latency_ns = 40.0

[core]
freq_ghz = 2.0
mlp = 1
caches = [{{ name = "L1D", size = "1K", assoc = 2, latency_ns = 1.0 }}]
{t}

[[nodes]]
cores = 1
memory = {{ capacity = "1G", channels = 1, channel_gbps = 10.0, latency_ns = 80.0, interleave = 4096 }}
"#
    ))
    .expect("test machine")
}

/// A first-touch engine on `m`.
fn engine(m: &Machine, cfg: Config) -> Engine<'_> {
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &policies::registry::Ctx::for_machine(m))
        .expect("placement");
    Engine::new(m, cfg, p).expect("engine")
}

/// `recs` run on `m` (with the prefetcher `prefetch`, if any): (total
/// latency ps, the summary).
fn run(m: &Machine, cfg: Config, prefetch: Option<&str>, recs: &[Record]) -> (u128, sim::Summary) {
    let mut e = engine(m, cfg);
    if let Some(spec) = prefetch {
        let pf = policies::prefetch::PREFETCHERS
            .build(spec, &policies::registry::Ctx::for_machine(m))
            .expect("prefetcher");
        e.set_prefetcher(pf).expect("prefetcher");
    }
    let mut b = Batch::new(Fields::default());
    recs.iter().for_each(|r| b.push(*r));
    e.feed(&b).expect("feed");
    e.finish().expect("finish");
    (e.latency_totals().1, e.summary())
}

/// `rounds` passes over one line on each of `pages` pages (line p of its
/// page, so the lines fall in distinct L1D sets and stay in the L1D):
/// (total latency ps, the summary).
fn walk(m: &Machine, pages: u64, rounds: u64, kind: Kind) -> (u128, sim::Summary) {
    let recs: Vec<Record> = (0..rounds)
        .flat_map(|_| (0..pages).map(move |p| Record::access(0, kind, p * 4096 + (p % 8) * 64, 8)))
        .collect();
    run(m, Config::default(), None, &recs)
}

#[test]
fn a_cyclic_walk_is_translated_where_lru_says() {
    // (pages, DTLB hits, STLB hits, walks) over 5 rounds: every first
    // touch walks; then 4 pages stay in the 4-entry DTLB, 6 cycle through
    // it (LRU evicts the page needed next) but stay in the STLB, 9 cycle
    // through both.
    for (pages, dtlb, stlb, walks) in [(4u64, 16u64, 0u64, 4u64), (6, 0, 24, 6), (9, 0, 0, 45)] {
        let rounds = 5;
        let (with, s) = walk(&machine(true), pages, rounds, Kind::Load);
        let (without, plain) = walk(&machine(false), pages, rounds, Kind::Load);
        let t = s.tlb.as_ref().expect("tlb stats");
        assert_eq!(
            (t.levels[0].hits, t.levels[1].hits, t.walks),
            (dtlb, stlb, walks),
            "{pages} pages: {t:?}"
        );
        assert_eq!(t.levels[0].misses, stlb + walks);
        assert_eq!(t.levels[1].misses, walks);
        // Translation adds its latency to each load and changes nothing else.
        assert_eq!(
            with - without,
            (stlb * 2_000 + walks * 10_000) as u128,
            "{pages} pages"
        );
        assert_eq!(s.served, plain.served, "{pages} pages");
        assert!(plain.tlb.is_none());
    }
}

/// The TLBs are part of a checkpoint: a run stopped, saved, loaded into a
/// fresh engine and resumed gives the uninterrupted run's summary (had the
/// TLBs restarted empty, the resumed half would walk its 6 pages again).
#[test]
fn a_resumed_run_keeps_its_tlbs() {
    let m = machine(true);
    let recs: Vec<Record> = (0..20u64)
        .flat_map(|_| (0..6u64).map(|p| Record::access(0, Kind::Load, p * 4096 + (p % 8) * 64, 8)))
        .collect();
    let fresh = || engine(&m, Config::default());
    let batch = |r: &[Record]| {
        let mut b = Batch::new(Fields::default());
        r.iter().for_each(|x| b.push(*x));
        b
    };
    let mut whole = fresh();
    whole.feed(&batch(&recs)).expect("feed");
    whole.finish().expect("finish");
    let mut first = fresh();
    first.feed(&batch(&recs[..60])).expect("feed");
    let saved = first.save_state();
    let mut resumed = fresh();
    resumed.load_state(&saved).expect("load");
    resumed.feed(&batch(&recs[60..])).expect("feed");
    resumed.finish().expect("finish");
    assert_eq!(resumed.summary(), whole.summary());
    assert_eq!(whole.summary().tlb.expect("tlb").walks, 6);
}

/// With one miss in flight at most (`mlp = 1`), a load that waited for its
/// translation holds the core like a miss: the 24 L1 hits that find their
/// page in the STLB run one after another (1 + 2 ns each), where without a
/// TLB they issue a cycle apart. So the walk takes at least the 6 walks'
/// 10 ns and the 24 serialised translations' 2 ns longer.
#[test]
fn a_load_waiting_for_its_translation_holds_the_core() {
    let (_, with) = walk(&machine(true), 6, 5, Kind::Load);
    let (_, without) = walk(&machine(false), 6, 5, Kind::Load);
    let slower = with.elapsed_ns - without.elapsed_ns;
    assert!(slower >= 6.0 * 10.0 + 24.0 * 2.0, "{slower} ns");
}

/// Two loads at `addrs` with four misses allowed in flight and the
/// next-line prefetcher at the L1D, with the TLB and without: (with,
/// without) total latency ps and summaries.
fn next_line_pair(addrs: [u64; 2]) -> ((u128, sim::Summary), (u128, sim::Summary)) {
    let cfg = Config {
        mlp: Some(4),
        prefetch_level: 0,
        ..Config::default()
    };
    let loads = addrs.map(|a| Record::access(0, Kind::Load, a, 8));
    let run = |tlb| run(&machine(tlb), cfg.clone(), Some("next-line"), &loads);
    (run(true), run(false))
}

/// A prefetch into another page is translated, and a line still in flight
/// from a prefetch is waited for from when the demand's translation ends.
/// Two loads, four misses allowed in flight: the last line of page 0, then
/// the first of page 1, which the next-line prefetcher asks memory for at
/// the first load. Each page's first touch walks (10 ns). The first load
/// pays its walk on top of its miss: 10 ns. The prefetch, into page 1,
/// which no level holds yet, is charged to the channel at its issue time
/// as before (behind the first load's line) and its line arrives a walk
/// later: the second load waits 10 ns longer, and its own walk overlaps
/// that wait. 20 ns in all: 10 had the prefetch not been translated, 30
/// had the second load's walk been added after its wait. The prefetch's
/// translation fills no TLB level: the second load still walks.
#[test]
fn a_prefetch_is_translated_and_a_demand_overlaps_its_wait() {
    let ((with, s), (without, plain)) = next_line_pair([4096 - 64, 4096]);
    assert_eq!(s.tlb.expect("tlb").walks, 2);
    let p = plain.prefetch.expect("prefetch stats");
    assert_eq!((p.useful, p.late), (1, 1), "the second load waits: {p:?}");
    assert_eq!(
        with - without,
        20_000,
        "the first load's walk and the prefetch's"
    );
}

/// A prefetch into the page of the access that triggered it costs no
/// translation: the same two loads within page 0 (its first two lines).
/// Only the first load's walk adds.
#[test]
fn a_prefetch_into_a_held_page_costs_no_translation() {
    let ((with, s), (without, plain)) = next_line_pair([0, 64]);
    assert_eq!(s.tlb.expect("tlb").walks, 1);
    let p = plain.prefetch.expect("prefetch stats");
    assert_eq!(p.useful, 1, "{p:?}");
    assert_eq!(with - without, 10_000);
}

/// The memory channel is charged at the issue time, as for every level's
/// latency: two misses to one page issued a cycle apart (four misses
/// allowed in flight), the first walking 10 ns. Only that walk adds. Had
/// the first reached the channel after its walk, the second, served behind
/// it, would wait about 10 ns more.
#[test]
fn queues_are_charged_at_the_issue_time() {
    let cfg = Config {
        mlp: Some(4),
        ..Config::default()
    };
    let loads = [
        Record::access(0, Kind::Load, 0, 8),
        Record::access(0, Kind::Load, 128, 8),
    ];
    let run = |tlb| run(&machine(tlb), cfg.clone(), None, &loads).0;
    assert_eq!(run(true) - run(false), 10_000);
}

#[test]
fn fetches_are_not_translated() {
    let (with, s) = walk(&machine(true), 9, 3, Kind::IFetch);
    let (without, _) = walk(&machine(false), 9, 3, Kind::IFetch);
    assert_eq!(with, without);
    let t = s.tlb.expect("tlb stats");
    assert_eq!((t.levels[0].hits, t.walks), (0, 0));
}

#[test]
fn a_tlb_that_cannot_be_built_is_a_one_line_error() {
    let base = |tlb: &str| {
        format!(
            r#"name = "x"
description = "x"
sources = []
c2c_latency_ns = 40.0
[core]
freq_ghz = 2.0
mlp = 1
tlb = {tlb}
[[nodes]]
cores = 1
memory = {{ capacity = "1G", channels = 1, channel_gbps = 10.0, latency_ns = 80.0 }}
"#
        )
    };
    for (tlb, want) in [
        (
            r#"{ walk_ns = 10.0, levels = [{ name = "DTLB", entries = 96, assoc = 8 }] }"#,
            "core.tlb.levels[0] (DTLB): 96 entries in 8-way sets: the set count must be a whole power of two",
        ),
        (
            r#"{ walk_ns = 10.0, levels = [] }"#,
            "core.tlb.levels: needs at least one level",
        ),
        (
            r#"{ walk_ns = 10.0, levels = [{ name = "DTLB", entries = 64, assoc = 4, latency_ns = 0.5 }] }"#,
            "core.tlb.levels[0].latency_ns = 0.5: must be 0",
        ),
        (
            r#"{ walk_ns = 10.0, page_size = 32, levels = [{ name = "DTLB", entries = 64, assoc = 4 }] }"#,
            "core.tlb.page_size = 32: must be at least line_size (64)",
        ),
        (
            r#"{ walk_ns = -1.0, levels = [{ name = "DTLB", entries = 64, assoc = 4 }] }"#,
            "core.tlb.walk_ns = -1",
        ),
        (
            r#"{ walk_ns = 1.0, levels = [{ name = "DTLB", entries = 0, assoc = 4 }] }"#,
            "core.tlb.levels[0].entries = 0",
        ),
        (
            r#"{ walk_ns = 1.0, page_size = 3000, levels = [{ name = "DTLB", entries = 64, assoc = 4 }] }"#,
            "core.tlb.page_size = 3000",
        ),
    ] {
        let Err(e) = Machine::from_toml(&base(tlb)) else {
            panic!("{tlb}: accepted");
        };
        let e = e.to_string();
        assert!(e.contains(want), "{tlb}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
