//! Opening trace files: format detection, a checksum of the file's bytes
//! for the manifest, and a byte counter for the progress bar.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow};
use traces::{Format, RecordSource, TraceError};
use xxhash_rust::xxh3::Xxh3;

/// What the run saw of the file, shared with the reader thread.
#[derive(Default)]
pub struct Tap {
    bytes: AtomicU64,
    /// `None` when no one asked for the checksum (hashing costs ~10% of a
    /// native replay).
    hash: Option<Mutex<Xxh3>>,
}

impl Tap {
    /// Bytes read from the file so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// `xxh3-128:<hex>` of every byte read so far (the whole file once the
    /// reader has finished).
    pub fn checksum(&self) -> Option<String> {
        let h = self.hash.as_ref()?.lock().map(|h| h.digest128()).ok()?;
        Some(format!("xxh3-128:{h:032x}"))
    }
}

struct TapReader {
    file: File,
    tap: Arc<Tap>,
}

impl Read for TapReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.tap.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(Ok(mut h)) = self.tap.hash.as_ref().map(|m| m.lock()) {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
}

/// An opened trace.
pub struct TraceInput {
    pub source: Box<dyn RecordSource>,
    pub tap: Arc<Tap>,
    pub file_len: u64,
}

/// The manifest entry of a trace that was read through `tap`.
pub fn manifest_input(path: &Path, format: &str, tap: &Tap) -> serde_json::Value {
    serde_json::json!({
        "role": "trace",
        "path": path.display().to_string(),
        "format": format,
        "bytes": tap.bytes(),
        "checksum": tap.checksum(),
    })
}

/// Formats a trace error as `PATH: line N, record M: problem`.
pub fn trace_err(path: &Path, e: TraceError) -> anyhow::Error {
    anyhow!("{}: {e}", path.display())
}

/// Parses a `--format` value.
pub fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|(_, n)| *n).collect();
        format!("unknown format {s:?}; expected one of {}", names.join(", "))
    })
}

/// Opens `path` as a trace, detecting its format unless `forced`; with
/// `checksum`, every byte read is hashed for [`Tap::checksum`].
pub fn open_trace(path: &Path, forced: Option<Format>, checksum: bool) -> Result<TraceInput> {
    let file =
        File::open(path).with_context(|| format!("{}: cannot open trace", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("{}: cannot stat trace", path.display()))?;
    if meta.is_dir() {
        anyhow::bail!("{}: is a directory, not a trace file", path.display());
    }
    let tap = Arc::new(Tap {
        bytes: AtomicU64::new(0),
        hash: checksum.then(|| Mutex::new(Xxh3::new())),
    });
    let reader = TapReader {
        file,
        tap: tap.clone(),
    };
    let name = path.file_name().and_then(|n| n.to_str());
    let source = traces::open(Box::new(reader), name, forced).map_err(|e| trace_err(path, e))?;
    Ok(TraceInput {
        source,
        tap,
        file_len: meta.len(),
    })
}
