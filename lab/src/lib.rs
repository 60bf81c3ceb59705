//! # lab — numasim's experiments as values
//!
//! The library under every front end (the `numasim` command line; the
//! Python package to come): what a user asks for, as plain values, and
//! what a run read, returned with its result so a manifest is made from
//! that value and parallel runs never mix.
//!
//! - [`inputs`]: the inputs a run read (files and built-in presets, with
//!   checksums), gathered in an [`InputLog`] the run owns;
//! - [`machines`]: a machine by preset name or file, noted in the log;
//! - [`models`]: model files for learned policies, noted in the log.
//!
//! **Invariant:** `lab` keeps no process-global state, prints nothing and
//! knows no command-line flag; errors are typed ([`LabError`]) and name
//! the problem, and the front end maps them to its own words.

pub mod inputs;
pub mod machines;
pub mod models;

pub use inputs::{Input, InputLog};

/// What can go wrong in `lab`.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A machine argument that is neither a preset nor a file.
    #[error("machine {arg:?}: no such preset ({presets}) and no such file")]
    NoMachine { arg: String, presets: String },
    /// A file that could not be read. (The cause is part of the message,
    /// not a separate source, so a chain of causes does not repeat it.)
    #[error("{path}: cannot read {what}: {error}")]
    Read {
        path: String,
        what: &'static str,
        error: std::io::Error,
    },
    /// A machine description that does not load.
    #[error("{origin}: {error}")]
    Machine {
        origin: String,
        error: sim::MachineError,
    },
    /// A model file that does not load.
    #[error("{path}: {problem}")]
    Model { path: String, problem: String },
}
