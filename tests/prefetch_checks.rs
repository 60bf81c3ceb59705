//! Cache prefetchers in the timing model: coverage and accuracy on the
//! patterns they are made for, restraint on random access, and the
//! accounting identity useful + useless = issued.

mod common;

use common::{numasim, ok, one_line_error, root};
use sim::{Config, Engine, Machine, Summary};
use traces::{Batch, Fields, Kind, Record};

fn run(recs: &[Record], prefetch: Option<&str>, level: usize) -> Summary {
    run_cfg(
        recs,
        prefetch,
        Config {
            prefetch_level: level,
            ..Config::default()
        },
    )
}

fn run_cfg(recs: &[Record], prefetch: Option<&str>, cfg: Config) -> Summary {
    let m = Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let mut e = Engine::new(
        &m,
        cfg,
        policies::placement::PLACEMENTS
            .build("first-touch", &policies::registry::Ctx::for_machine(&m))
            .unwrap(),
    )
    .unwrap();
    if let Some(p) = prefetch {
        e.set_prefetcher(
            policies::prefetch::PREFETCHERS
                .build(p, &policies::registry::Ctx::for_machine(&m))
                .unwrap(),
        )
        .unwrap();
    }
    feed_all(&mut e, recs);
    e.summary()
}

/// Feeds `recs` (with their PCs) to `e` in batches, then finishes it.
fn feed_all(e: &mut Engine<'_>, recs: &[Record]) {
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

/// `numasim trace prefetch` on a load trace written here.
fn prefetch_file(loads: &str, extra: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("loads.txt"), dir.path().join("pf.txt"));
    std::fs::write(&input, loads).unwrap();
    let mut args = vec!["trace", "prefetch", input.to_str().unwrap()];
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend(extra);
    let o = ok(&args);
    (
        std::fs::read_to_string(out).unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn ml_dpc_prefetch_files_by_hand_and_by_pattern() {
    // 200 loads walking lines 0x1000.. one line at a time, every one an LLC
    // miss, instruction ids 10, 13, 16, ...: tagged next-line (degree 1)
    // prefetches line+1 on every load (each is a miss or the first use of a
    // prefetch), so the file is exactly "id (line+1)*64" per load.
    let mut loads = String::from("*** ChampSim load trace\n");
    let mut want = String::new();
    for i in 0..200u64 {
        let (id, line) = (10 + 3 * i, 0x1000 + i);
        loads.push_str(&format!(
            "{id}, {}, {:x}, 401a2c, 0\n",
            7 * i,
            line * 64 + 8
        ));
        want.push_str(&format!("{id} {:x}\n", (line + 1) * 64));
    }
    let (file, report) = prefetch_file(&loads, &["--prefetcher", "next-line"]);
    assert_eq!(file, want);
    // 200 issued; 199 used by the next load, covering 199 of 200 misses.
    assert!(
        report.contains("200 loads (200 LLC misses), 200 prefetches"),
        "{report}"
    );
    assert!(
        report.contains("accuracy 0.995, coverage 0.995"),
        "{report}"
    );

    // A pure stride (3 lines) by one PC: IP-stride covers > 90% of the misses
    // with > 90% accuracy, at most 2 prefetches per load.
    let mut loads = String::new();
    for i in 0..5000u64 {
        loads.push_str(&format!("{i}, {i}, {:x}, 400100, 0\n", 0x10_0000 + i * 192));
    }
    let (file, report) = prefetch_file(&loads, &["--prefetcher", "ip-stride:2"]);
    let acc_cov: Vec<f64> = report
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|w| {
            w.parse::<f64>()
                .ok()
                .filter(|x| *x <= 1.0 && w.contains('.'))
        })
        .collect();
    assert!(
        acc_cov.len() == 2 && acc_cov.iter().all(|&x| x > 0.9),
        "{report}"
    );
    let mut per_id = std::collections::BTreeMap::new();
    for l in file.lines() {
        let (id, addr) = l.split_once(' ').unwrap();
        assert_eq!(u64::from_str_radix(addr, 16).unwrap() % 64, 0, "{l}");
        *per_id.entry(id.parse::<u64>().unwrap()).or_insert(0) += 1;
    }
    assert!(per_id.values().all(|&n| n <= 2));

    // Uniform random lines: IP-stride finds no stride and issues little.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut loads = String::new();
    for i in 0..5000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        loads.push_str(&format!(
            "{i}, {i}, {:x}, 400100, 0\n",
            (x % (1 << 30)) & !63
        ));
    }
    let (file, _) = prefetch_file(&loads, &["--prefetcher", "ip-stride:2"]);
    assert!(
        file.lines().count() < 250,
        "{} prefetches",
        file.lines().count()
    );
}

