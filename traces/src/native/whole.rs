//! A native trace held whole in memory, one segment per block.
//!
//! Opening walks the block headers once (a hop per block, no payload
//! read; what the hops brought into memory is handed back as it goes, so
//! memory stays bounded) to find every block; a problem the walk meets — a bad header, a
//! truncated block, a bad trailer — is kept and reported after the blocks
//! before it, where the streaming reader reports it. Decoding a block
//! checks its CRC on the mapped bytes, decompresses it (zstd) into this
//! thread's scratch buffer, and copies the records into the batch — or,
//! for a consumer that reads records in place, leaves an uncompressed
//! block's checked records where they lie in the mapping.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use super::cores::first_bad;
use super::{
    BLOCK_HEADER_BYTES, Codec, Layout, NativeReader, Place, bad_core, block_error, check_payload,
    check_payload_crc, check_trailer, decode_records, short_header, short_payload, trailing_bytes,
    unpack,
};
use crate::error::{Problem, Result, TraceError};
use crate::record::{Batch, Fields, InPlace};
use crate::whole::{Segments, Whole};

/// One data block of the file.
struct Block {
    payload_at: u64,
    stored_len: usize,
    n: usize,
    checksum: u32,
}

pub(crate) struct NativeSegments {
    whole: Arc<dyn Whole>,
    layout: Layout,
    blocks: Vec<Block>,
    /// The walk's first problem, reported after the last good block.
    tail: Mutex<Option<TraceError>>,
}

