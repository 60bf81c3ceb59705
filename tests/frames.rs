//! Physical frames (`frames = "random"`): the caches see each page at the
//! frame `sim::frames::Frames` gives it, checked against a plain LRU run
//! over those physical lines, and every way into the engine (the
//! straddle's second line, the shortcuts, the request model's calls) sees
//! the same frames.

use std::collections::VecDeque;

use sim::frames::{FrameMapping, Frames};
use sim::{Config, Engine, Machine};
use traces::{Batch, Fields, Kind, Record};

/// One core, an L1D of 64 KiB in 2 ways (512 sets: a set index spans 8
/// pages of 4 KiB), with `llc` a 1 MiB LLC, memory behind; `frames` as
/// given.
fn machine(frames: &str, llc: bool) -> Machine {
    let llc = if llc {
        r#"llc = { name = "LLC", size = "1M", assoc = 16, latency_ns = 20.0 }"#
    } else {
        ""
    };
    Machine::from_toml(&format!(
        r#"name = "frames-test"
description = "test machine"
sources = ["made up"]
line_size = 64
page_size = 4096
frames = "{frames}"
c2c_latency_ns = 40.0

[core]
freq_ghz = 2.0
mlp = 1
caches = [{{ name = "L1D", size = "64K", assoc = 2, latency_ns = 1.0 }}]

[[nodes]]
cores = 1
{llc}
memory = {{ capacity = "1G", channels = 1, channel_gbps = 10.0, latency_ns = 80.0, interleave = 4096 }}
"#
    ))
    .expect("test machine")
}

fn engine(m: &Machine) -> Engine<'_> {
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &policies::registry::Ctx::for_machine(m))
        .expect("placement");
    Engine::new(m, Config::default(), p).expect("engine")
}

/// Data accesses the L1D served when `recs` run on `m`.
fn l1_hits(m: &Machine, recs: &[Record]) -> u64 {
    let mut e = engine(m);
    let mut b = Batch::new(Fields::default());
    recs.iter().for_each(|r| b.push(*r));
    e.feed(&b).expect("feed");
    e.finish().expect("finish");
    let s = e.summary();
    s.served
        .iter()
        .find(|x| x.level == "L1D")
        .expect("L1D")
        .accesses
}

/// Hits of a 512-set, 2-way LRU cache over the lines of `addrs`.
fn lru_hits(lines: impl Iterator<Item = u64>) -> u64 {
    let mut sets = vec![VecDeque::<u64>::new(); 512];
    let mut hits = 0;
    for l in lines {
        let s = &mut sets[(l % 512) as usize];
        if let Some(i) = s.iter().position(|&x| x == l) {
            hits += 1;
            s.remove(i);
        } else if s.len() == 2 {
            s.pop_back();
        }
        s.push_front(l);
    }
    hits
}

/// Eight lines 32 KiB apart, walked round-robin ten times: one set of a
/// virtually indexed L1D, so 2 ways hold none of them by the next round
/// (no hits); at random frames each page's colour decides its set, and
/// the hits are what LRU over the physical lines gives — not 0 here.
#[test]
fn a_walk_hits_where_its_physical_lines_fall() {
    let addrs: Vec<u64> = (0..10).flat_map(|_| (0..8u64).map(|k| k * 32768)).collect();
    let recs: Vec<Record> = addrs
        .iter()
        .map(|&a| Record::access(0, Kind::Load, a, 8))
        .collect();
    assert_eq!(l1_hits(&machine("identity", false), &recs), 0);
    let f = Frames::new(FrameMapping::Random, 4096);
    let expect = lru_hits(addrs.iter().map(|&a| f.addr(a) >> 6));
    assert!(expect >= 40, "the frames spread these pages: {expect} hits");
    assert_eq!(l1_hits(&machine("random", false), &recs), expect);
}

/// An 8-byte load across a page boundary touches the last line of its
/// page's frame and the first line of the next page's frame (not the line
/// after its own frame): loads of both lines afterwards hit, through the
/// full path and through the repeated-line shortcut.
#[test]
fn a_straddle_across_pages_touches_both_frames() {
    let recs = [
        Record::access(0, Kind::Load, 4096 - 4, 8),
        Record::access(0, Kind::Load, 4096 + 8, 8),
        Record::access(0, Kind::Load, 4096 + 16, 8),
        Record::access(0, Kind::Load, 4096 - 40, 8),
        Record::access(0, Kind::Load, 4096 - 48, 8),
    ];
    for frames in ["identity", "random"] {
        assert_eq!(l1_hits(&machine(frames, false), &recs), 4, "{frames}");
    }
}

