//! The request model's timeline (`compare --timeline`, `bench --timeline`)
//! against the format and against the run: every slice has ts, dur, pid
//! and tid; slices on one track never overlap; the batches hold every
//! request of the run once (checked against `requests-<row>.csv`, the
//! per-request records); one sweep slice per background job; a window
//! bounds the file.

mod common;

use std::collections::{BTreeMap, HashSet};

fn load(p: &std::path::Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    v["traceEvents"].as_array().unwrap().clone()
}

#[test]
fn a_compare_rows_timeline_is_trace_event_json_that_matches_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (tl, out) = (dir.path().join("tl.json"), dir.path().join("out"));
    common::ok(&[
        "compare",
        &common::root("scenarios/seed-inference.toml"),
        "--seeds",
        "1",
        "--duration",
        "1.6s",
        "--out",
        out.to_str().unwrap(),
        "--timeline",
        tl.to_str().unwrap(),
        "--timeline-row",
        "numa_aware",
        "--timeline-window",
        "0..10s",
    ]);
    let ev = load(&tl);
    let mut tracks: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut in_batches = Vec::new();
    let mut sweeps = 0;
    for e in &ev {
        for k in ["ts", "pid", "tid", "ph", "name"] {
            assert!(!e[k].is_null(), "{k} missing: {e}");
        }
        if e["ph"] == "X" {
            let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
            assert!(dur >= 0.0, "{e}");
            tracks
                .entry((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
                .or_default()
                .push((ts, ts + dur));
            let name = e["name"].as_str().unwrap();
            if name.starts_with("batch of ") {
                let ids = e["args"]["requests"].as_array().unwrap();
                assert_eq!(format!("batch of {}", ids.len()), name);
                in_batches.extend(ids.iter().map(|x| x.as_u64().unwrap()));
            }
            if name.starts_with("background sweep") {
                sweeps += 1;
            }
        }
    }
    for (track, mut s) in tracks {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in s.windows(2) {
            assert!(
                w[1].0 >= w[0].1 - 1e-6,
                "track {track:?}: {:?} overlaps {:?}",
                w[0],
                w[1]
            );
        }
    }
    // The run's requests, from the per-request records of the same row and seed.
    let csv = std::fs::read_to_string(out.join("requests-numa_aware.csv")).unwrap();
    let ids: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    let set: HashSet<u64> = in_batches.iter().copied().collect();
    assert_eq!(set.len(), in_batches.len(), "each request in one batch");
    assert_eq!(
        set,
        ids.iter().copied().collect::<HashSet<_>>(),
        "the run's requests"
    );
    // A background job every 2500 arrivals.
    assert_eq!(sweeps, ids.len() / 2500, "{} requests", ids.len());
    assert!(
        ev.iter()
            .any(|e| e["ph"] == "C" && e["name"].as_str().unwrap().starts_with("memory GB/s"))
    );
    assert!(
        ev.iter()
            .any(|e| e["ph"] == "C" && e["name"].as_str().unwrap().starts_with("queued, worker"))
    );
    // A narrower window keeps fewer events: the file is bounded.
    let small = dir.path().join("small.json");
    common::ok(&[
        "bench",
        "--scenario",
        "static",
        "--duration",
        "1.6s",
        "--timeline",
        small.to_str().unwrap(),
        "--timeline-window",
        "0..200ms",
    ]);
    let few = load(&small);
    assert!(few.len() * 4 < ev.len(), "{} vs {}", few.len(), ev.len());
    assert!(
        few.iter()
            .filter(|e| e["ph"] == "X")
            .all(|e| e["ts"].as_f64().unwrap() < 200_000.0)
    );
}
