//! # traces — numasim's trace records, formats and generators
//!
//! Turns bytes into a stream of [`Record`]s and back; knows nothing of the
//! simulator and opens no files (callers hand it `Read`/`Write` objects, or
//! a whole file they mapped, as a [`Whole`]).
//!
//! - [`record`]: the record model — a 16-byte [`Access`] core (thread,
//!   kind, address, size) plus optional PC and gap / absolute time, stored
//!   column-wise in a [`Batch`].
//! - Readers, all streaming with bounded memory: [`lackey`], [`csvfmt`],
//!   [`din`], [`champsim`], [`mldpc`] (ML Prefetching Competition load
//!   traces), [`native`]; [`format::open`] detects which.
//! - Writers: [`native::write::NativeWriter`], [`csvfmt::CsvWriter`].
//! - [`synth`]: seeded synthetic patterns.
//! - [`readahead`]: decode on a second thread.
//! - [`whole`]: decode a trace held whole in memory (a file the binary
//!   mapped) on two threads, lackey and native.
//!
//! Invariant: bad input never panics; every error names the line or byte
//! offset, the record index and the problem ([`TraceError`]).

pub mod champsim;
pub mod config;
pub mod csvfmt;
pub mod din;
pub mod error;
pub mod format;
pub mod horizon;
pub mod lackey;
mod lines;
pub mod mldpc;
pub mod native;
pub mod readahead;
pub mod record;
pub mod sink;
pub mod source;
pub mod stats;
pub mod synth;
pub mod task_native;
pub mod tasks;
pub mod whole;
pub mod workload;
pub mod workload_lines;

pub use error::{Location, Problem, TraceError};
pub use format::{Format, open, open_whole};
pub use record::{Access, BATCH, Batch, Fields, Kind, Record, Timing};
pub use source::{Batches, RecordSource, VecSource, collect_all};
pub use whole::{Whole, WholeReader};
