//! Resource guards: peak memory (RSS) of the trace commands does not grow
//! with the trace's length or its simulated duration. A trace of 10 M
//! records spread over one simulated hour is replayed (cache model and
//! timing model) and converted; each run's peak RSS must stay under the
//! stated bound, and within 1.5× of the same run on a tenth of the trace.
//! (`compare` holds every request's latency for its paired statistics and
//! refuses runs too large to hold; see `tests/bad/config`.)

mod common;

use common::{run_with_peak_rss, stdout};

/// The stated bounds (MiB): the cachegrind replay keeps three caches and a
/// decode window; the timing model on xeon-2s keeps 56 cores' caches, two
/// LLCs, the directory and at most `Config::max_buffered` queued records.
const REPLAY_MIB: u64 = 96;
const TIMING_MIB: u64 = 256;
const CONVERT_MIB: u64 = 96;

fn trace(dir: &std::path::Path, n: u64) -> String {
    let p = dir.join(format!("t{n}.nst"));
    // Four threads, open loop: n / 4 records each over 3600 s.
    let rate = n as f64 / 4.0 / 3.6e9;
    stdout(&[
        "trace",
        "gen",
        "random",
        "-n",
        &n.to_string(),
        "--threads",
        "4",
        "--footprint",
        "64M",
        "--write-ratio",
        "0.2",
        "--rate",
        &format!("{rate:e}"),
        "-o",
        p.to_str().unwrap(),
    ]);
    p.display().to_string()
}

fn peak_mib(args: &[&str]) -> u64 {
    let (status, err, kb) = run_with_peak_rss(args);
    assert!(
        status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&err)
    );
    kb / 1024
}

#[test]
fn peak_memory_does_not_grow_with_trace_length_or_simulated_time() {
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (trace(dir.path(), 1_000_000), trace(dir.path(), 10_000_000));
    let out = |name: &str| dir.path().join(name).display().to_string();
    let cases: Vec<(&str, u64, Vec<String>)> = vec![
        ("replay", REPLAY_MIB, vec!["replay".into()]),
        (
            "replay --machine",
            TIMING_MIB,
            vec!["replay".into(), "--machine".into(), "xeon-2s".into()],
        ),
        (
            "trace convert",
            CONVERT_MIB,
            vec!["trace".into(), "convert".into()],
        ),
    ];
    for (name, bound, base) in cases {
        let run = |t: &str, tag: &str| {
            let mut a = base.clone();
            if name == "trace convert" {
                a.push(t.into());
                a.push(out(&format!("{tag}.nst.zst")));
            } else {
                a.insert(1, t.into());
            }
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            peak_mib(&refs)
        };
        let (s, l) = (run(&small, "s"), run(&large, "l"));
        eprintln!(
            "{name}: peak RSS {s} MiB (1 M records), {l} MiB (10 M records, one simulated hour)"
        );
        assert!(l <= bound, "{name}: {l} MiB over the bound of {bound} MiB");
        assert!(
            l as f64 <= 1.5 * s as f64 + 8.0,
            "{name}: grows with the trace: {s} → {l} MiB"
        );
    }
}
