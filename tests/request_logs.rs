//! Recorded request logs drive the request model: `[workload] arrivals =
//! { log = "FILE" }` gives exactly the log's requests, at its arrival
//! times relative to the first (hand-computed here), a key column picking
//! the shard, cut at the duration; a bad log is a one-line error naming
//! the file and line. (Issue 28; the public formats' samples and the
//! `trace info` of a log are still to come.)

mod common;

fn experiment(dir: &std::path::Path, log: &str) -> std::path::PathBuf {
    let seed = std::fs::read_to_string(common::root_dir().join("scenarios/seed-inference.toml"))
        .unwrap()
        .replace(
            "arrivals = { process = \"poisson\" }",
            "arrivals = { log = \"log.csv\" }",
        )
        .replace("duration_s = 10.0", "duration_s = 1.0")
        .replace("seeds = [1, 2, 3]", "seeds = [1]");
    assert!(seed.contains("log.csv"));
    std::fs::write(dir.join("log.csv"), log).unwrap();
    let p = dir.join("exp.toml");
    std::fs::write(&p, seed).unwrap();
    p
}

#[test]
fn a_logged_workload_has_the_logs_requests_at_the_logs_times() {
    let dir = tempfile::tempdir().unwrap();
    // Five requests; the last arrives 1.495 s after the first, past the
    // 1 s duration, so four run.
    let exp = experiment(
        dir.path(),
        "arrival_ms,key\n5,0\n5.5,3\n7,1\n300,2\n1500,4\n",
    );
    let out = dir.path().join("o");
    common::ok(&[
        "compare",
        exp.to_str().unwrap(),
        "--rows",
        "static",
        "--out",
        out.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(out.join("requests-static.csv")).unwrap();
    let mut rows: Vec<(u64, u64, u64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<u64> = l.split(',').take(5).map(|x| x.parse().unwrap()).collect();
            (f[0], f[1], f[4])
        })
        .collect();
    rows.sort();
    // (id, shard = key mod 8 shards, arrival in ns since the first).
    assert_eq!(
        rows,
        vec![
            (0, 0, 0),
            (1, 3, 500_000),
            (2, 1, 2_000_000),
            (3, 2, 295_000_000)
        ]
    );
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("request log"), "the log is an input");
}

#[test]
fn a_bad_log_is_a_one_line_error_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(dir.path(), "arrival_s\n1\n0.5\n");
    let o = common::numasim(&["compare", exp.to_str().unwrap()]);
    let e = common::one_line_error(&o);
    assert!(
        e.contains("log.csv: line 3, record 1: arrival 0.500000000 s is before the previous request's 1.000000000 s"),
        "{e}"
    );
}
