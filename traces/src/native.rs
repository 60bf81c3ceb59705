//! The native numasim trace format (`.nst`, `.nst.zst`); spec in
//! `docs/trace-format.md`.
//!
//! Layout: a 32-byte header plus a JSON metadata blob, then blocks of
//! fixed-size little-endian records, each block with its own CRC32C
//! checksum and optionally zstd-compressed, then an end trailer that carries
//! the total record count (so a file cut at a block boundary is still caught).
//! Inside a block the records are stored column-wise: the 16-byte
//! [`Access`] cores, then the PC column, then the time column (each present
//! only if the header says so).
//!
//! Speed: the 16-byte core on disk is exactly [`Access`] in memory (on a
//! little-endian machine), so decoding a batch is one copy and one check of
//! the copied bytes (a branch-free OR over kind, size and flag checks), done
//! one [`BATCH`] at a time so the decoded batch stays in L2. Memory is
//! bounded by one block. A file held whole in memory decodes block by block
//! on two threads (`whole.rs`).

use std::io::Read;

mod cores;
pub(crate) mod whole;
pub mod write;

#[cfg(test)]
pub(crate) use cores::{bad_record, first_bad};
use cores::{push_cores, push_u64s};

use crate::error::{Block, Header, Problem, Result, Short, TraceError, Unpack};
use crate::horizon;
use crate::record::{BATCH, Fields};
use crate::record::{Batch, FLAG_GAP, FLAG_MASK, FLAG_PC, FLAG_TASK, FLAG_TIME, Record};
use crate::source::RecordSource;

/// File magic, 8 bytes.
pub const MAGIC: &[u8; 8] = b"NUMASIMT";
/// Current format version. Version 2 adds task markers (header field bit
/// [`FIELD_TASKS`], records flagged [`FLAG_TASK`]); a file without them is
/// written as version 1, which every earlier reader reads.
pub const VERSION: u16 = 2;
/// Header bytes before the metadata blob.
pub const HEADER_BYTES: usize = 32;
/// Block header bytes.
pub const BLOCK_HEADER_BYTES: usize = 24;
/// Tag of a data block.
pub const BLOCK_TAG: &[u8; 4] = b"NSTB";
/// Tag of the end trailer.
pub const END_TAG: &[u8; 4] = b"NSTE";
/// Default records per block (1 MiB of 16-byte records).
pub const DEFAULT_BLOCK_RECORDS: u32 = 65536;
/// Largest block a reader accepts (records).
pub const MAX_BLOCK_RECORDS: u32 = 1 << 22;
/// Largest metadata blob a reader accepts (bytes).
pub const MAX_META: u32 = 1 << 20;

const FIELD_PC: u32 = 1;
pub(crate) const FIELD_TIME: u32 = 2;
/// Header field bit (version 2): the file is a task trace — its records
/// include task markers, read by [`crate::task_native`] only.
pub const FIELD_TASKS: u32 = 4;

/// Block payload encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    None = 0,
    Zstd = 1,
}

/// Bytes per record for a field set.
pub fn record_bytes(fields: Fields) -> usize {
    16 + 8 * fields.pc as usize + 8 * fields.time as usize
}

fn field_bits(fields: Fields) -> u32 {
    (fields.pc as u32 * FIELD_PC) | (fields.time as u32 * FIELD_TIME)
}

/// Header checksum: CRC32C over header bytes 0..28, then the metadata.
fn header_checksum(head: &[u8], meta: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&head[..28]), meta)
}

/// Block checksum: CRC32C (hardware-accelerated where the CPU has it, about
/// twice the speed of xxh3 without AVX2 on the machines we measured).
#[inline]
pub fn block_checksum(payload: &[u8]) -> u32 {
    crc32c::crc32c(payload)
}

