//! ML Prefetching Competition load traces (the ChampSim fork of the ML-DPC,
//! github.com/Quangmire/ChampSim): one load per line,
//!
//! ```text
//! instr_id, cycle, load_addr, pc, llc_hit
//! 3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0
//! ```
//!
//! separated by `", "`: the instruction's unique id and the cycle (decimal),
//! the load address and the load's PC (hex without `0x`), and `1` if the
//! load hit the LLC, `0` if it missed. Lines starting with `***` or `Read`
//! (simulator chatter in the published traces) and empty lines are skipped.
//! The format has no access size: loads are read as 8-byte loads of thread 0
//! carrying their PC. The prefetch files the competition feeds back to
//! ChampSim are `instr_id hexaddr` per line ([`write_prefetch`]).

use std::io::{Read, Write};

use crate::error::{Line, Problem, Result, TraceError};
use crate::lines::{Lines, parse_dec, parse_hex, show};
use crate::record::{BATCH, Fields};
use crate::record::{Batch, Kind, Record};
use crate::source::RecordSource;

/// Size given to every load (the format carries none).
pub const LOAD_SIZE: u16 = 8;

/// One line of a load trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    pub instr_id: u64,
    pub cycle: u64,
    pub addr: u64,
    pub pc: u64,
    pub llc_hit: bool,
}

/// Parses one line; `Ok(None)` for lines that carry no load.
pub fn parse_line(line: &[u8]) -> Result<Option<Load>, Problem> {
    let t = line.trim_ascii();
    if t.is_empty() || t.starts_with(b"***") || t.starts_with(b"Read") {
        return Ok(None);
    }
    let f: Vec<&[u8]> = t.split(|&c| c == b',').map(<[u8]>::trim_ascii).collect();
    if f.len() != 5 {
        return Err(Problem::Line(Line::MlDpcFields(f.len())));
    }
    let dec = |s: &[u8]| parse_dec(s).ok_or_else(|| Problem::BadNumber(show(s)));
    let hex = |s: &[u8]| parse_hex(s).ok_or_else(|| Problem::BadHex(show(s)));
    let llc_hit = match f[4] {
        b"1" => true,
        b"0" => false,
        other => {
            return Err(Problem::Line(Line::LlcHit(show(other))));
        }
    };
    Ok(Some(Load {
        instr_id: dec(f[0])?,
        cycle: dec(f[1])?,
        addr: hex(f[2])?,
        pc: hex(f[3])?,
        llc_hit,
    }))
}

/// Whether a first line looks like a load trace line.
pub fn looks_like(first: &[u8]) -> bool {
    matches!(parse_line(first), Ok(Some(_)))
}

/// Streaming load-trace reader: as [`Load`]s ([`MlDpcReader::next_load`]) or
/// as records ([`RecordSource`]).
pub struct MlDpcReader<R> {
    lines: Lines<R>,
    records: u64,
}

impl<R: Read + Send> MlDpcReader<R> {
    pub fn new(inner: R) -> Self {
        MlDpcReader {
            lines: Lines::new(inner),
            records: 0,
        }
    }

    /// The next load, `None` at the end.
    pub fn next_load(&mut self) -> Result<Option<Load>> {
        loop {
            let record = self.records;
            let Some(line) = self.lines.next_line(record)? else {
                return Ok(None);
            };
            match parse_line(line) {
                Ok(Some(l)) => {
                    self.records += 1;
                    return Ok(Some(l));
                }
                Ok(None) => {}
                Err(p) => return Err(TraceError::at_line(self.lines.line_no, record, p)),
            }
        }
    }
}

impl<R: Read + Send> RecordSource for MlDpcReader<R> {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let start = out.len();
        while out.len() - start < BATCH {
            let Some(l) = self.next_load()? else { break };
            out.push(Record::access(0, Kind::Load, l.addr, LOAD_SIZE).with_pc(l.pc));
        }
        Ok(out.len() - start)
    }

    fn fields(&self) -> Fields {
        Fields {
            pc: true,
            time: false,
        }
    }

    fn format_name(&self) -> &'static str {
        "mldpc"
    }
}

/// Writes one prefetch of a competition prefetch file: `instr_id hexaddr`.
pub fn write_prefetch(w: &mut impl Write, instr_id: u64, addr: u64) -> std::io::Result<()> {
    writeln!(w, "{instr_id} {addr:x}")
}

/// The ML-DPC load trace's registry entry (`crate::FORMATS`): text whose
/// first load line (after any simulator chatter, `***` or `Read`) parses.
pub const FORMAT: crate::format::Entry = crate::format::Entry {
    name: "mldpc",
    shape: crate::format::Shape::Text(|prefix| {
        let first_load = prefix
            .split(|&c| c == b'\n')
            .map(<[u8]>::trim_ascii)
            .find(|l| !l.is_empty() && !l.starts_with(b"***") && !l.starts_with(b"Read"))
            .unwrap_or(b"");
        looks_like(first_load)
    }),
    extensions: &[],
    hints: &[],
    open: |rd| Ok(Box::new(MlDpcReader::new(rd))),
    segments: None,
    writers: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::collect_all;

    #[test]
    fn reads_loads_and_skips_chatter() {
        let text = b"*** ChampSim\nRead 1 lines\n3, 1, 7f2d5bd0ae68, 7f2d5b9e8093, 0\n\n17, 42, 40, 401000, 1\n";
        let mut r = MlDpcReader::new(&text[..]);
        assert_eq!(
            r.next_load().unwrap(),
            Some(Load {
                instr_id: 3,
                cycle: 1,
                addr: 0x7f2d5bd0ae68,
                pc: 0x7f2d5b9e8093,
                llc_hit: false
            })
        );
        let v = collect_all(&mut MlDpcReader::new(&text[..])).unwrap();
        assert_eq!(
            v,
            vec![
                Record::access(0, Kind::Load, 0x7f2d5bd0ae68, 8).with_pc(0x7f2d5b9e8093),
                Record::access(0, Kind::Load, 0x40, 8).with_pc(0x401000),
            ]
        );
    }

    #[test]
    fn bad_lines_name_line_and_record() {
        let e = collect_all(&mut MlDpcReader::new(
            &b"1, 2, 40, 400, 0\n2, 3, zz, 400, 1\n"[..],
        ))
        .unwrap_err();
        assert_eq!(e.to_string(), "line 2, record 1: bad hex address \"zz\"");
        let e = collect_all(&mut MlDpcReader::new(&b"1, 2, 40, 400, 2\n"[..])).unwrap_err();
        assert!(e.to_string().contains("llc_hit must be 0 or 1"), "{e}");
        let e = collect_all(&mut MlDpcReader::new(&b"1, 2, 40\n"[..])).unwrap_err();
        assert!(e.to_string().contains("expected 5 fields"), "{e}");
    }

    #[test]
    fn prefetch_lines_are_id_and_hex() {
        let mut v = Vec::new();
        write_prefetch(&mut v, 3, 0x7f2d5bd0ae40).unwrap();
        assert_eq!(v, b"3 7f2d5bd0ae40\n");
    }
}