/// Half the loads walk a stride of 3 lines (PC 0x401000), half jump at
/// random (PC 0x402000), interleaved at random: the delta prefetcher's
/// proposals after a random jump are useless, after a strided load useful.
fn planted_csv(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut s = String::from("thread,op,addr,size,pc\n");
    let mut a = 0x1000_0000u64;
    for _ in 0..n {
        if next() % 2 == 0 {
            a += 192;
            s.push_str(&format!("0,L,{a:#x},8,0x401000\n"));
        } else {
            let b = 0x8000_0000u64 + (next() % (1 << 26)) / 64 * 64;
            s.push_str(&format!("0,L,{b:#x},8,0x402000\n"));
        }
    }
    s
}

#[test]
fn a_learned_filter_trained_on_one_trace_cleans_up_another() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    std::fs::write(p("train.csv"), planted_csv(1, 60_000)).unwrap();
    std::fs::write(p("test.csv"), planted_csv(2, 60_000)).unwrap();
    let run = |args: &[&str]| String::from_utf8_lossy(&ok(args).stdout).into_owned();
    // Four accesses of history (the filter takes its length from the model).
    run(&[
        "dataset",
        &p("train.csv"),
        "--history",
        "4",
        "--out",
        &p("d.csv"),
    ]);
    let text = std::fs::read_to_string(p("d.csv")).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "time_ns,id,cand_delta,cand_rank,delta_0,delta_1,delta_2,delta_3,miss_0,miss_1,miss_2,miss_3,cand_repeats,label"
    );
    let out = run(&[
        "train",
        &p("d.csv"),
        "--model",
        "tree",
        "--out",
        &p("m.json"),
    ]);
    let held = out.lines().find(|l| l.contains("held-out")).unwrap();
    let auc: f64 = held.rsplit("AUC ").next().unwrap().trim().parse().unwrap();
    assert!(auc > 0.9, "the planted pattern is learnable: {held}");
    // The other trace, through the timing model, with and without the filter.
    let pf = |spec: &str| -> serde_json::Value {
        let o = p(&format!("r-{}", spec.len()));
        run(&[
            "replay",
            &p("test.csv"),
            "--machine",
            "xeon-2s",
            "--prefetch",
            spec,
            "--out",
            &o,
        ]);
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{o}/summary.json")).unwrap())
                .unwrap();
        s["prefetch"].clone()
    };
    let base = pf("delta:2");
    let learned = pf(&format!("learned:{}:delta:2", p("m.json")));
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
    assert!(f(&base, "accuracy") < 0.7, "{base}");
    assert!(f(&learned, "accuracy") > 0.95, "{learned}");
    assert!(
        f(&learned, "useful") >= 0.95 * f(&base, "useful"),
        "coverage kept"
    );
    assert!(f(&learned, "extra_bytes") < 0.7 * f(&base, "extra_bytes"));
    assert!(f(&learned, "predict_cost_ns") > 0.0 && f(&base, "predict_cost_ns") == 0.0);
    // A model trained on request-level features is refused.
    let request_model = format!("learned:{}", root("scenarios/models/seed-tree.json"));
    let o = numasim(&[
        "replay",
        &p("test.csv"),
        "--machine",
        "xeon-2s",
        "--prefetch",
        &request_model,
    ]);
    let err = one_line_error(&o);
    assert!(err.contains("not the prefetch filter's"), "{err}");
}

