//! The bad-input corpus (tests/bad/): every broken input must give a
//! one-line error naming the file, the line or byte offset, the record index
//! and the problem, exit non-zero, never panic, and leave no output behind.
//! The messages themselves are data: `tests/expect/bad-input.txt` and
//! `tests/expect/bad-flags.txt` (`UPDATE_EXPECT=1` rewrites them).

mod common;

use std::path::{Path, PathBuf};

use common::{cmd, expect_file, normalize, root_dir};

/// Every file of the corpus, sorted (the generator script is not one).
fn corpus() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root_dir().join("tests/bad"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "py"))
        .collect();
    v.sort();
    v
}

/// The one error line of a failed run (asserting there is exactly one, and no panic).
fn error_line(out: &std::process::Output, what: &str) -> String {
    assert!(!out.status.success(), "{what}: must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{what}: panic: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{what}: exactly one line: {err:?}"
    );
    err.trim_end().to_string()
}

fn dir_is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}

#[test]
fn every_bad_input_is_a_one_line_error_and_leaves_nothing() {
    let files = corpus();
    assert!(files.len() >= 10, "the corpus has {} files", files.len());
    let mut report = String::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let dir = tempfile::tempdir().unwrap();
        let out = cmd()
            .args(["trace", "convert"])
            .arg(file)
            .arg(dir.path().join("out.nst"))
            .output()
            .unwrap();
        let convert = error_line(&out, &format!("convert {name}"));
        assert!(convert.contains(&name), "{convert} does not name the file");
        assert!(
            dir_is_empty(dir.path()),
            "{name}: convert left output behind"
        );
        let replay = |stream: bool| {
            let mut c = cmd();
            c.arg("replay")
                .arg(file)
                .arg("--out")
                .arg(dir.path().join("res"));
            if stream {
                c.env("NUMASIM_NO_MMAP", "1");
            } else {
                c.env_remove("NUMASIM_NO_MMAP");
            }
            error_line(&c.output().unwrap(), &format!("replay {name}"))
        };
        // Mapped files (the default for lackey and native) and the
        // streaming path (what compressed files and pipes take) word every
        // error identically.
        let mapped = replay(false);
        assert_eq!(mapped, replay(true), "{name}: mapped and streamed differ");
        assert!(
            !dir.path().join("res/summary.json").exists(),
            "{name}: summary written"
        );
        report.push_str(&format!(
            "{name}\n  convert: {}\n  replay:  {}\n",
            normalize(&convert, Some(dir.path())),
            normalize(&mapped, Some(dir.path()))
        ));
    }
    expect_file("tests/expect/bad-input.txt", &report);
}

#[test]
fn bad_flags_and_missing_files() {
    let cases: &[&[&str]] = &[
        &["replay", "tests/data/hello.lackey", "--D1=24576,8,64"],
        &["replay", "tests/data/hello.lackey", "--LL=1048576,16,48"],
        &["replay", "does/not/exist.lackey"],
        &["replay", "tests/data/hello.lackey", "--replacement", "mru"],
        &["trace", "gen", "spiral", "-o", "x.nst"],
        &[
            "trace",
            "gen",
            "random",
            "--backward",
            "-o",
            "target/never.nst",
        ],
        // A sample whose unit, warm-up and functional warming overflow the period.
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--sample",
            "5:10:1:5",
        ],
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--sample",
            "1000",
        ],
        // A trace too short for two units: no interval.
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--sample",
            "100:100000",
        ],
        // Fewer than 3 live runs: no min / median / max to report.
        &[
            "validate",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--live-runs",
            "2",
            "--out",
            "target/never-written",
        ],
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--placement",
            "nearest",
        ],
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--prefetch",
            "stream:0",
        ],
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--prefetch",
            "learned:missing.json",
        ],
        // Records 1000 s apart: two windows (the series is sparse), one allowed.
        &[
            "replay",
            "tests/data/far-apart.csv",
            "--machine",
            "xeon-2s",
            "--window-ns",
            "1",
            "--max-windows",
            "1",
            "--out",
            "target/never-written",
        ],
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--window-ns",
            "0",
        ],
        &["compare", "scenarios/seed-inference.toml", "--qps", "nan"],
        // Generated times past the horizon: a gap, an open-loop rate so low
        // its times pass it, a task service's arrivals and gaps.
        &[
            "trace",
            "gen",
            "stride",
            "-n",
            "10",
            "--gap-ns",
            "18446744073709551615",
            "-o",
            "target/never-written.nst",
        ],
        &[
            "trace",
            "gen",
            "random",
            "-n",
            "10",
            "--rate",
            "1e-12",
            "-o",
            "target/never-written.nst",
        ],
        &[
            "trace",
            "gen",
            "tasks",
            "-n",
            "10",
            "--qps",
            "1e-9",
            "-o",
            "target/never-written.nst",
        ],
        &[
            "trace",
            "gen",
            "tasks",
            "-n",
            "10",
            "--gap-ns",
            "9007199254740993",
            "-o",
            "target/never-written.nst",
        ],
        &[
            "replay",
            "tests/data/two-tasks.csv",
            "--machine",
            "xeon-2s",
            "--workers",
            "2",
            "--arrivals",
            "poisson:1e-9",
        ],
        // A prefetch level past the machine's private levels: named by
        // --prefetch-level when it comes from there, by the spec when @LEVEL.
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--prefetch",
            "next-line",
            "--prefetch-level",
            "7",
        ],
        &[
            "replay",
            "tests/data/hello.lackey",
            "--machine",
            "xeon-2s",
            "--prefetch",
            "next-line@7",
        ],
        // A task trace given to the plain timing model.
        &["replay", "tests/data/two-tasks.csv", "--machine", "xeon-2s"],
        // Huge pages required where the (recorded) host offers none.
        &[
            "live",
            "calibrate",
            "--sysfs",
            "tests/fixtures/sysfs/vm-1node",
            "--huge-pages",
            "--out",
            "target/never-written.toml",
        ],
        // Refused before minutes of measuring: nowhere to write the result.
        &["live", "calibrate", "--out", "target/no-such-dir/host.toml"],
    ];
    let mut report = String::new();
    for args in cases {
        let out = cmd().args(*args).current_dir(root_dir()).output().unwrap();
        let line = error_line(&out, &args.join(" "));
        report.push_str(&format!(
            "numasim {}\n  {}\n",
            args.join(" "),
            normalize(&line, None)
        ));
    }
    expect_file("tests/expect/bad-flags.txt", &report);
}

