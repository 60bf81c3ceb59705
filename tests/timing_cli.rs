//! The timing model through the binary: machine presets, replay outputs,
//! the loaded-latency sweep, and errors.

mod common;

use common::{numasim, stdout as ok};

#[test]
fn machine_list_show_json_and_toml_round_trip() {
    let list = ok(&["machine", "list"]);
    for name in [
        "xeon-2s",
        "epyc-4numa",
        "dgx-a100-2numa",
        "cxl-tiered",
        "one-channel",
    ] {
        assert!(list.contains(name), "{list}");
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["machine", "show", name, "--json"])).unwrap();
        let n = v["spec"]["nodes"].as_array().unwrap().len();
        let d = v["distance"].as_array().unwrap();
        assert_eq!(d.len(), n);
        for (i, row) in d.iter().enumerate() {
            assert_eq!(row[i], 10, "{name}: local distance is 10");
        }
        // TOML printed by --toml is accepted back as --machine FILE, and is the same machine.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.toml");
        std::fs::write(&f, ok(&["machine", "show", name, "--toml"])).unwrap();
        let again: serde_json::Value =
            serde_json::from_str(&ok(&["machine", "show", f.to_str().unwrap(), "--json"])).unwrap();
        assert_eq!(again, v, "{name}");
    }
    let dgx: serde_json::Value =
        serde_json::from_str(&ok(&["machine", "show", "dgx-a100-2numa", "--json"])).unwrap();
    assert_eq!(dgx["spec"]["nodes"][0]["accelerators"][0]["count"], 4);
    assert_eq!(dgx["cores"], 128);
}

#[test]
fn timing_replay_writes_summary_timeseries_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.nst");
    ok(&[
        "trace",
        "gen",
        "zipf",
        "-n",
        "50000",
        "--threads",
        "4",
        "--footprint",
        "8M",
        "--write-ratio",
        "0.3",
        "-o",
        trace.to_str().unwrap(),
    ]);
    let out = dir.path().join("res");
    ok(&[
        "replay",
        trace.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--pin",
        "spread",
        "--placement",
        "interleave",
        "--out",
        out.to_str().unwrap(),
    ]);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in ["elapsed_ns", "accesses"] {
        assert!(s[key].is_number(), "{key}");
    }
    for key in ["mean", "p50", "p99", "p999"] {
        assert!(s["latency_ns"][key].is_number(), "latency_ns.{key}");
    }
    for key in ["invalidations", "cache_to_cache", "false_sharing_lines"] {
        assert!(s["coherence"][key].is_u64(), "coherence.{key}");
    }
    let ch = &s["memory"]["channels"][0];
    for key in [
        "node",
        "channel",
        "requests",
        "bytes",
        "busy_ns",
        "mean_wait_ns",
    ] {
        assert!(!ch[key].is_null(), "memory.channels[].{key}");
    }
    let node = &s["nodes"][0];
    for key in ["node", "local_accesses", "remote_accesses"] {
        assert!(node[key].is_u64(), "nodes[].{key}");
    }
    assert_eq!(s["accesses"], 50000);
    // Interleaved pages with threads on both nodes: some reads are remote.
    assert!(s["nodes"][0]["remote_accesses"].as_u64().unwrap() > 0);
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let header = ts.lines().next().unwrap();
    assert!(header.starts_with("window_start_ns,accesses,mean_latency_ns,l1_hit_rate,llc_hit_rate,mem_reads,invalidations,ch0.0_gbps"), "{header}");
    assert!(header.contains("link0-1_gbps"));
    let windows: u64 = ts
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(windows, 50000, "every access is in one window");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert!(
        m["inputs"][0]["checksum"]
            .as_str()
            .unwrap()
            .starts_with("xxh3-128:")
    );
    assert_eq!(m["config"]["machine"]["name"], "xeon-2s");
    // Same run again: byte-identical summary.
    let out2 = dir.path().join("res2");
    ok(&[
        "replay",
        trace.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--pin",
        "spread",
        "--placement",
        "interleave",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(out.join("summary.json")).unwrap(),
        std::fs::read(out2.join("summary.json")).unwrap()
    );
    assert_eq!(
        std::fs::read(out.join("timeseries.csv")).unwrap(),
        std::fs::read(out2.join("timeseries.csv")).unwrap()
    );
}

#[test]
fn loaded_latency_knee_sits_at_the_configured_bandwidth() {
    // one-channel: 6.4 GB/s. Latency stays near 100 ns at low load, the
    // achieved bandwidth follows offered load below the peak and stops at it.
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "loaded-latency",
        "--machine",
        "one-channel",
        "--loads",
        "0.2,0.5,0.9,1.5",
        "--requests",
        "100000",
        "--json",
    ]))
    .unwrap();
    let p = v["points"].as_array().unwrap();
    let get = |i: usize, k: &str| p[i][k].as_f64().unwrap();
    assert_eq!(v["peak_gbps"], 6.4);
    assert!((get(0, "achieved_gbps") - 0.2 * 6.4).abs() / (0.2 * 6.4) < 0.03);
    assert!((get(1, "achieved_gbps") - 0.5 * 6.4).abs() / (0.5 * 6.4) < 0.03);
    // M/D/1 at ρ = 0.2: wait = 0.2·10/(2·0.8) = 1.25 ns.
    assert!(
        (get(0, "mean_latency_ns") - 101.25).abs() < 0.5,
        "{}",
        get(0, "mean_latency_ns")
    );
    assert!(
        (get(3, "achieved_gbps") - 6.4).abs() / 6.4 < 0.02,
        "saturates at the channel bandwidth: {}",
        get(3, "achieved_gbps")
    );
    assert!(
        get(3, "mean_latency_ns") > 10.0 * get(1, "mean_latency_ns"),
        "latency explodes past the knee"
    );
}

