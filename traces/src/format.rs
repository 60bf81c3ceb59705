//! Trace formats: what a format's registry entry holds ([`Entry`]: name,
//! how it is recognised, its reader, its whole-file reader if any, its
//! writers), the [`Format`] handle, compression layers, and the helpers
//! detection uses. The registry itself is [`crate::FORMATS`]; detection
//! and opening are in [`crate::registry`].

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

use crate::error::{Problem, Result, TraceError};
use crate::sink::Writer;
use crate::source::RecordSource;
use crate::whole::{Segments, Whole};

/// How a format is recognised.
pub enum Shape {
    /// Binary, opening with these magic bytes.
    Magic(&'static [u8]),
    /// Text whose first lines (the detection prefix) this test recognises.
    Text(fn(&[u8]) -> bool),
    /// Binary without magic: recognised by a name hint or by being compressed.
    Headless,
}

/// A buffered, decompressed byte stream a reader opens.
pub type Stream = BufReader<Box<dyn Read + Send>>;

/// Opens a file held whole in memory as segments decoded in parallel.
pub(crate) type OpenWhole = fn(Arc<dyn Whole>) -> Result<Box<dyn Segments>>;

/// One trace format.
pub struct Entry {
    /// Its name (`--format`, errors, `trace info`).
    pub name: &'static str,
    pub shape: Shape,
    /// File-name endings that name it.
    pub extensions: &'static [&'static str],
    /// Substrings of file names that hint at it.
    pub hints: &'static [&'static str],
    /// Its streaming reader.
    pub open: fn(Stream) -> Result<Box<dyn RecordSource>>,
    /// Its reader of a file held whole in memory, decoded in segments on
    /// several threads (formats that split into independent segments).
    pub(crate) segments: Option<OpenWhole>,
    /// The forms numasim writes it in.
    pub writers: &'static [Writer],
}

/// A trace file format: an entry of the registry.
#[derive(Clone, Copy)]
pub struct Format(&'static Entry);

impl Format {
    /// The handle of a registry entry.
    pub(crate) fn of(e: &'static Entry) -> Format {
        Format(e)
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// Its registry entry.
    pub fn entry(self) -> &'static Entry {
        self.0
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Format {}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}

/// A compression layer around a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Xz,
    Gzip,
    Zstd,
}

/// Recognises a compression layer by its magic bytes.
pub fn sniff_compression(prefix: &[u8]) -> Compression {
    if prefix.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
        Compression::Xz
    } else if prefix.starts_with(&[0x1F, 0x8B]) {
        Compression::Gzip
    } else if prefix.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        Compression::Zstd
    } else {
        Compression::None
    }
}

/// Whether a prefix is text (printable ASCII or UTF-8).
pub fn is_text(prefix: &[u8]) -> bool {
    let sample = &prefix[..prefix.len().min(4096)];
    // A cut UTF-8 sequence at the end of the sample is still text.
    !sample.is_empty()
        && sample.iter().all(|&c| {
            c == b'\n' || c == b'\r' || c == b'\t' || (0x20..0x7f).contains(&c) || c >= 0x80
        })
}

/// The first line of a text prefix that is not blank (without its `\r`).
pub fn first_line(prefix: &[u8]) -> &[u8] {
    prefix
        .split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !l.iter().all(|c| c.is_ascii_whitespace()))
        .unwrap_or(b"")
}

/// Unwraps compression `c` from `r`.
pub fn decompress(c: Compression, r: Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>> {
    Ok(match c {
        Compression::None => r,
        Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(r)),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(r)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::new(r)
                .map_err(|e| TraceError::at_offset(0, 0, Problem::Io(e)))?,
        ),
    })
}

/// Buffer size for the reader stack; also the detection window.
pub const BUF: usize = 256 * 1024;

/// The first bytes of `r` (a few KiB, or all of a shorter stream), left in its buffer.
pub fn peek<R: Read>(r: &mut BufReader<R>) -> Result<Vec<u8>> {
    // Read until we have a few KiB or the stream ends (decoders may return short reads).
    let mut prefix = Vec::new();
    let buf = r
        .fill_buf()
        .map_err(|e| TraceError::at_offset(0, 0, Problem::Io(e)))?;
    prefix.extend_from_slice(&buf[..buf.len().min(8192)]);
    Ok(prefix)
}

/// Unwraps a compression layer (xz, gzip, zstd, recognised by magic) from a
/// byte stream; plain streams pass through.
pub fn decompressed(inner: Box<dyn Read + Send>) -> Result<BufReader<Box<dyn Read + Send>>> {
    let mut outer = BufReader::with_capacity(BUF, inner);
    let prefix = peek(&mut outer)?;
    let c = sniff_compression(&prefix);
    if c == Compression::None {
        return Ok(BufReader::with_capacity(BUF, Box::new(outer)));
    }
    Ok(BufReader::with_capacity(
        BUF,
        decompress(c, Box::new(outer))?,
    ))
}
