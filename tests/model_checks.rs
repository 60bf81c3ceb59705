//! The timing model against cases computed independently: the M/D/1 formula,
//! hand-worked coherence sequences, the machine's configured latencies, and
//! conservation laws.

use sim::{Config, Engine, Machine, Pin, Summary};
use traces::{Batch, Fields, Kind, Record};

fn machine(name: &str) -> Machine {
    Machine::from_toml(sim::presets::preset(name).expect("preset")).expect("valid preset")
}

/// Runs `records` (with a time column when `timed`) through `m`.
fn run(m: &Machine, records: &[Record], cfg: Config, placement: &str) -> Summary {
    run_in(m, records, cfg, placement, 4096)
}

/// As [`run`], fed in batches of `batch` records.
fn run_in(m: &Machine, records: &[Record], cfg: Config, placement: &str, batch: usize) -> Summary {
    run_series(m, records, cfg, placement, batch).0
}

/// As [`run_in`], with the time series (`timeseries.csv`).
fn run_series(
    m: &Machine,
    records: &[Record],
    cfg: Config,
    placement: &str,
    batch: usize,
) -> (Summary, String) {
    let p = policies::placement::PLACEMENTS
        .build(placement, &policies::registry::Ctx::for_machine(m))
        .expect("placement");
    let mut e = Engine::new(m, cfg, p).expect("engine");
    let fields = Fields {
        pc: false,
        time: true,
    };
    for chunk in records.chunks(batch) {
        let mut b = Batch::new(fields);
        for r in chunk {
            b.push(*r);
        }
        e.feed(&b).expect("feed");
    }
    e.finish().expect("finish");
    (
        e.summary(),
        analysis::timing::timeseries_csv(&e.timeseries()).unwrap(),
    )
}

/// xorshift64*, uniform in (0, 1].
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
}