/// Streaming native reader.
pub struct NativeReader<R> {
    inner: R,
    layout: Layout,
    meta: serde_json::Value,
    /// Decoded (raw) payload of the current block and the next record in it.
    raw: Vec<u8>,
    packed: Vec<u8>,
    block_n: usize,
    block_pos: usize,
    /// File offset of the current block's payload, and the block's index.
    block_offset: u64,
    block_index: u64,
    offset: u64,
    records: u64,
    /// Decompressed-stream offset of the last `fill`'s first record core.
    fill_offset: u64,
    done: bool,
    dctx: Option<zstd::bulk::Decompressor<'static>>,
}

fn read_exact_or_eof<R: Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

impl<R: Read + Send> NativeReader<R> {
    /// Reads and checks the header of a plain trace (a task trace is
    /// refused: its markers are not accesses).
    pub fn new(inner: R) -> Result<Self> {
        Self::open(inner, false)
    }

    /// Reads and checks the header of a task trace (or a plain one):
    /// records may be task markers ([`FLAG_TASK`]).
    pub fn new_tasks(inner: R) -> Result<Self> {
        Self::open(inner, true)
    }

    /// True if the file's header says it holds task markers.
    pub fn has_tasks(&self) -> bool {
        self.layout.tasks
    }

    /// File offset the reader has reached (after the trailer, the file's length).
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// Decompressed-stream offset of the first record core of the last
    /// batch filled (record `i` of that batch is at `+ 16·i`).
    pub fn fill_offset(&self) -> u64 {
        self.fill_offset
    }

