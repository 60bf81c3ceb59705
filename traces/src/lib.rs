//! # traces — numasim's trace records, formats and generators
//!
//! Turns bytes into a stream of [`Record`]s and back; knows nothing of the
//! simulator and opens no files (callers hand it `Read`/`Write` objects, or
//! a whole file a caller mapped, as a [`Whole`]).
//!
//! - [`record`]: the record model — a 16-byte [`Access`] core (thread,
//!   kind, address, size) plus optional PC and gap / absolute time, stored
//!   column-wise in a [`Batch`].
//! - Readers, all streaming with bounded memory: [`lackey`], [`csvfmt`],
//!   [`din`], [`champsim`], [`mldpc`] (ML Prefetching Competition load
//!   traces), [`native`], one registry entry each ([`FORMATS`]);
//!   [`registry::open`] detects which.
//! - Writers, one [`sink::RecordSink`] trait: native (plain or zstd), CSV,
//!   lackey, each in its format's registry entry.
//! - [`synth`]: seeded synthetic patterns.
//! - [`readahead`]: decode on a second thread.
//! - [`whole`]: decode a trace held whole in memory (a file the caller
//!   mapped) on two threads, lackey and native.
//!
//! Invariant: bad input never panics; every error names the line or byte
//! offset, the record index and the problem ([`TraceError`]).

mod cdf;
pub mod config;
pub mod error;
pub mod format;
pub mod held;
pub mod hint;
pub mod horizon;
mod lines;
pub mod readahead;
pub mod record;
pub mod registry;
pub mod request_log;
pub mod sink;
pub mod source;
pub mod stats;
pub mod synth;
pub mod task_native;
pub mod tasks;
pub mod whole;
pub mod workload;
pub mod workload_lines;

/// Declares each trace format's module and lists its registry entry
/// (`FORMAT`) in [`FORMATS`]: a new format is its file plus one line here.
macro_rules! formats {
    ($($m:ident: $entry:path),* $(,)?) => {
        $(pub mod $m;)*
        /// Every trace format, in the order help and errors list them: a
        /// `static`, so each entry has one address (`Format` compares by it).
        pub static FORMATS: &[&format::Entry] = &[$(&$entry),*];
    };
}

formats! {
    native: native::whole::FORMAT,
    lackey: lackey::whole::FORMAT,
    csvfmt: csvfmt::FORMAT,
    din: din::FORMAT,
    champsim: champsim::FORMAT,
    mldpc: mldpc::FORMAT,
}

pub use error::{Location, Problem, TraceError};
pub use format::Format;
pub use record::{Access, BATCH, Batch, Fields, Kind, Record, Timing};
pub use source::{Batches, RecordSource, VecSource, collect_all};
pub use whole::{Whole, WholeReader};
