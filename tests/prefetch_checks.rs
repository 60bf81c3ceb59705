//! Cache prefetchers in the timing model: coverage and accuracy on the
//! patterns they are made for, restraint on random access, and the
//! accounting identity useful + useless = issued.

use sim::{Config, Engine, Machine, Summary};
use traces::{Batch, Fields, Kind, Record};

fn run(recs: &[Record], prefetch: Option<&str>, level: usize) -> Summary {
    let m = Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let cfg = Config {
        prefetch_level: level,
        ..Config::default()
    };
    let mut e = Engine::new(
        &m,
        cfg,
        policies::placement::create("first-touch", &m).unwrap(),
    )
    .unwrap();
    if let Some(p) = prefetch {
        e.set_prefetcher(policies::prefetch::create(p, 64, m.cores()).unwrap())
            .unwrap();
    }
    let fields = Fields {
        pc: true,
        time: false,
    };
    for chunk in recs.chunks(4096) {
        let mut b = Batch::new(fields);
        for r in chunk {
            b.push(*r);
        }
        e.feed(&b).unwrap();
    }
    e.finish().unwrap();
    e.summary()
}

/// Two interleaved strided streams at different PCs (256 B and −192 B), over
/// far more memory than the caches hold.
fn strided(n: u64) -> Vec<Record> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(Record::access(0, Kind::Load, 0x4000_0000 + i * 256, 8).with_pc(0x401000));
        v.push(Record::access(0, Kind::Load, 0x9000_0000 - i * 192, 8).with_pc(0x401020));
    }
    v
}

fn random(n: u64) -> Vec<Record> {
    let mut x = 0x1234_5678u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Record::access(0, Kind::Load, 0x4000_0000 + (x % (1 << 30)) / 64 * 64, 8)
                .with_pc(0x402000)
        })
        .collect()
}

#[test]
fn ip_stride_covers_a_pure_stride_trace_accurately() {
    let recs = strided(100_000);
    let base = run(&recs, None, 1);
    let s = run(&recs, Some("ip-stride:4:4"), 1);
    let p = s.prefetch.clone().unwrap();
    assert!(p.coverage > 0.9, "{p:?}");
    assert!(p.accuracy > 0.9, "{p:?}");
    assert_eq!(p.useful + p.useless, p.issued);
    assert!(
        s.latency_ns.mean < 0.5 * base.latency_ns.mean,
        "{} vs {}",
        s.latency_ns.mean,
        base.latency_ns.mean
    );
    // Prefetch bytes are real traffic: memory bytes = fills + write-backs, prefetches included.
    assert_eq!(s.memory.bytes, 64 * (s.memory.reads + s.memory.writebacks));
    assert_eq!(p.extra_bytes, 64 * p.issued);
}

#[test]
fn random_access_gets_little_prefetching_and_no_gain() {
    let recs = random(200_000);
    let base = run(&recs, None, 1);
    for spec in ["ip-stride:4:4", "stream:2:1", "delta:2"] {
        let s = run(&recs, Some(spec), 1);
        let p = s.prefetch.clone().unwrap();
        assert!(
            (p.issued as f64) < 0.02 * 200_000.0,
            "{spec} issued {} on random access",
            p.issued
        );
        assert!(p.coverage < 0.02, "{spec}: {p:?}");
        assert!(
            s.latency_ns.mean >= 0.98 * base.latency_ns.mean,
            "{spec}: no gain expected"
        );
        assert_eq!(p.useful + p.useless, p.issued, "{spec}");
    }
    // Next-line prefetches on every miss: it issues a lot, and almost all of it is useless.
    let nl = run(&recs, Some("next-line:1"), 1).prefetch.unwrap();
    assert!(nl.issued > 100_000 && nl.accuracy < 0.05, "{nl:?}");
}

#[test]
fn sequential_streams_suit_next_line_and_stream_and_accounting_holds() {
    let recs: Vec<Record> = (0..200_000u64)
        .map(|i| Record::access(0, Kind::Load, 0x4000_0000 + i * 16, 8).with_pc(0x403000))
        .collect();
    for (spec, level) in [
        ("next-line:2", 1),
        ("stream:4:2", 1),
        ("stream:2:1", 0),
        ("delta:4", 1),
    ] {
        let s = run(&recs, Some(spec), level);
        let p = s.prefetch.unwrap();
        assert_eq!(p.useful + p.useless, p.issued, "{spec}");
        assert!(p.coverage > 0.8, "{spec} L{level}: {p:?}");
        assert!(p.late <= p.useful);
        assert!(p.early <= p.useless);
    }
}

#[test]
fn lackey_pc_comes_from_the_preceding_instruction_fetch() {
    // No PC column: data accesses take the PC of the instruction fetch before them.
    let mut recs = Vec::new();
    for i in 0..50_000u64 {
        recs.push(Record::access(0, Kind::IFetch, 0x401000, 4));
        recs.push(Record::access(0, Kind::Load, 0x4000_0000 + i * 512, 8));
    }
    let s = run(&recs, Some("ip-stride:4:4"), 1);
    let p = s.prefetch.unwrap();
    assert!(p.coverage > 0.9 && p.accuracy > 0.9, "{p:?}");
}
