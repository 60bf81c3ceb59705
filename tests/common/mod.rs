//! Helpers shared by the end-to-end tests that drive the binary.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `numasim ARGS`.
pub fn numasim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numasim"))
        .args(args)
        .output()
        .expect("numasim runs")
}

/// Runs `numasim ARGS` and asserts it succeeded (showing its stderr if not).
pub fn ok(args: &[&str]) -> Output {
    let o = numasim(args);
    assert!(
        o.status.success(),
        "numasim {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Asserts a run failed with a one-line error; returns that line.
pub fn one_line_error(o: &Output) -> String {
    assert!(!o.status.success(), "expected a failure");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

/// A path under the repository root, as a string.
pub fn root(p: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}