/// The request model's calls take virtual addresses too: after a load
/// of `x`, the LLC holds `x`'s line and its page is placed; a preloaded
/// line is an LLC hit for the load that follows.
#[test]
fn the_request_models_calls_see_the_same_frames() {
    let m = machine("random", true);
    let mut e = engine(&m);
    let x = 0x1234_5000u64 + 192;
    let y = 0x7777_0000u64;
    let mut b = Batch::new(Fields::default());
    b.push(Record::access(0, Kind::Load, x, 8));
    e.feed(&b).expect("feed");
    e.finish().expect("finish");
    assert!(e.llc_holds(0, x) && e.llc_holds(0, x + 8));
    assert!(!e.llc_holds(0, x + 64) && !e.llc_holds(0, y));
    assert_eq!(e.page_node(x), Some(0));
    assert_eq!(e.page_node(y), None);
    let (landed, read) = e.preload_llc(0, y, 1_000_000);
    assert!(read && e.llc_holds(0, y));
    // Loaded once landed: from the LLC (20 ns), not memory.
    let got = e.issue_on(0, &traces::Access::new(0, Kind::Load, y, 8), landed, None);
    assert_eq!(got.latency_ps, 20_000);
}

#[test]
fn a_bad_mapping_is_named() {
    let m = Machine::from_toml(&toml_with_frames("sideways"));
    let Err(e) = m else {
        panic!("frames = \"sideways\" accepted");
    };
    let e = e.to_string();
    assert!(
        e.contains("sideways") && e.contains("identity") && e.contains("random"),
        "{e}"
    );
}

fn toml_with_frames(f: &str) -> String {
    format!(
        r#"name = "x"
c2c_latency_ns = 40.0
frames = "{f}"
[core]
freq_ghz = 2.0
mlp = 1
[[nodes]]
cores = 1
memory = {{ capacity = "1G", channels = 1, channel_gbps = 10.0, latency_ns = 80.0, interleave = 4096 }}
"#
    )
}

/// Prefetchers see virtual addresses and name virtual lines, which are
/// filled at their frames: a next-line prefetcher walking 16 pages
/// brings each page's first line in from the previous page's last, at
/// random frames as at the identity (had it named the line after the
/// physical frame's end, each new page's first load would miss).
#[test]
fn prefetchers_name_virtual_lines() {
    let recs: Vec<Record> = (0..16 * 64u64)
        .map(|l| Record::access(0, Kind::Load, l * 64, 8))
        .collect();
    // (L1D hits, prefetches issued, useful, late).
    let hits = |frames: &str| {
        let m = machine(frames, false);
        let mut e = engine(&m);
        let pf = policies::prefetch::PREFETCHERS
            .build("next-line", &policies::registry::Ctx::for_machine(&m))
            .expect("prefetcher");
        e.add_prefetcher(pf, 0).expect("prefetcher");
        let mut b = Batch::new(Fields::default());
        recs.iter().for_each(|r| b.push(*r));
        e.feed(&b).expect("feed");
        e.finish().expect("finish");
        let s = e.summary();
        let p = s.prefetch.expect("prefetch books");
        let l1 = s.served.iter().find(|x| x.level == "L1D").expect("L1D");
        (l1.accesses, p.issued, p.useful, p.late)
    };
    // Every line but the first was prefetched (1 miss) and used; the books
    // (kept by physical line) are the same at random frames.
    let identity = hits("identity");
    assert_eq!(identity.0, 16 * 64 - 1);
    assert_eq!(identity.2, 16 * 64 - 1);
    assert_eq!(hits("random"), identity);
}

/// Records the pages a placement is asked about, and every memory access's
/// page; places everything on node 0.
struct Recorder(std::sync::Arc<std::sync::Mutex<(Vec<u64>, Vec<u64>)>>);

impl sim::Placement for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn place(&mut self, page: u64, _from: u32, _m: &Machine) -> u32 {
        self.0.lock().unwrap().0.push(page);
        0
    }
    fn on_memory_access(&mut self, seen: sim::policy::PageView, _m: &Machine) -> Option<u32> {
        self.0.lock().unwrap().1.push(seen.page);
        None
    }
}

/// Placement decides per virtual page, as the kernel places a program's
/// pages: at random frames the policy is asked about the trace's own page
/// numbers (a policy that keys on addresses, as the lab's shard homes do,
/// would otherwise see frames), and the page node lookups agree.
#[test]
fn placement_sees_virtual_pages() {
    let m = machine("random", false);
    let seen = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), Vec::new())));
    let mut e =
        Engine::new(&m, Config::default(), Box::new(Recorder(seen.clone()))).expect("engine");
    let pages = [3u64, 0x4_0000, 0x12_3456, 7];
    let mut b = Batch::new(Fields::default());
    for p in pages {
        b.push(Record::access(0, Kind::Load, p * 4096 + 128, 8));
    }
    e.feed(&b).expect("feed");
    e.finish().expect("finish");
    let (placed, accessed) = seen.lock().unwrap().clone();
    assert_eq!(placed, pages);
    assert_eq!(accessed, pages);
    for p in pages {
        assert_eq!(e.page_node(p * 4096), Some(0));
    }
}
