//! The measurements → machine mapping, on made-up measurements of the
//! recorded two-socket Xeon (no host needed): every value the mapping sets
//! is checked against the arithmetic done here by hand.

use lab::calibrate::{Measurements, NodePair, Options, machine};
use live::calibrate::Point;

fn xeon() -> live::sysfs::Topology {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/sysfs/xeon-2s");
    live::sysfs::probe(&root).unwrap()
}

/// A curve with plateaus of `ns[i]` up to `upto[i]` bytes (sizes doubling
/// from 4 KiB to 512 MiB).
fn curve(plateaus: &[(u64, f64)]) -> Vec<Point> {
    (12..=29)
        .map(|b| {
            let bytes = 1u64 << b;
            let ns = plateaus.iter().find(|p| bytes <= p.0).map_or(0.0, |p| p.1);
            Point {
                bytes,
                ns,
                spread: 0.01,
            }
        })
        .collect()
}

fn measurements(huge: Option<Vec<(Point, f64)>>) -> Measurements {
    let k = 1 << 10;
    Measurements {
        options: Options {
            max_size: 256 << 20,
            loads: 1000,
            repeats: 3,
            huge_pages: huge.is_some(),
            fingerprint_size: 64 << 20,
        },
        tsc_ghz: 2.0,
        tsc_source: "rdtscp".into(),
        curve: curve(&[
            (32 * k, 1.5),
            (k * k, 5.0),
            (32 * k * k, 20.0),
            (u64::MAX, 90.0),
        ]),
        huge,
        pairs: vec![
            NodePair {
                cpu: 0,
                from: 0,
                to: 0,
                ns: 90.0,
                gbps: 11.0,
            },
            NodePair {
                cpu: 0,
                from: 0,
                to: 1,
                ns: 140.04,
                gbps: 12.34,
            },
        ],
        c2c: Some((0, 1, 45.67)),
        read_gbps: vec![10.0, 18.0, 25.0, 24.0],
        // No stride is followed (every walk as slow as the random chase):
        // no prefetcher, nothing to fit.
        fingerprint: live::fingerprint::Fingerprint {
            bytes: 64 << 20,
            huge_share: 1.0,
            random_ns: 90.0,
            walks: vec![(1, 90.0), (2, 91.0), (4, 89.0)],
            streams: vec![],
            pairs: None,
            levels: vec![],
            ramps: vec![],
            pages: vec![],
        },
    }
}

#[test]
fn measurements_map_onto_the_machine_by_hand_arithmetic() {
    let t = xeon();
    let spec = live::sysfs::to_machine(&t, "host-calibrated").unwrap();
    let c = machine(spec, &t, &measurements(None), None, "x.prefetch.json").unwrap();
    let s = &c.machine.spec;
    let lat: Vec<f64> = s.core.caches.iter().map(|c| c.latency_ns).collect();
    assert_eq!(lat, [1.5, 5.0]);
    assert_eq!(s.nodes[0].llc.as_ref().unwrap().latency_ns, 20.0);
    let mem = s.nodes[0].memory.as_ref().unwrap();
    assert_eq!(mem.latency_ns, 90.0);
    // The link: remote − local latency 140.04 − 90 → 50.0; the remote
    // pair's one-thread read 12.34 → 12.3 GB/s.
    assert_eq!(s.links[0].latency_ns, 50.0);
    assert_eq!(s.links[0].bandwidth_gbps, 12.3);
    assert_eq!(s.c2c_latency_ns, 45.7);
    // Channels: the best streaming read of 1..4 threads.
    assert_eq!(mem.channel_gbps, 25.0);
    // Little's law: 10 GB/s × 90 ns / 64 B = 14.06 → 14 lines in flight.
    assert_eq!(s.core.mlp, 14);
    let first = &s
        .sources
        .iter()
        .position(|n| n.starts_with("calibrated by numasim"))
        .unwrap();
    let pair = s
        .sources
        .iter()
        .position(|n| n.starts_with("cpu 0 (node 0) to memory of node 1"))
        .unwrap();
    assert!(first < &pair, "the notes in order: {:?}", s.sources);
    assert!(
        s.sources
            .iter()
            .any(|n| n == "streaming read, 3 thread(s): 25.0 GB/s")
    );
    assert_eq!(c.levels.len(), 4);
}

