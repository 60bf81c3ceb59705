//! Posted stores (`Config::posted_stores`, what `validate`'s model of the
//! live loop runs with) against hand-worked cases: a store miss costs the
//! core the L1D's latency and holds no miss slot (the next load issues at
//! once: the run's elapsed time shows it), its line still comes in; a
//! read-modify-write still waits. Not modelled: the line's arrival time —
//! a load of a posted store's line right after it hits at once.

use sim::{Config, Engine, Machine};
use traces::{Batch, Fields, Kind, Record};

/// One core at 2 GHz with one miss slot, a 1 ns L1D, 80 ns memory
/// behind a channel fast enough never to queue these few lines.
fn machine() -> Machine {
    Machine::from_toml(
        r#"name = "posted-test"
description = "test machine"
sources = ["made up"]
c2c_latency_ns = 40.0

[core]
freq_ghz = 2.0
mlp = 1
caches = [{ name = "L1D", size = "32K", assoc = 8, latency_ns = 1.0 }]

[[nodes]]
cores = 1
memory = { capacity = "1G", channels = 1, channel_gbps = 10000.0, latency_ns = 80.0, interleave = 4096 }
"#,
    )
    .expect("test machine")
}

/// (total latency ps, L1D hits, elapsed ps) of `recs` with stores posted
/// or not.
fn run(posted: bool, recs: &[(Kind, u64)]) -> (u128, u64, u64) {
    let m = machine();
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &policies::registry::Ctx::for_machine(&m))
        .expect("placement");
    let cfg = Config {
        posted_stores: posted,
        ..Config::default()
    };
    let mut e = Engine::new(&m, cfg, p).expect("engine");
    let mut b = Batch::new(Fields::default());
    for &(k, a) in recs {
        b.push(Record::access(0, k, a, 8));
    }
    e.feed(&b).expect("feed");
    e.finish().expect("finish");
    let s = e.summary();
    let l1 = s.served.iter().find(|x| x.level == "L1D").expect("L1D");
    let elapsed = (s.elapsed_ns * 1000.0).round() as u64;
    (e.latency_totals().1, l1.accesses, elapsed)
}

#[test]
fn a_posted_store_costs_an_l1_hit_and_holds_no_slot() {
    const A: u64 = 0x10_0000;
    const B: u64 = 0x20_0000;
    // The load alone: its memory latency (the oracle for it below).
    let (load_ps, _, alone) = run(false, &[(Kind::Load, B)]);
    assert!(load_ps >= 80_000, "{load_ps}");
    assert_eq!(alone, load_ps as u64);
    // Waiting: the store's 80+ ns; the load issues when the store's slot
    // frees, then takes its own.
    let (waited, _, elapsed) = run(false, &[(Kind::Store, A), (Kind::Load, B)]);
    assert_eq!(waited, 2 * load_ps);
    assert_eq!(elapsed, 2 * load_ps as u64);
    // Posted: the store costs 1 ns, and the load issues one cycle (0.5
    // ns) later with the slot free, as if alone.
    let (posted, _, elapsed) = run(true, &[(Kind::Store, A), (Kind::Load, B)]);
    assert_eq!(posted, 1_000 + load_ps);
    assert_eq!(elapsed, 500 + load_ps as u64);
    // The store's line came in: a load of it hits the L1D.
    let (_, hits, _) = run(true, &[(Kind::Store, A), (Kind::Load, B), (Kind::Load, A)]);
    assert_eq!(hits, 1);
    // A read-modify-write reads first: it waits either way.
    let (modify, _, elapsed) = run(true, &[(Kind::Modify, A), (Kind::Load, B)]);
    assert_eq!(modify, 2 * load_ps);
    assert_eq!(elapsed, 2 * load_ps as u64);
}
