//! Every output of representative runs, byte for byte, against
//! `tests/expect/outputs/NAME.txt` (`UPDATE_EXPECT=1` rewrites them; review
//! the diff): what stdout says (wall-clock lines dropped) and every file
//! the run writes — small text files whole, larger ones as a length and an
//! xxh3 checksum. The net under a refactor of the layers above the engines
//! (issue 26): committed before it starts, unchanged by it. Covers the nine
//! timing-model configurations, two cache replays, `trace info`, the
//! loaded-latency sweep, the seed `compare`, a task-trace `compare`, a
//! `--fidelity lines` compare, a small sweep and a `bench` row — each cut
//! short so the whole takes seconds.
//!
//! Left out: `manifest.json` (it records the build's commit and the
//! temporary paths; `tests/reproduce.rs` checks manifests) and
//! `report.html` (`tests/report.rs`).

mod common;

use std::path::Path;

use common::{cmd, expect_file, root_dir};

/// Files up to this size are kept whole in the expect file.
const WHOLE: u64 = 16 * 1024;

fn wall_clock(line: &str) -> bool {
    ["wall", "requests/s", "real prediction time", "M accesses/s"]
        .iter()
        .any(|w| line.contains(w))
}

/// Every file under `dir`, sorted, as `rel` paths.
fn files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<_> = rd.map(|e| e.unwrap().file_name()).collect();
    names.sort();
    for n in names {
        let n = n.to_string_lossy().into_owned();
        let r = if rel.is_empty() {
            n.clone()
        } else {
            format!("{rel}/{n}")
        };
        let p = dir.join(&n);
        if p.is_dir() {
            files(&p, &r, out);
        } else {
            out.push(r);
        }
    }
}

/// Runs `numasim ARGS` in the repository root (`{T}` in an argument is
/// the temporary folder) and records its stdout and the files it wrote
/// under `{T}/out`.
fn snapshot(name: &str, tmp: &Path, args: &[&str]) {
    let out = tmp.join(name);
    let t = tmp.to_str().unwrap();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{T}", t).replace("{OUT}", out.to_str().unwrap()))
        .collect();
    let o = cmd().args(&args).current_dir(root_dir()).output().unwrap();
    assert!(
        o.status.success(),
        "{name}: numasim {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    let clean = |s: &str| s.replace(out.to_str().unwrap(), "$OUT").replace(t, "$T");
    let mut report = format!("$ numasim {}\n", clean(&args.join(" ")));
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        if !wall_clock(l) {
            report.push_str(&clean(l));
            report.push('\n');
        }
    }
    let mut list = Vec::new();
    files(&out, "", &mut list);
    for rel in list {
        if rel.ends_with("manifest.json") || rel.ends_with("report.html") {
            continue;
        }
        let bytes = std::fs::read(out.join(&rel)).unwrap();
        if bytes.len() as u64 <= WHOLE && std::str::from_utf8(&bytes).is_ok() {
            report.push_str(&format!(
                "== {rel}\n{}",
                clean(std::str::from_utf8(&bytes).unwrap())
            ));
            if !bytes.ends_with(b"\n") {
                report.push('\n');
            }
        } else {
            report.push_str(&format!(
                "== {rel}: {} bytes, xxh3 {:016x}\n",
                bytes.len(),
                xxhash_rust::xxh3::xxh3_64(&bytes)
            ));
        }
    }
    expect_file(&format!("tests/expect/outputs/{name}.txt"), &report);
}

