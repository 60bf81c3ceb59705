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
pub mod fingerprint;
pub mod os;
pub mod replay;
pub mod sysfs;
pub mod tsc;

/// What can go wrong on the host.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("sysfs: {0}")]
    Sysfs(String),
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
    #[error("{0}")]
    Invalid(String),
    /// The kernel does not offer transparent huge pages.
    #[error("{file}: {why}")]
    NoHugePages { file: String, why: String },
}
