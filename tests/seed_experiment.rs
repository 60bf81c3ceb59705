//! The seed's experiment (scenarios/seed-inference.toml) through the binary:
//! it reproduces the article's shape from the model's mechanisms, the
//! summaries committed under `results/seed/` are exactly what the README's
//! command makes (`UPDATE_EXPECT=1` rewrites them), and its results are
//! byte-identical for a seed whatever the thread count.

mod common;

use std::path::PathBuf;

use common::{cmd, expect_file, numasim};

fn scenario() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/seed-inference.toml")
        .display()
        .to_string()
}

fn run_compare(out: &std::path::Path, extra: &[&str]) {
    let exp = scenario();
    let mut args = vec!["compare", exp.as_str(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = numasim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[derive(Debug)]
struct Row {
    name: String,
    tp50: f64,
    tp99: f64,
    ci_low: f64,
    ci_high: f64,
    bimodality: f64,
    spike_share: f64,
    first_after_move: f64,
    preload_gb: f64,
    auc: Option<f64>,
    upper_bound: bool,
}

fn rows(out: &std::path::Path) -> Vec<Row> {
    let text = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "row",
        "tp50_ms",
        "tp90_ms",
        "tp99_ms",
        "tp999_ms",
        "tp99_ci_low_ms",
        "tp99_ci_high_ms",
        "spike_share",
        "bubble_pct",
        "bandwidth_gbps",
        "predict_auc",
        "predict_precision",
        "predict_recall",
        "preload_gb",
        "upper_bound",
    ] {
        assert!(header.contains(&col), "compare.csv lacks {col}");
    }
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |c: &str| f[col(c)].parse::<f64>().unwrap();
            Row {
                name: f[0].to_string(),
                tp50: num("tp50_ms"),
                tp99: num("tp99_ms"),
                ci_low: num("tp99_ci_low_ms"),
                ci_high: num("tp99_ci_high_ms"),
                bimodality: num("bimodality"),
                spike_share: num("spike_share"),
                first_after_move: num("first_after_move_ms"),
                preload_gb: num("preload_gb"),
                auc: f[col("predict_auc")].parse::<f64>().ok(),
                upper_bound: f[col("upper_bound")] == "1",
            }
        })
        .collect()
}

