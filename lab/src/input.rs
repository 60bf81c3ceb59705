//! Opening trace files: format detection, a checksum of the file's bytes
//! for the manifest, and a byte counter for the progress bar.
//!
//! A regular file in a format that decodes in segments (lackey, native) is
//! mapped into memory and decoded on two threads by a
//! [`traces::WholeReader`]; anything else (compressed files, other formats,
//! pipes) is streamed, and so is everything when the caller says not to
//! map (the command line's `NUMASIM_NO_MMAP=1`). A mapped
//! file must not be truncated while numasim reads it (the kernel would
//! stop the process with SIGBUS, as for any program that maps files).
//!
//! A process that may run on one CPU only (its affinity mask or CPU quota,
//! [`cpus`]) decodes on one thread, whatever it asked: a helper thread
//! would only take turns with the simulation on that CPU.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use traces::readahead::ReadAhead;
use traces::{Batch, Batches, Fields, Format, RecordSource, TraceError, Whole, WholeReader};

/// What can stop a trace from opening.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: cannot open trace: {error}")]
    Open { path: String, error: std::io::Error },
    #[error("{path}: cannot stat trace: {error}")]
    Stat { path: String, error: std::io::Error },
    #[error("{0}: is a directory, not a trace file")]
    Directory(String),
    /// The trace does not decode (the location is in `error`).
    #[error("{path}: {error}")]
    Trace { path: String, error: TraceError },
    #[error("{0}: no data accesses to replay")]
    NoData(String),
}

fn trace_err(path: &Path) -> impl FnOnce(TraceError) -> InputError + '_ {
    move |error| InputError::Trace {
        path: path.display().to_string(),
        error,
    }
}

type Result<T> = std::result::Result<T, InputError>;
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

/// A trace file mapped read-only into memory.
struct Mapped {
    ptr: *const u8,
    len: usize,
    tap: Arc<Tap>,
    /// Bytes hashed into the tap so far (only the consuming thread hashes).
    hashed: AtomicU64,
    /// Bytes at the start of the mapping already dropped from memory.
    released: AtomicU64,
}

// SAFETY: the mapping is read-only and lives until `Mapped` is dropped;
// sharing a pointer to immutable bytes between threads is sound.
unsafe impl Send for Mapped {}
unsafe impl Sync for Mapped {}

/// Consumed bytes are dropped from the process's memory in steps this
/// large, this far behind the reader, so memory stays bounded however long
/// the trace (the page cache keeps the file; nothing is re-read).
const RELEASE_STEP: u64 = 8 << 20;
const RELEASE_LAG: u64 = 4 << 20;

/// Drops the whole pages inside `[start, end)` of a mapping at `base` from
/// memory. Sound for a read-only file mapping: the pages are never
/// written, so nothing is lost, and a later read faults them back in.
fn release(base: *const u8, start: u64, end: u64) {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as u64,
        _ => 4096,
    };
    let (s, e) = (start.div_ceil(page) * page, end / page * page);
    if s < e {
        // SAFETY: `[s, e)` is page aligned and inside the mapping (callers
        // pass ranges within it).
        unsafe {
            libc::madvise(
                base.add(s as usize) as *mut libc::c_void,
                (e - s) as usize,
                libc::MADV_DONTNEED,
            );
        }
    }
}

impl Mapped {
    /// Maps `file` (`len` > 0 bytes); `None` if the kernel refuses.
    fn new(file: &File, len: u64, tap: Arc<Tap>) -> Option<Mapped> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(len).ok()?;
        // SAFETY: a fresh read-only private mapping of an open file; the
        // result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Mapped {
            ptr: ptr as *const u8,
            len,
            tap,
            hashed: AtomicU64::new(0),
            released: AtomicU64::new(0),
        })
    }
}

impl Whole for Mapped {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until drop.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn consumed(&self, upto: u64) {
        let upto = upto.min(self.len as u64);
        self.tap.bytes.store(upto, Ordering::Relaxed);
        if let Some(Ok(mut h)) = self.tap.hash.as_ref().map(|m| m.lock()) {
            let from = self.hashed.swap(upto, Ordering::Relaxed);
            if from < upto {
                h.update(&self.bytes()[from as usize..upto as usize]);
            }
        }
    }

    fn release(&self, upto: u64) {
        let target = upto.min(self.len as u64).saturating_sub(RELEASE_LAG);
        let done = self.released.load(Ordering::Relaxed);
        if target >= done + RELEASE_STEP
            && self
                .released
                .compare_exchange(done, target, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            release(self.ptr, done, target);
        }
    }

