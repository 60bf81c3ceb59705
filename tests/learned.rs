//! Learned predictors through the binary: the committed model is what the
//! documented commands produce, datasets have their schema, training
//! reports held-out scores, and bad inputs are one-line errors.

mod common;

use common::{numasim, ok, one_line_error, root};

#[test]
fn the_committed_model_is_reproduced_by_the_documented_commands() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.csv");
    let model = dir.path().join("m.json");
    ok(&[
        "dataset",
        &root("scenarios/seed-inference.toml"),
        "--row",
        "numa_aware",
        "--seed",
        "101",
        "--out",
        data.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&data).unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with(
            "time_ns,id,remote_shard,outstanding,cached_share,hit_rate_0,read_mb_0,addr_delta_mb_0,"
        ),
        "{header}"
    );
    assert!(header.ends_with(",hit_rate_9,read_mb_9,addr_delta_mb_9,label"));
    let times: Vec<u64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        times.len() > 40_000 && times.windows(2).all(|w| w[0] <= w[1]),
        "rows in time order"
    );
    let o = ok(&[
        "train",
        data.to_str().unwrap(),
        "--model",
        "gbdt",
        "--out",
        model.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let held = out.lines().find(|l| l.contains("held-out")).unwrap();
    let auc: f64 = held.rsplit("AUC ").next().unwrap().trim().parse().unwrap();
    // The bar for a predictor worth its place (a constant one: 0.5).
    assert!(auc >= 0.75, "held-out AUC: {held}");
    assert_eq!(
        std::fs::read_to_string(&model).unwrap(),
        std::fs::read_to_string(root("scenarios/models/seed-gbdt.json")).unwrap(),
        "scenarios/models/seed-gbdt.json is what the documented commands produce"
    );
    // The sequence model, on the same rows (the documented command in
    // scenarios/predictor-kinds.toml).
    let lstm = dir.path().join("lstm.json");
    let o = ok(&[
        "train",
        data.to_str().unwrap(),
        "--model",
        "lstm",
        "--rounds",
        "20",
        "--out",
        lstm.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let held = out.lines().find(|l| l.contains("held-out")).unwrap();
    let auc: f64 = held.rsplit("AUC ").next().unwrap().trim().parse().unwrap();
    assert!(auc >= 0.75, "held-out AUC: {held}");
    assert_eq!(
        std::fs::read_to_string(&lstm).unwrap(),
        std::fs::read_to_string(root("scenarios/models/seed-lstm.json")).unwrap(),
        "scenarios/models/seed-lstm.json is what the documented commands produce"
    );
    // It runs as a learned preload: its calls are judged and charged.
    let out = dir.path().join("k");
    ok(&[
        "compare",
        &root("scenarios/predictor-kinds.toml"),
        "--rows",
        "lstm",
        "--duration",
        "1s",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    let row = &v["rows"][0];
    assert!(row["predict_auc"].as_f64().unwrap() > 0.5, "{row}");
    // 1 µs + 5 ns × (3 531 multiply-adds / 16 + 4 × 401 exponentials).
    assert!(
        (row["predict_cost_us"].as_f64().unwrap() - 10.12).abs() < 0.01,
        "{row}"
    );
}

#[test]
fn bench_ai_predict_runs_with_the_built_in_model_and_writes_the_monitoring_chart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let o = ok(&[
        "bench",
        "--scenario",
        "ai_predict",
        "--duration",
        "3s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("TP99"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let t = &summary["totals"];
    let win = t["windows"].as_array().unwrap();
    // Every counter is in exactly one window: the windows add up to the totals.
    let sum = |k: &str| win.iter().map(|w| w[k].as_u64().unwrap()).sum::<u64>();
    for (w, total) in [
        ("predictions_correct", "predictions_correct"),
        ("preload_items", "preload_items"),
        ("preload_item_hits", "preload_item_hits"),
        ("feature_hits", "feature_hits"),
        ("feature_misses", "feature_misses"),
        ("far_bytes", "far_bytes"),
    ] {
        assert_eq!(sum(w), t[total].as_u64().unwrap(), "{w}");
    }
    let node_bytes: u64 = t["node_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(sum("memory_bytes"), node_bytes);
    // Decisions not fallen back are judged once each.
    assert_eq!(
        sum("predictions_judged"),
        t["preload_decisions"].as_u64().unwrap() - t["preload_fallbacks"].as_u64().unwrap()
    );
    // monitor.csv: one line per second of the workload, accuracy = correct / judged.
    let csv = std::fs::read_to_string(out.join("monitor.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3, "{csv}");
    for (i, l) in lines[1..].iter().enumerate() {
        let c: Vec<&str> = l.split(',').collect();
        assert_eq!(c[1], i.to_string());
        let acc: f64 = c[5].parse().unwrap();
        let want = win[i]["predictions_correct"].as_f64().unwrap()
            / win[i]["predictions_judged"].as_f64().unwrap();
        assert!((acc - want).abs() < 1e-6, "second {i}: {acc} vs {want}");
        let gbps: f64 = c[8].parse().unwrap();
        assert!((gbps - win[i]["memory_bytes"].as_f64().unwrap() / 1e9).abs() < 1e-4);
    }
    assert!(
        std::fs::read_to_string(out.join("monitor.svg"))
            .unwrap()
            .contains("prediction accuracy (%)")
    );
}

#[test]
fn bad_training_data_and_models_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("d.csv");
    let mut rows = String::from("time_ns,a,label\n");
    for i in 0..20 {
        rows.push_str(&format!("{i},{},{}\n", i as f64 / 10.0, i % 2));
    }
    let cases = [
        (
            rows.replace("7,0.7,1", "7,zero,1"),
            "line 9, record 7: column \"a\" is not a finite number",
        ),
        (rows.replace("3,0.3,1", "3,0.3,2"), "label must be 0 or 1"),
        ("time_ns,a\n1,2\n".to_string(), "no label column"),
    ];
    for (text, want) in cases {
        std::fs::write(&csv, text).unwrap();
        let o = numasim(&[
            "train",
            csv.to_str().unwrap(),
            "--out",
            dir.path().join("m.json").to_str().unwrap(),
        ]);
        let err = one_line_error(&o);
        assert!(err.contains(want), "{err}");
        assert!(!dir.path().join("m.json").exists(), "no model left behind");
    }
    // An experiment naming a model that does not fit the request model's features.
    let model = dir.path().join("tiny.json");
    std::fs::write(&csv, &rows).unwrap();
    assert!(
        numasim(&[
            "train",
            csv.to_str().unwrap(),
            "--model",
            "tree",
            "--out",
            model.to_str().unwrap()
        ])
        .status
        .success()
    );
    let exp = std::fs::read_to_string(root("scenarios/seed-inference.toml"))
        .unwrap()
        .replace("models/seed-gbdt.json", model.to_str().unwrap());
    let f = dir.path().join("e.toml");
    std::fs::write(&f, exp).unwrap();
    let o = numasim(&[
        "compare",
        f.to_str().unwrap(),
        "--duration",
        "1s",
        "--seeds",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("not a set of the request model's decision features"),
        "{err}"
    );
}

#[test]
fn npy_datasets_hold_the_csv_values_and_train_identically() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, npy) = (dir.path().join("d.csv"), dir.path().join("d.npy"));
    for out in [&csv, &npy] {
        ok(&[
            "dataset",
            &root("scenarios/seed-inference.toml"),
            "--row",
            "numa_aware",
            "--duration",
            "2s",
            "--out",
            out.to_str().unwrap(),
        ]);
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cells: Vec<f64> = lines
        .flat_map(|l| l.split(',').map(|c| c.parse::<f64>().unwrap()))
        .collect();
    let rows = cells.len() / header.len();
    // The NumPy format, read by hand: magic, version 1.0, header dict, then
    // little-endian float64 in C order.
    let bytes = std::fs::read(&npy).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let dict = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(dict.contains("'descr': '<f8'"), "{dict}");
    assert!(dict.contains("'fortran_order': False"), "{dict}");
    assert!(
        dict.contains(&format!("'shape': ({rows}, {})", header.len())),
        "{dict}"
    );
    let data: Vec<f64> = bytes[10 + hlen..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(data, cells, "same values, same order");
    let names = std::fs::read_to_string(dir.path().join("d.columns.txt")).unwrap();
    assert_eq!(names.lines().collect::<Vec<_>>(), header);
    // Training from either gives the same model, byte for byte.
    let mut models = Vec::new();
    for (i, data) in [&csv, &npy].iter().enumerate() {
        let m = dir.path().join(format!("m{i}.json"));
        ok(&[
            "train",
            data.to_str().unwrap(),
            "--model",
            "tree",
            "--out",
            m.to_str().unwrap(),
        ]);
        models.push(std::fs::read_to_string(m).unwrap());
    }
    assert_eq!(models[0], models[1]);
    // A truncated .npy is a one-line error.
    std::fs::write(&npy, &bytes[..bytes.len() - 5]).unwrap();
    let o = numasim(&[
        "train",
        npy.to_str().unwrap(),
        "--out",
        dir.path().join("bad.json").to_str().unwrap(),
    ]);
    let err = one_line_error(&o);
    assert!(err.contains("d.npy"), "{err}");
    assert!(!dir.path().join("bad.json").exists());
}

#[test]
fn feature_sets_are_configurable_from_dataset_to_model_to_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    ok(&[
        "dataset",
        &root("scenarios/seed-inference.toml"),
        "--row",
        "numa_aware",
        "--duration",
        "2s",
        "--history",
        "3",
        "--features",
        "hit_rate,addr_delta_mb",
        "--out",
        &p("d.csv"),
    ]);
    let text = std::fs::read_to_string(p("d.csv")).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "time_ns,id,remote_shard,outstanding,hit_rate_0,addr_delta_mb_0,hit_rate_1,addr_delta_mb_1,hit_rate_2,addr_delta_mb_2,label"
    );
    ok(&[
        "train",
        &p("d.csv"),
        "--model",
        "tree",
        "--out",
        &p("m.json"),
    ]);
    // The model drives the ai_predict row: the engine computes its 8 features.
    let exp = std::fs::read_to_string(root("scenarios/seed-inference.toml"))
        .unwrap()
        .replace("models/seed-gbdt.json", &p("m.json"));
    std::fs::write(p("e.toml"), exp).unwrap();
    let o = ok(&["compare", &p("e.toml"), "--duration", "1s", "--seeds", "1"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("ai_predict"));
    // Recording a dataset under that row with other features is refused.
    let o = numasim(&[
        "dataset",
        &p("e.toml"),
        "--row",
        "ai_predict",
        "--out",
        &p("x.csv"),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("reads other features"), "{err}");
    // An unknown group is a one-line error.
    let o = numasim(&[
        "dataset",
        &root("scenarios/seed-inference.toml"),
        "--row",
        "numa_aware",
        "--features",
        "hit_rate,latency",
        "--out",
        &p("y.csv"),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown feature group \"latency\""), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// A new scenario's first dataset: its learned row names the model this
/// dataset is for, which does not exist yet. `dataset --row` builds only
/// the recorded row, so the documented commands work from scratch; the
/// learned row itself still refuses the missing model, by name.
#[test]
fn a_dataset_records_its_row_before_another_rows_model_exists() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root("scenarios/seed-article.toml")).unwrap();
    let exp = dir.path().join("e.toml");
    std::fs::write(&exp, text).unwrap();
    let data = dir.path().join("d.csv");
    ok(&[
        "dataset",
        exp.to_str().unwrap(),
        "--row",
        "numa_aware",
        "--duration",
        "1s",
        "--out",
        data.to_str().unwrap(),
    ]);
    let rows = std::fs::read_to_string(&data).unwrap().lines().count() - 1;
    assert!(rows > 4000, "1 s at 5000 QPS gives {rows} rows");
    let o = numasim(&[
        "dataset",
        exp.to_str().unwrap(),
        "--row",
        "ai_predict",
        "--out",
        data.to_str().unwrap(),
    ]);
    let e = one_line_error(&o);
    assert!(
        e.contains("row ai_predict") && e.contains("seed-article-gbdt.json"),
        "{e}"
    );
    // A problem outside the rows names the file's own line, not a line of
    // the text with one row kept.
    let bad = std::fs::read_to_string(root("scenarios/seed-article.toml"))
        .unwrap()
        .replace("qps = 5000.0", "qps = \"fast\"");
    let line = bad.lines().position(|l| l.contains("qps = ")).unwrap() + 1;
    std::fs::write(&exp, bad).unwrap();
    let e = one_line_error(&numasim(&[
        "dataset",
        exp.to_str().unwrap(),
        "--row",
        "numa_aware",
        "--out",
        data.to_str().unwrap(),
    ]));
    assert!(e.contains(&format!("line {line}")), "line {line}: {e}");
}