fn trace_gen(tmp: &Path, args: &[&str]) {
    let o = cmd()
        .args(["trace", "gen"])
        .args(args)
        .current_dir(tmp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The 8-thread Zipf trace both the timing and the cache runs read.
fn zipf8(d: &Path) {
    trace_gen(
        d,
        &[
            "zipf",
            "-n",
            "50000",
            "--threads",
            "8",
            "--footprint",
            "32M",
            "--write-ratio",
            "0.2",
            "-o",
            "z8.nst",
        ],
    );
}

#[test]
fn timing_model_configurations() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    zipf8(d);
    trace_gen(
        d,
        &[
            "sequential",
            "-n",
            "50000",
            "--footprint",
            "64M",
            "-o",
            "seq.nst",
        ],
    );
    trace_gen(
        d,
        &[
            "false-sharing",
            "-n",
            "20000",
            "--threads",
            "4",
            "-o",
            "fs.nst",
        ],
    );
    trace_gen(
        d,
        &[
            "stride",
            "-n",
            "20000",
            "--stride",
            "256",
            "--gap-ns",
            "2",
            "-o",
            "stride.nst",
        ],
    );
    trace_gen(
        d,
        &[
            "random",
            "-n",
            "20000",
            "--threads",
            "2",
            "--rate",
            "5",
            "--footprint",
            "8M",
            "-o",
            "open.csv",
        ],
    );
    let runs: &[(&str, &[&str])] = &[
        (
            "t1",
            &[
                "replay",
                "{T}/z8.nst",
                "--machine",
                "xeon-2s",
                "--pin",
                "spread",
                "--placement",
                "first-touch",
            ],
        ),
        (
            "t2",
            &[
                "replay",
                "{T}/z8.nst",
                "--machine",
                "xeon-2s",
                "--pin",
                "compact",
                "--placement",
                "interleave",
                "--mlp",
                "1",
            ],
        ),
        (
            "t3",
            &[
                "replay",
                "{T}/z8.nst",
                "--machine",
                "epyc-4numa",
                "--pin",
                "spread",
                "--placement",
                "migrate:8",
            ],
        ),
        (
            "t4",
            &[
                "replay",
                "{T}/seq.nst",
                "--machine",
                "xeon-2s",
                "--placement",
                "bind:1",
                "--prefetch",
                "stream:4:2",
            ],
        ),
        (
            "t5",
            &[
                "replay",
                "{T}/seq.nst",
                "--machine",
                "xeon-2s",
                "--prefetch",
                "next-line@L1D",
                "--prefetch",
                "stream:16:16@L2",
                "--prefetch-queue",
                "8",
            ],
        ),
        (
            "t6",
            &[
                "replay",
                "{T}/fs.nst",
                "--machine",
                "xeon-2s",
                "--pin",
                "spread",
            ],
        ),
        (
            "t7",
            &[
                "replay",
                "tests/data/hello.lackey",
                "--machine",
                "xeon-2s",
                "--prefetch",
                "ip-stride:2:1",
                "--window-ns",
                "50",
            ],
        ),
        (
            "t8",
            &[
                "replay",
                "{T}/stride.nst",
                "--machine",
                "dgx-a100-2numa",
                "--prefetch",
                "delta:2",
            ],
        ),
        (
            "t9",
            &[
                "replay",
                "{T}/open.csv",
                "--machine",
                "xeon-2s",
                "--pin",
                "spread",
                "--placement",
                "interleave",
            ],
        ),
    ];
    for (name, args) in runs {
        let mut a = args.to_vec();
        a.extend(["--out", "{OUT}"]);
        snapshot(name, d, &a);
    }
}

#[test]
fn cache_replays_trace_info_and_loaded_latency() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    zipf8(d);
    snapshot(
        "cg1",
        d,
        &[
            "replay",
            "tests/data/hello.lackey",
            "--json",
            "--out",
            "{OUT}",
        ],
    );
    snapshot(
        "cg2",
        d,
        &[
            "replay",
            "{T}/z8.nst",
            "--D1=32K,8,64",
            "--LL=1M,16,64",
            "--replacement",
            "srrip",
            "--out",
            "{OUT}",
        ],
    );
    snapshot("info-z8", d, &["trace", "info", "{T}/z8.nst"]);
    snapshot(
        "info-hello",
        d,
        &["trace", "info", "tests/data/hello.lackey"],
    );
    snapshot(
        "loaded-latency",
        d,
        &["loaded-latency", "--machine", "xeon-2s"],
    );
}

#[test]
fn request_model_compare_sweep_and_bench() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    snapshot(
        "seed-compare",
        d,
        &[
            "compare",
            "scenarios/seed-inference.toml",
            "--duration",
            "1s",
            "--seeds",
            "1,2",
            "--out",
            "{OUT}",
        ],
    );
    snapshot(
        "bench",
        d,
        &[
            "bench",
            "--scenario",
            "static",
            "--duration",
            "1s",
            "--out",
            "{OUT}",
        ],
    );
    std::fs::write(
        d.join("sweep.toml"),
        format!(
            "[sweep]\nexperiment = \"{}\"\nrows = [\"static\", \"numa_aware\"]\n\n[grid]\n\"workload.qps\" = [3000.0, 5000.0]\n\"workload.duration_s\" = [0.3]\n",
            common::root("scenarios/seed-inference.toml")
        ),
    )
    .unwrap();
    snapshot(
        "sweep",
        d,
        &[
            "sweep",
            "{T}/sweep.toml",
            "--out",
            "{OUT}",
            "--threads",
            "2",
        ],
    );
}

#[test]
fn task_trace_and_line_level_compares() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    trace_gen(
        d,
        &[
            "tasks",
            "-n",
            "300",
            "--keys",
            "4",
            "--lookups",
            "8",
            "--background-every",
            "100",
            "--sweep-lines",
            "256",
            "-o",
            "svc.nst",
        ],
    );
    std::fs::write(
        d.join("tasks.toml"),
        "[experiment]\nname = \"svc\"\nseeds = [1, 2]\n\n\
         [workload]\ntrace = \"svc.nst\"\nmachine = \"xeon-2s\"\nworkers = \"0,1,28,29\"\n\n\
         [[row]]\nname = \"static\"\nscheduler = \"static\"\n\n\
         [[row]]\nname = \"numa\"\nscheduler = \"numa-weighted\"\n",
    )
    .unwrap();
    snapshot(
        "task-compare",
        d,
        &["compare", "{T}/tasks.toml", "--out", "{OUT}"],
    );
    snapshot(
        "lines-compare",
        d,
        &[
            "compare",
            "scenarios/fidelity-ladder.toml",
            "--fidelity",
            "lines",
            "--duration",
            "0.05s",
            "--seeds",
            "1",
            "--out",
            "{OUT}",
        ],
    );
}

#[test]
fn snapshots_exist_only_for_runs_that_are_taken() {
    // A renamed run leaves no stale expect file behind (not while the
    // other tests are rewriting them).
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        return;
    }
    let mut have: Vec<String> = std::fs::read_dir(root_dir().join("tests/expect/outputs"))
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    have.sort();
    let want = [
        "bench",
        "cg1",
        "cg2",
        "info-hello",
        "info-z8",
        "lines-compare",
        "loaded-latency",
        "seed-compare",
        "sweep",
        "t1",
        "t2",
        "t3",
        "t4",
        "t5",
        "t6",
        "t7",
        "t8",
        "t9",
        "task-compare",
    ];
    let mut want: Vec<String> = want.iter().map(|n| format!("{n}.txt")).collect();
    want.sort();
    assert_eq!(have, want);
}