    fn unneeded(&self, start: u64, end: u64) {
        release(self.ptr, start, end.min(self.len as u64));
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no slice outlives `self`.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// Where an opened trace's records come from.
pub enum Source {
    /// A streaming reader (decoded ahead on a thread by [`Source::into_batches`]).
    Stream(Box<dyn RecordSource>),
    /// A mapped file decoded in segments on two threads.
    Whole(Box<WholeReader>),
}

/// CPUs this process may run on (its affinity mask and CPU quota).
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A stream read batch by batch on the caller's thread.
struct Inline(Box<dyn RecordSource>, Vec<Batch>);

impl Batches for Inline {
    fn next_batch(&mut self) -> Option<traces::error::Result<Batch>> {
        let mut b = self.1.pop().unwrap_or_else(|| Batch::new(self.0.fields()));
        b.clear();
        match self.0.fill(&mut b) {
            Ok(0) => None,
            Ok(_) => Some(Ok(b)),
            Err(e) => Some(Err(e)),
        }
    }

    fn recycle(&mut self, b: Batch) {
        self.1.push(b);
    }
}

impl Source {
    /// The records as batches, decoded ahead of the caller on another
    /// thread when the process has two CPUs ([`cpus`]).
    pub fn into_batches(self) -> Box<dyn Batches> {
        match self {
            Source::Stream(s) if cpus() < 2 => Box::new(Inline(s, Vec::new())),
            Source::Stream(s) => Box::new(ReadAhead::spawn(s)),
            Source::Whole(w) => w,
        }
    }

    fn get(&self) -> &dyn RecordSource {
        match self {
            Source::Stream(s) => s.as_ref(),
            Source::Whole(w) => w.as_ref(),
        }
    }
}

impl RecordSource for Source {
    fn fill(&mut self, out: &mut Batch) -> traces::error::Result<usize> {
        match self {
            Source::Stream(s) => s.fill(out),
            Source::Whole(w) => w.fill(out),
        }
    }

    fn fields(&self) -> Fields {
        self.get().fields()
    }

    fn format_name(&self) -> &'static str {
        self.get().format_name()
    }
}

/// An opened trace.
pub struct TraceInput {
    pub source: Source,
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

/// Opens `path` as a trace, detecting its format unless `forced`; with
/// `checksum`, every byte read is hashed for [`Tap::checksum`]. A mapped
/// trace decodes on `threads` threads (1 or 2; 1 on one CPU, [`cpus`]);
/// with `map` false, or when the file cannot be mapped, it is streamed.
pub fn open_trace(
    path: &Path,
    forced: Option<Format>,
    checksum: bool,
    threads: usize,
    map: bool,
) -> Result<TraceInput> {
    let p = || path.display().to_string();
    let file = File::open(path).map_err(|error| InputError::Open { path: p(), error })?;
    let meta = file
        .metadata()
        .map_err(|error| InputError::Stat { path: p(), error })?;
    if meta.is_dir() {
        return Err(InputError::Directory(p()));
    }
    let tap = Arc::new(Tap {
        bytes: AtomicU64::new(0),
        hash: checksum.then(|| Mutex::new(Xxh3::new())),
    });
    let name = path.file_name().and_then(|n| n.to_str());
    let may_map = map && meta.is_file() && meta.len() > 0;
    if let Some(m) = may_map
        .then(|| Mapped::new(&file, meta.len(), tap.clone()))
        .flatten()
    {
        let whole: Arc<dyn Whole> = Arc::new(m);
        let threads = threads.clamp(1, 2).min(cpus());
        let opened = traces::registry::open_whole(whole, name, forced, threads);
        if let Some(w) = opened.map_err(trace_err(path))? {
            return Ok(TraceInput {
                source: Source::Whole(Box::new(w)),
                tap,
                file_len: meta.len(),
            });
        }
    }
    let reader = TapReader {
        file,
        tap: tap.clone(),
    };
    let source = traces::registry::open(Box::new(reader), name, forced).map_err(trace_err(path))?;
    Ok(TraceInput {
        source: Source::Stream(source),
        tap,
        file_len: meta.len(),
    })
}

/// Every data access of a trace, in order (bounded only by the trace: live
/// replay needs the whole footprint mapped anyway).
pub fn load_accesses(
    path: &Path,
    format: Option<Format>,
    map: bool,
) -> Result<Vec<traces::Access>> {
    let mut input = open_trace(path, format, false, 2, map)?;
    let mut batch = Batch::new(input.source.fields());
    let mut all = Vec::new();
    loop {
        batch.clear();
        if input.source.fill(&mut batch).map_err(trace_err(path))? == 0 {
            break;
        }
        all.extend(batch.acc.iter().filter(|a| a.kind != traces::Kind::IFetch));
    }
    if all.is_empty() {
        return Err(InputError::NoData(path.display().to_string()));
    }
    Ok(all)
}
