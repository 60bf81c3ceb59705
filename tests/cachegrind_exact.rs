//! Exactness against Valgrind cachegrind: for each test program and cache
//! geometry, numasim's replay of a lackey trace, and of the same trace
//! converted to the native format (whose mapped records the model reads in
//! place), must give cachegrind's nine counts exactly.
//!
//! The programs (tests/programs/*.c) are compiled with gcc at test time,
//! traced with `valgrind --tool=lackey --trace-mem=yes`, and run under
//! `valgrind --tool=cachegrind` with the same binary path, argv, working
//! directory and a scrubbed environment (`env -i PATH=/usr/bin:/bin
//! LC_ALL=C`): the environment shifts stack addresses, so both runs must see
//! the same one.
//!
//! Needs gcc and valgrind. Without them the tests print a loud SKIPPED line,
//! unless NUMASIM_REQUIRE_VALGRIND=1 (set by .ci/run), which makes them fail.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// (label, I1, D1, LL): a typical geometry, direct-mapped L1s with 32-byte
/// D1 lines, and a tiny LL.
const GEOMETRIES: [(&str, &str, &str, &str); 3] = [
    ("typical", "32768,8,64", "32768,8,64", "1048576,16,64"),
    ("direct-mapped", "16384,1,64", "8192,1,32", "262144,1,64"),
    ("small-LL", "4096,2,64", "4096,4,64", "16384,4,64"),
];

const EVENTS: [&str; 9] = [
    "Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
];

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Returns false (after a loud message) when the tools are missing and not required.
fn tools_present() -> bool {
    if have("gcc") && have("valgrind") {
        return true;
    }
    if std::env::var("NUMASIM_REQUIRE_VALGRIND").is_ok_and(|v| v == "1") {
        panic!("gcc and valgrind are required (NUMASIM_REQUIRE_VALGRIND=1) but not found");
    }
    eprintln!(
        "\n*** SKIPPED cachegrind exactness: gcc or valgrind not installed (apt-get install valgrind gcc) ***\n"
    );
    false
}

fn scrubbed(cmd: &mut Command, dir: &Path) {
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .current_dir(dir);
}

/// Runs `cmd`, which must succeed; its output.
fn run_ok(mut cmd: Command, what: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Parses cachegrind's out-file `events:` and `summary:` lines.
fn cachegrind_counts(out_file: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(out_file).expect("cachegrind out file");
    let line = |p: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(p))
            .unwrap_or_else(|| panic!("no {p} line in {}", out_file.display()))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let names = line("events:");
    let values = line("summary:");
    names
        .into_iter()
        .zip(values)
        .map(|(n, v)| (n, v.parse().expect("integer count")))
        .collect()
}

fn check_program(name: &str) {
    if !tools_present() {
        return;
    }
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.c"));
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join(name);
    let mut gcc = Command::new("gcc");
    gcc.args(["-O1", "-o"]).arg(&exe).arg(&src);
    run_ok(gcc, "gcc");

    let lackey = dir.path().join(format!("{name}.lackey"));
    let mut v = Command::new("valgrind");
    scrubbed(&mut v, dir.path());
    v.arg("--tool=lackey")
        .arg("--trace-mem=yes")
        .arg(format!("--log-file={}", lackey.display()))
        .arg(format!("./{name}"));
    run_ok(v, "valgrind lackey");

    // The same trace in the native format: replayed from the mapped file,
    // whose records the cache model reads in place (not copied).
    let native = dir.path().join(format!("{name}.nst"));
    let mut conv = common::cmd();
    conv.args(["trace", "convert"]).arg(&lackey).arg(&native);
    run_ok(conv, "numasim trace convert");

    for (label, i1, d1, ll) in GEOMETRIES {
        let cg_out = dir.path().join(format!("cg.{label}.out"));
        let mut v = Command::new("valgrind");
        scrubbed(&mut v, dir.path());
        v.arg("--tool=cachegrind")
            .arg("--cache-sim=yes")
            .arg(format!("--I1={i1}"))
            .arg(format!("--D1={d1}"))
            .arg(format!("--LL={ll}"))
            .arg(format!("--cachegrind-out-file={}", cg_out.display()))
            .arg(format!(
                "--log-file={}",
                dir.path().join("cg.log").display()
            ))
            .arg(format!("./{name}"));
        run_ok(v, "valgrind cachegrind");
        let expected = cachegrind_counts(&cg_out);

        for trace in [&lackey, &native] {
            let mut replay = common::cmd();
            replay
                .arg("replay")
                .arg(trace)
                .arg(format!("--I1={i1}"))
                .arg(format!("--D1={d1}"))
                .arg(format!("--LL={ll}"))
                .arg("--json");
            let out = run_ok(replay, "numasim replay");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
            for ev in EVENTS {
                let got = v["events"][ev]
                    .as_u64()
                    .unwrap_or_else(|| panic!("events.{ev} missing"));
                assert_eq!(
                    got,
                    expected[ev],
                    "{name} / {label} ({i1} {d1} {ll}), {}: {ev} numasim {got} vs cachegrind {}; all cachegrind: {expected:?}; numasim: {}",
                    trace.display(),
                    expected[ev],
                    v["events"]
                );
            }
        }
        assert!(
            expected["D1mr"] > 0 && expected["DLmr"] > 0,
            "{name}: the geometry is exercised"
        );
    }
}

#[test]
fn sort_matches_cachegrind() {
    check_program("sort");
}

#[test]
fn matmul_matches_cachegrind() {
    check_program("matmul");
}

#[test]
fn hashmap_matches_cachegrind() {
    check_program("hashmap");
}
