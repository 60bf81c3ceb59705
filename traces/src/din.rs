//! Dinero IV `din` text traces.
//!
//! Classic form: `LABEL ADDR [comment...]`, LABEL 0 = read, 1 = write,
//! 2 = instruction fetch, 3 = escape (unknown access type), 4 = escape (cache
//! flush); ADDR hex without `0x`. The classic form has no size: numasim uses
//! 4 bytes, the word size of the traces it was made for. Escape records (3, 4)
//! carry no access numasim can model and are skipped.
//!
//! Extended form (`-informat D`): `r|w|i|m ADDR SIZE`, SIZE decimal (or hex
//! with `0x`); `m` is a modify (read then write by one instruction).
//! Lines starting with `#` and empty lines are skipped.

use std::io::Read;

use crate::error::{Line, Problem, Result, TraceError};
use crate::lines::{Lines, check_size, parse_dec, parse_hex, show};
use crate::record::{BATCH, Fields};
use crate::record::{Batch, Kind, Record};
use crate::source::RecordSource;

/// Size given to classic din records, which carry none.
pub const CLASSIC_SIZE: u16 = 4;

/// Streaming din reader.
pub struct DinReader<R> {
    lines: Lines<R>,
    records: u64,
}

impl<R: Read + Send> DinReader<R> {
    pub fn new(inner: R) -> Self {
        DinReader {
            lines: Lines::new(inner),
            records: 0,
        }
    }
}

fn parse_line(line: &[u8]) -> Result<Option<Record>, Problem> {
    let mut it = line
        .split(|c| *c == b' ' || *c == b'\t')
        .filter(|f| !f.is_empty());
    let Some(label) = it.next() else {
        return Ok(None);
    };
    if label[0] == b'#' {
        return Ok(None);
    }
    let addr_txt = it
        .next()
        .ok_or(Problem::Line(Line::MissingAddress))?;
    let addr_txt = addr_txt
        .strip_prefix(b"0x")
        .or_else(|| addr_txt.strip_prefix(b"0X"))
        .unwrap_or(addr_txt);
    let addr = parse_hex(addr_txt).ok_or_else(|| Problem::BadHex(show(addr_txt)))?;
    let (kind, size) = match label {
        b"0" => (Kind::Load, CLASSIC_SIZE),
        b"1" => (Kind::Store, CLASSIC_SIZE),
        b"2" => (Kind::IFetch, CLASSIC_SIZE),
        b"3" | b"4" => return Ok(None),
        b"r" | b"w" | b"i" | b"m" | b"R" | b"W" | b"I" | b"M" => {
            let kind = match label[0].to_ascii_lowercase() {
                b'r' => Kind::Load,
                b'w' => Kind::Store,
                b'i' => Kind::IFetch,
                _ => Kind::Modify,
            };
            let s = it
                .next()
                .ok_or(Problem::Line(Line::DinSize))?;
            let size = match s {
                [b'0', b'x' | b'X', hex @ ..] => parse_hex(hex),
                _ => parse_dec(s),
            }
            .ok_or_else(|| Problem::BadNumber(show(s)))?;
            (kind, check_size(size)?)
        }
        _ => return Err(Problem::UnknownOp(show(label))),
    };
    Ok(Some(Record::access(0, kind, addr, size)))
}

impl<R: Read + Send> RecordSource for DinReader<R> {
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
        "din"
    }
}

/// Dinero's registry entry (`crate::FORMATS`): text whose first line is a
/// label (`0`–`4`, `r`, `w`, `i`, `m`) and a hex address.
pub const FORMAT: crate::format::Entry = crate::format::Entry {
    name: "din",
    shape: crate::format::Shape::Text(|prefix| {
        let mut it = crate::format::first_line(prefix)
            .split(|c| *c == b' ' || *c == b'\t')
            .filter(|f| !f.is_empty());
        matches!((it.next(), it.next()), (Some(label), Some(addr))
            if matches!(label, b"0" | b"1" | b"2" | b"3" | b"4" | b"r" | b"w" | b"i" | b"m")
                && addr.iter().all(|c| c.is_ascii_hexdigit() || *c == b'x'))
    }),
    extensions: &[".din"],
    hints: &[],
    open: |rd| Ok(Box::new(DinReader::new(rd))),
    segments: None,
    writers: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::collect_all;

    #[test]
    fn classic_and_extended_forms() {
        let text =
            b"2 0 \n0 1000 comment here\n1 70f6088c\n3 1234\n4 0\nr 0x40 8\nm 80 0x10\n# c\n";
        let v = collect_all(&mut DinReader::new(&text[..])).unwrap();
        assert_eq!(
            v,
            vec![
                Record::access(0, Kind::IFetch, 0, 4),
                Record::access(0, Kind::Load, 0x1000, 4),
                Record::access(0, Kind::Store, 0x70f6088c, 4),
                Record::access(0, Kind::Load, 0x40, 8),
                Record::access(0, Kind::Modify, 0x80, 16),
            ]
        );
    }

    #[test]
    fn bad_label_is_an_error() {
        let e = collect_all(&mut DinReader::new(&b"0 10\n7 20\n"[..])).unwrap_err();
        assert_eq!(e.to_string(), "line 2, record 1: unknown op \"7\"");
    }
}