thread_local! {
    /// This thread's zstd context and decompressed block.
    static SCRATCH: RefCell<(Option<zstd::bulk::Decompressor<'static>>, Vec<u8>)> =
        const { RefCell::new((None, Vec::new())) };
}

impl NativeSegments {
    /// Checks the header (errors as the streaming reader gives them) and
    /// finds the blocks.
    pub(crate) fn new(whole: Arc<dyn Whole>) -> Result<Self> {
        let (layout, start) = {
            let r = NativeReader::new(std::io::Cursor::new(whole.bytes()))?;
            (r.layout, r.offset)
        };
        let mut blocks = Vec::new();
        let tail = walk(whole.as_ref(), &layout, start, &mut blocks).err();
        Ok(NativeSegments {
            whole,
            layout,
            blocks,
            tail: Mutex::new(tail),
        })
    }
}

/// Bytes walked between hand-backs of what the walk touched.
const WALK_RELEASE: u64 = 16 << 20;

/// Walks the block headers from `at` to the trailer, collecting the data
/// blocks; stops at the first problem.
fn walk(whole: &dyn Whole, layout: &Layout, mut at: u64, blocks: &mut Vec<Block>) -> Result<()> {
    let b = whole.bytes();
    let len = b.len() as u64;
    let mut records = 0u64;
    let mut released = 0u64;
    let r = loop {
        if at >= released + WALK_RELEASE {
            whole.unneeded(released, at);
            released = at;
        }
        let r = hop(b, layout, &mut at, &mut records, blocks);
        if !matches!(r, Ok(true)) {
            break r.map(|_| ());
        }
    };
    whole.unneeded(released, len);
    r
}

/// Checks the block header at `*at`; records a data block and moves past
/// it (`Ok(true)`), or checks the trailer and the end of the file
/// (`Ok(false)`).
fn hop(
    b: &[u8],
    layout: &Layout,
    at: &mut u64,
    records: &mut u64,
    blocks: &mut Vec<Block>,
) -> Result<bool> {
    let (len, here, before) = (b.len() as u64, *at, *records);
    let block = blocks.len() as u64;
    let avail = (len - here) as usize;
    if avail < BLOCK_HEADER_BYTES {
        return Err(short_header(here, avail, before));
    }
    let i = here as usize;
    let h: &[u8; BLOCK_HEADER_BYTES] = b[i..i + BLOCK_HEADER_BYTES]
        .try_into()
        .expect("header bytes");
    let head = layout.check_head(h, here, before, block)?;
    let payload_at = here + BLOCK_HEADER_BYTES as u64;
    let got = ((len - payload_at) as usize).min(head.stored_len);
    if got < head.stored_len {
        return Err(short_payload(
            payload_at,
            got,
            head.stored_len,
            before,
            block,
        ));
    }
    let end = payload_at + head.stored_len as u64;
    if head.is_end {
        let payload = &b[payload_at as usize..end as usize];
        check_payload(payload, head.checksum, payload_at, before, block)?;
        check_trailer(payload, here, before)?;
        if end != len {
            return Err(trailing_bytes(end, before));
        }
        return Ok(false);
    }
    blocks.push(Block {
        payload_at,
        stored_len: head.stored_len,
        n: head.n as usize,
        checksum: head.checksum,
    });
    *records += head.n as u64;
    *at = end;
    Ok(true)
}

/// Records per step of a raw block's decode: 32 KiB of cores, which the
/// checksum brings into L1 for the copy and check that follow.
const STEP: usize = 2048;

impl NativeSegments {
    /// Decodes raw block `k` in one pass over the mapped bytes: each step
    /// of cores is added to the checksum, then copied and checked while
    /// in L1 — or, for a batch that takes records in place, only checked,
    /// and the batch then holds the mapped cores themselves. The columns
    /// after the cores are summed last, in file order. A checksum mismatch
    /// wins over a bad record, as in the stream (which checks the whole
    /// block first).
    fn decode_raw(&self, k: usize, payload: &[u8], at: Place, out: &mut Batch) -> Result<()> {
        let blk = &self.blocks[k];
        let in_place = out.takes_in_place() && self.layout.fields == Fields::default();
        let allowed = self.layout.allowed_flags();
        let mut crc = 0u32;
        let mut bad = None;
        let mut lo = 0;
        while lo < blk.n && bad.is_none() {
            let hi = (lo + STEP).min(blk.n);
            let cores = &payload[lo * 16..hi * 16];
            crc = crc32c::crc32c_append(crc, cores);
            let here = Place {
                record: at.record + lo as u64,
                ..at
            };
            bad = if in_place {
                first_bad(cores, allowed).map(|i| bad_core(&self.layout, cores, lo, i, here))
            } else {
                decode_records(&self.layout, payload, blk.n, lo..hi, here, out).err()
            };
            lo = hi;
        }
        let crc = crc32c::crc32c_append(crc, &payload[lo * 16..]);
        check_payload_crc(crc, blk.checksum, blk.payload_at, 0, k as u64)?;
        if let Some(e) = bad {
            return Err(e);
        }
        if in_place {
            match InPlace::new(self.whole.clone(), blk.payload_at as usize, blk.n) {
                Some(cores) => out.set_in_place(cores),
                None => decode_records(&self.layout, payload, blk.n, 0..blk.n, at, out)?,
            }
        }
        Ok(())
    }
}

impl Segments for NativeSegments {
    fn count(&self) -> usize {
        self.blocks.len()
    }

    /// Errors name record indices from the block's start.
    fn decode(&self, k: usize, out: &mut Batch) -> Result<u64> {
        let blk = &self.blocks[k];
        let s = blk.payload_at as usize;
        let payload = &self.whole.bytes()[s..s + blk.stored_len];
        let at = Place {
            payload_at: blk.payload_at,
            record: 0,
        };
        if self.layout.codec == Codec::None {
            self.decode_raw(k, payload, at, out)?;
            return Ok(0);
        }
        check_payload(payload, blk.checksum, blk.payload_at, 0, k as u64)?;
        let head_at = blk.payload_at - BLOCK_HEADER_BYTES as u64;
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let (dctx, raw) = &mut *scratch;
            let dctx = match dctx {
                Some(d) => d,
                None => dctx.insert(
                    zstd::bulk::Decompressor::new()
                        .map_err(|e| TraceError::at_offset(head_at, 0, Problem::Io(e)))?,
                ),
            };
            unpack(dctx, payload, raw, blk.n * self.layout.rec_bytes)
                .map_err(|p| block_error(head_at, 0, k as u64, p))?;
            decode_records(&self.layout, raw, blk.n, 0..blk.n, at, out)
        })?;
        Ok(0)
    }

    fn end(&self, k: usize) -> u64 {
        let blk = &self.blocks[k];
        blk.payload_at + blk.stored_len as u64
    }

    fn finish(&self) -> Result<()> {
        match self.tail.lock().map(|mut t| t.take()) {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }

    fn fields(&self) -> Fields {
        self.layout.fields
    }

    fn format_name(&self) -> &'static str {
        "native"
    }
}

/// The native format's registry entry (`crate::FORMATS`), here because it
/// names both its readers (this whole-file one and the streaming one).
pub const FORMAT: crate::format::Entry = crate::format::Entry {
    name: "native",
    shape: crate::format::Shape::Magic(super::MAGIC),
    extensions: &[".nst", ".nst.zst"],
    hints: &[],
    // The native reader reads whole blocks: hand it the bytes already
    // buffered, then the stream itself, so payloads are not copied twice.
    open: |rd| {
        use std::io::Read;
        let buffered = std::io::Cursor::new(rd.buffer().to_vec());
        Ok(Box::new(super::NativeReader::new(buffered.chain(rd.into_inner()))?))
    },
    segments: Some(|w| Ok(Box::new(NativeSegments::new(w)?))),
    writers: &[
        crate::sink::Writer {
            name: "native",
            extensions: &[".nst"],
            open: |out, fields, meta| {
                let codec = super::Codec::None;
                Ok(Box::new(super::write::NativeWriter::new(out, fields, codec, meta)?))
            },
        },
        crate::sink::Writer {
            name: "native-zstd",
            extensions: &[".nst.zst"],
            open: |out, fields, meta| {
                let codec = super::Codec::Zstd;
                Ok(Box::new(super::write::NativeWriter::new(out, fields, codec, meta)?))
            },
        },
    ],
};
