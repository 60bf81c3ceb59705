//! The registry of trace formats ([`crate::FORMATS`]) put to use: formats
//! by name, detection, opening a byte stream (or a whole file in memory)
//! as a [`RecordSource`], and the writers by name or file extension.
//!
//! Detection order: an explicit format wins; otherwise the first bytes decide
//! (a format's magic; xz / gzip / zstd magic unwrap a compression layer and
//! look again; a file named with a magic format's extension is that format,
//! whose reader then says what is wrong), then the text shape of the first
//! lines (each text format's test, in registry order), then the name (text
//! formats' extensions, then their name hints); a binary file without magic
//! is a headless format (ChampSim) by name hint or by being compressed.

use std::io::{BufReader, Read};
use std::sync::Arc;

use crate::error::{Problem, Result, TraceError};
use crate::format::{
    BUF, Compression, Entry, Format, Shape, decompress, is_text, peek, sniff_compression,
};
use crate::sink::Writer;
use crate::source::RecordSource;
use crate::whole::{Whole, WholeReader};

impl Format {
    /// Every format, in registry order.
    pub fn all() -> impl Iterator<Item = Format> {
        crate::FORMATS.iter().map(|e| Format::of(e))
    }

    /// Every format's name, in registry order (for help and errors).
    pub fn names() -> Vec<&'static str> {
        Format::all().map(Format::name).collect()
    }

    /// Parses a format name.
    pub fn from_name(s: &str) -> Option<Format> {
        Format::all().find(|f| f.name().eq_ignore_ascii_case(s))
    }
}

/// Guesses the format of an uncompressed prefix; `None` if nothing fits.
pub fn detect(prefix: &[u8], name: Option<&str>, compressed: bool) -> Option<Format> {
    let lname = name.map(|n| n.to_ascii_lowercase()).unwrap_or_default();
    let named = |e: &Entry| e.extensions.iter().any(|x| lname.ends_with(x));
    let hinted = |e: &Entry| e.hints.iter().any(|h| lname.contains(h));
    let magic = |e: &Entry| matches!(e.shape, Shape::Magic(_));
    let first = |test: &dyn Fn(&Entry) -> bool| Format::all().find(|f| test(f.entry()));
    if let Some(f) = first(&|e| matches!(e.shape, Shape::Magic(m) if prefix.starts_with(m))) {
        return Some(f);
    }
    // Named as a magic format: let its reader say what is wrong with it.
    if let Some(f) = first(&|e| magic(e) && named(e)) {
        return Some(f);
    }
    if is_text(prefix) {
        let text = |e: &Entry| matches!(e.shape, Shape::Text(_));
        return first(&|e| matches!(e.shape, Shape::Text(t) if t(prefix)))
            .or_else(|| first(&|e| text(e) && named(e)))
            .or_else(|| first(&|e| text(e) && hinted(e)));
    }
    first(&|e| matches!(e.shape, Shape::Headless) && (hinted(e) || compressed))
}

/// Opens a byte stream as a record source: unwraps compression, detects the
/// format (unless `forced`), and builds the reader. `name` (a file name) is
/// only a hint for detection.
pub fn open(
    inner: Box<dyn Read + Send>,
    name: Option<&str>,
    forced: Option<Format>,
) -> Result<Box<dyn RecordSource>> {
    let mut outer = BufReader::with_capacity(BUF, inner);
    let prefix = peek(&mut outer)?;
    if prefix.is_empty() {
        return Err(TraceError::at_offset(0, 0, Problem::Empty));
    }
    let compression = sniff_compression(&prefix);
    let (rd, prefix): (BufReader<Box<dyn Read + Send>>, Vec<u8>) =
        if compression == Compression::None {
            (BufReader::with_capacity(BUF, Box::new(outer)), prefix)
        } else {
            let mut d = BufReader::with_capacity(BUF, decompress(compression, Box::new(outer))?);
            let p = peek(&mut d)?;
            if p.is_empty() {
                return Err(TraceError::at_offset(0, 0, Problem::Empty));
            }
            (d, p)
        };
    let format = match forced {
        Some(f) => f,
        None => detect(&prefix, name, compression != Compression::None)
            .ok_or_else(|| TraceError::at_offset(0, 0, Problem::UnknownFormat))?,
    };
    (format.entry().open)(rd)
}

/// Opens a trace held whole in memory for decoding on `threads` threads
/// (1 or 2), when its format splits into independent segments: lackey and
/// native, stored without an outer compression layer. `Ok(None)` for
/// anything else, or when the format cannot be told: the caller streams
/// the bytes through [`open`] instead (which words any error). A native
/// header's errors are the streaming reader's.
pub fn open_whole(
    whole: Arc<dyn Whole>,
    name: Option<&str>,
    forced: Option<Format>,
    threads: usize,
) -> Result<Option<WholeReader>> {
    let bytes = whole.bytes();
    let prefix = &bytes[..bytes.len().min(8192)];
    if prefix.is_empty() || sniff_compression(prefix) != Compression::None {
        return Ok(None);
    }
    let Some(segments) = forced
        .or_else(|| detect(prefix, name, false))
        .and_then(|f| f.entry().segments)
    else {
        return Ok(None);
    };
    let segs = segments(whole.clone())?;
    Ok(Some(WholeReader::new(segs, whole, threads)))
}

