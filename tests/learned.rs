//! Learned predictors through the binary: the committed model is what the
//! documented commands produce, datasets have their schema, training
//! reports held-out scores, and bad inputs are one-line errors.

use std::path::PathBuf;
use std::process::Command;

fn numasim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_numasim"))
        .args(args)
        .output()
        .expect("numasim runs")
}

fn root(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

#[test]
fn the_committed_model_is_reproduced_by_the_documented_commands() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.csv");
    let model = dir.path().join("m.json");
    let o = numasim(&[
        "dataset",
        &root("scenarios/seed-inference.toml"),
        "--row",
        "numa_aware",
        "--seed",
        "101",
        "--out",
        data.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&data).unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        header.starts_with(
            "time_ns,id,remote_shard,outstanding,hit_rate_0,read_mb_0,addr_delta_mb_0,"
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
    let o = numasim(&[
        "train",
        data.to_str().unwrap(),
        "--model",
        "gbdt",
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let held = out.lines().find(|l| l.contains("held-out")).unwrap();
    let auc: f64 = held.rsplit("AUC ").next().unwrap().trim().parse().unwrap();
    assert!(
        auc > 0.6,
        "held-out AUC above a constant predictor's 0.5: {held}"
    );
    assert_eq!(
        std::fs::read_to_string(&model).unwrap(),
        std::fs::read_to_string(root("scenarios/models/seed-gbdt.json")).unwrap(),
        "scenarios/models/seed-gbdt.json is what the documented commands produce"
    );
}

#[test]
fn bench_ai_predict_runs_with_the_built_in_model() {
    let o = numasim(&["bench", "--scenario", "ai_predict", "--duration", "2s"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("TP99"));
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
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
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
    assert!(!o.status.success() && err.contains("do not match"), "{err}");
}