/// Override the sample with `MD1_SEED=<u64>` and `MD1_N=<requests>`;
/// `cargo test --release --test model_checks md1 -- --nocapture` prints the errors.
#[test]
fn md1_mean_wait_matches_the_formula() {
    // one-channel: S = 64 B / 6.4 GB/s = 10 ns, no caches in the way.
    let m = machine("one-channel");
    let s_ns = 10.0;
    for rho in [0.3, 0.6, 0.9] {
        let lambda = rho / s_ns; // requests per ns
        let seed: u64 = std::env::var("MD1_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0x5EED);
        let mut rng = Rng(seed ^ (rho * 1000.0) as u64);
        // Near saturation the queue's samples are strongly correlated: 4 M
        // requests keep the sampling error near 1% (seeds 1–4 measured).
        let default_n = if rho > 0.8 { 4_000_000 } else { 1_000_000 };
        let n: u64 = std::env::var("MD1_N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default_n);
        let mut t = 0.0f64;
        let mut recs = Vec::with_capacity(n as usize);
        for i in 0..n {
            t += -rng.unit().ln() / lambda;
            // Distinct lines: a bijective scramble of i.
            let line = (i.wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF) + 1;
            recs.push(Record::access(0, Kind::Load, line * 64, 8).with_time(t.round() as u64));
        }
        let s = run(&m, &recs, Config::default(), "first-touch");
        let ch = &s.memory.channels[0];
        let expect = rho * s_ns / (2.0 * (1.0 - rho));
        let err = (ch.mean_wait_ns - expect).abs() / expect;
        eprintln!(
            "rho {rho}: mean wait {:.3} ns, M/D/1 {expect:.3} ns, error {:.2}%",
            ch.mean_wait_ns,
            err * 100.0
        );
        assert!(
            err < 0.03,
            "rho {rho}: mean wait {:.3} ns vs M/D/1 {expect:.3} ns ({:.1}%)",
            ch.mean_wait_ns,
            err * 100.0
        );
        assert_eq!(ch.requests, n);
        // The latency each access saw is base latency + wait.
        assert!(
            (s.latency_ns.mean - (100.0 + ch.mean_wait_ns)).abs() < 0.01,
            "{}",
            s.latency_ns.mean
        );
    }
}

#[test]
fn ping_pong_every_access_after_the_first_is_a_cross_node_transfer() {
    let m = machine("xeon-2s");
    let n = 1000u64;
    let line = 0x4000_0040u64;
    let mut recs = Vec::new();
    for k in 0..n {
        recs.push(Record::access(0, Kind::Store, line, 8).with_time(2 * k * 1000));
        recs.push(Record::access(1, Kind::Store, line, 8).with_time((2 * k + 1) * 1000));
    }
    let cfg = Config {
        pin: Pin::Spread,
        ..Config::default()
    };
    let s = run(&m, &recs, cfg, "first-touch");
    assert_eq!(s.threads[0].node, 0);
    assert_eq!(s.threads[1].node, 1);
    // All but the first access miss and invalidate the other copy.
    let invalidations = s.coherence.invalidations as i64;
    assert!(
        (invalidations - (2 * n as i64 - 1)).abs() <= 1,
        "{invalidations}"
    );
    assert_eq!(s.coherence.cache_to_cache, 2 * n - 1);
    assert_eq!(s.served[0].accesses, 0, "no L1 hit");
    // Configured cross-node transfer: c2c 48 ns + UPI route 58 ns; the first
    // store reads local memory (81 ns).
    let xfer = 48.0 + 58.0;
    let expect = (81.0 + (2 * n - 1) as f64 * xfer) / (2 * n) as f64;
    assert!(
        (s.latency_ns.mean - expect).abs() < 1e-6,
        "mean {} vs {expect}",
        s.latency_ns.mean
    );
    assert!(
        (s.latency_ns.p50 - xfer).abs() / xfer < 0.001,
        "p50 {}",
        s.latency_ns.p50
    );
}

/// Repeated loads of one line by a reader, interleaved with another
/// core's stores to it. Hand count (xeon-2s, both cores on node 0): per round
/// the reader loads three times; the first load after a store must fetch the
/// modified line from the writer's cache (a cache-to-cache transfer at 48 ns),
/// the other two are L1D hits at 1.5 ns. A reader that kept "hitting" on its
/// stale copy would show no transfers at all.
#[test]
fn a_load_after_another_cores_store_misses_however_recent_the_line() {
    let m = machine("xeon-2s");
    let rounds = 200u64;
    let line = 0x4000_0040u64;
    let mut recs = Vec::new();
    let mut t = 0;
    for _ in 0..rounds {
        recs.push(Record::access(1, Kind::Store, line + 8, 8).with_time(t));
        for k in 0..3 {
            recs.push(Record::access(0, Kind::Load, line + 16 * k, 8).with_time(t + 1000));
            t += 1000;
        }
        t += 1000;
    }
    let s = run(&m, &recs, Config::default(), "first-touch");
    assert_eq!(s.threads[0].node, s.threads[1].node);
    // Every store after the first upgrades the writer's shared copy and
    // invalidates the reader's (one invalidation); every first load of a
    // round takes the modified line from the writer (one transfer).
    assert_eq!(s.coherence.cache_to_cache, rounds, "one transfer per round");
    assert_eq!(s.coherence.invalidations, rounds - 1);
    let thread = |id| s.threads.iter().find(|t| t.thread == id).expect("thread");
    let (hit, c2c, dram) = (1.5, 48.0, 81.0);
    let reader = (c2c + 2.0 * hit) / 3.0;
    // The writer: the first store reads memory; each later one hits its
    // shared copy and upgrades it, invalidating the reader's.
    let writer = (dram + (rounds - 1) as f64 * (hit + c2c)) / rounds as f64;
    for (id, expect) in [(0, reader), (1, writer)] {
        let mean = thread(id).mean_latency_ns;
        assert!(
            (mean - expect).abs() < 1e-6,
            "thread {id}: mean {mean} vs {expect}"
        );
    }
}

#[test]
fn false_sharing_is_detected_and_padding_removes_it() {
    let m = machine("xeon-2s");
    let n = 500u64;
    let shared = |b_offset: u64| {
        let mut recs = Vec::new();
        for k in 0..n {
            recs.push(Record::access(0, Kind::Store, 0x1000_0000, 8).with_time(2 * k * 500));
            recs.push(
                Record::access(1, Kind::Store, 0x1000_0000 + b_offset, 8)
                    .with_time((2 * k + 1) * 500),
            );
        }
        recs
    };
    let cfg = || Config {
        pin: Pin::Explicit(vec![(0, 0), (1, 1)]),
        ..Config::default()
    };
    let same_line = run(&m, &shared(8), cfg(), "first-touch");
    assert!(same_line.coherence.false_sharing_lines >= 1);
    assert!(
        same_line.coherence.invalidations >= 2 * n - 2,
        "{}",
        same_line.coherence.invalidations
    );
    let padded = run(&m, &shared(64), cfg(), "first-touch");
    assert_eq!(padded.coherence.false_sharing_lines, 0);
    assert_eq!(padded.coherence.invalidations, 0);
    // True sharing (same bytes) is not false sharing.
    let true_sharing = run(&m, &shared(0), cfg(), "first-touch");
    assert_eq!(true_sharing.coherence.false_sharing_lines, 0);
    assert!(true_sharing.coherence.invalidations >= 2 * n - 2);
}

/// A single pass over `lines` distinct lines: every access misses every cache.
fn one_pass(lines: u64) -> Vec<Record> {
    (0..lines)
        .map(|i| Record::access(0, Kind::Load, 0x2000_0000 + i * 64, 8))
        .collect()
}

#[test]
fn remote_over_local_latency_is_dram_plus_link_over_dram() {
    let m = machine("xeon-2s");
    let recs = one_pass(200_000);
    let cfg = || Config {
        mlp: Some(1),
        ..Config::default()
    };
    let local = run(&m, &recs, cfg(), "bind:0");
    let remote = run(&m, &recs, cfg(), "bind:1");
    let ratio = remote.latency_ns.mean / local.latency_ns.mean;
    let expect = (81.0 + 58.0) / 81.0;
    assert!(
        (ratio - expect).abs() / expect < 0.02,
        "ratio {ratio} vs {expect}"
    );
    assert_eq!(local.nodes[0].local_accesses, 200_000);
    assert_eq!(local.nodes[0].remote_accesses, 0);
    assert_eq!(remote.nodes[0].remote_accesses, 200_000);
    // The distance matrix says the same thing, to its integer rounding.
    let slit = m.distance[0][1] as f64 / 10.0;
    assert!(
        (ratio - slit).abs() / ratio < 0.02,
        "SLIT {slit} vs ratio {ratio}"
    );
    // mlp 1: one miss at a time, so elapsed = sum of latencies (+1 cycle per access).
    assert!(local.elapsed_ns >= 200_000.0 * 81.0);
}

#[test]
fn memory_bytes_busy_time_and_littles_law_are_conserved() {
    let m = machine("xeon-2s");
    // 8 threads, zipf-ish shared writes: fills, write-backs, invalidations, queueing.
    let cfg = traces::synth::GenConfig {
        pattern: traces::synth::Pattern::Zipf,
        count: 400_000,
        footprint: 256 << 20,
        threads: 8,
        write_ratio: 0.3,
        zipf_s: 0.6,
        seed: 9,
        ..Default::default()
    };
    let mut g = traces::synth::Generator::new(cfg).unwrap();
    let recs = traces::collect_all(&mut g).unwrap();
    let s = run(
        &m,
        &recs,
        Config {
            pin: Pin::Spread,
            ..Config::default()
        },
        "interleave",
    );
    let line = m.spec.line_size;
    assert_eq!(
        s.memory.bytes,
        line * (s.memory.reads + s.memory.writebacks),
        "no migrations here"
    );
    assert!(s.memory.writebacks > 0 && s.coherence.invalidations > 0);
    for ch in &s.memory.channels {
        assert!(ch.busy_ns <= s.elapsed_ns, "{ch:?}");
        if ch.requests > 0 {
            // Little: time-average occupancy = arrival rate × time in system.
            let horizon = s.elapsed_ns;
            let lambda = ch.requests as f64 / horizon;
            let l = lambda * ch.mean_sojourn_ns;
            assert!(
                (ch.mean_queue_len - l).abs() <= 1e-9 * l.max(1.0) + 1e-6,
                "{} vs {l}",
                ch.mean_queue_len
            );
        }
    }
    let reads: u64 = s
        .nodes
        .iter()
        .map(|n| n.local_accesses + n.remote_accesses)
        .sum();
    assert_eq!(reads, s.memory.reads);
}

#[test]
fn same_input_same_summary() {
    let m = machine("epyc-4numa");
    let cfg = traces::synth::GenConfig {
        pattern: traces::synth::Pattern::Random,
        count: 100_000,
        footprint: 64 << 20,
        threads: 6,
        write_ratio: 0.2,
        seed: 3,
        ..Default::default()
    };
    let recs = traces::collect_all(&mut traces::synth::Generator::new(cfg).unwrap()).unwrap();
    let a = run(
        &m,
        &recs,
        Config {
            pin: Pin::Spread,
            ..Config::default()
        },
        "first-touch",
    );
    let b = run(
        &m,
        &recs,
        Config {
            pin: Pin::Spread,
            ..Config::default()
        },
        "first-touch",
    );
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn migrate_after_k_remote_reads_moves_pages_and_pays_for_the_copy() {
    let m = machine("xeon-2s");
    // Thread 0 (node 0) first-touches 16 384 pages; thread 1 (node 1) then reads
    // them, line by line, four times over (64 MiB > the 32 MiB LLC, so every
    // pass reads memory).
    let pages = 16_384u64;
    let mut recs = Vec::new();
    for p in 0..pages {
        recs.push(Record::access(0, Kind::Store, 0x4000_0000 + p * 4096, 8).with_time(p));
    }
    let mut t = 1_000_000u64;
    for _pass in 0..4 {
        for p in 0..pages {
            for l in 0..64 {
                recs.push(
                    Record::access(1, Kind::Load, 0x4000_0000 + p * 4096 + l * 64, 8).with_time(t),
                );
                t += 20;
            }
        }
    }
    let cfg = || Config {
        pin: Pin::Spread,
        ..Config::default()
    };
    let stay = run(&m, &recs, cfg(), "first-touch");
    let moved = run(&m, &recs, cfg(), "migrate:8");
    assert_eq!(stay.pages.migrations, 0);
    assert_eq!(
        moved.pages.migrations, pages,
        "every page is read remotely ≥ 8 times in its first pass"
    );
    assert_eq!(moved.pages.migration_bytes, pages * 4096);
    assert_eq!(moved.nodes[1].pages, pages);
    // After migrating, node 1's reads are local.
    assert!(moved.nodes[1].remote_accesses < stay.nodes[1].remote_accesses / 3);
    assert!(moved.latency_ns.mean < stay.latency_ns.mean);
    // The copies cross the link: one page per migration beyond the line traffic.
    let link_bytes = |s: &Summary| s.links[0].bytes;
    assert!(link_bytes(&moved) >= pages * 4096);
    // Channel bytes now include the copies (read at the old home, written at the new).
    assert_eq!(
        moved.memory.bytes,
        64 * (moved.memory.reads + moved.memory.writebacks) + 2 * pages * 4096
    );
}

#[test]
fn closed_loop_gaps_and_mlp_set_the_pace() {
    let m = machine("xeon-2s");
    // Hits only: 1000 loads of one line 50 ns apart take 999 × 50 ns + one miss.
    let hits: Vec<Record> = (0..1000)
        .map(|_| Record::access(0, Kind::Load, 0x1000, 8).with_gap(50))
        .collect();
    let s = run(&m, &hits, Config::default(), "first-touch");
    assert!(
        (s.elapsed_ns - (50.0 + 999.0 * 50.0 + 1.5)).abs() < 1.0,
        "{}",
        s.elapsed_ns
    );
    // Misses only (one pass, bind:0): with --mlp 1 they serialize at 81 ns;
    // with 12 in flight they overlap ~12-fold (one issue per 2.7 GHz cycle).
    let recs = one_pass(120_000);
    let serial = run(
        &m,
        &recs,
        Config {
            mlp: Some(1),
            ..Config::default()
        },
        "bind:0",
    );
    let overlapped = run(
        &m,
        &recs,
        Config {
            mlp: Some(12),
            ..Config::default()
        },
        "bind:0",
    );
    let per_serial = serial.elapsed_ns / 120_000.0;
    let per_overlapped = overlapped.elapsed_ns / 120_000.0;
    assert!((per_serial - (81.0 + 0.37)).abs() < 0.5, "{per_serial}");
    assert!(
        (per_overlapped - 81.0 / 12.0).abs() / (81.0 / 12.0) < 0.05,
        "{per_overlapped}"
    );
}

/// Two nodes of two cores with tiny caches, so lines are evicted (and,
/// the L2 being inclusive, back-invalidated from L1D and L1I) all the time.
const TINY: &str = r#"
name = "tiny"
description = "test machine: tiny caches"
sources = ["made up for the fast-path test"]
line_size = 64
page_size = 4096
c2c_latency_ns = 40.0

[core]
freq_ghz = 2.0
mlp = 4
caches = [
  { name = "L1D", size = "1K", assoc = 2, latency_ns = 1.0 },
  { name = "L2", size = "4K", assoc = 4, latency_ns = 4.0 },
]
l1i = { name = "L1I", size = "1K", assoc = 2, latency_ns = 1.0 }

[[nodes]]
cores = 2
llc = { name = "LLC", size = "16K", assoc = 4, latency_ns = 15.0 }
memory = { capacity = "1G", channels = 1, channel_gbps = 10.0, latency_ns = 80.0, interleave = 256 }

[[nodes]]
cores = 2
llc = { name = "LLC", size = "16K", assoc = 4, latency_ns = 15.0 }
memory = { capacity = "1G", channels = 1, channel_gbps = 10.0, latency_ns = 80.0, interleave = 256 }

[[links]]
a = 0
b = 1
latency_ns = 50.0
bandwidth_gbps = 20.0
"#;

/// A load or (one time in five) a store of 8 bytes by `thread` to an
/// aligned address within `span` bytes, drawn from `r`.
fn load_or_store(r: u64, thread: u32, span: u64) -> Record {
    let kind = if (r >> 8) % 5 == 0 {
        Kind::Store
    } else {
        Kind::Load
    };
    Record::access(thread, kind, 0x1000_0000 + (r >> 20) % span / 8 * 8, 8)
}

/// How the input is cut into batches is not an input: threads that first
/// appear mid-trace (which start at the time the run has reached) and a
/// starved thread that fills the record buffer (which makes events run out
/// of turn) give the same results for every batch size.
#[test]
fn results_do_not_depend_on_batch_boundaries() {
    let m = machine("xeon-2s");
    let mut rng = Rng(0xBA7C);
    let mut recs = Vec::new();
    for i in 0..20_000u64 {
        let r = rng.next();
        let t = match i {
            // Thread 3 once early, then silent until the end: the others'
            // records pile up behind it.
            100 => 3,
            _ if i >= 18_000 && r % 4 == 0 => 3,
            // Thread 0 alone at first; 1 joins at 3000, 2 at 9000.
            _ if i < 3000 => 0,
            _ if i < 9000 => (r % 2) as u32,
            _ => (r % 3) as u32,
        };
        recs.push(load_or_store(r, t, 4 << 20));
    }
    let cfg = || Config {
        pin: Pin::Spread,
        max_buffered: 700,
        ..Config::default()
    };
    let whole = run_in(&m, &recs, cfg(), "first-touch", recs.len());
    assert!(whole.coherence.invalidations > 100, "{:?}", whole.coherence);
    for batch in [1, 7, 333, 4096] {
        let s = run_in(&m, &recs, cfg(), "first-touch", batch);
        assert_eq!(s, whole, "batches of {batch}");
    }
}

/// Thread ids are names: renaming them (small ids go through a table,
/// ids from 65 536 up through a hash map) changes only the names in the
/// per-thread results.
#[test]
fn thread_ids_are_only_names() {
    let m = machine("xeon-2s");
    let mut rng = Rng(0x1D5);
    let mut recs = Vec::new();
    for _ in 0..20_000u64 {
        let r = rng.next();
        recs.push(load_or_store(r, (r % 4) as u32, 1 << 20));
    }
    let names = [65_535u32, 70_000, 7, u32::MAX - 1];
    let renamed: Vec<Record> = recs
        .iter()
        .map(|r| {
            let mut r = *r;
            r.thread = names[r.thread as usize];
            r
        })
        .collect();
    let cfg = || Config {
        pin: Pin::Spread,
        ..Config::default()
    };
    let mut plain = run(&m, &recs, cfg(), "first-touch");
    let mut other = run(&m, &renamed, cfg(), "first-touch");
    assert!(plain.coherence.invalidations > 100, "{:?}", plain.coherence);
    assert_eq!(other.threads.len(), 4);
    for th in &mut other.threads {
        let k = names
            .iter()
            .position(|&n| n == th.thread)
            .expect("a renamed thread");
        th.thread = k as u32;
    }
    other.threads.sort_by_key(|t| t.thread);
    plain.threads.sort_by_key(|t| t.thread);
    assert_eq!(other, plain);
}

/// The engine's fast paths (a repeated load or fetch of a core's last
/// line, runs of such loads) against the general path on every access:
/// four threads running fetch loops with jumps, repeated loads and writes
/// (some back to back), private random loads, stores to shared lines
/// (invalidations, false sharing, reads of another core's dirty line) and
/// streams that evict fetched lines from the inclusive L2. The summaries
/// must be equal, field for field.
#[test]
fn the_fast_paths_change_nothing() {
    let m = Machine::from_toml(TINY).expect("tiny machine");
    let mut rng = Rng(0xFA57);
    let mut recs = Vec::new();
    let mut pc = [0x40_0000u64; 4];
    let mut last = [0u64; 4];
    let mut stream = [0u64; 4];
    for _ in 0..60_000 {
        for t in 0..4u32 {
            let i = t as usize;
            let r = rng.next();
            // Fetches walk 4 bytes at a time through a 3 KiB loop, with jumps.
            pc[i] = if r % 23 == 0 {
                0x40_0000 + (r >> 8) % 3072
            } else {
                0x40_0000 + (pc[i] + 4 - 0x40_0000) % 3072
            };
            // A third of the steps are data-only, so loads repeat back to back.
            if r % 3 != 0 {
                recs.push(Record::access(
                    t,
                    Kind::IFetch,
                    pc[i] + 0x1000 * i as u64,
                    4,
                ));
            }
            let data = match (r >> 20) % 10 {
                0..=3 => Some(Record::access(t, Kind::Load, last[i] + (r >> 40) % 8, 8)),
                4 => {
                    last[i] = 0x1000_0000 + (i as u64) * 0x10_0000 + ((r >> 30) % 8192) / 8 * 8;
                    Some(Record::access(t, Kind::Load, last[i], 8))
                }
                // A shared line, which other threads' stores invalidate.
                5 => {
                    last[i] = 0x2000_0000 + (r >> 30) % 512 / 8 * 8;
                    Some(Record::access(t, Kind::Load, last[i], 8))
                }
                // Stores to shared lines, and now and then into another
                // thread's code (its fetched lines are invalidated).
                6 if r >> 60 == 0 => {
                    let code = 0x40_0000 + 0x1000 * ((i as u64 + 1) % 4) + (r >> 30) % 3072;
                    Some(Record::access(t, Kind::Store, code, 4))
                }
                6 => Some(Record::access(
                    t,
                    Kind::Store,
                    0x2000_0000 + (r >> 30) % 512,
                    4,
                )),
                7 => {
                    stream[i] += 64;
                    let a = 0x3000_0000 + (i as u64) * 0x100_0000 + stream[i] % 0x40_0000;
                    Some(Record::access(t, Kind::Load, a, 8))
                }
                8 => Some(Record::access(t, Kind::Modify, last[i], 8)),
                // Back-to-back writes to the last line (shared lines too,
                // which other threads read and write in between).
                _ => Some(Record::access(t, Kind::Store, last[i] + (r >> 40) % 8, 4)),
            };
            recs.extend(data);
        }
    }
    // With data TLBs too: the shortcuts' same-line loads find their page
    // as the TLB's last one, so they stay exact.
    let with_tlb = TINY.replace(
        "l1i = {",
        "tlb = { walk_ns = 9.0, levels = [{ name = \"DTLB\", entries = 4, assoc = 2 }, \
         { name = \"STLB\", entries = 16, assoc = 4, latency_ns = 2.0 }] }\nl1i = {",
    );
    let m_tlb = Machine::from_toml(&with_tlb).expect("tiny machine with TLBs");
    for (m, tlb) in [(&m, false), (&m_tlb, true)] {
        for pin in [Pin::Compact, Pin::Spread] {
            let cfg = |shortcuts| Config {
                pin: pin.clone(),
                shortcuts,
                ..Config::default()
            };
            let fast = run(m, &recs, cfg(true), "first-touch");
            let slow = run(m, &recs, cfg(false), "first-touch");
            assert!(fast.coherence.invalidations > 1000, "{:?}", fast.coherence);
            assert_eq!(
                fast.tlb
                    .as_ref()
                    .is_some_and(|t| t.walks > 300 && t.levels[1].hits > 300),
                tlb,
                "{:?}",
                fast.tlb
            );
            assert_eq!(fast, slow, "pin {pin:?}, TLBs {tlb}");
        }
    }
    // A thread alone takes `feed`'s direct path (hits settled as they
    // arrive, the rest run at once); with 50 ns windows many runs of hits
    // cross a window's end. Summary and time series must be the general
    // path's, for every batch size.
    let lone: Vec<Record> = recs.iter().filter(|r| r.thread == 0).copied().collect();
    for (m, (window_ns, batch)) in [
        (&m, (10_000, 4096)),
        (&m, (50, 333)),
        (&m, (50, 1)),
        (&m_tlb, (50, 333)),
    ] {
        let cfg = |shortcuts| Config {
            window_ns,
            shortcuts,
            ..Config::default()
        };
        let fast = run_series(m, &lone, cfg(true), "first-touch", batch);
        let slow = run_series(m, &lone, cfg(false), "first-touch", batch);
        assert!(fast.0.served[0].accesses > 10_000, "{:?}", fast.0.served);
        assert_eq!(
            fast, slow,
            "one thread, {window_ns} ns windows, batches of {batch}"
        );
    }
}

/// The fast paths' hardest case by hand: a core loads line X, then four
/// fetches that map to X's L2 set (16 sets of 4 ways) evict X from the L2
/// and, by inclusion, from the L1D; the next load of X must miss the
/// private levels, as the general path says, not be answered as the L1D
/// hit X was.
#[test]
fn a_load_after_fetches_evicted_its_line_misses() {
    let m = Machine::from_toml(TINY).expect("tiny machine");
    let x = 0x1000_0000u64; // line 0x40_0000: L2 set 0
    let mut recs = vec![Record::access(0, Kind::Load, x, 8)];
    for k in 0..4u64 {
        recs.push(Record::access(0, Kind::IFetch, 0x40_0000 + k * 1024, 4));
    }
    recs.push(Record::access(0, Kind::Load, x, 8));
    let cfg = |shortcuts| Config {
        shortcuts,
        ..Config::default()
    };
    let fast = run(&m, &recs, cfg(true), "first-touch");
    let slow = run(&m, &recs, cfg(false), "first-touch");
    assert_eq!(fast, slow);
    // Both loads went past the 4 ns L2: mean data latency over 15 ns (LLC).
    assert!(fast.latency_ns.mean > 15.0, "{:?}", fast.latency_ns);
}
