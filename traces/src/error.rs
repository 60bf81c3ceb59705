//! Typed errors for everything that turns bytes into records.
//!
//! Every error carries a [`Location`] (line or byte offset, plus the index of
//! the record being read) so the binary can print one line naming the file,
//! the place and the problem.

use std::fmt;

/// Where in the input an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A text format: 1-based line number and 0-based record index.
    Line { line: u64, record: u64 },
    /// A binary format: byte offset from the start of the (decompressed) stream
    /// and 0-based record index.
    Offset { offset: u64, record: u64 },
    /// Generated records (no file): the 0-based record index.
    Record { record: u64 },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line { line, record } => write!(f, "line {line}, record {record}"),
            Location::Offset { offset, record } => {
                write!(f, "byte offset {offset}, record {record}")
            }
            Location::Record { record } => write!(f, "record {record}"),
        }
    }
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("empty input: no records and no header")]
    Empty,
    #[error("bad magic {found:?}: not a {format} file")]
    BadMagic { format: &'static str, found: String },
    #[error(
        "format version {found} is newer than this numasim supports ({supported}); upgrade numasim"
    )]
    FutureVersion { found: u32, supported: u32 },
    #[error("truncated: {0}")]
    Truncated(String),
    #[error("checksum mismatch in block {block}: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        block: u64,
        stored: u32,
        computed: u32,
    },
    #[error("bad hex address {0:?}")]
    BadHex(String),
    #[error("bad number {0:?}")]
    BadNumber(String),
    #[error("unknown op {0:?}")]
    UnknownOp(String),
    #[error("zero access size")]
    ZeroSize,
    #[error("access size {0} exceeds the maximum of 65535 bytes")]
    SizeTooLarge(u64),
    #[error("{0}")]
    Invalid(String),
    /// A task trace given to a plain trace reader (`.0` says how it shows).
    #[error("a task trace ({0}), not a plain trace")]
    TaskTrace(&'static str),
    /// A task trace breaks a task rule.
    #[error(transparent)]
    Task(#[from] TaskRule),
    /// Neither the first bytes nor the name tell the format.
    #[error("cannot tell the trace format from its first bytes or its name")]
    UnknownFormat,
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// A task rule a task trace breaks (`tasks::TaskBuilder`; the same words
/// for the CSV and the native form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskRule {
    #[error("task {0} begins a second time")]
    BeginsTwice(u32),
    #[error("task {id}: arrival_ns {arrival} is before the previous arrival of key {key} ({prev})")]
    ArrivalBackwards {
        id: u32,
        arrival: u64,
        key: u32,
        prev: u64,
    },
    #[error("task {0} ends a second time")]
    EndsTwice(u32),
    #[error("task {0} ends without a begin")]
    EndWithoutBegin(u32),
    #[error("access of task {0} outside the task (no open begin)")]
    AccessOutside(u32),
    #[error("more than {0} access records: task traces are held in memory")]
    TooManyRecords(usize),
}

/// An error reading or writing a trace, with its location.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct TraceError {
    pub location: Location,
    pub problem: Problem,
}

impl TraceError {
    /// Error at a text line.
    pub fn at_line(line: u64, record: u64, problem: Problem) -> Self {
        TraceError {
            location: Location::Line { line, record },
            problem,
        }
    }

    /// Error at a byte offset.
    pub fn at_offset(offset: u64, record: u64, problem: Problem) -> Self {
        TraceError {
            location: Location::Offset { offset, record },
            problem,
        }
    }
}

/// Shorthand result type.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;