/// Page walks that show TLBs: `[core.tlb]` is fitted to them
/// (`lab::tlb_fit`), and memory's latency becomes the chase's less a walk
/// (a random chase over memory walks on every load). The "host" is the
/// machine calibrated without page walks, given a TLB, on the walks.
#[test]
fn page_walks_give_a_tlb_and_memory_less_a_walk() {
    let t = xeon();
    let spec = live::sysfs::to_machine(&t, "host-calibrated").unwrap();
    let plain = machine(
        spec.clone(),
        &t,
        &measurements(None),
        None,
        "x.prefetch.json",
    )
    .unwrap();
    let mut truth = plain.machine.spec.clone();
    // The fit walks with random frames (`tlb_fit`), as a host scatters them.
    truth.frames = sim::frames::FrameMapping::Random;
    truth.core.tlb = Some(sim::spec::TlbSpec {
        page_size: 4096,
        levels: vec![
            sim::spec::TlbLevelSpec {
                name: "DTLB".into(),
                entries: 64,
                assoc: 4,
                latency_ns: 0.0,
            },
            sim::spec::TlbLevelSpec {
                name: "STLB".into(),
                entries: 1024,
                assoc: 8,
                latency_ns: 2.0,
            },
        ],
        walk_ns: 15.0,
    });
    let host = sim::Machine::new(truth).unwrap();
    let mut m = measurements(None);
    m.fingerprint.pages = live::fingerprint::PAGE_WALK_PAGES
        .iter()
        .map(|&p| {
            let order = live::fingerprint::page_order(p, 7 + p as u64);
            let warm: Vec<u32> = order
                .iter()
                .cycle()
                .take(2 * order.len())
                .copied()
                .collect();
            let timed: Vec<u32> = order
                .iter()
                .cycle()
                .take(order.len().max(64))
                .copied()
                .collect();
            (
                p,
                lab::dependent::walk_split_ns(&host, &[], &warm, &timed).unwrap(),
            )
        })
        .collect();
    let c = machine(spec, &t, &m, None, "x.prefetch.json").unwrap();
    let s = &c.machine.spec;
    let tlb = s.core.tlb.as_ref().expect("a TLB");
    assert_eq!(
        (
            tlb.levels[0].entries,
            tlb.levels[1].entries,
            tlb.levels[1].latency_ns,
            tlb.walk_ns
        ),
        (64, 1024, 2.0, 15.0),
        "{:#?}",
        s.sources
    );
    // 90 ns by the chase, less the walk's 15.
    assert_eq!(s.nodes[0].memory.as_ref().unwrap().latency_ns, 75.0);
    assert!(
        s.sources
            .iter()
            .any(|n| n.starts_with("[core.tlb] fitted by simulation"))
    );
    assert!(plain.machine.spec.core.tlb.is_none());
    assert!(
        plain
            .machine
            .spec
            .sources
            .iter()
            .any(|n| n == "no page walks recorded: no [core.tlb] fitted")
    );
}

#[test]
fn the_huge_page_sweep_sets_the_levels_when_there_is_one() {
    let t = xeon();
    let spec = live::sysfs::to_machine(&t, "host-calibrated").unwrap();
    let k = 1 << 10;
    let huge: Vec<(Point, f64)> = curve(&[
        (32 * k, 1.5),
        (k * k, 5.0),
        (32 * k * k, 20.0),
        (u64::MAX, 80.0),
    ])
    .into_iter()
    .map(|p| (p, 1.0))
    .collect();
    let c = machine(spec, &t, &measurements(Some(huge)), None, "x.prefetch.json").unwrap();
    let s = &c.machine.spec;
    assert_eq!(
        s.nodes[0].memory.as_ref().unwrap().latency_ns,
        80.0,
        "not the 4 KiB sweep's 90"
    );
    // Little's law reads the mapped memory latency: 10 × 80 / 64 = 12.5 → 13.
    assert_eq!(s.core.mlp, 13);
    assert!(
        s.sources
            .iter()
            .any(|n| n.starts_with("the machine's levels come from the huge-page sweep"))
    );
    assert_eq!(c.levels.last().unwrap().ns, 80.0);
}
