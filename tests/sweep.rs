//! `numasim sweep`: a grid over an experiment equals `compare` run with the
//! same overrides point by point (the oracle is `compare --qps
//! --duration`, which overrides without the sweep's TOML editing), is
//! independent of how many points run at once, resumes after an
//! interruption without rerunning finished points, and writes Slurm job
//! scripts. The run on a real one-node Slurm cluster is
//! `ci/slurm-sweep.sh` (run by `.ci/run`).

mod common;

use std::path::Path;

fn sweep_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        format!(
            "[sweep]\nexperiment = \"{}\"\nrows = [\"static\", \"numa_aware\"]\n\n[grid]\n\"workload.qps\" = [3000.0, 5000.0]\n\"workload.duration_s\" = [0.5, 0.8]\n",
            common::root("scenarios/seed-inference.toml")
        ),
    )
    .unwrap();
    p
}

fn csv_lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_sweep_point_equals_compare_with_the_same_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let s = sweep_file(dir.path());
    let out = dir.path().join("out");
    common::ok(&["sweep", s.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let merged = csv_lines(&out.join("sweep.csv"));
    assert!(
        merged[0].starts_with("workload.qps,workload.duration_s,row,requests,tp50_ms,"),
        "{}",
        merged[0]
    );
    assert_eq!(merged.len(), 1 + 4 * 2, "4 points × 2 rows");
    // The grid's product order: qps slowest, duration fastest.
    for (i, (qps, dur)) in [
        ("3000", "0.5"),
        ("3000", "0.8"),
        ("5000", "0.5"),
        ("5000", "0.8"),
    ]
    .iter()
    .enumerate()
    {
        let c = dir.path().join(format!("c{i}"));
        common::ok(&[
            "compare",
            &common::root("scenarios/seed-inference.toml"),
            "--qps",
            qps,
            "--duration",
            &format!("{dur}s"),
            "--out",
            c.to_str().unwrap(),
        ]);
        let want = csv_lines(&c.join("compare.csv"));
        for (k, row) in ["static", "numa_aware"].iter().enumerate() {
            let line = want
                .iter()
                .find(|l| l.starts_with(&format!("{row},")))
                .unwrap();
            assert_eq!(
                merged[1 + 2 * i + k],
                format!("{qps}.0,{dur},{line}"),
                "point {i} row {row}"
            );
        }
    }
    // sweep.json holds the same points, with their values.
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(j["points"].as_array().unwrap().len(), 4);
    assert_eq!(j["points"][3]["values"]["workload.qps"], "5000.0");
}

#[test]
fn sweeps_resume_and_do_not_depend_on_parallelism() {
    let dir = tempfile::tempdir().unwrap();
    let s = sweep_file(dir.path());
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    common::ok(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        one.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    common::ok(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        two.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    let full = std::fs::read(one.join("sweep.csv")).unwrap();
    assert_eq!(full, std::fs::read(two.join("sweep.csv")).unwrap());
    // Interrupt: one point lost, one half-written leftover.
    std::fs::remove_dir_all(two.join("points/2")).unwrap();
    std::fs::create_dir_all(two.join("points/.2.partial-999")).unwrap();
    let stamp = std::fs::metadata(two.join("points/0/compare.csv"))
        .unwrap()
        .modified()
        .unwrap();
    let o = common::ok(&["sweep", s.to_str().unwrap(), "--out", two.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("3 of 4 points already done, 1 to run"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(two.join("points/0/compare.csv"))
            .unwrap()
            .modified()
            .unwrap(),
        stamp,
        "a finished point is not rerun"
    );
    assert_eq!(std::fs::read(two.join("sweep.csv")).unwrap(), full);
    // Merge names what is missing and merges the rest.
    std::fs::remove_dir_all(two.join("points/1")).unwrap();
    let o = common::ok(&["sweep", "merge", two.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("merged 3 of 4 points") && err.contains("missing (not finished): [1]"),
        "{err}"
    );
    assert_eq!(csv_lines(&two.join("sweep.csv")).len(), 1 + 3 * 2);
    // One point, as an array task runs it, then the merge: the full table again.
    common::ok(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        two.to_str().unwrap(),
        "--point",
        "1",
    ]);
    common::ok(&["sweep", "merge", two.to_str().unwrap()]);
    assert_eq!(std::fs::read(two.join("sweep.csv")).unwrap(), full);
}

/// Points running in parallel in one process keep their inputs apart: a
/// grid over two machines, run on two threads, gives each point's
/// manifest the one machine that point read (a process-wide list once gave
/// every point both), and the sweep's own manifest both. A point's
/// manifest records the `compare --rows --set` that runs it alone, so
/// `reproduce` of one point reruns just it: identical.
#[test]
fn parallel_points_record_only_their_own_inputs_and_reproduce_alone() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("m.toml");
    std::fs::write(
        &s,
        format!(
            "[sweep]\nexperiment = \"{}\"\nrows = [\"static\", \"numa_aware\"]\n\n[grid]\n\"workload.machine\" = [\"dgx-a100-2numa\", \"xeon-2s\"]\n\"workload.qps\" = [3000.0, 4000.0]\n\"workload.duration_s\" = [0.3]\n",
            common::root("scenarios/seed-inference.toml")
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    common::ok(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    let presets = |m: &serde_json::Value| -> Vec<String> {
        m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["preset"].as_str().map(String::from))
            .collect()
    };
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    for (i, machine) in ["dgx-a100-2numa", "dgx-a100-2numa", "xeon-2s", "xeon-2s"]
        .iter()
        .enumerate()
    {
        let m = read(&out.join(format!("points/{i}/manifest.json")));
        assert_eq!(presets(&m), vec![machine.to_string()], "point {i}");
        let args: Vec<&str> = m["arguments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(args[0], "compare", "point {i}: {args:?}");
        assert!(
            args.windows(2)
                .any(|w| w[0] == "--set" && w[1] == format!("workload.machine=\"{machine}\"")),
            "point {i}: {args:?}"
        );
    }
    let all = read(&out.join("manifest.json"));
    assert_eq!(presets(&all), vec!["dgx-a100-2numa", "xeon-2s"]);
    assert!(
        all["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["role"] == "sweep")
    );
    for i in [0, 3] {
        let o = common::ok(&[
            "reproduce",
            out.join(format!("points/{i}")).to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.starts_with("identical:"), "point {i}: {text}");
    }
}

#[test]
fn slurm_scripts_are_an_array_of_points_and_a_dependent_merge() {
    let dir = tempfile::tempdir().unwrap();
    let s = sweep_file(dir.path());
    let out = dir.path().join("out");
    common::ok(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--slurm",
        "--array-limit",
        "2",
        "--sbatch-option=--time=00:10:00",
        "--dry-run",
    ]);
    let array = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    assert!(array.contains("#SBATCH --array=0-3%2\n"), "{array}");
    assert!(array.contains("#SBATCH --time=00:10:00\n"), "{array}");
    assert!(
        array.contains("--point \"$SLURM_ARRAY_TASK_ID\""),
        "{array}"
    );
    let merge = std::fs::read_to_string(out.join("merge.sbatch")).unwrap();
    assert!(merge.contains(" sweep merge "), "{merge}");
    assert!(!out.join("points/0").exists(), "a dry run runs nothing");
    // A point out of range, and a sweep without --out: one line each.
    let e = common::one_line_error(&common::numasim(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--point",
        "4",
    ]));
    assert!(e.contains("--point 4: the sweep has 4 points"), "{e}");
    let e = common::one_line_error(&common::numasim(&["sweep", s.to_str().unwrap()]));
    assert!(e.contains("--out DIR"), "{e}");
}
