//! `manifest.json` (`lab::manifest`) with this process as its producer:
//! numasim's version, the git commit it was built from, its command line
//! and working folder.

use lab::InputLog;
use serde_json::Value;

pub use lab::manifest::experiment_input;

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
    let by = lab::manifest::Producer {
        version: env!("CARGO_PKG_VERSION"),
        git_commit: git_commit(),
        args,
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    };
    lab::manifest::manifest(&by, inputs, config, log)
}
