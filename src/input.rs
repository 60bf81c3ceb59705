//! Opening trace files (`lab::input`), with the command line's words: a
//! trace error mapped to the flags that fix it, `--format`, and
//! `NUMASIM_NO_MMAP=1`, which streams every trace instead of mapping it.

use std::path::Path;

use anyhow::{Result, anyhow};
use lab::input::InputError;
use traces::{Format, TraceError};

pub use lab::input::{TraceInput, manifest_input};

/// Formats a trace error as `PATH: line N, record M: problem`.
pub fn trace_err(path: &Path, e: TraceError) -> anyhow::Error {
    anyhow!("{}: {}", path.display(), crate::flags::trace(&e))
}

pub fn input_err(e: InputError) -> anyhow::Error {
    match e {
        InputError::Trace { path, error } => trace_err(Path::new(&path), error),
        e => e.into(),
    }
}

pub fn may_map() -> bool {
    std::env::var_os("NUMASIM_NO_MMAP").is_none()
}

/// `--format`'s help, from the registry of trace formats.
pub fn format_help() -> String {
    format!(
        "Input format, overriding detection: {}",
        Format::names().join(", ")
    )
}

/// Parses a `--format` value.
pub fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| {
        let names = Format::names();
        format!("unknown format {s:?}; expected one of {}", names.join(", "))
    })
}

/// [`lab::input::open_trace`].
pub fn open_trace(
    path: &Path,
    forced: Option<Format>,
    checksum: bool,
    threads: usize,
) -> Result<TraceInput> {
    lab::input::open_trace(path, forced, checksum, threads, may_map()).map_err(input_err)
}

/// [`lab::input::load_accesses`].
pub fn load_accesses(path: &Path, format: Option<Format>) -> Result<Vec<traces::Access>> {
    lab::input::load_accesses(path, format, may_map()).map_err(input_err)
}

/// A byte count as flags take it (4096, 64K, 1G).
pub fn parse_size(s: &str) -> Result<u64, String> {
    sim::geometry::parse_bytes(s).ok_or_else(|| format!("bad size {s:?} (e.g. 4096, 64K, 1G)"))
}
