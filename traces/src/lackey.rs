//! Valgrind lackey `--trace-mem=yes` text traces.
//!
//! Grammar, one access per line:
//! `I  ADDR,SIZE` (instruction fetch), ` L ADDR,SIZE`, ` S ADDR,SIZE`,
//! ` M ADDR,SIZE` (load+store by one instruction), ADDR in hex without `0x`,
//! SIZE in decimal. Lines starting with `==` (valgrind's `==PID==` banner)
//! and empty lines are skipped; anything else is an error. Lackey traces
//! carry one thread (id 0), no PC column and no timing.

use std::io::Read;

use crate::error::{Problem, Result, TraceError};
use crate::lines::{Lines, check_size, parse_dec, parse_hex, show};
use crate::record::{Batch, Kind, Record};
use crate::source::{BATCH, Fields, RecordSource};

/// Streaming lackey reader.
pub struct LackeyReader<R> {
    lines: Lines<R>,
    records: u64,
}

impl<R: Read + Send> LackeyReader<R> {
    pub fn new(inner: R) -> Self {
        LackeyReader {
            lines: Lines::new(inner),
            records: 0,
        }
    }
}

/// Parses one lackey line: `Ok(None)` for a line to skip.
#[inline]
fn parse_line(line: &[u8]) -> Result<Option<Record>, Problem> {
    let (kind, rest) = match line {
        [b'I', b' ', rest @ ..] => (Kind::IFetch, rest),
        [b' ', op, b' ', rest @ ..] => {
            let kind = match op {
                b'L' => Kind::Load,
                b'S' => Kind::Store,
                b'M' => Kind::Modify,
                _ => return Err(Problem::UnknownOp(show(&[*op]))),
            };
            (kind, rest)
        }
        [] | [b'=', b'=', ..] => return Ok(None),
        _ => {
            return Err(Problem::Invalid(format!(
                "not a lackey trace line: {:?}",
                show(line)
            )));
        }
    };
    let mut i = 0;
    while i < rest.len() && rest[i] == b' ' {
        i += 1;
    }
    let rest = &rest[i..];
    let Some(comma) = memchr::memchr(b',', rest) else {
        return Err(Problem::Invalid(format!(
            "expected ADDR,SIZE, found {:?}",
            show(rest)
        )));
    };
    let addr = parse_hex(&rest[..comma]).ok_or_else(|| Problem::BadHex(show(&rest[..comma])))?;
    let size_txt = rest[comma + 1..].trim_ascii_end();
    let size = parse_dec(size_txt).ok_or_else(|| Problem::BadNumber(show(size_txt)))?;
    Ok(Some(Record::access(0, kind, addr, check_size(size)?)))
}

impl<R: Read + Send> RecordSource for LackeyReader<R> {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let start = out.len();
        while out.len() - start < BATCH {
            let record = self.records;
            let Some(line) = self.lines.next_line(record)? else {
                break;
            };
            match parse_line(line) {
                Ok(Some(r)) => {
                    out.push(r);
                    self.records += 1;
                }
                Ok(None) => {}
                Err(p) => return Err(TraceError::at_line(self.lines.line_no, record, p)),
            }
        }
        Ok(out.len() - start)
    }

    fn fields(&self) -> Fields {
        Fields::default()
    }

    fn format_name(&self) -> &'static str {
        "lackey"
    }
}

/// Writes records as lackey text (the format has no thread, PC or timing
/// columns: those are dropped).
pub fn write_record(w: &mut impl std::io::Write, r: &Record) -> std::io::Result<()> {
    let op = match r.kind {
        Kind::IFetch => "I ",
        Kind::Load => " L",
        Kind::Store => " S",
        Kind::Modify => " M",
    };
    writeln!(w, "{op} {:08x},{}", r.addr, r.size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::collect_all;

    #[test]
    fn parses_all_ops_and_skips_banner() {
        let text =
            b"==123== Lackey\nI  04017a0,3\n S 1ffefffd38,8\n L 04229f08,8\n M 0422a0c0,4\n\n";
        let mut r = LackeyReader::new(&text[..]);
        let v = collect_all(&mut r).unwrap();
        assert_eq!(
            v,
            vec![
                Record::access(0, Kind::IFetch, 0x04017a0, 3),
                Record::access(0, Kind::Store, 0x1ffefffd38, 8),
                Record::access(0, Kind::Load, 0x04229f08, 8),
                Record::access(0, Kind::Modify, 0x0422a0c0, 4),
            ]
        );
    }

    #[test]
    fn errors_name_line_and_record() {
        let text = b"I  0400,3\n L zz12,8\n";
        let e = collect_all(&mut LackeyReader::new(&text[..])).unwrap_err();
        assert_eq!(e.to_string(), "line 2, record 1: bad hex address \"zz12\"");
        let text = b"I  0400,3\n X 12,8\n";
        let e = collect_all(&mut LackeyReader::new(&text[..])).unwrap_err();
        assert_eq!(e.to_string(), "line 2, record 1: unknown op \"X\"");
        let text = b" L 12,0\n";
        let e = collect_all(&mut LackeyReader::new(&text[..])).unwrap_err();
        assert_eq!(e.to_string(), "line 1, record 0: zero access size");
    }

    #[test]
    fn writer_round_trips() {
        let recs = vec![
            Record::access(0, Kind::IFetch, 0x401000, 4),
            Record::access(0, Kind::Modify, 0xdeadbeef0, 8),
        ];
        let mut text = Vec::new();
        for r in &recs {
            write_record(&mut text, r).unwrap();
        }
        let back = collect_all(&mut LackeyReader::new(&text[..])).unwrap();
        assert_eq!(back, recs);
    }
}
