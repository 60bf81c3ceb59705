//! `manifest.json`: what produced a result — numasim's version and git
//! commit, the full command line and working folder, the configuration,
//! and the checksum of every input the run read (traces, experiment,
//! sweep, machine files or presets, model files). No timestamps, so the
//! same run gives the same bytes; `numasim reproduce DIR` reruns from it.
//!
//! Inputs come from the run's own [`lab::InputLog`], where they were noted
//! as they were read (a file read deep in a policy's set-up is not
//! forgotten, and parallel runs in one process never mix their inputs); a
//! manifest lists them sorted, after the ones its command names itself.

use lab::InputLog;
use serde_json::{Value, json};

pub use lab::inputs::{checksum, checksum_file};

/// The manifest entry of an experiment read from `path` as `text` (a
/// sweep point's text is the experiment with its overrides).
pub fn experiment_input(path: &str, text: &str) -> Value {
    json!({ "role": "experiment", "path": path, "checksum": checksum(text.as_bytes()) })
}

/// What a comparison's manifest records of how it was asked for: the
/// command line, and the experiment file as read (before `--rows`/`--set`
/// or a sweep point's overrides, which the command line carries).
pub struct Record {
    pub args: Vec<String>,
    pub experiment: Value,
    /// Print no table (a sweep's points: their outputs are files, and
    /// parallel points would interleave their lines).
    pub quiet: bool,
}

/// The git commit numasim was built from (empty outside a checkout).
pub fn git_commit() -> &'static str {
    env!("NUMASIM_GIT_COMMIT")
}

/// The command line this process was given (without the program name).
pub fn process_args() -> Vec<String> {
    std::env::args().skip(1).collect()
}

/// The manifest of a run: `inputs` first, then every other input in `log`;
/// the arguments are this process's.
pub fn manifest(inputs: Vec<Value>, config: Value, log: &InputLog) -> Value {
    manifest_as(&process_args(), inputs, config, log)
}

/// The manifest of a run recorded as the command `args` (a sweep point
/// records the `compare` that gives the same point on its own).
pub fn manifest_as(args: &[String], inputs: Vec<Value>, config: Value, log: &InputLog) -> Value {
    let mut all = inputs;
    let same = |a: &Value, b: &Value| {
        a["role"] == b["role"] && a["path"] == b["path"] && a["preset"] == b["preset"]
    };
    for i in log.entries() {
        let v = serde_json::to_value(&i).unwrap_or_default();
        if !all.iter().any(|a| same(a, &v)) {
            all.push(v);
        }
    }
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    json!({
        "numasim_version": env!("CARGO_PKG_VERSION"),
        "git_commit": git_commit(),
        "arguments": args,
        "cwd": cwd,
        "inputs": all,
        "config": config,
    })
}