    fn open(mut inner: R, allow_tasks: bool) -> Result<Self> {
        let err = |offset: u64, p: Problem| TraceError::at_offset(offset, 0, p);
        let mut head = [0u8; HEADER_BYTES];
        let got = read_exact_or_eof(&mut inner, &mut head).map_err(|e| err(0, Problem::Io(e)))?;
        if got == 0 {
            return Err(err(0, Problem::Empty));
        }
        if got < 8 || &head[0..8] != MAGIC {
            return Err(err(
                0,
                Problem::BadMagic {
                    format: "numasim native trace",
                    found: String::from_utf8_lossy(&head[..got.min(8)]).into_owned(),
                },
            ));
        }
        if got < HEADER_BYTES {
            return Err(err(
                got as u64,
                Problem::Truncated(Short::Header {
                    got,
                    want: HEADER_BYTES,
                }),
            ));
        }
        let version = u16::from_le_bytes([head[8], head[9]]);
        if version > VERSION {
            return Err(err(
                8,
                Problem::FutureVersion {
                    found: version as u32,
                    supported: VERSION as u32,
                },
            ));
        }
        if version == 0 {
            return Err(err(
                8,
                Problem::Header(Header::VersionZero),
            ));
        }
        let rec_bytes = u16::from_le_bytes([head[10], head[11]]) as usize;
        let bits = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes"));
        let known = FIELD_PC | FIELD_TIME | if version >= 2 { FIELD_TASKS } else { 0 };
        if bits & !known != 0 {
            return Err(err(
                12,
                Problem::Header(Header::FieldBits(bits)),
            ));
        }
        let tasks = bits & FIELD_TASKS != 0;
        if let Some(problem) = task_refusal(bits, allow_tasks) {
            return Err(err(12, problem));
        }
        let fields = Fields {
            pc: bits & FIELD_PC != 0,
            time: bits & FIELD_TIME != 0,
        };
        if rec_bytes != record_bytes(fields) {
            return Err(err(
                10,
                Problem::Header(Header::RecordSize {
                    found: rec_bytes,
                    expected: record_bytes(fields),
                }),
            ));
        }
        let codec = match head[16] {
            0 => Codec::None,
            1 => Codec::Zstd,
            c => return Err(err(16, Problem::Header(Header::Codec(c)))),
        };
        let block_records = u32::from_le_bytes(head[20..24].try_into().expect("4 bytes"));
        if block_records == 0 || block_records > MAX_BLOCK_RECORDS {
            return Err(err(
                20,
                Problem::Header(Header::BlockRecords(block_records)),
            ));
        }
        let meta_len = u32::from_le_bytes(head[24..28].try_into().expect("4 bytes"));
        if meta_len > MAX_META {
            return Err(err(
                24,
                Problem::Header(Header::MetadataLength(meta_len)),
            ));
        }
        let mut meta = vec![0u8; meta_len as usize];
        let got = read_exact_or_eof(&mut inner, &mut meta)
            .map_err(|e| err(HEADER_BYTES as u64, Problem::Io(e)))?;
        if got < meta.len() {
            return Err(err(
                (HEADER_BYTES + got) as u64,
                Problem::Truncated(Short::Metadata {
                    got,
                    want: meta_len,
                }),
            ));
        }
        let stored = u32::from_le_bytes(head[28..32].try_into().expect("4 bytes"));
        let computed = header_checksum(&head, &meta);
        if stored != computed {
            return Err(err(
                28,
                Problem::Header(Header::Checksum { stored, computed }),
            ));
        }
        let meta_json = if meta.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&meta).map_err(|e| {
                err(
                    HEADER_BYTES as u64,
                    Problem::Header(Header::Metadata(e)),
                )
            })?
        };
        Ok(NativeReader {
            inner,
            layout: Layout {
                fields,
                codec,
                rec_bytes,
                block_records,
                tasks,
            },
            meta: meta_json,
            raw: Vec::new(),
            packed: Vec::new(),
            block_n: 0,
            block_pos: 0,
            block_offset: 0,
            block_index: 0,
            offset: (HEADER_BYTES + meta.len()) as u64,
            records: 0,
            fill_offset: 0,
            done: false,
            dctx: None,
        })
    }

    /// The metadata blob written with the trace.
    pub fn meta(&self) -> &serde_json::Value {
        &self.meta
    }

    /// Reads the next block; returns false at the trailer.
    fn next_block(&mut self) -> Result<bool> {
        let at = self.offset;
        let mut h = [0u8; BLOCK_HEADER_BYTES];
        let got = read_exact_or_eof(&mut self.inner, &mut h)
            .map_err(|e| TraceError::at_offset(at, self.records, Problem::Io(e)))?;
        if got < BLOCK_HEADER_BYTES {
            return Err(short_header(at, got, self.records));
        }
        let head = self
            .layout
            .check_head(&h, at, self.records, self.block_index)?;
        let payload_at = at + BLOCK_HEADER_BYTES as u64;
        let buf = if self.layout.codec == Codec::None || head.is_end {
            &mut self.raw
        } else {
            &mut self.packed
        };
        buf.resize(head.stored_len, 0);
        let got = read_exact_or_eof(&mut self.inner, buf)
            .map_err(|e| TraceError::at_offset(payload_at, self.records, Problem::Io(e)))?;
        if got < head.stored_len {
            return Err(short_payload(
                payload_at,
                got,
                head.stored_len,
                self.records,
                self.block_index,
            ));
        }
        check_payload(
            buf,
            head.checksum,
            payload_at,
            self.records,
            self.block_index,
        )?;
        self.offset = payload_at + head.stored_len as u64;
        if head.is_end {
            check_trailer(&self.raw, at, self.records)?;
            let mut extra = [0u8; 1];
            let n = read_exact_or_eof(&mut self.inner, &mut extra)
                .map_err(|e| TraceError::at_offset(self.offset, self.records, Problem::Io(e)))?;
            if n != 0 {
                return Err(trailing_bytes(self.offset, self.records));
            }
            return Ok(false);
        }
        if self.layout.codec == Codec::Zstd {
            let dctx = match &mut self.dctx {
                Some(d) => d,
                None => self.dctx.insert(
                    zstd::bulk::Decompressor::new()
                        .map_err(|e| TraceError::at_offset(at, self.records, Problem::Io(e)))?,
                ),
            };
            let raw_len = head.n as usize * self.layout.rec_bytes;
            unpack(dctx, &self.packed, &mut self.raw, raw_len)
                .map_err(|p| block_error(at, self.records, self.block_index, p))?;
        }
        self.block_offset = payload_at;
        self.block_n = head.n as usize;
        self.block_pos = 0;
        self.block_index += 1;
        Ok(true)
    }
}