#[test]
fn the_seed_experiment_has_the_articles_shape_and_its_committed_results() {
    // The README's command, as written (relative paths, from the root).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = cmd()
        .args(["compare", "scenarios/seed-inference.toml", "--out", out])
        .current_dir(common::root_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "compare.csv",
        "compare.json",
        "monitor.csv",
        "latency-histogram.svg",
        "latency-cdf.svg",
        "monitor.svg",
    ] {
        let text = std::fs::read_to_string(dir.path().join(f)).unwrap();
        expect_file(&format!("results/seed/{f}"), &text);
    }
    // The README's worked example is this command's output, line for line
    // (but for the two wall-clock lines).
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let readme = std::fs::read_to_string(common::root_dir().join("README.md")).unwrap();
    let prompt = "$ numasim compare scenarios/seed-inference.toml --out results/seed\n";
    let block = readme
        .split(prompt)
        .nth(1)
        .expect("README shows the command");
    let block = block.split("```").next().unwrap();
    let outs: Vec<&str> = stdout.lines().collect();
    let mut quoted = 0;
    for l in block.lines() {
        if l.starts_with("simulated ") || l.contains("real prediction time") {
            continue;
        }
        assert!(
            outs.contains(&l),
            "README.md quotes a line the command no longer prints:\n{l}\n--- the command prints:\n{stdout}"
        );
        quoted += 1;
    }
    assert!(quoted >= 12, "{quoted} lines");
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    // The working folder and the commit change with every checkout: the
    // committed manifest keeps them as placeholders (`reproduce` then runs
    // in the current folder).
    let mut m: serde_json::Value =
        serde_json::from_str(&manifest.replace(out, "results/seed")).unwrap();
    m["cwd"] = "$ROOT".into();
    m["git_commit"] = "$GIT_COMMIT".into();
    expect_file(
        "results/seed/manifest.json",
        &format!("{}\n", serde_json::to_string_pretty(&m).unwrap()),
    );
    let r = rows(dir.path());
    let get = |n: &str| {
        r.iter()
            .find(|x| x.name == n)
            .unwrap_or_else(|| panic!("row {n}"))
    };
    let (st, lb, na) = (get("static"), get("dynamic_lb"), get("numa_aware"));
    // Static: a long, bimodal tail, its spikes (> 3 × TP50) at least 1.5×
    // as frequent as NUMA-aware dispatch's.
    assert!(st.tp99 > 3.0 * st.tp50, "{st:?}");
    assert!(st.bimodality > 5.0 / 9.0, "{st:?}");
    assert!(st.spike_share > 1.5 * na.spike_share, "{st:?} {na:?}");
    // Dynamic LB lowers TP99; NUMA-aware lowers it further, with CIs that exclude zero.
    assert!(
        lb.tp99 < st.tp99 && na.tp99 < lb.tp99,
        "{st:?} {lb:?} {na:?}"
    );
    assert!(lb.ci_high < 0.0 && na.ci_high < 0.0, "{lb:?} {na:?}");
    for x in &r[1..] {
        assert!(
            x.ci_low < x.tp99 - st.tp99 && x.tp99 - st.tp99 < x.ci_high,
            "{x:?}"
        );
    }

    // TP50 nearly unchanged: within 10% of static's in every row without the move.
    for x in r.iter().filter(|x| !x.name.starts_with("move_")) {
        assert!(
            (x.tp50 - st.tp50).abs() / st.tp50 <= 0.10,
            "{x:?} vs {st:?}"
        );
    }
    // Warm-up turns the cold-start cliff into a small step.
    let (cold, warm) = (get("move_cold"), get("move_warm"));
    assert!(cold.first_after_move > 250.0, "{cold:?}");
    assert!(warm.first_after_move < 3.0 * warm.tp50, "{warm:?}");
    // The learned preload beside its baselines: its TP99 difference lies
    // below NUMA-aware dispatch's whole CI; in bytes preloaded the oracle
    // (flagged as an upper bound, and the only row flagged) ≤ learned ≤
    // always; only predicting rows are scored, and the oracle's calls rank
    // outcomes better than always's coin (AUC 0.5 by construction).
    let (ai, always, oracle) = (get("ai_predict"), get("always"), get("oracle"));
    assert!(ai.tp99 - st.tp99 < na.ci_low, "{ai:?} vs {na:?}");
    assert!(
        oracle.preload_gb <= ai.preload_gb && ai.preload_gb <= always.preload_gb,
        "{oracle:?} {ai:?} {always:?}"
    );
    assert!(ai.preload_gb > 0.0);
    for x in &r {
        assert_eq!(x.upper_bound, x.name == "oracle", "{x:?}");
        assert_eq!(x.auc.is_some(), x.preload_gb > 0.0, "{x:?}");
    }
    assert_eq!(always.auc, Some(0.5));
    assert!(oracle.auc.unwrap() > 0.7, "{oracle:?}");
    // The plots and per-request records are there.
    for f in [
        "latency-histogram.svg",
        "latency-cdf.svg",
        "requests-static.csv",
        "manifest.json",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let req = std::fs::read_to_string(dir.path().join("requests-static.csv")).unwrap();
    assert!(req.starts_with("id,shard,worker,node,arrival,start,end,queue,stall,compute,transfer"));
}

#[test]
fn same_seed_same_bytes_whatever_the_thread_count() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_compare(
        a.path(),
        &["--seeds", "3,4", "--duration", "2s", "--threads", "1"],
    );
    run_compare(
        b.path(),
        &["--seeds", "3,4", "--duration", "2s", "--threads", "2"],
    );
    for f in ["compare.json", "compare.csv", "requests-numa_aware.csv"] {
        assert_eq!(
            std::fs::read(a.path().join(f)).unwrap(),
            std::fs::read(b.path().join(f)).unwrap(),
            "{f}"
        );
    }
    // A different seed gives different results.
    let c = tempfile::tempdir().unwrap();
    run_compare(c.path(), &["--seeds", "5,4", "--duration", "2s"]);
    assert_ne!(
        std::fs::read(a.path().join("compare.json")).unwrap(),
        std::fs::read(c.path().join("compare.json")).unwrap()
    );
}

