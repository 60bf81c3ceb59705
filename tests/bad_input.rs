//! The bad-input corpus (tests/bad/): every broken input must give a
//! one-line error naming the file, the line or byte offset, the record index
//! and the problem, exit non-zero, never panic, and leave no output behind.

use std::path::{Path, PathBuf};
use std::process::Command;

fn numasim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_numasim"))
}

fn bad(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad")
        .join(name)
}

/// (file, extra args, location expected in the message, problem expected in the message)
const CASES: &[(&str, &[&str], &str, &str)] = &[
    (
        "empty.lackey",
        &[],
        "byte offset 0, record 0",
        "empty input",
    ),
    (
        "wrong_magic.nst",
        &[],
        "byte offset 0, record 0",
        "bad magic \"NUMASIMX\"",
    ),
    (
        "future_version.nst",
        &[],
        "byte offset 8, record 0",
        "format version 7 is newer",
    ),
    (
        "truncated_block.nst",
        &[],
        "byte offset 1145, record 0",
        "truncated: block 0 has 1005 of 31904 payload bytes",
    ),
    (
        "flipped_byte.nst",
        &[],
        "byte offset 140, record 0",
        "checksum mismatch in block 0",
    ),
    (
        "trailing_junk.nst",
        &[],
        "record 1994",
        "trailing bytes after the end-of-trace trailer",
    ),
    (
        "bad_hex.lackey",
        &[],
        "line 3, record 1",
        "bad hex address \"1ffefffd3g\"",
    ),
    (
        "unknown_op.lackey",
        &[],
        "line 2, record 1",
        "unknown op \"X\"",
    ),
    (
        "garbage_line.lackey",
        &[],
        "line 2, record 1",
        "not a lackey trace line",
    ),
    (
        "unknown_op.csv",
        &[],
        "line 3, record 1",
        "unknown op \"jump\"",
    ),
    ("zero_size.csv", &[], "line 3, record 1", "zero access size"),
    (
        "bad_field.mldpc",
        &[],
        "line 3, record 1",
        "llc_hit must be 0 or 1, found \"7\"",
    ),
    (
        "missing_column.csv",
        &[],
        "line 1, record 0",
        "lacks required column \"addr\"",
    ),
    (
        "bad_number.csv",
        &[],
        "line 2, record 0",
        "bad number \"eight (column size)\"",
    ),
    ("bad_label.din", &[], "line 3, record 2", "unknown op \"9\""),
    (
        "truncated.champsimtrace",
        &[],
        "byte offset 128, record 4",
        "last instruction has 40 of 64 bytes",
    ),
    (
        "truncated_gzip.lackey.gz",
        &[],
        "record",
        "incomplete deflate stream",
    ),
];

fn assert_one_line_error(out: &std::process::Output, must: &[&str]) {
    assert!(!out.status.success(), "must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "exactly one line: {err:?}"
    );
    for m in must {
        assert!(err.contains(m), "{err:?} lacks {m:?}");
    }
}

fn dir_is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}

#[test]
fn corpus_has_at_least_ten_cases_and_all_exist() {
    assert!(CASES.len() >= 10);
    for (f, ..) in CASES {
        assert!(bad(f).exists(), "{f}");
    }
}

#[test]
fn convert_fails_cleanly_and_leaves_nothing() {
    for (file, args, location, problem) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let out = numasim()
            .args(["trace", "convert"])
            .arg(bad(file))
            .arg(dir.path().join("out.nst"))
            .args(*args)
            .output()
            .unwrap();
        assert_one_line_error(&out, &[file, location, problem]);
        assert!(dir_is_empty(dir.path()), "{file}: output left behind");
    }
}

#[test]
fn replay_fails_cleanly_and_leaves_nothing() {
    for (file, args, location, problem) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let out = numasim()
            .arg("replay")
            .arg(bad(file))
            .arg("--out")
            .arg(dir.path().join("res"))
            .args(*args)
            .output()
            .unwrap();
        assert_one_line_error(&out, &[file, location, problem]);
        assert!(
            !dir.path().join("res/summary.json").exists(),
            "{file}: summary written"
        );
    }
}

/// Mapped files (the default for lackey and native) and the streaming path
/// (`NUMASIM_NO_MMAP=1`, what compressed files and pipes take) must word
/// every error identically.
#[test]
fn mapped_and_streamed_reads_give_the_same_error() {
    for (file, args, ..) in CASES {
        let run = |stream: bool| {
            let mut c = numasim();
            c.arg("replay").arg(bad(file)).args(*args);
            if stream {
                c.env("NUMASIM_NO_MMAP", "1");
            } else {
                c.env_remove("NUMASIM_NO_MMAP");
            }
            let out = c.output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let (mapped, streamed) = (run(false), run(true));
        assert_ne!(mapped.0, Some(0), "{file}");
        assert_eq!(mapped, streamed, "{file}");
    }
}

#[test]
fn bad_flags_and_missing_files() {
    let ok = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/hello.lackey");
    let out = numasim()
        .arg("replay")
        .arg(&ok)
        .arg("--D1=24576,8,64")
        .output()
        .unwrap();
    assert_one_line_error(&out, &["--D1", "set count 48 is not a power of two"]);
    let out = numasim()
        .arg("replay")
        .arg(&ok)
        .arg("--LL=1048576,16,48")
        .output()
        .unwrap();
    assert_one_line_error(&out, &["line size 48 is not a power of two"]);
    let out = numasim()
        .args(["replay", "does/not/exist.lackey"])
        .output()
        .unwrap();
    assert_one_line_error(&out, &["does/not/exist.lackey", "No such file"]);
    let out = numasim()
        .arg("replay")
        .arg(&ok)
        .args(["--replacement", "mru"])
        .output()
        .unwrap();
    assert_one_line_error(&out, &["unknown replacement policy \"mru\""]);
    let out = numasim()
        .args(["trace", "gen", "spiral", "-o", "x.nst"])
        .output()
        .unwrap();
    assert_one_line_error(&out, &["unknown pattern \"spiral\""]);
}
