//! ChampSim `input_instr` binary traces (64-byte records, little-endian).
//!
//! Layout of one record (`struct input_instr` in ChampSim's `trace_instruction.h`):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0  | 8  | `ip` |
//! | 8  | 1  | `is_branch` |
//! | 9  | 1  | `branch_taken` |
//! | 10 | 2  | `destination_registers[2]` |
//! | 12 | 4  | `source_registers[4]` |
//! | 16 | 16 | `destination_memory[2]` (u64 each, 0 = unused) |
//! | 32 | 32 | `source_memory[4]` (u64 each, 0 = unused) |
//!
//! Each instruction becomes an instruction fetch at `ip`, then one load per
//! non-zero source address, then one store per non-zero destination address,
//! all with `pc = ip` on thread 0. ChampSim treats every access as touching
//! exactly one cache line and records no sizes, so numasim gives every
//! ChampSim access a size of 1 byte: lines, not bytes, are what it carries.
//! Compression (`.xz`, `.gz`) is handled by the caller's decoder.

use std::io::Read;

use crate::error::{Problem, Result, Short, TraceError};
use crate::record::{BATCH, Fields};
use crate::record::{Batch, Kind, Record};
use crate::source::RecordSource;

/// Bytes per ChampSim instruction record.
pub const RECORD_BYTES: usize = 64;
const INSTR_PER_READ: usize = 1024;

/// Streaming ChampSim reader.
pub struct ChampSimReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Valid bytes in `buf`, and the next instruction to decode.
    len: usize,
    next: usize,
    offset: u64,
    records: u64,
    eof: bool,
    /// Bytes of an incomplete instruction found at end of input.
    partial: usize,
}

impl<R: Read + Send> ChampSimReader<R> {
    pub fn new(inner: R) -> Self {
        ChampSimReader {
            inner,
            buf: vec![0; RECORD_BYTES * INSTR_PER_READ],
            len: 0,
            next: 0,
            offset: 0,
            records: 0,
            eof: false,
            partial: 0,
        }
    }

    /// Reads whole instructions into `buf`; a partial instruction at EOF is an error.
    fn refill(&mut self) -> Result<()> {
        self.offset += self.len as u64;
        self.len = 0;
        self.next = 0;
        while self.len < self.buf.len() {
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(TraceError::at_offset(
                        self.offset + self.len as u64,
                        self.records,
                        Problem::Io(e),
                    ));
                }
            }
        }
        // Only possible at EOF (the loop reads until the buffer is full).
        self.partial = self.len % RECORD_BYTES;
        self.len -= self.partial;
        Ok(())
    }
}

#[inline]
fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

impl<R: Read + Send> RecordSource for ChampSimReader<R> {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let start = out.len();
        // One instruction adds at most 7 records.
        while out.len() - start + 7 <= BATCH {
            if self.next * RECORD_BYTES >= self.len {
                if self.partial != 0 {
                    return Err(TraceError::at_offset(
                        self.offset + self.len as u64,
                        self.records + (out.len() - start) as u64,
                        Problem::Truncated(Short::Instruction {
                            got: self.partial,
                            want: RECORD_BYTES,
                        }),
                    ));
                }
                if self.eof {
                    break;
                }
                self.refill()?;
                if self.len == 0 {
                    break;
                }
            }
            let b = &self.buf[self.next * RECORD_BYTES..(self.next + 1) * RECORD_BYTES];
            self.next += 1;
            let ip = u64_at(b, 0);
            out.push(Record::access(0, Kind::IFetch, ip, 1).with_pc(ip));
            for i in 0..4 {
                let a = u64_at(b, 32 + 8 * i);
                if a != 0 {
                    out.push(Record::access(0, Kind::Load, a, 1).with_pc(ip));
                }
            }
            for i in 0..2 {
                let a = u64_at(b, 16 + 8 * i);
                if a != 0 {
                    out.push(Record::access(0, Kind::Store, a, 1).with_pc(ip));
                }
            }
        }
        let n = out.len() - start;
        self.records += n as u64;
        Ok(n)
    }

    fn fields(&self) -> Fields {
        Fields {
            pc: true,
            time: false,
        }
    }

    fn format_name(&self) -> &'static str {
        "champsim"
    }
}

/// Encodes one ChampSim instruction (used by tests and fixture generators).
pub fn encode(ip: u64, dst: [u64; 2], src: [u64; 4]) -> [u8; RECORD_BYTES] {
    let mut b = [0u8; RECORD_BYTES];
    b[0..8].copy_from_slice(&ip.to_le_bytes());
    for (i, a) in dst.iter().enumerate() {
        b[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
    }
    for (i, a) in src.iter().enumerate() {
        b[32 + 8 * i..40 + 8 * i].copy_from_slice(&a.to_le_bytes());
    }
    b
}

/// ChampSim's registry entry (`crate::FORMATS`): binary without magic,
/// recognised by a `champsim` name or by being compressed binary.
pub const FORMAT: crate::format::Entry = crate::format::Entry {
    name: "champsim",
    shape: crate::format::Shape::Headless,
    extensions: &[],
    hints: &["champsim"],
    open: |rd| Ok(Box::new(ChampSimReader::new(rd))),
    segments: None,
    writers: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::collect_all;

    #[test]
    fn decodes_instruction_loads_and_stores() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&encode(0x400, [0x9000, 0], [0x1000, 0, 0x2000, 0]));
        bytes.extend_from_slice(&encode(0x404, [0, 0], [0, 0, 0, 0]));
        let v = collect_all(&mut ChampSimReader::new(&bytes[..])).unwrap();
        assert_eq!(
            v,
            vec![
                Record::access(0, Kind::IFetch, 0x400, 1).with_pc(0x400),
                Record::access(0, Kind::Load, 0x1000, 1).with_pc(0x400),
                Record::access(0, Kind::Load, 0x2000, 1).with_pc(0x400),
                Record::access(0, Kind::Store, 0x9000, 1).with_pc(0x400),
                Record::access(0, Kind::IFetch, 0x404, 1).with_pc(0x404),
            ]
        );
    }

    #[test]
    fn truncated_instruction_is_an_error() {
        let mut bytes = encode(0x400, [0, 0], [0; 4]).to_vec();
        bytes.extend_from_slice(&[1, 2, 3]);
        let e = collect_all(&mut ChampSimReader::new(&bytes[..])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "byte offset 64, record 1: truncated: last instruction has 3 of 64 bytes"
        );
    }
}