#[test]
fn l1_prefetches_of_l2_resident_lines_stay_on_chip_and_queues_bound_the_rest() {
    // 4 passes over 256 KiB (4096 lines; fits xeon-2s's L2, not its L1D),
    // one access per line, next-line into L1D. Only the first pass (and the
    // line after the end) may read memory: later prefetches copy L2 lines up.
    let recs: Vec<Record> = (0..4)
        .flat_map(|_| (0..4096u64).map(|i| Record::access(0, Kind::Load, 0x4000_0000 + i * 64, 8)))
        .collect();
    let s = run(&recs, Some("next-line:1"), 0);
    assert!(
        s.memory.reads <= 4096 + 1,
        "{} memory reads",
        s.memory.reads
    );
    let p = s.prefetch.unwrap();
    assert!(p.issued > 3 * 4096, "{p:?}");
    assert!(
        p.extra_bytes <= 64 * (4096 + 1),
        "on-chip copies cost no memory bytes: {p:?}"
    );
    // A one-entry prefetch queue on a DRAM-sized walk: most prefetches are
    // dropped, and what was issued and dropped never exceeds what was asked.
    let walk: Vec<Record> = (0..20_000u64)
        .map(|i| Record::access(0, Kind::Load, 0x4000_0000 + i * 64, 8).with_pc(0x401000))
        .collect();
    let cfg = |q| Config {
        prefetch_level: 1,
        prefetch_queue: q,
        ..Config::default()
    };
    let free = run_cfg(&walk, Some("stream:8:4"), cfg(None))
        .prefetch
        .unwrap();
    let one = run_cfg(&walk, Some("stream:8:4"), cfg(Some(1)))
        .prefetch
        .unwrap();
    assert_eq!(free.dropped, 0);
    assert!(
        one.dropped > 0 && one.issued < free.issued,
        "{one:?} vs {free:?}"
    );
    assert!(one.coverage < free.coverage, "{one:?} vs {free:?}");
    assert_eq!(one.useful + one.useless, one.issued);
}

