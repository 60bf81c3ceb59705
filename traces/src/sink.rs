//! Writing traces: one [`RecordSink`] trait for every format numasim
//! writes, and the registry of those formats ([`WRITERS`]: name, file
//! extensions, how to start a writer). A new output format is one writer
//! plus one line here; `trace gen`/`trace convert`'s `--to`, the extension
//! rule and their error messages come from the table.

use std::io::Write;

use crate::csvfmt::CsvWriter;
use crate::error::TraceError;
use crate::native::Codec;
use crate::native::write::NativeWriter;
use crate::record::{Batch, Fields, Record};
use crate::source::RecordSource;

/// A trace being written, record by record, into a borrowed byte sink.
pub trait RecordSink {
    fn write(&mut self, r: &Record) -> std::io::Result<()>;
    /// Writes whatever the format keeps for its end and flushes.
    fn finish(self: Box<Self>) -> std::io::Result<()>;
}

impl<W: Write> RecordSink for NativeWriter<W> {
    fn write(&mut self, r: &Record) -> std::io::Result<()> {
        NativeWriter::write(self, r)
    }
    fn finish(self: Box<Self>) -> std::io::Result<()> {
        NativeWriter::finish(*self).map(drop)
    }
}

impl<W: Write> RecordSink for CsvWriter<W> {
    fn write(&mut self, r: &Record) -> std::io::Result<()> {
        CsvWriter::write(self, r)
    }
    fn finish(self: Box<Self>) -> std::io::Result<()> {
        CsvWriter::finish(*self).map(drop)
    }
}

/// Lackey's text, one line per record.
struct LackeySink<W>(W);

impl<W: Write> RecordSink for LackeySink<W> {
    fn write(&mut self, r: &Record) -> std::io::Result<()> {
        crate::lackey::write_record(&mut self.0, r)
    }
    fn finish(mut self: Box<Self>) -> std::io::Result<()> {
        self.0.flush()
    }
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

/// Every format numasim writes.
pub const WRITERS: &[Writer] = &[
    Writer {
        name: "native",
        extensions: &[".nst"],
        open: |out, fields, meta| Ok(Box::new(NativeWriter::new(out, fields, Codec::None, meta)?)),
    },
    Writer {
        name: "native-zstd",
        extensions: &[".nst.zst"],
        open: |out, fields, meta| Ok(Box::new(NativeWriter::new(out, fields, Codec::Zstd, meta)?)),
    },
    Writer {
        name: "csv",
        extensions: &[".csv"],
        open: |out, fields, _| Ok(Box::new(CsvWriter::new(out, fields)?)),
    },
    Writer {
        name: "lackey",
        extensions: &[".lackey"],
        open: |out, _, _| Ok(Box::new(LackeySink(out))),
    },
];

/// "a, b, c or d" of the writers' names.
pub fn names() -> String {
    let n: Vec<&str> = WRITERS.iter().map(|w| w.name).collect();
    match n.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => n.join(""),
    }
}

/// Every extension, in registry order (`.nst, .nst.zst, …`).
pub fn extensions() -> String {
    let e: Vec<&str> = WRITERS
        .iter()
        .flat_map(|w| w.extensions.iter().copied())
        .collect();
    e.join(", ")
}

/// The writer named `s` (a name, or an extension without its dot).
pub fn by_name(s: &str) -> Option<&'static Writer> {
    WRITERS
        .iter()
        .find(|w| w.name == s || w.extensions.iter().any(|e| e.strip_prefix('.') == Some(s)))
}

/// The writer a file name's extension names (the longest matching one:
/// `.nst.zst` over `.nst`), case-insensitively.
pub fn by_file_name(name: &str) -> Option<&'static Writer> {
    let name = name.to_ascii_lowercase();
    WRITERS
        .iter()
        .flat_map(|w| w.extensions.iter().map(move |e| (w, e)))
        .filter(|(_, e)| name.ends_with(*e))
        .max_by_key(|(_, e)| e.len())
        .map(|(w, _)| w)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_names_formats_by_name_and_extension() {
        assert_eq!(names(), "native, native-zstd, csv or lackey");
        assert_eq!(extensions(), ".nst, .nst.zst, .csv, .lackey");
        assert_eq!(by_name("nst.zst").map(|w| w.name), Some("native-zstd"));
        assert_eq!(by_name("lackey").map(|w| w.name), Some("lackey"));
        assert!(by_name("din").is_none());
        assert_eq!(
            by_file_name("A.NST.ZST").map(|w| w.name),
            Some("native-zstd")
        );
        assert_eq!(by_file_name("a.nst").map(|w| w.name), Some("native"));
        assert!(by_file_name("a.txt").is_none());
    }

    #[test]
    fn every_writer_round_trips_through_the_readers() {
        let fields = Fields::default();
        let recs: Vec<Record> = (0..5u64)
            .map(|i| Record::access(0, crate::Kind::Load, 0x1000 + 64 * i, 8))
            .collect();
        for w in WRITERS {
            let mut out = Vec::new();
            let mut src = crate::VecSource::new(recs.clone(), fields);
            let n = copy(&mut src, w, &mut out, &serde_json::json!({}), || {}).unwrap();
            assert_eq!(n, 5, "{}", w.name);
            let mut back = crate::open(Box::new(std::io::Cursor::new(out)), None, None).unwrap();
            let got = crate::collect_all(back.as_mut()).unwrap();
            assert_eq!(got.len(), 5, "{}", w.name);
            assert_eq!(got[4].addr, 0x1000 + 64 * 4, "{}", w.name);
        }
    }
}
