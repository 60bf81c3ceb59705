//! Sampled replay (`replay --machine M --sample UNIT:PERIOD`) against the
//! full run of the same trace: measuring every record gives the full run's
//! numbers exactly; measuring a sample with functional warming gives
//! intervals that hold the full run's value; warming changes the answer
//! (cold caches miss more); the same seed repeats byte for byte.

mod common;

use common::stdout as ok;
use serde_json::Value;

/// `trace gen ARGS -o DIR/NAME`; the trace's path.
fn generate(dir: &std::path::Path, name: &str, args: &[&str]) -> String {
    let t = dir.join(name).display().to_string();
    ok(&[&["trace", "gen"], args, &["-o", &t]].concat());
    t
}

/// A 4-thread Zipf trace with sharing (20% stores) over `footprint`.
fn trace(dir: &std::path::Path, n: u64, footprint: &str) -> String {
    let n = n.to_string();
    let args = ["zipf", "-n", &n, "--threads", "4", "--footprint", footprint];
    generate(
        dir,
        "t.nst",
        &[&args[..], &["--write-ratio", "0.2"]].concat(),
    )
}

fn replay(trace: &str, extra: &[&str]) -> Value {
    common::xeon_replay(trace, extra)
}

/// The full run's LLC miss rate as `sampled` defines it: memory reads over
/// LLC lookups (LLC hits and memory reads).
fn llc_miss_rate(s: &Value) -> f64 {
    let served = |name: &str| -> f64 {
        s["served"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["level"] == name)
            .unwrap()["accesses"]
            .as_f64()
            .unwrap()
    };
    let mem = served("local memory") + served("remote memory");
    mem / (served("LLC") + mem)
}

fn metric(s: &Value, name: &str) -> (f64, f64, f64) {
    let m = &s["sampled"]["metrics"][name];
    let f = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{name}.{k}: {m}"));
    (f("estimate"), f("ci_low"), f("ci_high"))
}

/// Units of one record every record: nothing is warmed, every access is
/// measured, so the estimates are the full run's values and the plain
/// summary is the full run's, field for field.
#[test]
fn measuring_every_record_is_the_full_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 4000, "8M");
    let full = replay(&t, &[]);
    let mut s = replay(&t, &["--sample", "1:1:0"]);
    let mean = full["latency_ns"]["mean"].as_f64().unwrap();
    let (e, ..) = metric(&s, "latency_mean_ns");
    assert!((e - mean).abs() < 1e-9 * mean, "{e} vs {mean}");
    let (e, ..) = metric(&s, "llc_miss_rate");
    assert!((e - llc_miss_rate(&full)).abs() < 1e-12);
    let inv = full["coherence"]["invalidations"].as_f64().unwrap() * 1000.0
        / full["accesses"].as_f64().unwrap();
    let (e, ..) = metric(&s, "invalidations_per_1k");
    assert!((e - inv).abs() < 1e-9 * inv.max(1.0), "{e} vs {inv}");
    assert_eq!(s["sampled"]["units"], 4000);
    assert_eq!(s["sampled"]["warmed"], 0);
    s.as_object_mut().unwrap().remove("sampled");
    assert_eq!(s, full);
}

/// Units of 250 records every 5 000, every other record warmed
/// functionally: over five placements of the units, the full run's mean
/// latency and LLC miss rate lie inside the 99.7% intervals, which are
/// narrow (within ±15% of the estimate).
#[test]
fn intervals_hold_the_full_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 100_000, "8M");
    let full = replay(&t, &[]);
    let truth = [
        (
            "latency_mean_ns",
            full["latency_ns"]["mean"].as_f64().unwrap(),
        ),
        ("llc_miss_rate", llc_miss_rate(&full)),
    ];
    let mut offsets = std::collections::BTreeSet::new();
    for seed in 0..5 {
        let seed = seed.to_string();
        let s = replay(&t, &["--sample", "250:5000", "--sample-seed", &seed]);
        assert_eq!(s["sampled"]["units"], 20, "{}", s["sampled"]);
        assert_eq!(s["sampled"]["measured"], 5000);
        offsets.insert(s["sampled"]["offset"].as_u64().unwrap());
        for (name, v) in truth {
            let (e, lo, hi) = metric(&s, name);
            assert!(
                lo <= v && v <= hi,
                "seed {seed}: {name} {v} outside [{lo}, {hi}] (estimate {e})"
            );
            assert!(
                hi - lo < 0.3 * e,
                "seed {seed}: {name} interval [{lo}, {hi}] is not narrow"
            );
        }
    }
    assert_eq!(offsets.len(), 5, "seeds place the units apart: {offsets:?}");
}

/// Without functional warming (0 records before each warm-up) the caches
/// are colder at each unit: over a 1 MiB footprint that the warmed L2s
/// hold, the L2 hit rate is less than half the warmed run's and the mean
/// latency higher. The same seed gives the same bytes.
#[test]
fn warming_matters_and_runs_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 100_000, "1M");
    let warmed = replay(&t, &["--sample", "250:5000:500"]);
    let cold = replay(&t, &["--sample", "250:5000:500:0"]);
    assert_eq!(cold["sampled"]["warmed"], 0);
    assert!(cold["sampled"]["skipped"].as_u64().unwrap() > 80_000);
    let (w, ..) = metric(&warmed, "hit_rate_L2");
    let (c, ..) = metric(&cold, "hit_rate_L2");
    assert!(c < 0.5 * w, "L2 hit rate: cold {c} vs warmed {w}");
    let (w, ..) = metric(&warmed, "latency_mean_ns");
    let (c, ..) = metric(&cold, "latency_mean_ns");
    assert!(c > w, "mean latency: cold {c} vs warmed {w}");
    assert_eq!(warmed, replay(&t, &["--sample", "250:5000:500"]));
}

