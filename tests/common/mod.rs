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

/// `numasim` as a command to add arguments and environment to.
pub fn cmd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_numasim"))
}

/// Runs `numasim ARGS`, asserts it succeeded, and returns its stdout.
pub fn stdout(args: &[&str]) -> String {
    String::from_utf8(ok(args).stdout).expect("utf8 output")
}

/// The repository root as a path.
pub fn root_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `text` with the repository root and `tmp` (if any) written as `$ROOT`
/// and `$TMP`, so expectations do not depend on where the tests run.
pub fn normalize(text: &str, tmp: Option<&std::path::Path>) -> String {
    let mut t = text.replace(&root_dir().display().to_string(), "$ROOT");
    if let Some(tmp) = tmp {
        t = t.replace(&tmp.display().to_string(), "$TMP");
    }
    t
}

/// Data-driven expectations (rust-analyzer's `expect-test`, by hand):
/// `actual` must equal the file `path` (relative to the repository root).
/// With `UPDATE_EXPECT=1` the file is rewritten instead, and the change is
/// reviewed as a diff.
pub fn expect_file(path: &str, actual: &str) {
    let file = root_dir().join(path);
    if std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{path}: {e} (run with UPDATE_EXPECT=1 to create it)"));
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{path} differs from this run at line {}:\n  expected: {:?}\n  actual:   {:?}\n(UPDATE_EXPECT=1 rewrites it; review the diff)",
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        );
    }
}

/// Runs `numasim ARGS` to completion and returns its output and its peak
/// resident set size in KiB (the child's `ru_maxrss`, from `wait4`).
// The child is reaped by `wait4` (which `Child::wait` cannot replace: it
// gives no resource usage).
#[allow(clippy::zombie_processes)]
pub fn run_with_peak_rss(args: &[&str]) -> (std::process::ExitStatus, Vec<u8>, u64) {
    use std::os::unix::process::ExitStatusExt;
    let child = cmd()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("numasim starts");
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.expect("piped");
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).ok();
        v
    });
    let mut status = 0;
    // SAFETY: `rusage` is plain data that wait4 fills; `pid` is our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let err = reader.join().unwrap_or_default();
    (
        std::process::ExitStatus::from_raw(status),
        err,
        usage.ru_maxrss as u64,
    )
}

/// Reruns a scenario's documented training — `numasim dataset EXP --row
/// ROW --seed 101`, then `numasim train --model gbdt` — in `dir` and
/// asserts it reproduces the committed `model` (under the repository)
/// byte for byte.
pub fn assert_model_reproduced(dir: &std::path::Path, exp: &str, row: &str, model: &str) {
    let data = dir.join("data.csv");
    let out = dir.join("m.json");
    ok(&[
        "dataset",
        exp,
        "--row",
        row,
        "--seed",
        "101",
        "--out",
        data.to_str().unwrap(),
    ]);
    ok(&[
        "train",
        data.to_str().unwrap(),
        "--model",
        "gbdt",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(root(model)).unwrap(),
        "the committed model is what the documented commands produce"
    );
}

/// A task engine on machine `m` with workers on `cores`,
/// scheduler `sched` (a registry spec), first-touch pages and `cfg`.
pub fn task_engine<'m>(
    m: &'m sim::Machine,
    cores: &[usize],
    sched: &str,
    cfg: sim::Config,
) -> sim::tasks::TaskEngine<'m> {
    let ctx = policies::registry::Ctx::for_machine(m);
    let s = policies::sched::SCHEDULERS.build(sched, &ctx).unwrap();
    task_engine_with(m, cores, s, cfg)
}

/// [`task_engine`] with a scheduler built by the caller.
pub fn task_engine_with<'m>(
    m: &'m sim::Machine,
    cores: &[usize],
    sched: Box<dyn sim::policy::Scheduler>,
    cfg: sim::Config,
) -> sim::tasks::TaskEngine<'m> {
    let ctx = policies::registry::Ctx::for_machine(m);
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &ctx)
        .unwrap();
    let e = sim::Engine::new(m, cfg, p).unwrap();
    sim::tasks::TaskEngine::new(e, m, cores, sched).unwrap()
}

/// A machine preset.
pub fn preset(name: &str) -> sim::Machine {
    sim::Machine::from_toml(sim::presets::preset(name).unwrap()).unwrap()
}

/// `replay TRACE --machine xeon-2s --pin spread --json EXTRA…`: the
/// timing replay's JSON summary (the sampled-replay tests' run).
pub fn xeon_replay(trace: &str, extra: &[&str]) -> serde_json::Value {
    let base = [
        "replay",
        trace,
        "--machine",
        "xeon-2s",
        "--pin",
        "spread",
        "--json",
    ];
    serde_json::from_str(&stdout(&[&base[..], extra].concat())).expect("a JSON summary")
}