#[test]
fn bench_runs_a_row_and_explains_what_is_missing() {
    let o = numasim(&["bench", "--scenario", "dynamic_lb", "--duration", "1s"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("TP99") && out.contains("requests/s"), "{out}");
    // A short run keeps every latency: no sample to mention.
    assert!(!out.contains("sample"), "{out}");
    let o = numasim(&["bench", "--scenario", "turbo"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown --scenario") && err.contains("ai_predict"),
        "{err}"
    );
}

#[test]
fn bad_experiment_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Copies live elsewhere: point them at the repository's model file.
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/models/seed-gbdt.json");
    let good = std::fs::read_to_string(scenario())
        .unwrap()
        .replace("models/seed-gbdt.json", model.to_str().unwrap());
    let cases = [
        (
            good.replace("scheduler = \"least-loaded\"", "scheduler = \"fastest\""),
            "unknown scheduler \"fastest\"",
        ),
        (
            good.replace("qps = 5000.0", "qps = -1.0"),
            "qps must be positive",
        ),
        (
            good.replace("to_worker = 6", "to_worker = 60"),
            "worker 60 does not exist",
        ),
        (good.replace("[experiment]", "[experimnt]"), "unknown field"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("e{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let o = numasim(&[
            "compare",
            f.to_str().unwrap(),
            "--duration",
            "1s",
            "--seeds",
            "1",
        ]);
        assert!(!o.status.success(), "case {i}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "case {i}: {err}");
    }
}

/// Whether a run keeps request `id`'s latency for its statistics: the rule
/// of `src/experiment.rs` restated — a uniform sample of about 2^18
/// (`KEEP_PER_RUN`) of the requests the run can have, chosen by a hash of
/// the id (all of them when `share` ≥ 1).
fn kept(id: u64, share: f64) -> bool {
    if share >= 1.0 {
        return true;
    }
    let mut x = id ^ 0x5EED_5A4D_1E00_0000;
    let h = traces::workload::splitmix(&mut x);
    ((h >> 11) as f64 / (1u64 << 53) as f64) < share
}

/// (id, latency ns) of every line of a `requests.csv`.
fn latencies(path: &std::path::Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (id, arrival, end) = (col("id"), col("arrival"), col("end"));
    lines
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.parse().unwrap_or(0)).collect();
            (f[id], f[end] - f[arrival])
        })
        .collect()
}

/// The latencies (ns) of `recs` a run with `share` keeps, checked to be a
/// uniform sample of about `share` of them (within 5 standard deviations).
fn sample_of(recs: &[(u64, u64)], share: f64) -> Vec<u64> {
    let sample: Vec<u64> = recs
        .iter()
        .filter(|r| kept(r.0, share))
        .map(|r| r.1)
        .collect();
    let n = recs.len() as f64;
    let sd = (n * share * (1.0 - share)).sqrt();
    assert!(
        sample.len() < recs.len() && (sample.len() as f64 - n * share).abs() < 5.0 * sd,
        "{} of {} kept at share {share}",
        sample.len(),
        recs.len()
    );
    sample
}