/// How a file's blocks are laid out (from its header).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    fields: Fields,
    codec: Codec,
    rec_bytes: usize,
    block_records: u32,
    /// Records may be task markers (a task trace).
    tasks: bool,
}

/// A checked block header.
pub(crate) struct BlockHead {
    is_end: bool,
    n: u32,
    stored_len: usize,
    checksum: u32,
}

impl Layout {
    /// Checks the block header `h` found at byte `at`; `records` (before
    /// the block) and `block` (its index) locate errors.
    fn check_head(
        &self,
        h: &[u8; BLOCK_HEADER_BYTES],
        at: u64,
        records: u64,
        block: u64,
    ) -> Result<BlockHead> {
        let tag: &[u8; 4] = h[0..4].try_into().expect("4 bytes");
        let n = u32::from_le_bytes(h[4..8].try_into().expect("4 bytes"));
        let stored_len = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes")) as usize;
        let checksum = u32::from_le_bytes(h[16..20].try_into().expect("4 bytes"));
        let invalid = |b: Block| TraceError::at_offset(at, records, Problem::Block(b));
        let is_end = tag == END_TAG;
        if !is_end && tag != BLOCK_TAG {
            return Err(invalid(Block::Tag {
                block,
                tag: String::from_utf8_lossy(tag).into_owned(),
            }));
        }
        let raw_len = n as usize * self.rec_bytes;
        if is_end {
            if n != 0 || stored_len != 8 {
                return Err(invalid(Block::Trailer));
            }
        } else if n == 0 || n > self.block_records {
            return Err(invalid(Block::Count {
                block,
                n,
                max: self.block_records,
            }));
        } else if self.codec == Codec::None && stored_len != raw_len {
            return Err(invalid(Block::Length {
                block,
                stored: stored_len,
                n,
                record_bytes: self.rec_bytes,
            }));
        } else if stored_len > raw_len + raw_len / 8 + 1024 {
            return Err(invalid(Block::TooLong {
                block,
                stored: stored_len,
            }));
        }
        Ok(BlockHead {
            is_end,
            n,
            stored_len,
            checksum,
        })
    }

    /// Flags a record may carry: the columns the file lacks are not allowed.
    fn allowed_flags(&self) -> u8 {
        (FLAG_MASK | if self.tasks { FLAG_TASK } else { 0 })
            & !(if self.fields.pc { 0 } else { FLAG_PC })
            & !(if self.fields.time {
                0
            } else {
                FLAG_GAP | FLAG_TIME
            })
    }
}

/// Why a native header's field bits `bits` cannot be read, if they name
/// a task trace: a plain reader (`allow_tasks` false) must not replay
/// markers as loads, and a task trace needs the time column.
fn task_refusal(bits: u32, allow_tasks: bool) -> Option<Problem> {
    let tasks = bits & FIELD_TASKS != 0;
    if tasks && !allow_tasks {
        Some(Problem::TaskTrace("task markers"))
    } else if tasks && bits & FIELD_TIME == 0 {
        Some(Problem::Header(Header::TasksWithoutTime))
    } else {
        None
    }
}

/// A block header cut short at `at` (`got` bytes of it present).
fn short_header(at: u64, got: usize, records: u64) -> TraceError {
    TraceError::at_offset(
        at,
        records,
        Problem::Truncated(if got == 0 {
            Short::NoTrailer
        } else {
            Short::BlockHeader {
                got,
                want: BLOCK_HEADER_BYTES,
            }
        }),
    )
}

/// A payload cut short: `got` of `len` bytes from `payload_at`.
fn short_payload(payload_at: u64, got: usize, len: usize, records: u64, block: u64) -> TraceError {
    TraceError::at_offset(
        payload_at + got as u64,
        records,
        Problem::Truncated(Short::Payload {
            block,
            got,
            want: len,
        }),
    )
}

