//! `replay` runs in one of three modes — the cache replay (no
//! `--machine`), the timing model (`--machine`), a task replay
//! (`--machine --workers`) — and a flag that does not apply to the mode
//! the others choose is a one-line usage error (exit 2), never ignored.
//! Every flag is tried in every mode it does not apply to; each is also
//! shown accepted in a mode it does apply to.

mod common;

use common::cmd;

/// (flag, a value it accepts or "" for a switch, the modes it applies to).
const FLAGS: &[(&str, &str, &[&str])] = &[
    ("--format", "csv", &["cache", "timing"]),
    ("--I1", "32768,8,64", &["cache"]),
    ("--D1", "32768,8,64", &["cache"]),
    ("--LL", "1048576,16,64", &["cache"]),
    ("--replacement", "lru", &["cache"]),
    ("--json", "", &["cache", "timing"]),
    ("--single-thread", "", &["cache"]),
    ("--pin", "spread", &["timing"]),
    ("--window-ns", "5000", &["timing"]),
    ("--max-windows", "100", &["timing"]),
    ("--mlp", "4", &["timing", "tasks"]),
    ("--placement", "interleave", &["timing", "tasks"]),
    ("--prefetch", "next-line", &["timing", "tasks"]),
    ("--prefetch-level", "0", &["timing", "tasks"]),
    ("--prefetch-queue", "8", &["timing", "tasks"]),
    ("--scheduler", "least-loaded", &["tasks"]),
    ("--arrivals", "poisson:1000", &["tasks"]),
    ("--timeline", "{T}/t.json", &["tasks"]),
    ("--timeline-window", "0..1s", &["tasks"]),
];

fn mode_args(mode: &str, tmp: &str) -> Vec<String> {
    let trace = if mode == "tasks" {
        common::root("tests/data/two-tasks.csv")
    } else {
        format!("{tmp}/t.csv")
    };
    let mut a = vec!["replay".to_string(), trace];
    if mode != "cache" {
        a.extend(["--machine".into(), "xeon-2s".into()]);
    }
    if mode == "tasks" {
        a.extend(["--workers".into(), "2".into()]);
    }
    a
}

#[test]
fn every_flag_outside_its_modes_is_a_usage_error_and_inside_them_runs() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().to_str().unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "thread,op,addr,size\n0,L,0x1000,8\n0,S,0x2040,8\n",
    )
    .unwrap();
    let with = |mode: &str, flag: &str, value: &str| {
        let mut a = mode_args(mode, tmp);
        a.push(flag.to_string());
        if !value.is_empty() {
            a.push(value.replace("{T}", tmp));
        }
        cmd().args(&a).output().unwrap()
    };
    let mut refused = 0;
    for (flag, value, modes) in FLAGS {
        for mode in ["cache", "timing", "tasks"] {
            let o = with(mode, flag, value);
            let err = String::from_utf8_lossy(&o.stderr);
            if modes.contains(&mode) {
                assert!(o.status.success(), "{flag} in {mode}: {err}");
            } else {
                refused += 1;
                assert_eq!(o.status.code(), Some(2), "{flag} in {mode}: {err}");
                assert_eq!(err.trim_end().lines().count(), 1, "{err}");
                assert!(
                    err.starts_with(&format!("numasim: error: {flag} does not apply to ")),
                    "{flag} in {mode}: {err}"
                );
            }
        }
    }
    assert!(refused >= 25, "{refused}");
    // The example, word for word.
    let o = with("tasks", "--json", "");
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim_end(),
        "numasim: error: --json does not apply to a task replay (--workers); it applies to the cache replay (no --machine) and the timing model (--machine) (see numasim --help)"
    );
}
