//! The inputs a run read: every file (trace, experiment, sweep, machine,
//! model) and built-in preset, with the checksum of its bytes.
//!
//! Why a value and not a list kept by the process: a sweep runs many
//! points at once in one process, and each point's manifest must list
//! only what that point read (a process-wide list once gave every point
//! the machines of all of them). An [`InputLog`] is made per run and
//! handed to whatever reads (machines, model loaders); cloning it shares
//! the one log, so a policy built deep in a run still notes its model.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// One input, as a manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// What it is to the run: `machine`, `model`, `experiment`, `sweep`, `trace`.
    pub role: String,
    /// The file's path as given (absent for a preset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The built-in preset's name (absent for a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// [`checksum`] of its bytes.
    pub checksum: String,
}

impl Input {
    /// A file read as `bytes`.
    pub fn file(role: &str, path: &Path, bytes: &[u8]) -> Input {
        Input {
            role: role.to_string(),
            path: Some(path.display().to_string()),
            preset: None,
            checksum: checksum(bytes),
        }
    }

    /// A built-in preset whose text is `text`.
    pub fn preset(role: &str, name: &str, text: &str) -> Input {
        Input {
            role: role.to_string(),
            path: None,
            preset: Some(name.to_string()),
            checksum: checksum(text.as_bytes()),
        }
    }

    /// The same input (role and path or preset), whatever its checksum.
    pub fn same(&self, other: &Input) -> bool {
        self.role == other.role && self.path == other.path && self.preset == other.preset
    }
}

/// The checksum manifests use: xxh3-128 of the bytes.
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

/// The inputs one run read; clones share it.
#[derive(Clone, Debug, Default)]
pub struct InputLog(Arc<Mutex<Vec<Input>>>);

impl InputLog {
    /// Notes an input (once: the same one read again is not repeated).
    pub fn note(&self, input: Input) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !v.contains(&input) {
            v.push(input);
        }
    }

    /// Notes a file read as `bytes`.
    pub fn note_file(&self, role: &str, path: &Path, bytes: &[u8]) {
        self.note(Input::file(role, path, bytes));
    }

    /// Notes a built-in preset.
    pub fn note_preset(&self, role: &str, name: &str, text: &str) {
        self.note(Input::preset(role, name, text));
    }

    /// Every input noted, sorted (role, then path or preset, then checksum),
    /// so the order does not depend on which thread read first.
    pub fn entries(&self) -> Vec<Input> {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        v.sort_by(|a, b| {
            (&a.role, &a.path, &a.preset, &a.checksum).cmp(&(
                &b.role,
                &b.path,
                &b.preset,
                &b.checksum,
            ))
        });
        v
    }

    /// Adds every input of `other` to this log.
    pub fn extend(&self, other: &InputLog) {
        for i in other.entries() {
            self.note(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_per_run_and_clones_share_one() {
        let (a, b) = (InputLog::default(), InputLog::default());
        let shared = a.clone();
        shared.note_preset("machine", "xeon-2s", "x");
        b.note_preset("machine", "epyc-4numa", "y");
        assert_eq!(a.entries().len(), 1);
        assert_eq!(a.entries()[0].preset.as_deref(), Some("xeon-2s"));
        assert_eq!(b.entries()[0].preset.as_deref(), Some("epyc-4numa"));
        a.note_preset("machine", "xeon-2s", "x");
        assert_eq!(a.entries().len(), 1, "noted once");
    }
}
