//! Recorded request logs drive the request model: `[workload] arrivals =
//! { log = "FILE" }` gives exactly the log's requests, at its arrival
//! times relative to the first (hand-computed here, for a sample of each
//! public layout in `tests/data/logs/`), a key column picking the shard,
//! cut at the duration; logged tokens set a request's input bytes and
//! compute, Mooncake's `hash_ids` its feature lookups; `trace info` counts
//! a log; `--arrivals log:FILE` re-times a task trace; a bad log is a
//! one-line error naming the file and line.

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

/// A one-shard workload on the DGX preset with no compute noise, its
/// features on the far tier (`resident = 0`), replaying `log.jsonl`.
fn small_experiment(dir: &std::path::Path, log: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("log.jsonl"), log).unwrap();
    log_experiment(dir, "log.jsonl", 1)
}

/// That workload over `shards` shards, replaying the log at `log`.
fn log_experiment(dir: &std::path::Path, log: &str, shards: u32) -> std::path::PathBuf {
    let p = dir.join("exp.toml");
    std::fs::write(
        &p,
        r#"[experiment]
name = "tokens"
seeds = [1]

[workload]
name = "tokens"
machine = "dgx-a100-2numa"
duration_s = 10.0
qps = 1.0
arrivals = { log = "LOG" }
shards = { count = SHARDS, popularity_zipf = 0.0, weights_gb = 1.0, state_mb = 1.0 }
request = { tokens = 2048, token_bytes = 4, batch = 16, compute = { batch_ms = 2.0, per_request_ms = 0.5, per_input_token_ms = 0.0001, per_output_token_ms = 0.02, sigma = 0.0 }, features = { lookups = 32, item_kb = 64.0, items = 1000, resident = 0, zipf = 0.9 } }
cache = { items_per_node = 100 }
far_tier = { latency_ms = 8.0, bandwidth_gbps = 3.0 }

[[row]]
name = "static"
scheduler = "static"
"#
        .replace("LOG", log)
        .replace("SHARDS", &shards.to_string()),
    )
    .unwrap();
    p
}

