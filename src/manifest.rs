//! `manifest.json`: what produced a result — numasim's version and git
//! commit, the full command line and working folder, the configuration,
//! and the checksum of every input the run read (traces, experiment,
//! sweep, machine files or presets, model files). No timestamps, so the
//! same run gives the same bytes; `numasim reproduce DIR` reruns from it.
//!
//! Inputs are noted where they are read ([`note_file`], [`note_preset`])
//! into one list for the process, so a file read deep in a policy's set-up
//! is not forgotten; a manifest lists them sorted, after the ones its
//! command names itself.

use std::path::Path;
use std::sync::Mutex;

use serde_json::{Value, json};

static NOTED: Mutex<Vec<Value>> = Mutex::new(Vec::new());

/// The checksum the manifests use.
pub fn checksum(bytes: &[u8]) -> String {
    format!("xxh3-128:{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// The checksum of a file's bytes, read in 1 MiB pieces (a trace may not
/// fit in memory).
pub fn checksum_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(format!("xxh3-128:{:032x}", h.digest128()))
}

fn note(v: Value) {
    let mut n = NOTED.lock().unwrap_or_else(|e| e.into_inner());
    if !n.contains(&v) {
        n.push(v);
    }
}

/// Notes a file this run read, with its bytes' checksum.
pub fn note_file(role: &str, path: &Path, bytes: &[u8]) {
    note(json!({ "role": role, "path": path.display().to_string(), "checksum": checksum(bytes) }));
}

/// Notes a built-in preset this run used, with its text's checksum.
pub fn note_preset(role: &str, name: &str, text: &str) {
    note(json!({ "role": role, "preset": name, "checksum": checksum(text.as_bytes()) }));
}

/// The manifest entry of an experiment read from `path` as `text` (a
/// sweep point's text is the experiment with its overrides).
pub fn experiment_input(path: &str, text: &str) -> Value {
    json!({ "role": "experiment", "path": path, "checksum": checksum(text.as_bytes()) })
}

/// The git commit numasim was built from (empty outside a checkout).
pub fn git_commit() -> &'static str {
    env!("NUMASIM_GIT_COMMIT")
}

/// The manifest of a run: `inputs` first, then every other input noted.
pub fn manifest(inputs: Vec<Value>, config: Value) -> Value {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut all = inputs;
    let mut noted = NOTED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    noted.sort_by_key(|v| v.to_string());
    let same = |a: &Value, b: &Value| {
        a["role"] == b["role"] && a["path"] == b["path"] && a["preset"] == b["preset"]
    };
    for v in noted {
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