/// A warmed run's plain summary counts the accesses simulated in detail,
/// no more, and the warmed records make up the rest of the trace.
#[test]
fn warmed_runs_count_their_detail() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 100_000, "8M");
    for seed in ["0", "1"] {
        let s = replay(&t, &["--sample", "250:5000", "--sample-seed", seed]);
        assert_eq!(s["accesses"], s["sampled"]["detailed"]);
        let warmed = s["sampled"]["warmed"].as_u64().unwrap();
        assert_eq!(warmed + s["accesses"].as_u64().unwrap(), 100_000);
    }
}

/// With a stream prefetcher (8 threads streaming, `stream:8:1@L2`, whose
/// fills are nearly all late, so the mean latency hangs on their timing):
/// measuring every record is the full run, prefetch counts included; over
/// five placements of 250-record units every 5 000 records (the default
/// warm-up with prefetchers, 2 000 records less each unit's cut) the full
/// run's mean latency lies inside the 99.7% interval; and the prefetch
/// counts are the detailed phases' only (about 35% of the records here;
/// with the warmed records they would be the full run's), with every
/// line issued in detail used or useless (`useful + useless = issued`).
#[test]
fn prefetchers_are_warmed_and_held() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sequential",
        "-n",
        "100000",
        "--threads",
        "8",
        "--footprint",
        "16M",
    ];
    let t = generate(dir.path(), "seq.nst", &args);
    let pf = ["--prefetch", "stream:8:1@L2"];
    let full = replay(&t, &pf);
    let mean = full["latency_ns"]["mean"].as_f64().unwrap();
    let issued = |s: &Value| s["prefetch"]["issued"].as_f64().unwrap();
    let mut every = replay(&t, &[&pf[..], &["--sample", "1:1:0"]].concat());
    every.as_object_mut().unwrap().remove("sampled");
    assert_eq!(every, full);
    for seed in 0..5 {
        let seed = seed.to_string();
        let s = replay(
            &t,
            &[&pf[..], &["--sample", "250:5000", "--sample-seed", &seed]].concat(),
        );
        assert_eq!(s["sampled"]["warm"], 2000);
        // The prefetcher serves every measured demand from L2: no LLC
        // lookup in any unit, so no LLC ratio (not a rate of 0).
        assert_eq!(
            s["sampled"]["not_estimated"],
            serde_json::json!(["hit_rate_LLC", "llc_miss_rate"])
        );
        assert!(s["sampled"]["metrics"].get("llc_miss_rate").is_none());
        let (e, lo, hi) = metric(&s, "latency_mean_ns");
        assert!(
            lo <= mean && mean <= hi,
            "seed {seed}: mean latency {mean} outside [{lo}, {hi}] (estimate {e})"
        );
        let count = |k: &str| s["prefetch"][k].as_u64().unwrap();
        assert_eq!(
            count("useful") + count("useless"),
            count("issued"),
            "seed {seed}"
        );
        let detailed = s["sampled"]["detailed"].as_f64().unwrap() / 100_000.0;
        assert!(
            issued(&s) < 1.5 * detailed * issued(&full),
            "seed {seed}: {} prefetches issued in {detailed} of the records, {} in all",
            issued(&s),
            issued(&full)
        );
    }
}

/// A channel at saturation is named: 16 Zipf threads on epyc-4numa with a
/// next-line prefetcher keep node 3's channel 1 over 99% busy in the
/// detailed phases (the plain summary's utilization, which the warning
/// repeats); without the prefetcher no queue reaches 99% and none is named.
#[test]
fn saturated_queues_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "zipf",
        "-n",
        "200000",
        "--threads",
        "16",
        "--footprint",
        "64M",
    ];
    let more = ["--write-ratio", "0.2", "--zipf-s", "0.9"];
    let t = generate(dir.path(), "z.nst", &[&args[..], &more[..]].concat());
    let run = |extra: &[&str]| -> Value {
        let mut args = vec!["replay", &t, "--machine", "epyc-4numa", "--pin", "spread"];
        args.extend_from_slice(&["--sample", "1000:10000", "--json"]);
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&args)).unwrap()
    };
    let s = run(&["--prefetch", "next-line@L1D"]);
    let named = s["sampled"]["saturated"]
        .as_array()
        .expect("a saturated queue");
    assert!(!named.is_empty());
    for b in named {
        let u = b["utilization"].as_f64().unwrap();
        assert!(u >= 0.99, "{b}");
        let q = b["queue"].as_str().unwrap();
        let same = s["memory"]["channels"].as_array().unwrap().iter().any(|c| {
            format!("node {} channel {}", c["node"], c["channel"]) == q
                && c["utilization"].as_f64() == Some(u)
        });
        assert!(
            same,
            "{q} at {u} is a channel of the summary at that utilization"
        );
    }
    assert!(
        named.iter().any(|b| b["queue"] == "node 3 channel 1"),
        "{named:?}"
    );
    let plain = run(&[]);
    assert!(
        plain["sampled"].get("saturated").is_none(),
        "{}",
        plain["sampled"]
    );
}