#[test]
fn a_sampled_bench_states_the_requests_simulated_and_the_sample_size() {
    // 5000 QPS × 60 s: about 300 000 requests, above the 2^18 a run keeps.
    let dir = tempfile::tempdir().unwrap();
    let out = common::stdout(&[
        "bench",
        "--scenario",
        "static",
        "--duration",
        "60s",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let recs = latencies(&dir.path().join("requests.csv"));
    let sample = sample_of(&recs, (1u64 << 18) as f64 / (5000.0 * 60.0));
    let line = out.lines().find(|l| l.starts_with("requests ")).unwrap();
    assert!(
        line.starts_with(&format!("requests {}  TP50", recs.len())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "\nstatistics from a uniform sample of {} requests (of {} simulated",
            sample.len(),
            recs.len()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("\nsimulated {} requests in ", recs.len())),
        "{out}"
    );
    // The percentiles are the sample's; the max is over every request.
    let p = analysis::stats::percentiles(&sample);
    let max = recs.iter().map(|r| r.1).max().unwrap() as f64 / 1e6;
    for want in [
        format!("TP50 {:.1} ms", p.tp50),
        format!("TP99 {:.1}", p.tp99),
        format!("max {max:.1}"),
    ] {
        assert!(line.contains(&want), "{want:?} in {line}");
    }
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(s["requests_simulated"], recs.len());
    assert_eq!(s["totals"]["requests"], recs.len());
    assert_eq!(s["requests_in_sample"], sample.len());
    assert_eq!(s["percentiles"]["n"], sample.len());
    // Its mean and max are over every request.
    let mean = recs.iter().map(|r| r.1 as f64).sum::<f64>() / recs.len() as f64 / 1e6;
    let got = s["percentiles"]["mean_ms"].as_f64().unwrap();
    assert!((got - mean).abs() < 1e-9, "mean {got} vs {mean} ms");
    assert_eq!(s["percentiles"]["max_ms"], max);
    assert_eq!(s["sampled"], true);
}

#[test]
fn a_sampled_compare_states_the_requests_simulated_and_the_sample_size() {
    // 100 000 QPS × 3 s of cheap requests (no feature data): about 300 000
    // per row, above the 2^18 a run keeps.
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("sampled.toml");
    std::fs::write(
        &exp,
        r#"
[experiment]
name = "sampled"
seeds = [4]
bootstrap = 20

[workload]
name = "sampled"
machine = "dgx-a100-2numa"
duration_s = 3.0
qps = 100000.0
arrivals = { process = "poisson" }
shards = { count = 8, popularity_zipf = 0.0, weights_gb = 1.0, state_mb = 1.0 }
request = { tokens = 16, token_bytes = 4, batch = 16, compute = { batch_ms = 0.2, per_request_ms = 0.02, sigma = 0.3 }, features = { lookups = 0, item_kb = 1.0, items = 1, resident = 1, zipf = 0.0 } }
cache = { items_per_node = 16 }
far_tier = { latency_ms = 1.0, bandwidth_gbps = 1.0 }

[[row]]
name = "rr"
scheduler = "round-robin"

[[row]]
name = "lb"
scheduler = "least-loaded"
"#,
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = common::stdout(&[
        "compare",
        exp.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let share = (1u64 << 18) as f64 / (100_000.0 * 3.0);
    let cj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("compare.json")).unwrap())
            .unwrap();
    let csv = std::fs::read_to_string(out_dir.join("compare.csv")).unwrap();
    for (i, row) in ["rr", "lb"].iter().enumerate() {
        let recs = latencies(&out_dir.join(format!("requests-{row}.csv")));
        let sample = sample_of(&recs, share);
        assert!(
            out.contains(&format!(
                "× 1 seeds ({} requests simulated per row)",
                recs.len()
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "\n(statistics from a uniform sample of {} requests per row, of the {} simulated,",
                sample.len(),
                recs.len()
            )),
            "{out}"
        );
        assert_eq!(cj["requests_simulated_per_row"], recs.len());
        assert_eq!(cj["requests_in_sample_per_row"], sample.len());
        assert_eq!(cj["sampled"], true);
        assert_eq!(cj["rows"][i]["requests"], recs.len());
        assert_eq!(cj["rows"][i]["sampled_requests"], sample.len());
        // The row's TP99 is the sample's (compare.csv rounds to µs).
        let tp99 = analysis::stats::percentiles(&sample).tp99;
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{row},")))
            .unwrap();
        assert!(
            line.starts_with(&format!("{row},{},", recs.len())),
            "{line}"
        );
        let tp99_col = csv
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|h| h == "tp99_ms")
            .unwrap();
        let got: f64 = line.split(',').nth(tp99_col).unwrap().parse().unwrap();
        assert!((got - tp99).abs() < 0.0006, "{row}: TP99 {got} vs {tp99}");
    }
}

/// `docs/workload.md` quotes the seed experiment's results: its table, the
/// first request after the move and NUMA-aware dispatch's TP99 gain over
/// dynamic LB are those of `results/seed/compare.json` (unrounded), which
/// `the_seed_experiment_has_the_articles_shape_and_its_committed_results`
/// regenerates byte for byte.
#[test]
fn the_workload_page_quotes_the_committed_results() {
    let cj: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root_dir().join("results/seed/compare.json")).unwrap(),
    )
    .unwrap();
    let get = |row: &str, col: &str| -> f64 {
        let rows = cj["rows"].as_array().unwrap();
        let r = rows.iter().find(|r| r["row"] == row).unwrap();
        r[col].as_f64().unwrap()
    };
    let doc = std::fs::read_to_string(common::root_dir().join("docs/workload.md")).unwrap();
    let signed = |x: f64| format!("{x:+.1}").replace('+', "").replace('-', "−");
    for row in ["static", "dynamic_lb", "numa_aware"] {
        let ci = if row == "static" {
            "—".to_string()
        } else {
            format!(
                "{} [{}, {}]",
                signed(get(row, "tp99_diff_ms")),
                signed(get(row, "tp99_ci_low_ms")),
                signed(get(row, "tp99_ci_high_ms"))
            )
        };
        let want = format!(
            "| {row} | {:.1} | {:.1} | {:.1} | {ci} | {:.1} | {:.1} % | {:.2} |",
            get(row, "tp50_ms"),
            get(row, "tp90_ms"),
            get(row, "tp99_ms"),
            get(row, "tp999_ms"),
            100.0 * get(row, "spike_share"),
            get(row, "bimodality"),
        );
        assert!(
            doc.lines().any(|l| l == want),
            "docs/workload.md lacks the line\n{want}"
        );
    }
    let moves = format!(
        "First request after the shard move: {:.1} ms without warm-up, {:.1} ms with",
        get("move_cold", "first_after_move_ms"),
        get("move_warm", "first_after_move_ms")
    );
    assert!(doc.contains(&moves), "{moves}");
    let gain = get("dynamic_lb", "tp99_ms") - get("numa_aware", "tp99_ms");
    let gain = format!("it gains {gain:.1} ms.");
    assert!(doc.contains(&gain), "{gain}");
}
