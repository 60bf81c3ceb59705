//! Format detection and opening a byte stream as a [`RecordSource`].
//!
//! Detection order: an explicit format wins; otherwise the first bytes decide
//! (native magic; xz / gzip / zstd magic unwrap a compression layer and look
//! again), then the text shape of the first line (lackey, CSV header, din),
//! then the name (ChampSim traces are binary without magic, so they are
//! recognised by a `champsim` name or by being compressed binary).

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

use crate::champsim::ChampSimReader;
use crate::csvfmt::CsvReader;
use crate::din::DinReader;
use crate::error::{Problem, Result, TraceError};
use crate::lackey::LackeyReader;
use crate::lackey::whole::{LackeySegments, SEGMENT};
use crate::native::whole::NativeSegments;
use crate::native::{MAGIC, NativeReader};
use crate::source::RecordSource;
use crate::whole::{Segments, Whole, WholeReader};

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Native,
    Lackey,
    Csv,
    Din,
    ChampSim,
    MlDpc,
}

impl Format {
    /// All formats with their names, for CLI help and errors.
    pub const ALL: [(Format, &'static str); 6] = [
        (Format::Native, "native"),
        (Format::Lackey, "lackey"),
        (Format::Csv, "csv"),
        (Format::Din, "din"),
        (Format::ChampSim, "champsim"),
        (Format::MlDpc, "mldpc"),
    ];

    /// Parses a format name.
    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(s))
            .map(|(f, _)| *f)
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        Format::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
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

fn is_text(prefix: &[u8]) -> bool {
    let sample = &prefix[..prefix.len().min(4096)];
    // A cut UTF-8 sequence at the end of the sample is still text.
    !sample.is_empty()
        && sample.iter().all(|&c| {
            c == b'\n' || c == b'\r' || c == b'\t' || (0x20..0x7f).contains(&c) || c >= 0x80
        })
}

/// Guesses the format of an uncompressed prefix; `None` if nothing fits.
pub fn detect(prefix: &[u8], name: Option<&str>, compressed: bool) -> Option<Format> {
    if prefix.starts_with(MAGIC) {
        return Some(Format::Native);
    }
    let lname = name.map(|n| n.to_ascii_lowercase()).unwrap_or_default();
    if lname.ends_with(".nst") || lname.ends_with(".nst.zst") {
        // Named native: let the native reader say what is wrong with it.
        return Some(Format::Native);
    }
    if is_text(prefix) {
        let first = prefix
            .split(|&c| c == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .find(|l| !l.iter().all(|c| c.is_ascii_whitespace()))
            .unwrap_or(b"");
        if first.starts_with(b"==")
            || first.starts_with(b"I  ")
            || [b" L ", b" S ", b" M "]
                .iter()
                .any(|p| first.starts_with(*p))
        {
            return Some(Format::Lackey);
        }
        // ML-DPC traces may open with simulator chatter (`***`, `Read`).
        let first_load = prefix
            .split(|&c| c == b'\n')
            .map(<[u8]>::trim_ascii)
            .find(|l| !l.is_empty() && !l.starts_with(b"***") && !l.starts_with(b"Read"))
            .unwrap_or(b"");
        if crate::mldpc::looks_like(first_load) {
            return Some(Format::MlDpc);
        }
        let lower = first.to_ascii_lowercase();
        if lower.contains(&b',') && lower.windows(6).any(|w| w == b"thread") {
            return Some(Format::Csv);
        }
        let mut it = first
            .split(|c| *c == b' ' || *c == b'\t')
            .filter(|f| !f.is_empty());
        if let (Some(label), Some(addr)) = (it.next(), it.next())
            && matches!(
                label,
                b"0" | b"1" | b"2" | b"3" | b"4" | b"r" | b"w" | b"i" | b"m"
            )
            && addr.iter().all(|c| c.is_ascii_hexdigit() || *c == b'x')
        {
            return Some(Format::Din);
        }
        if lname.ends_with(".csv") {
            return Some(Format::Csv);
        }
        if lname.ends_with(".din") {
            return Some(Format::Din);
        }
        if lname.contains("lackey") {
            return Some(Format::Lackey);
        }
        return None;
    }
    if lname.contains("champsim") || compressed {
        return Some(Format::ChampSim);
    }
    None
}

fn decompress(c: Compression, r: Box<dyn Read + Send>) -> Result<Box<dyn Read + Send>> {
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
const BUF: usize = 256 * 1024;

fn peek<R: Read>(r: &mut BufReader<R>) -> Result<Vec<u8>> {
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
    Ok(match format {
        // The native reader reads whole blocks: hand it the bytes already
        // buffered, then the stream itself, so payloads are not copied twice.
        Format::Native => {
            let buffered = std::io::Cursor::new(rd.buffer().to_vec());
            Box::new(NativeReader::new(buffered.chain(rd.into_inner()))?)
        }
        Format::Lackey => Box::new(LackeyReader::new(rd)),
        Format::Csv => Box::new(CsvReader::new(rd)?),
        Format::Din => Box::new(DinReader::new(rd)),
        Format::ChampSim => Box::new(ChampSimReader::new(rd)),
        Format::MlDpc => Box::new(crate::mldpc::MlDpcReader::new(rd)),
    })
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
    let segs: Box<dyn Segments> = match forced.or_else(|| detect(prefix, name, false)) {
        Some(Format::Lackey) => Box::new(LackeySegments::new(whole.clone(), SEGMENT)),
        Some(Format::Native) => Box::new(NativeSegments::new(whole.clone())?),
        _ => return Ok(None),
    };
    Ok(Some(WholeReader::new(segs, whole, threads)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content() {
        assert_eq!(
            detect(b"==12== Lackey\nI  0400,3\n", None, false),
            Some(Format::Lackey)
        );
        assert_eq!(detect(b"I  0400,3\n", None, false), Some(Format::Lackey));
        assert_eq!(
            detect(b"thread,op,addr,size\n", None, false),
            Some(Format::Csv)
        );
        assert_eq!(detect(b"2 0\n0 1000\n", None, false), Some(Format::Din));
        assert_eq!(
            detect(b"*** x\n3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0\n", None, false),
            Some(Format::MlDpc)
        );
        assert_eq!(
            detect(b"3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0\n", None, false),
            Some(Format::MlDpc)
        );
        assert_eq!(
            detect(b"NUMASIMT\x01\x00", None, false),
            Some(Format::Native)
        );
        assert_eq!(
            detect(&[0u8, 1, 2, 200, 7], Some("x.champsimtrace"), false),
            Some(Format::ChampSim)
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
}