/// Checks a stored payload against its header's CRC32C.
fn check_payload(
    payload: &[u8],
    stored: u32,
    payload_at: u64,
    records: u64,
    block: u64,
) -> Result<()> {
    check_payload_crc(block_checksum(payload), stored, payload_at, records, block)
}

/// Checks a payload's computed CRC32C against the stored one.
fn check_payload_crc(
    computed: u32,
    stored: u32,
    payload_at: u64,
    records: u64,
    block: u64,
) -> Result<()> {
    if computed != stored {
        return Err(TraceError::at_offset(
            payload_at,
            records,
            Problem::Checksum {
                block,
                stored,
                computed,
            },
        ));
    }
    Ok(())
}

/// Checks the trailer's record count (`payload` is its 8 bytes).
fn check_trailer(payload: &[u8], at: u64, records: u64) -> Result<()> {
    let total = u64::from_le_bytes(payload[0..8].try_into().expect("8 bytes"));
    if total != records {
        return Err(TraceError::at_offset(
            at,
            records,
            Problem::Block(Block::TrailerCount { total, records }),
        ));
    }
    Ok(())
}

fn trailing_bytes(at: u64, records: u64) -> TraceError {
    TraceError::at_offset(
        at,
        records,
        Problem::Block(Block::TrailingBytes),
    )
}

/// A block `block`, whose header is at `at`, that does not unpack.
fn block_error(at: u64, records: u64, block: u64, error: Unpack) -> TraceError {
    TraceError::at_offset(at, records, Problem::Block(Block::Unpack { block, error }))
}

/// Decompresses one zstd block payload into `raw`, which must come out
/// exactly `raw_len` bytes long.
fn unpack(
    dctx: &mut zstd::bulk::Decompressor<'static>,
    packed: &[u8],
    raw: &mut Vec<u8>,
    raw_len: usize,
) -> std::result::Result<(), Unpack> {
    raw.resize(raw_len, 0);
    match dctx.decompress_to_buffer(packed, &mut raw[..]) {
        Ok(len) if len == raw_len => Ok(()),
        Ok(len) => Err(Unpack::Size { len, raw_len }),
        Err(e) => Err(Unpack::Zstd(e)),
    }
}


impl<R: Read + Send> NativeReader<R> {
    /// Decodes records `[block_pos, block_pos + take)` of the current block
    /// into `out`.
    #[inline]
    fn decode(&mut self, take: usize, out: &mut Batch) -> Result<()> {
        let at = Place {
            payload_at: self.block_offset,
            record: self.records,
        };
        let (lo, hi) = (self.block_pos, self.block_pos + take);
        decode_records(&self.layout, &self.raw, self.block_n, lo..hi, at, out)
    }
}

/// Where a decoded range sits, for error locations: the block's payload
/// offset and the index of the range's first record.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    payload_at: u64,
    record: u64,
}

impl Place {
    /// The file offset of payload byte `byte` (inside a compressed block:
    /// the block's payload offset).
    fn offset(&self, layout: &Layout, byte: usize) -> u64 {
        match layout.codec {
            Codec::None => self.payload_at + byte as u64,
            Codec::Zstd => self.payload_at,
        }
    }
}

/// The error for core `i` of `cores`, the cores of the records from `lo`
/// of a block's payload (`at`: where record `lo` is), which
/// [`cores::first_bad`] found invalid.
pub(crate) fn bad_core(layout: &Layout, cores: &[u8], lo: usize, i: usize, at: Place) -> TraceError {
    let c = &cores[i * 16..(i + 1) * 16];
    let problem = if c[14] > 3 {
        Problem::KindCode(c[14])
    } else if u16::from_le_bytes([c[12], c[13]]) == 0 {
        Problem::ZeroSize
    } else {
        Problem::Block(Block::Flags(c[15]))
    };
    let offset = at.offset(layout, (lo + i) * 16);
    TraceError::at_offset(offset, at.record + i as u64, problem)
}

