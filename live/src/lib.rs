//! # live — numasim on the real machine
//!
//! The backend that meets the hardware: reads the host's topology from
//! sysfs ([`sysfs`]), pins threads and binds memory ([`os`]), measures the
//! host with microbenchmarks ([`calibrate`]) timed by the TSC ([`tsc`]), and
//! replays a trace on pinned threads ([`replay`]).
//!
//! It is its own crate because it does what `sim` must never do — read
//! files, make system calls, read clocks — so `sim` stays deterministic.
//! Results come back in `sim`'s machine schema and `numasim`'s result
//! schema, so simulated and measured runs compare directly.

pub mod calibrate;
pub mod chase;
pub mod fingerprint;
pub mod os;
pub mod replay;
pub mod rows;
pub mod sysfs;
pub mod tsc;

/// What can go wrong on the host.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A sysfs file that cannot be read.
    #[error("sysfs: {path}: {error}")]
    SysfsRead { path: String, error: std::io::Error },
    /// A sysfs file (or folder) whose content is not what the kernel writes.
    #[error("sysfs: {path}: {what}")]
    Sysfs { path: String, what: &'static str },
    #[error("sysfs: no CPUs in any node")]
    NoCpus,
    #[error("sysfs: {path}: {row} distances for {nodes} nodes")]
    Distances {
        path: String,
        row: usize,
        nodes: usize,
    },
    #[error("cpu {cpu} is not one this process may run on (allowed: {allowed})")]
    CpuNotAllowed { cpu: u32, allowed: String },
    #[error("pinned to cpu {want} but running on cpu {got}")]
    PinFailed { want: u32, got: i32 },
    #[error("node {node} does not exist on this host (nodes: {nodes})")]
    NoSuchNode { node: u32, nodes: String },
    #[error("{call} failed: {err}")]
    Os {
        call: &'static str,
        err: std::io::Error,
    },
    #[error("cannot lay out a {bytes}-byte buffer")]
    Layout { bytes: usize },
    #[error("cannot allocate {0} bytes")]
    Alloc(usize),
    #[error("no CPUs to replay on")]
    NoCpusGiven,
    /// A measuring thread panicked (which: `replay`, `ping-pong`, `bandwidth`).
    #[error("{0} thread panicked")]
    Panicked(&'static str),
    #[error("replay word {index} outside its {words}-word buffer")]
    OutOfBounds { index: u32, words: usize },
    /// The kernel does not offer transparent huge pages (`setting`: the
    /// file's text, e.g. `always madvise [never]`).
    #[error("{file}: reads {setting:?}")]
    HugePagesOff { file: String, setting: String },
    /// Whether it offers them cannot be read.
    #[error("{file}: {error}")]
    HugePagesUnknown { file: String, error: std::io::Error },
}
