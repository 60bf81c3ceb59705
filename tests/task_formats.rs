//! Task traces in both forms through the binary: the native form (format
//! version 2, task markers) and the CSV form hold the same trace, convert
//! into each other byte for byte, replay to the same `tasks.csv`, and a
//! plain consumer refuses the native form instead of replaying its markers
//! as loads.

mod common;

#[test]
fn native_and_csv_task_traces_convert_and_replay_identically() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let gen_args = |out: &str| {
        [
            "trace",
            "gen",
            "tasks",
            "-n",
            "300",
            "--background-every",
            "100",
            "--seed",
            "4",
            "-o",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.to_string()])
        .collect::<Vec<_>>()
    };
    for out in ["svc.csv", "svc.nst", "svc.nst.zst"] {
        let a = gen_args(&p(out));
        common::ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let csv = std::fs::read(p("svc.csv")).unwrap();
    let head = std::fs::read(p("svc.nst")).unwrap();
    assert_eq!(&head[0..8], b"NUMASIMT");
    assert_eq!(u16::from_le_bytes([head[8], head[9]]), 2, "version 2");
    // Native → CSV gives the generator's CSV byte for byte, from either codec.
    for from in ["svc.nst", "svc.nst.zst"] {
        let back = p(&format!("{from}.csv"));
        common::ok(&["trace", "convert", &p(from), &back]);
        assert_eq!(std::fs::read(&back).unwrap(), csv, "{from}");
    }
    // CSV → native gives the generator's native file (same metadata aside):
    // the records read back equal.
    common::ok(&["trace", "convert", &p("svc.csv"), &p("again.nst")]);
    common::ok(&["trace", "convert", &p("again.nst"), &p("again.csv")]);
    assert_eq!(std::fs::read(p("again.csv")).unwrap(), csv);
    // trace info reports the same tasks, keys and span for every form.
    let info = |f: &str| -> serde_json::Value {
        serde_json::from_str(&common::stdout(&["trace", "info", &p(f), "--json"])).unwrap()
    };
    let (c, n, z) = (info("svc.csv"), info("svc.nst"), info("svc.nst.zst"));
    assert_eq!(c["format"], "csv-tasks");
    assert_eq!(n["format"], "native-tasks");
    for k in ["tasks", "keys", "accesses", "arrival_ns"] {
        assert_eq!(c[k], n[k], "{k}");
        assert_eq!(c[k], z[k], "{k}");
    }
    assert_eq!(c["tasks"], 303, "300 requests and 3 background tasks");
    // Replays of both forms write the same tasks.csv.
    let replay = |f: &str, out: &str| {
        common::ok(&[
            "replay",
            &p(f),
            "--machine",
            "xeon-2s",
            "--workers",
            "4",
            "--scheduler",
            "least-loaded",
            "--out",
            &p(out),
        ]);
        std::fs::read(dir.path().join(out).join("tasks.csv")).unwrap()
    };
    assert_eq!(replay("svc.csv", "rc"), replay("svc.nst.zst", "rn"));
}

#[test]
fn plain_consumers_refuse_a_native_task_trace_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    common::ok(&["trace", "gen", "tasks", "-n", "20", "-o", &p("t.nst")]);
    // A plain replay would run the markers as loads: refused, naming the file.
    let e = common::one_line_error(&common::numasim(&[
        "replay",
        &p("t.nst"),
        "--machine",
        "xeon-2s",
    ]));
    assert!(
        e.contains("t.nst: byte offset 12")
            && e.contains("run it with replay --machine M --workers N"),
        "{e}"
    );
    // Lackey cannot hold markers; nothing is written.
    let e = common::one_line_error(&common::numasim(&[
        "trace",
        "convert",
        &p("t.nst"),
        &p("t.lackey"),
    ]));
    assert!(e.contains("no task markers"), "{e}");
    assert!(!dir.path().join("t.lackey").exists());
    // A plain native trace is not a task trace for replay --workers.
    common::ok(&[
        "trace",
        "gen",
        "sequential",
        "-n",
        "100",
        "-o",
        &p("plain.nst"),
    ]);
    let e = common::one_line_error(&common::numasim(&[
        "replay",
        &p("plain.nst"),
        "--machine",
        "xeon-2s",
        "--workers",
        "2",
    ]));
    assert!(e.contains("not a task trace"), "{e}");
    // A cut native task trace is caught with its offset.
    let bytes = std::fs::read(p("t.nst")).unwrap();
    std::fs::write(p("cut.nst"), &bytes[..bytes.len() - 30]).unwrap();
    let e = common::one_line_error(&common::numasim(&["trace", "info", &p("cut.nst")]));
    assert!(e.contains("cut.nst: byte offset"), "{e}");
}