#[test]
fn a_bad_load_trace_leaves_no_prefetch_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pf.txt");
    let bad = root("tests/bad/bad_field.mldpc");
    let o = numasim(&["trace", "prefetch", &bad, "--out", out.to_str().unwrap()]);
    let err = one_line_error(&o);
    assert!(
        err.contains("bad_field.mldpc") && err.contains("line 3, record 1"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn prefetchers_at_two_levels_report_separately() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("walk.csv");
    let mut csv = String::from("thread,op,addr,size,pc\n");
    for i in 0..20_000u64 {
        csv.push_str(&format!("0,L,{:#x},8,0x401000\n", 0x4000_0000 + i * 64));
    }
    std::fs::write(&trace, csv).unwrap();
    let out = dir.path().join("r");
    ok(&[
        "replay",
        trace.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--prefetch",
        "next-line:1@L1D",
        "--prefetch",
        "stream:8:4@1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let all = s["prefetchers"].as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        (all[0]["name"].as_str(), all[0]["level"].as_u64()),
        (Some("next-line:1"), Some(0))
    );
    assert_eq!(
        (all[1]["name"].as_str(), all[1]["level"].as_u64()),
        (Some("stream:8:4"), Some(1))
    );
    for p in all {
        assert!(p["useful"].as_u64().unwrap() > 10_000, "{p}");
        assert_eq!(
            p["useful"].as_u64().unwrap() + p["useless"].as_u64().unwrap(),
            p["issued"].as_u64().unwrap()
        );
    }
    assert_eq!(s["prefetch"], all[0], "the first one, as before");
    // A level the machine lacks is a one-line error naming the levels.
    let o = numasim(&[
        "replay",
        trace.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--prefetch",
        "next-line@L9",
    ]);
    let err = one_line_error(&o);
    assert!(err.contains("L1D") && err.contains("L2"), "{err}");
}

/// ns per load of dependent loads (one in flight) walking `lines` twice
/// over with `prefetch` at L1D on xeon-2s (LLC hit 20 ns), timed over the
/// second pass: the first brings the set into the LLC.
fn dependent_walk_ns(lines: &[u64], prefetch: &str) -> f64 {
    let m = Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let mut e = Engine::new(
        &m,
        Config {
            mlp: Some(1),
            ..Config::default()
        },
        policies::placement::PLACEMENTS
            .build("first-touch", &ctx)
            .unwrap(),
    )
    .unwrap();
    e.add_prefetcher(
        policies::prefetch::PREFETCHERS
            .build(prefetch, &ctx)
            .unwrap(),
        0,
    )
    .unwrap();
    let fields = Fields {
        pc: true,
        time: false,
    };
    let mut before = (0, 0);
    for pass in 0..2 {
        if pass == 1 {
            before = e.latency_totals();
        }
        for chunk in lines.chunks(4096) {
            let mut b = Batch::new(fields);
            for &l in chunk {
                b.push(Record::access(0, Kind::Load, 0x4000_0000 + l * 64, 8).with_pc(0x401000));
            }
            e.feed(&b).unwrap();
        }
        e.finish().unwrap();
    }
    let after = e.latency_totals();
    (after.1 - before.1) as f64 / 1000.0 / (after.0 - before.0) as f64
}

/// The stride table's limit on fills from the LLC (`f.LLC=N`) against
/// Little's law: a walk whose lines the LLC holds, prefetched 16 lines
/// ahead, runs at N lines per LLC latency once the fills, not the
/// lookahead, bound it — LLC / N per load when the N fills land evenly
/// spaced, up to (LLC + (N − 1) · L1) / N when they land together (the
/// N − 1 loads after the first of them pay an L1 hit each): on xeon-2s
/// (LLC 20 ns, L1 1.5 ns) 20, 10–10.75, 5–6.125 ns for N = 1, 2, 4, ranges
/// that no neighbouring N meets; inside L2 (5.2 ns) with its fills from
/// L2 limited (`f.L2=N`), 5.2 and 2.6–3.35 ns for N = 1, 2. With no limit
/// the lines are in L1 when loaded (under 2 ns). Within 1% (the walk's
/// first lines and its wraps, before the stride is confirmed again). A
/// walk of 2-line steps (the region streamer's near step) is not held to
/// the limit.
#[test]
fn fill_slots_bound_a_stride_walk_by_littles_law() {
    // 8 MiB (over L2's 1 MiB, inside the LLC's 32 MiB), a prime number of
    // lines so that a stride of 4 lines visits each once per pass.
    // A walk of stride 4 lines over `p` lines (a prime: each line once a
    // pass): with no limit under 2 ns a load; with N fills from `level`
    // (hit latency `lat`) within Little's law's range.
    let l1 = 1.5;
    let check = |p: u64, level: &str, lat: f64, limits: &[u32]| {
        let lines: Vec<u64> = (0..p).map(|k| k * 4 % p).collect();
        let free = dependent_walk_ns(&lines, "ip-stride-table:1=16:64=16");
        assert!(free < 2.0, "{level}, no limit: {free:.2} ns per load");
        for &n in limits {
            let spec = format!("ip-stride-table:f.{level}={n}:1=16:64=16");
            let ns = dependent_walk_ns(&lines, &spec);
            let lo = lat / n as f64;
            let hi = (lat + (n - 1) as f64 * l1) / n as f64;
            eprintln!("f.{level}={n}: {ns:.3} ns per load, Little's law {lo:.3}–{hi:.3}");
            assert!(
                ns >= 0.99 * lo && ns <= 1.01 * hi,
                "f.{level}={n}: {ns:.3} ns per load against {lo:.3}–{hi:.3}"
            );
        }
    };
    // 8 MiB (over L2's 1 MiB, inside the LLC's 32 MiB; LLC hit 20 ns).
    let p = 131_071u64;
    check(p, "LLC", 20.0, &[1, 2, 4]);
    // 512 KiB (over L1D's 32 KiB, inside L2; L2 hit 5.2 ns).
    check(8_191, "L2", 5.2, &[1, 2]);
    let two: Vec<u64> = (0..p).map(|k| k * 2 % p).collect();
    let (held, not) = (
        dependent_walk_ns(&two, "ip-stride-table:f.LLC=1:1=16:64=16"),
        dependent_walk_ns(&two, "ip-stride-table:1=16:64=16"),
    );
    assert_eq!(held, not, "2-line steps are the streamer's");
}

/// A fill limit names a cache level the machine has below its first (a
/// private level after L1D, or the LLC): `f.L3` on a machine without an
/// L3 is refused, in a prefetcher spec and in a machine file, naming it
/// (before, both ran as if no limit had been asked).
#[test]
fn a_fill_limit_from_a_level_the_machine_lacks_is_refused() {
    let m = Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let build = |s: &str| {
        policies::prefetch::PREFETCHERS
            .build(s, &ctx)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(build("ip-stride-table:f.L2=2:f.LLC=3:1=4"), Ok(()));
    for bad in ["ip-stride-table:f.L3=2:1=4", "ip-stride-table:f.L1D=2:1=4"] {
        let e = build(bad).unwrap_err();
        assert!(e.contains("names no cache level"), "{bad}: {e}");
    }
    let text = std::fs::read_to_string(root(
        "tests/fixtures/prefetch/xeon-onepc-vm-2026-12-05.toml",
    ))
    .unwrap();
    let mut spec = Machine::from_toml(&text).unwrap().spec;
    let fills = &mut spec.core.prefetch.as_mut().unwrap().fills;
    assert_eq!(fills.keys().collect::<Vec<_>>(), ["L2", "LLC"]);
    fills.insert("L3".to_string(), 2);
    let e = Machine::new(spec).unwrap_err().to_string();
    assert_eq!(
        e,
        "core.prefetch.fills.L3: the machine has no cache level L3 below its first (levels: L2, LLC)"
    );
}

/// ns per load of a dependent (one demand in flight) unit-stride walk of
/// `n` cold lines on xeon-2s, with `prefetchers` (SPEC, level index) and a
/// prefetch queue of `queue`, and that machine's memory latency (ns).
fn queued_walk(prefetchers: &[(&str, usize)], queue: Option<usize>, n: u64) -> (f64, f64) {
    let m = Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let mut e = Engine::new(
        &m,
        Config {
            mlp: Some(1),
            prefetch_queue: queue,
            ..Config::default()
        },
        policies::placement::PLACEMENTS
            .build("first-touch", &ctx)
            .unwrap(),
    )
    .unwrap();
    for &(spec, level) in prefetchers {
        e.add_prefetcher(
            policies::prefetch::PREFETCHERS.build(spec, &ctx).unwrap(),
            level,
        )
        .unwrap();
    }
    let recs: Vec<Record> = (0..n)
        .map(|i| Record::access(0, Kind::Load, 0x4000_0000 + i * 64, 8).with_pc(0x401000))
        .collect();
    feed_all(&mut e, &recs);
    let (loads, ps) = e.latency_totals();
    (
        ps as f64 / 1000.0 / loads as f64,
        m.spec.nodes[0].memory.as_ref().unwrap().latency_ns,
    )
}

/// The prefetch queue is the core's fill buffers: the fills of every
/// prefetcher it runs count against one limit. Two streamers at two levels
/// fetch different lines of a unit-stride walk over memory (L1D 1–16
/// lines ahead, L2 17–32); with a queue of Q, Little's law lets the core
/// bring at most Q prefetched lines and one demand line per memory
/// latency L, so a dependent walk costs at least L / (Q + 1) per load — a
/// queue for each prefetcher would let it run at L / (2Q + 1). (A
/// calibrated machine runs an L1D stride table and an L2 streamer: with a
/// queue each, its unit-stride walk outran the host's one-thread
/// bandwidth.)
#[test]
fn one_prefetch_queue_per_core_bounds_all_its_prefetchers() {
    let two = [("stream:16:1", 0), ("stream:16:17", 1)];
    let q = 4;
    let n = 20_000;
    let (ns, mem) = queued_walk(&two, Some(q), n);
    let floor = mem / (q + 1) as f64;
    assert!(
        ns >= 0.95 * floor,
        "{ns:.1} ns per load with a queue of {q}: under L/(Q+1) = {floor:.1} ns"
    );
    // The queue is what binds: without it the same two run far faster, and
    // one streamer covering both ranges with the same queue costs the same.
    let (free, _) = queued_walk(&two, None, n);
    assert!(free < 0.5 * floor, "no queue: {free:.1} ns per load");
    let (one, _) = queued_walk(&[("stream:32:1", 1)], Some(q), n);
    assert!(
        (ns - one).abs() <= 0.15 * one,
        "two streamers {ns:.1} ns, one {one:.1} ns per load"
    );
}
