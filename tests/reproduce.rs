//! `numasim reproduce DIR`: the manifest records what a run read (with
//! checksums) and how it was called; rerunning from it gives the same bytes,
//! and a changed input is named with its old and new checksum.

mod common;

use std::path::Path;

fn reproduce(dir: &Path) -> std::process::Output {
    common::numasim(&["reproduce", dir.to_str().unwrap()])
}

#[test]
fn a_replay_reproduces_and_a_changed_trace_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).display().to_string();
    common::ok(&[
        "trace",
        "gen",
        "random",
        "-n",
        "20000",
        "--seed",
        "1",
        "-o",
        &p("t.nst"),
    ]);
    common::ok(&[
        "replay",
        &p("t.nst"),
        "--machine",
        "xeon-2s",
        "--out",
        &p("run"),
    ]);
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("run/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["arguments"][0], "replay");
    assert!(m["cwd"].as_str().is_some_and(|c| !c.is_empty()));
    let roles: Vec<&str> = m["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.contains(&"trace") && roles.contains(&"machine"),
        "{roles:?}"
    );
    let o = reproduce(&tmp.path().join("run"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("identical: "));
    // The inputs are checked too: the trace's checksum now (the file read
    // in pieces) is the one the replay recorded while decoding it.
    assert!(!String::from_utf8_lossy(&o.stderr).contains("input changed"));
    // Another trace under the same name: the outputs differ and the input is named.
    common::ok(&[
        "trace",
        "gen",
        "random",
        "-n",
        "20000",
        "--seed",
        "2",
        "-o",
        &p("t.nst"),
    ]);
    let e = common::one_line_error(&reproduce(&tmp.path().join("run")));
    assert!(e.contains("not reproduced: summary.json differs"), "{e}");
    assert!(
        e.contains(&format!(
            "changed input: trace {}: checksum xxh3-128:",
            p("t.nst")
        )) && e.contains(" is now xxh3-128:"),
        "{e}"
    );
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().all(|f| !f
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("reproduce")),
        "the temporary rerun is removed"
    );
}

#[test]
fn a_compare_and_a_sweep_reproduce_and_a_changed_experiment_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("e.toml");
    let text = std::fs::read_to_string(common::root("scenarios/seed-inference.toml"))
        .unwrap()
        .replace("duration_s = 10.0", "duration_s = 0.5")
        .replace(
            "models/seed-gbdt.json",
            &common::root("scenarios/models/seed-gbdt.json"),
        );
    std::fs::write(&exp, &text).unwrap();
    let out = tmp.path().join("cmp");
    common::ok(&[
        "compare",
        exp.to_str().unwrap(),
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let m = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        m.contains("\"role\": \"model\"") && m.contains("seed-gbdt.json"),
        "{m}"
    );
    let kept = tmp.path().join("again");
    let o = common::numasim(&[
        "reproduce",
        out.to_str().unwrap(),
        "--out",
        kept.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read(kept.join("compare.csv")).unwrap(),
        std::fs::read(out.join("compare.csv")).unwrap(),
        "--out keeps the rerun"
    );
    std::fs::write(&exp, text.replace("qps = 5000.0", "qps = 4000.0")).unwrap();
    let e = common::one_line_error(&reproduce(&out));
    assert!(e.contains("not reproduced: compare.csv differs"), "{e}");
    assert!(
        e.contains(&format!("changed input: experiment {}", exp.display())),
        "{e}"
    );
    // A sweep folder reproduces point by point.
    std::fs::write(&exp, &text).unwrap();
    let s = tmp.path().join("s.toml");
    std::fs::write(
        &s,
        "[sweep]\nexperiment = \"e.toml\"\nrows = [\"static\", \"dynamic_lb\"]\n[grid]\n\"workload.qps\" = [3000.0, 4000.0]\n",
    )
    .unwrap();
    let sw = tmp.path().join("sw");
    common::ok(&["sweep", s.to_str().unwrap(), "--out", sw.to_str().unwrap()]);
    let o = reproduce(&sw);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `bench` reads the built-in scenario's model from numasim itself: its
/// manifest names it as a built-in (once a temporary copy under a path
/// with the process id, which `reproduce` then reported gone), and the run
/// reproduces.
#[test]
fn a_bench_with_the_built_in_model_reproduces() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("b");
    common::ok(&[
        "bench",
        "--scenario",
        "ai_predict",
        "--duration",
        "0.3s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let inputs = m["inputs"].as_array().unwrap();
    assert!(
        inputs
            .iter()
            .any(|i| i["role"] == "model" && i["preset"] == "seed-gbdt"),
        "{inputs:?}"
    );
    assert!(inputs.iter().all(|i| i["path"].is_null()), "{inputs:?}");
    let o = common::ok(&["reproduce", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("identical:"));
}
