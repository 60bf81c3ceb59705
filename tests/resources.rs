//! Resource guards: peak memory (RSS) of the trace commands does not grow
//! with the trace's length or its simulated duration. A trace of 10 M
//! records spread over one simulated hour is replayed (cache model and
//! timing model) and converted; each run's peak RSS must stay under the
//! stated bound, and within 1.5× of the same run on a tenth of the trace.
//! `compare` keeps a bounded, paired sample of request latencies: its peak
//! RSS over 60 simulated minutes must match that over 30.

mod common;

use common::{run_with_peak_rss, stdout};

/// The stated bounds (MiB): the cachegrind replay keeps three caches and a
/// decode window; the timing model on xeon-2s keeps 56 cores' caches, two
/// LLCs, the directory and at most `Config::max_buffered` queued records.
const REPLAY_MIB: u64 = 96;
const TIMING_MIB: u64 = 256;
const CONVERT_MIB: u64 = 96;
/// `compare` holds about `KEEP_PER_RUN` (2¹⁸) latencies per row × seed
/// (24 bytes each while a run lasts) and the first 2¹⁸ in sequence.
const COMPARE_MIB: u64 = 96;

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

#[test]
fn compare_memory_does_not_grow_with_simulated_time() {
    // The seed workload at 300 QPS, two rows, one seed: 540 000 and
    // 1 080 000 requests per row, both above the kept sample's size.
    let text =
        std::fs::read_to_string(common::root_dir().join("scenarios/seed-inference.toml")).unwrap();
    let head = text.split("[[row]]").next().unwrap();
    let head = head
        .replace("seeds = [1, 2, 3]", "seeds = [1]")
        .replace("qps = 5000.0", "qps = 300.0")
        .replace("bootstrap = 1000", "bootstrap = 200");
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("long.toml");
    std::fs::write(
        &exp,
        format!(
            "{head}[[row]]\nname = \"static\"\nscheduler = \"static\"\n\n[[row]]\nname = \"numa_aware\"\nscheduler = \"numa-weighted-ewma\"\n"
        ),
    )
    .unwrap();
    let exp = exp.to_str().unwrap();
    let peak = |d: &str| {
        let (status, err, kb) = run_with_peak_rss(&["compare", exp, "--duration", d]);
        assert!(status.success(), "{}", String::from_utf8_lossy(&err));
        kb / 1024
    };
    let (half, hour) = (peak("30m"), peak("60m"));
    eprintln!("compare: peak RSS {half} MiB (30 simulated minutes), {hour} MiB (60)");
    assert!(
        hour <= COMPARE_MIB,
        "{hour} MiB over the bound of {COMPARE_MIB} MiB"
    );
    assert!(
        hour as f64 <= 1.1 * half as f64 + 4.0,
        "compare grows with simulated time: {half} → {hour} MiB"
    );
}
