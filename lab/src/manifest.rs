//! `manifest.json`: what produced a result — the producer's version and
//! git commit, the full command and working folder, the configuration,
//! and the checksum of every input the run read (traces, experiment,
//! sweep, machine files or presets, model files). No timestamps, so the
//! same run gives the same bytes; `numasim reproduce DIR` reruns from it.
//!
//! Inputs come from the run's own [`InputLog`], where they were noted as
//! they were read (a file read deep in a policy's set-up is not forgotten,
//! and parallel runs in one process never mix their inputs); a manifest
//! lists them sorted, after the ones its command names itself.

use serde_json::{Value, json};

use crate::InputLog;
use crate::inputs::checksum;

/// Who made a result and how it was asked for.
pub struct Producer<'a> {
    pub version: &'a str,
    /// The git commit the producer was built from (empty outside a checkout).
    pub git_commit: &'a str,
    /// The command (without the program name).
    pub args: &'a [String],
    /// The working folder relative input paths are read from.
    pub cwd: String,
}

/// The manifest entry of an experiment read from `path` as `text` (a
/// sweep point's text is the experiment with its overrides).
pub fn experiment_input(path: &str, text: &str) -> Value {
    json!({ "role": "experiment", "path": path, "checksum": checksum(text.as_bytes()) })
}

/// The manifest of a run: `inputs` first, then every other input in `log`.
pub fn manifest(by: &Producer, inputs: Vec<Value>, config: Value, log: &InputLog) -> Value {
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
    json!({
        "numasim_version": by.version,
        "git_commit": by.git_commit,
        "arguments": by.args,
        "cwd": by.cwd,
        "inputs": all,
        "config": config,
    })
}
