//! Writing traces: one [`RecordSink`] trait for every form numasim writes
//! a trace in, each a [`Writer`] (name, file extensions, how to start it)
//! in its format's registry entry ([`crate::format::Entry`]); `trace
//! gen`/`trace convert`'s `--to`, the extension rule and their error
//! messages come from the registry ([`crate::registry::writers`]).

use std::io::Write;

use crate::error::TraceError;
use crate::record::{Batch, Fields, Record};
use crate::source::RecordSource;

/// A trace being written, record by record, into a borrowed byte sink.
pub trait RecordSink {
    fn write(&mut self, r: &Record) -> std::io::Result<()>;
    /// Writes whatever the format keeps for its end and flushes.
    fn finish(self: Box<Self>) -> std::io::Result<()>;
}

/// Starts a writer on `out` for records with `fields`; `meta` (a JSON
/// object describing the source) is kept by formats that have a header.
pub type Open = for<'a> fn(
    &'a mut dyn Write,
    Fields,
    &serde_json::Value,
) -> std::io::Result<Box<dyn RecordSink + 'a>>;

/// An output format.
pub struct Writer {
    pub name: &'static str,
    /// File extensions (with the dot) that name it; the first is the one
    /// to write.
    pub extensions: &'static [&'static str],
    pub open: Open,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// What stopped a copy: the source or the sink.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Read(TraceError),
    #[error("write failed: {0}")]
    Write(std::io::Error),
}

/// Streams every record of `src` through `w` into `out`, calling
/// `on_batch` after each batch; returns the record count.
pub fn copy(
    src: &mut dyn RecordSource,
    w: &Writer,
    out: &mut dyn Write,
    meta: &serde_json::Value,
    mut on_batch: impl FnMut(),
) -> Result<u64, CopyError> {
    let fields = src.fields();
    let mut sink = (w.open)(out, fields, meta).map_err(CopyError::Write)?;
    let mut batch = Batch::new(fields);
    let mut n = 0u64;
    loop {
        batch.clear();
        if src.fill(&mut batch).map_err(CopyError::Read)? == 0 {
            break;
        }
        for r in batch.iter() {
            sink.write(&r).map_err(CopyError::Write)?;
        }
        n += batch.len() as u64;
        on_batch();
    }
    sink.finish().map_err(CopyError::Write)?;
    Ok(n)
}