/// Every form numasim writes a trace in: each format's writers, in
/// registry order.
pub fn writers() -> impl Iterator<Item = &'static Writer> {
    crate::FORMATS.iter().flat_map(|f| f.writers.iter())
}

/// "a, b, c or d" of the writers' names.
pub fn writer_names() -> String {
    let n: Vec<&str> = writers().map(|w| w.name).collect();
    match n.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => n.join(""),
    }
}

/// Every extension, in registry order (`.nst, .nst.zst, …`).
pub fn writer_extensions() -> String {
    let e: Vec<&str> = writers()
        .flat_map(|w| w.extensions.iter().copied())
        .collect();
    e.join(", ")
}

/// The writer named `s` (a name, or an extension without its dot).
pub fn writer_named(s: &str) -> Option<&'static Writer> {
    writers().find(|w| w.name == s || w.extensions.iter().any(|e| e.strip_prefix('.') == Some(s)))
}

/// The writer a file name's extension names (the longest matching one:
/// `.nst.zst` over `.nst`), case-insensitively.
pub fn writer_for(name: &str) -> Option<&'static Writer> {
    let name = name.to_ascii_lowercase();
    writers()
        .flat_map(|w| w.extensions.iter().map(move |e| (w, e)))
        .filter(|(_, e)| name.ends_with(*e))
        .max_by_key(|(_, e)| e.len())
        .map(|(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Fields, Record};
    use crate::sink::copy;

    #[test]
    fn detects_by_content() {
        assert_eq!(
            detect(b"==12== Lackey\nI  0400,3\n", None, false),
            Format::from_name("lackey")
        );
        assert_eq!(
            detect(b"I  0400,3\n", None, false),
            Format::from_name("lackey")
        );
        assert_eq!(
            detect(b"thread,op,addr,size\n", None, false),
            Format::from_name("csv")
        );
        assert_eq!(
            detect(b"2 0\n0 1000\n", None, false),
            Format::from_name("din")
        );
        assert_eq!(
            detect(b"*** x\n3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0\n", None, false),
            Format::from_name("mldpc")
        );
        assert_eq!(
            detect(b"3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0\n", None, false),
            Format::from_name("mldpc")
        );
        assert_eq!(
            detect(b"NUMASIMT\x01\x00", None, false),
            Format::from_name("native")
        );
        assert_eq!(
            detect(&[0u8, 1, 2, 200, 7], Some("x.champsimtrace"), false),
            Format::from_name("champsim")
        );
        assert_eq!(detect(&[0u8, 1, 2, 200, 7], Some("x.bin"), false), None);
        assert_eq!(detect(b"hello world\n", None, false), None);
    }

    #[test]
    fn opens_compressed_text() {
        use std::io::Write;
        let text = b"I  0400,3\n L 1000,8\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let bytes = gz.finish().unwrap();
        let mut src = open(Box::new(std::io::Cursor::new(bytes)), None, None).unwrap();
        assert_eq!(src.format_name(), "lackey");
        assert_eq!(crate::collect_all(src.as_mut()).unwrap().len(), 2);
    }

    #[test]
    fn the_registry_names_formats_by_name_and_extension() {
        assert_eq!(writer_names(), "native, native-zstd, lackey or csv");
        assert_eq!(writer_extensions(), ".nst, .nst.zst, .lackey, .csv");
        assert_eq!(writer_named("nst.zst").map(|w| w.name), Some("native-zstd"));
        assert_eq!(writer_named("lackey").map(|w| w.name), Some("lackey"));
        assert!(writer_named("din").is_none());
        assert_eq!(writer_for("A.NST.ZST").map(|w| w.name), Some("native-zstd"));
        assert_eq!(writer_for("a.nst").map(|w| w.name), Some("native"));
        assert!(writer_for("a.txt").is_none());
    }

    #[test]
    fn every_writer_round_trips_through_the_readers() {
        let fields = Fields::default();
        // Every kind, several threads and sizes.
        let kinds = [
            crate::Kind::IFetch,
            crate::Kind::Load,
            crate::Kind::Store,
            crate::Kind::Modify,
            crate::Kind::Load,
        ];
        let recs: Vec<Record> = (0..5u64)
            .map(|i| Record::access(i as u32 % 2, kinds[i as usize], 0x1000 + 64 * i, 1 << i))
            .collect();
        for w in writers() {
            let mut out = Vec::new();
            let mut src = crate::VecSource::new(recs.clone(), fields);
            let n = copy(&mut src, w, &mut out, &serde_json::json!({}), || {}).unwrap();
            assert_eq!(n, 5, "{}", w.name);
            let mut back = open(Box::new(std::io::Cursor::new(out)), None, None).unwrap();
            let got = crate::collect_all(back.as_mut()).unwrap();
            let core = |r: &Record| (r.kind, r.addr, r.size, r.thread);
            let want: Vec<_> = recs.iter().map(core).collect();
            let got: Vec<_> = got.iter().map(core).collect();
            if w.name == "lackey" {
                // Lackey has no thread column: every record reads back as thread 0.
                let want: Vec<_> = want.iter().map(|&(k, a, s, _)| (k, a, s, 0)).collect();
                assert_eq!(got, want, "{}", w.name);
            } else {
                assert_eq!(got, want, "{}", w.name);
            }
        }
    }
}