/// Decodes records `range` of a block's raw (decompressed) payload `raw`
/// of `n` records into `out`: the 16-byte cores are copied, then checked
/// where they landed, and only then become records; then the PC and time
/// columns the batch keeps.
fn decode_records(
    layout: &Layout,
    raw: &[u8],
    n: usize,
    range: std::ops::Range<usize>,
    at: Place,
    out: &mut Batch,
) -> Result<()> {
    let (lo, hi) = (range.start, range.end);
    let cores = &raw[lo * 16..hi * 16];
    if let Err(i) = push_cores(cores, layout.allowed_flags(), &mut out.acc) {
        return Err(bad_core(layout, cores, lo, i, at));
    }
    let mut col = n * 16;
    let fields = out.fields();
    if layout.fields.pc {
        if fields.pc {
            push_u64s(&raw[col + lo * 8..col + hi * 8], &mut out.pc);
        }
        col += n * 8;
    }
    if layout.fields.time && fields.time {
        let start = out.time.len();
        push_u64s(&raw[col + lo * 8..col + hi * 8], &mut out.time);
        let acc = &out.acc[out.acc.len() - (hi - lo)..];
        if let Some((i, problem)) = horizon::first_past(acc, &out.time[start..]) {
            let offset = at.offset(layout, col + (lo + i) * 8);
            return Err(TraceError::at_offset(
                offset,
                at.record + i as u64,
                problem.into(),
            ));
        }
    }
    // A batch without a column for data the file has: clear the flags.
    if (layout.fields.pc && !fields.pc) || (layout.fields.time && !fields.time) {
        let drop = (!fields.pc as u8 * FLAG_PC) | (!fields.time as u8 * (FLAG_GAP | FLAG_TIME));
        let len = out.acc.len();
        for a in &mut out.acc[len - (hi - lo)..] {
            a.flags &= !drop;
        }
    }
    Ok(())
}