/// Configuration files (tests/bad/config/): experiments through `compare`,
/// machines through `replay --machine`. No float may be NaN or infinite,
/// and a run too large to hold is refused before it starts.
#[test]
fn bad_configuration_files_are_one_line_errors() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root_dir().join("tests/bad/config"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut report = String::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let rel = format!("tests/bad/config/{name}");
        let args: Vec<&str> = if name.starts_with("experiment") {
            vec!["compare", &rel]
        } else {
            vec!["replay", "tests/data/hello.lackey", "--machine", &rel]
        };
        let out = cmd().args(&args).current_dir(root_dir()).output().unwrap();
        let line = error_line(&out, &name);
        assert!(line.contains(&rel), "{line} does not name the file");
        report.push_str(&format!("numasim {}\n  {line}\n", args.join(" ")));
    }
    expect_file("tests/expect/bad-config.txt", &report);
}

/// Task traces (tests/bad/tasks/): every marker rule through `replay
/// --workers` and `trace info`, each a one-line error naming the file and
/// the line.
#[test]
fn bad_task_traces_are_one_line_errors() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root_dir().join("tests/bad/tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut report = String::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let rel = format!("tests/bad/tasks/{name}");
        for args in [
            vec!["replay", &rel, "--machine", "xeon-2s", "--workers", "2"],
            vec!["trace", "info", &rel],
        ] {
            let out = cmd().args(&args).current_dir(root_dir()).output().unwrap();
            let line = error_line(&out, &name);
            assert!(line.contains(&rel), "{line} does not name the file");
            report.push_str(&format!("numasim {}\n  {line}\n", args.join(" ")));
        }
    }
    expect_file("tests/expect/bad-tasks.txt", &report);
}

/// Times at the horizon (tests/bad/horizon/): 2^53 ns itself, or gaps that
/// are each within it but add up past it. The readers take them (`trace
/// info` succeeds); the engines refuse to issue or complete an access past
/// the horizon, in one line, rather than wrap. (Values past the horizon are
/// refused by the readers: tests/bad/past_horizon_* and tests/bad/tasks/.)
#[test]
fn times_at_the_horizon_are_read_and_the_engines_stop_there() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root_dir().join("tests/bad/horizon"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    let mut report = String::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let rel = format!("tests/bad/horizon/{name}");
        let info = cmd()
            .args(["trace", "info", &rel])
            .current_dir(root_dir())
            .output()
            .unwrap();
        assert!(info.status.success(), "{name}: the reader takes it");
        let mut args = vec!["replay", &rel, "--machine", "xeon-2s"];
        if name.starts_with("tasks-") {
            args.extend(["--workers", "2"]);
        }
        let out = cmd().args(&args).current_dir(root_dir()).output().unwrap();
        let line = error_line(&out, &name);
        assert!(line.contains(&rel), "{line} does not name the file");
        report.push_str(&format!("numasim {}\n  {line}\n", args.join(" ")));
    }
    expect_file("tests/expect/bad-horizon.txt", &report);
}