/// `compare EXP --out DIR/o`; the output folder.
fn compare(exp: &std::path::Path, dir: &std::path::Path) -> std::path::PathBuf {
    let out = dir.join("o");
    common::ok(&[
        "compare",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

/// Column `name` of `requests-static.csv`, in request-id order.
fn column(out: &std::path::Path, name: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(out.join("requests-static.csv")).unwrap();
    let mut lines = text.lines();
    let h: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (id, c) = (
        h.iter().position(|c| *c == "id").unwrap(),
        h.iter().position(|c| *c == name).unwrap(),
    );
    let mut v: Vec<(u64, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[id].parse().unwrap(), f[c].parse().unwrap())
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, x)| x).collect()
}

/// `requests-static.csv` as (id, stall, compute, transfer) in ns, by id.
fn request_times(out: &std::path::Path) -> Vec<(u64, u64, u64, u64)> {
    let text = std::fs::read_to_string(out.join("requests-static.csv")).unwrap();
    let mut lines = text.lines();
    let h: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| h.iter().position(|c| *c == n).unwrap();
    let cols = [col("id"), col("stall"), col("compute"), col("transfer")];
    let mut v: Vec<_> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[cols[i]].parse::<u64>().unwrap();
            (n(0), n(1), n(2), n(3))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn logged_tokens_set_a_requests_input_bytes_and_compute() {
    let dir = tempfile::tempdir().unwrap();
    // No lookups (empty hash_ids), one request a second, so each runs
    // alone: its compute is batch_ms + per_request_ms + its tokens at the
    // per-token costs, its transfer its input (tokens × 4 bytes) over the
    // A100's 25 GB/s PCIe.
    let exp = small_experiment(
        dir.path(),
        "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 10, \"hash_ids\": []}\n\
         {\"timestamp\": 1000, \"input_length\": 3500, \"output_length\": 60, \"hash_ids\": []}\n\
         {\"timestamp\": 2000, \"input_length\": 0, \"output_length\": 0, \"hash_ids\": []}\n",
    );
    let out = compare(&exp, dir.path());
    let t = request_times(&out);
    // Within the model's resolution: a time is truncated to whole ns.
    let near = |got: u64, ms: f64| (got as f64 - ms * 1e6).abs() <= 1.0;
    // 2.0 + 0.5 + 1000 × 0.0001 + 10 × 0.02 = 2.8 ms; 4000 B / 25 GB/s = 160 ns.
    assert!(near(t[0].2, 2.8) && t[0].3 == 160, "{t:?}");
    // 2.5 + 0.35 + 1.2 = 4.05 ms; 14 000 B → 560 ns.
    assert!(near(t[1].2, 4.05) && t[1].3 == 560, "{t:?}");
    // No input: the model's least transfer, 1 ns.
    assert!(near(t[2].2, 2.5) && t[2].3 == 1, "{t:?}");
}

#[test]
fn mooncake_hash_ids_are_the_requests_feature_keys() {
    let dir = tempfile::tempdir().unwrap();
    // Features live on the far tier (8 ms away); a node's cache keeps what
    // it fetched. Block 46 maps to item 46, 1046 to item 1046 mod 1000 = 46.
    let exp = small_experiment(
        dir.path(),
        "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [46, 47, 48]}\n\
         {\"timestamp\": 1000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [46, 47, 48]}\n\
         {\"timestamp\": 2000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [46, 47, 900]}\n\
         {\"timestamp\": 3000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1046, 48]}\n",
    );
    let out = compare(&exp, dir.path());
    let stall: Vec<u64> = request_times(&out).iter().map(|r| r.1).collect();
    let far = 8_000_000;
    assert!(stall[0] >= far, "first sight of its blocks: {stall:?}");
    assert!(stall[1] < far / 8, "the same blocks, cached: {stall:?}");
    assert!(stall[2] >= far, "block 900 is new: {stall:?}");
    assert!(stall[3] < far / 8, "1046 is item 46, cached: {stall:?}");
}

/// Each public layout's sample in `tests/data/logs/` (written here in the
/// published layouts) through `compare`: exactly its requests, at the
/// arrivals computed by hand from its timestamps.
#[test]
fn each_layouts_sample_runs_at_its_hand_computed_arrivals() {
    let data = common::root_dir().join("tests/data/logs");
    let ms = 1_000_000u64;
    for (file, arrivals) in [
        // 18:15:46.6805900 is the first; 46.6849840 is 4.394 ms later, …
        (
            "azure-conv.csv",
            vec![
                0,
                4_394_000,
                23_223_000,
                74_405_000,
                319_520_000,
                319_520_100,
                819_410_000,
                1_442_866_700,
            ],
        ),
        // Whole seconds from 5 s.
        (
            "burstgpt.csv",
            vec![0, 0, 1000 * ms, 1000 * ms, 3000 * ms, 4000 * ms],
        ),
        // Milliseconds from 0.
        (
            "mooncake.jsonl",
            vec![0, 27 * ms, 27 * ms, 3084 * ms, 3085 * ms, 7800 * ms],
        ),
        (
            "plain.csv",
            vec![0, 1_500_000, 2_250_000, 10 * ms, 250 * ms],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let log = data.join(file);
        let exp = log_experiment(dir.path(), log.to_str().unwrap(), 8);
        let out = dir.path().join("o");
        common::ok(&[
            "compare",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(column(&out, "arrival"), arrivals, "{file}");
        let shard = column(&out, "shard");
        match file {
            // The key column, mod 8 shards.
            "plain.csv" => assert_eq!(shard, vec![3, 0, 7, 3, 1]),
            // Requests whose first block is the same share a shard.
            "mooncake.jsonl" => {
                assert!(shard[0] == shard[1] && shard[1] == shard[3], "{shard:?}");
                assert_eq!(shard[2], shard[5], "{shard:?}");
            }
            _ => {}
        }
        // `trace info` says the same count and span.
        let info = common::stdout(&["trace", "info", log.to_str().unwrap(), "--json"]);
        let v: serde_json::Value = serde_json::from_str(&info).unwrap();
        assert_eq!(v["requests"], arrivals.len(), "{file}");
        let span = *arrivals.last().unwrap() as f64 / 1e9;
        assert!(
            (v["span_s"].as_f64().unwrap() - span).abs() < 1e-12,
            "{file}"
        );
    }
}

#[test]
fn trace_info_of_a_log_counts_its_busiest_second() {
    let log = common::root("tests/data/logs/burstgpt.csv");
    let text = common::stdout(&["trace", "info", &log]);
    // 6 requests over 4 s; the busiest second (from the first arrival)
    // holds 2.
    for want in [
        "format:      burstgpt (request log)",
        "requests:    6",
        "span:        4.000 s",
        "mean QPS:    1.500",
        "peak QPS:    2 ",
        "tokens:      717.0 in, 186.3 out",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
}

/// `replay --workers --arrivals log:FILE`: task k arrives at the log's
/// request k, and takes its key.
#[test]
fn a_log_re_times_a_task_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    common::ok(&[
        "replay",
        &common::root("tests/data/two-tasks.csv"),
        "--machine",
        "xeon-2s",
        "--workers",
        "2",
        "--arrivals",
        &format!("log:{}", common::root("tests/data/logs/plain.csv")),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(out.join("tasks.csv")).unwrap();
    let mut lines = text.lines();
    let h: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| h.iter().position(|c| *c == n).unwrap();
    let rows: Vec<(String, String)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[col("arrival_ns")].to_string(), f[col("key")].to_string())
        })
        .collect();
    assert_eq!(
        rows,
        vec![("0".into(), "3".into()), ("1500000".into(), "0".into())]
    );
    // A log shorter than the trace is refused, naming both counts.
    let short = dir.path().join("short.csv");
    std::fs::write(&short, "arrival_s\n1\n").unwrap();
    let o = common::numasim(&[
        "replay",
        &common::root("tests/data/two-tasks.csv"),
        "--machine",
        "xeon-2s",
        "--workers",
        "2",
        "--arrivals",
        &format!("log:{}", short.display()),
    ]);
    let e = common::one_line_error(&o);
    assert!(
        e.contains("short.csv: the log has 1 requests and the trace 2 tasks"),
        "{e}"
    );
}

/// A task experiment's `workload.arrivals = "log:FILE"` (relative to the
/// experiment file) re-times its trace by the log, which the run notes
/// among its inputs; a log too short for the trace is a one-line error.
#[test]
fn a_task_experiment_takes_its_arrivals_from_a_log() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root_dir().join("tests/data/two-tasks.csv"),
        dir.path().join("t.csv"),
    )
    .unwrap();
    let exp = dir.path().join("e.toml");
    std::fs::write(
        &exp,
        "[experiment]\nname = \"x\"\nseeds = [1]\n\n[workload]\ntrace = \"t.csv\"\n\
         machine = \"xeon-2s\"\nworkers = \"2\"\narrivals = \"log:log.csv\"\n\n\
         [[row]]\nname = \"rr\"\nscheduler = \"round-robin\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("log.csv"), "arrival_ms,key\n0,5\n7.5,6\n").unwrap();
    let out = compare(&exp, dir.path());
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("request log") && manifest.contains("log.csv"),
        "{manifest}"
    );
    std::fs::write(dir.path().join("log.csv"), "arrival_ms\n0\n").unwrap();
    let e = common::one_line_error(&common::numasim(&["compare", exp.to_str().unwrap()]));
    assert!(
        e.contains("workload.arrivals ")
            && e.contains("log.csv: the log has 1 requests and the trace 2 tasks"),
        "{e}"
    );
}