impl<R: Read + Send> RecordSource for NativeReader<R> {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        if self.done {
            return Ok(0);
        }
        if self.block_pos == self.block_n && !self.next_block()? {
            self.done = true;
            return Ok(0);
        }
        let take = (self.block_n - self.block_pos).min(BATCH);
        self.fill_offset = self.block_offset + (self.block_pos * 16) as u64;
        self.decode(take, out)?;
        self.block_pos += take;
        self.records += take as u64;
        Ok(take)
    }

    fn fields(&self) -> Fields {
        self.layout.fields
    }

    fn format_name(&self) -> &'static str {
        "native"
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::write::NativeWriter;
    use super::*;
    use crate::record::Kind;
    use crate::source::collect_all;

    /// Both optional columns.
    pub(crate) const ALL_COLUMNS: Fields = Fields {
        pc: true,
        time: true,
    };

    /// `n` records of every kind, three threads, with PCs, gaps and times.
    pub(crate) fn sample(n: usize) -> Vec<Record> {
        (0..n)
            .map(|i| {
                let k = Kind::ALL[i % 4];
                let r = Record::access((i % 3) as u32, k, (i as u64) * 40 + 7, 1 + (i % 64) as u16);
                match i % 5 {
                    0 => r.with_pc(0x400000 + i as u64),
                    1 => r.with_gap(i as u64),
                    2 => r.with_time(i as u64 * 3).with_pc(9),
                    _ => r,
                }
            })
            .collect()
    }

    fn write(recs: &[Record], fields: Fields, codec: Codec) -> Vec<u8> {
        write_blocks(recs, fields, codec, DEFAULT_BLOCK_RECORDS)
    }

    /// A native file of `recs` in blocks of at most `block` records.
    pub(crate) fn write_blocks(
        recs: &[Record],
        fields: Fields,
        codec: Codec,
        block: u32,
    ) -> Vec<u8> {
        let meta = serde_json::json!({"t": 1});
        let mut w =
            NativeWriter::with_block_records(Vec::new(), fields, codec, &meta, block).unwrap();
        for r in recs {
            w.write(r).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn round_trip_all_layouts_and_codecs() {
        let all = sample(200_000);
        let plain: Vec<Record> = all
            .iter()
            .map(|r| Record::access(r.thread, r.kind, r.addr, r.size))
            .collect();
        for codec in [Codec::None, Codec::Zstd] {
            let f = ALL_COLUMNS;
            let bytes = write(&all, f, codec);
            let mut rd = NativeReader::new(&bytes[..]).unwrap();
            assert_eq!(rd.meta()["t"], 1);
            assert_eq!(collect_all(&mut rd).unwrap(), all);
            let bytes = write(&plain, Fields::default(), codec);
            assert_eq!(
                collect_all(&mut NativeReader::new(&bytes[..]).unwrap()).unwrap(),
                plain
            );
        }
        // 16-byte records for the plain layout.
        let bytes = write(&plain[..10], Fields::default(), Codec::None);
        assert_eq!(
            bytes.len(),
            HEADER_BYTES + 7 + BLOCK_HEADER_BYTES + 160 + BLOCK_HEADER_BYTES + 8
        );
    }

    #[test]
    fn corruption_is_detected() {
        let recs = sample(1000);
        let f = ALL_COLUMNS;
        let bytes = write(&recs, f, Codec::None);
        let meta_len = 7; // {"t":1}
        let payload = HEADER_BYTES + meta_len + BLOCK_HEADER_BYTES;
        // Flipped byte in a block payload.
        let mut b = bytes.clone();
        b[payload + 100] ^= 0x40;
        let e = collect_all(&mut NativeReader::new(&b[..]).unwrap()).unwrap_err();
        assert!(
            matches!(e.problem, Problem::Checksum { block: 0, .. }),
            "{e}"
        );
        assert_eq!(
            e.location,
            crate::error::Location::Offset {
                offset: payload as u64,
                record: 0
            }
        );
        // Truncated mid-block.
        let e = collect_all(&mut NativeReader::new(&bytes[..payload + 50]).unwrap()).unwrap_err();
        assert!(matches!(e.problem, Problem::Truncated(_)), "{e}");
        // Truncated exactly before the trailer.
        let cut = bytes.len() - BLOCK_HEADER_BYTES - 8;
        let e = collect_all(&mut NativeReader::new(&bytes[..cut]).unwrap()).unwrap_err();
        assert!(
            e.to_string().contains("without the end-of-trace trailer"),
            "{e}"
        );
        // Junk after the trailer.
        let mut b = bytes.clone();
        b.push(0);
        let e = collect_all(&mut NativeReader::new(&b[..]).unwrap()).unwrap_err();
        assert!(e.to_string().contains("trailing bytes"), "{e}");
        // Future version.
        let mut b = bytes.clone();
        b[8] = 9;
        let e = NativeReader::new(&b[..]).err().unwrap();
        assert!(
            matches!(
                e.problem,
                Problem::FutureVersion {
                    found: 9,
                    supported: 2
                }
            ),
            "{e}"
        );
        // Wrong magic, empty.
        let e = NativeReader::new(&b"NOTATRACE-------------------------------"[..])
            .err()
            .unwrap();
        assert!(matches!(e.problem, Problem::BadMagic { .. }), "{e}");
        let e = NativeReader::new(&b""[..]).err().unwrap();
        assert!(matches!(e.problem, Problem::Empty), "{e}");
    }

    #[test]
    fn invalid_record_names_its_index_and_offset() {
        let recs = sample(10);
        let bytes = write(&recs, ALL_COLUMNS, Codec::None);
        let mut b = bytes.clone();
        let payload = HEADER_BYTES + 7 + BLOCK_HEADER_BYTES;
        // Record 4's kind byte := 9, then fix the block checksum so only the record is wrong.
        b[payload + 4 * 16 + 14] = 9;
        let ck = block_checksum(&b[payload..payload + 320]);
        b[payload - 8..payload - 4].copy_from_slice(&ck.to_le_bytes());
        let e = collect_all(&mut NativeReader::new(&b[..]).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "byte offset {}, record 4: unknown op kind code 9",
                payload + 64
            )
        );
    }
}