#[test]
fn timing_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.nst");
    ok(&[
        "trace",
        "gen",
        "random",
        "-n",
        "1000",
        "--threads",
        "3",
        "-o",
        trace.to_str().unwrap(),
    ]);
    let t = trace.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--machine", "one-channel"],
            "needs a core, but the machine has only 1",
        ),
        (&["--machine", "xeon-3s"], "no such preset"),
        (
            &["--machine", "xeon-2s", "--placement", "bind:7"],
            "node 7 has no memory",
        ),
        (
            &["--machine", "xeon-2s", "--pin", "0=0,1=99,2=3"],
            "core 99 does not exist",
        ),
        (
            &["--machine", "xeon-2s", "--pin", "0=0,1=1"],
            "thread 2 has no --pin entry",
        ),
        (
            &["--machine", "xeon-2s", "--pin", "zig"],
            "expected compact, spread or T=CORE",
        ),
        (
            &["--machine", "xeon-2s", "--mlp", "0"],
            "--mlp must be at least 1",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["replay", t];
        all.extend_from_slice(args);
        let o = numasim(&all);
        assert!(!o.status.success(), "{args:?} must fail");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\nc2c_latency_ns = 1\n[core]\nfreq_ghz = 1\nmlp = 1\n[[nodes]]\ncores = 1\n",
    )
    .unwrap();
    let o = numasim(&["machine", "show", bad.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no node has memory"));
}

#[test]
fn sharing_generators_drive_the_coherence_model_as_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let coherence = |pattern: &str, footprint: &str| -> serde_json::Value {
        let t = dir.path().join(format!("{pattern}.nst"));
        ok(&[
            "trace",
            "gen",
            pattern,
            "--threads",
            "2",
            "-n",
            "2000",
            "--footprint",
            footprint,
            "-o",
            t.to_str().unwrap(),
        ]);
        let out = ok(&[
            "replay",
            t.to_str().unwrap(),
            "--machine",
            "xeon-2s",
            "--pin",
            "spread",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["coherence"].clone()
    };
    // Two threads store to their own 8-byte slots of 64 shared lines, in
    // turn: every store but the first to each line invalidates the other
    // thread's copy and takes the line from its cache: 2000 − 64 of each.
    let fs = coherence("false-sharing", "4K");
    assert_eq!(fs["false_sharing_lines"], 64);
    assert_eq!(fs["invalidations"], 2000 - 64);
    assert_eq!(fs["cache_to_cache"], 2000 - 64);
    // A producer stores each line once (the ring of 16 384 lines does not
    // wrap in 1000 stores); its consumer's 1000 loads each take a modified
    // line from the producer's cache; nothing is invalidated.
    let pc = coherence("producer-consumer", "1M");
    assert_eq!(pc["cache_to_cache"], 1000);
    assert_eq!(pc["invalidations"], 0);
    assert_eq!(pc["false_sharing_lines"], 0);
}

/// Thread ids are only names: the largest u32 is as good an id as 7 (it
/// once collided with an internal "no thread" sentinel and panicked).
#[test]
fn any_u32_is_a_thread_id() {
    let dir = tempfile::tempdir().unwrap();
    let csv = |id: &str| {
        let p = dir.path().join(format!("t{id}.csv"));
        std::fs::write(
            &p,
            format!("thread,op,addr,size\n{id},load,0x1000,8\n{id},store,0x1040,8\n0,load,0x2000,8\n{id},load,0x1000,8\n"),
        )
        .unwrap();
        p
    };
    let summary = |id: &str| {
        let out = dir.path().join(format!("o{id}"));
        ok(&[
            "replay",
            csv(id).to_str().unwrap(),
            "--machine",
            "xeon-2s",
            "--out",
            out.to_str().unwrap(),
        ]);
        std::fs::read_to_string(out.join("summary.json")).unwrap()
    };
    let (max, seven) = (summary("4294967295"), summary("7"));
    assert!(max.contains("\"thread\": 4294967295"), "{max}");
    assert_eq!(max.replace("4294967295", "7"), seven);
}

/// Memory follows what is output, not simulated time: two accesses 1000 s
/// apart need two time-series windows, not 10^8 of them.
#[test]
fn a_long_quiet_stretch_costs_no_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let root = common::root("tests/data/far-apart.csv");
    let (status, err, rss_kb) = common::run_with_peak_rss(&[
        "replay",
        &root,
        "--machine",
        "xeon-2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(status.success(), "{}", String::from_utf8_lossy(&err));
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let starts: Vec<&str> = ts
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(starts, ["0", "1000000000000"]);
    assert!(rss_kb < 64 * 1024, "peak RSS {rss_kb} KiB");
}

/// Output into a closed pipe (`numasim ... | head`) ends numasim quietly
/// (SIGPIPE, as for any Unix tool), never with a panic.
#[test]
fn a_closed_pipe_is_not_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = common::cmd()
        .args([
            "compare",
            &common::root("scenarios/seed-inference.toml"),
            "--duration",
            "1s",
            "--seeds",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before any output
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?} {err}",
        out.status
    );
}
