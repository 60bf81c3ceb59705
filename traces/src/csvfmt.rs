//! CSV traces: a header row, then one access per row.
//!
//! Required columns: `thread,op,addr,size`; optional: `pc`, `gap_ns`,
//! `time_ns` (any order; extra columns are ignored). `op` is one of
//! `L|R|load`, `S|W|store`, `M|modify`, `I|ifetch` (case-insensitive);
//! `addr` and `pc` are hex with `0x` or decimal; an empty optional cell means
//! "absent". A row may carry `gap_ns` (closed-loop compute gap) or `time_ns`
//! (open-loop issue time), not both.

use std::io::{Read, Write};

use crate::error::{Line, Problem, Result, TraceError};
use crate::horizon;
use crate::lines::{check_size, parse_dec, parse_hex, show};
use crate::record::{BATCH, Fields};
use crate::record::{Batch, FLAG_GAP, FLAG_PC, FLAG_TIME, Kind, Record};
use crate::source::RecordSource;

struct Columns {
    thread: usize,
    op: usize,
    addr: usize,
    size: usize,
    pc: Option<usize>,
    gap: Option<usize>,
    time: Option<usize>,
}

/// Streaming CSV reader.
pub struct CsvReader<R: Read> {
    rdr: csv::Reader<R>,
    cols: Columns,
    row: csv::ByteRecord,
    records: u64,
}

fn csv_err(e: csv::Error, record: u64) -> TraceError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    let problem = match e.into_kind() {
        csv::ErrorKind::Io(io) => Problem::Io(io),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => Problem::Line(Line::Fields {
            found: len,
            expected: expected_len,
        }),
        other => Problem::Line(Line::Csv(Box::new(other))),
    };
    TraceError::at_line(line, record, problem)
}

/// Parses `0x`-prefixed hex or decimal.
#[inline]
pub(crate) fn parse_num(s: &[u8]) -> Option<u64> {
    match s {
        [b'0', b'x' | b'X', hex @ ..] => parse_hex(hex),
        _ => parse_dec(s),
    }
}

/// An access op cell: `L|R|load`, `S|W|store`, `M|modify`, `I|ifetch`.
pub(crate) fn parse_op(s: &[u8]) -> Option<Kind> {
    Some(match s {
        b"L" | b"l" | b"R" | b"r" => Kind::Load,
        b"S" | b"s" | b"W" | b"w" => Kind::Store,
        b"M" | b"m" => Kind::Modify,
        b"I" | b"i" => Kind::IFetch,
        _ if s.eq_ignore_ascii_case(b"load") => Kind::Load,
        _ if s.eq_ignore_ascii_case(b"store") => Kind::Store,
        _ if s.eq_ignore_ascii_case(b"modify") => Kind::Modify,
        _ if s.eq_ignore_ascii_case(b"ifetch") => Kind::IFetch,
        _ => return None,
    })
}

impl<R: Read + Send> CsvReader<R> {
    /// Reads the header and checks the required columns are there.
    pub fn new(inner: R) -> Result<Self> {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(inner);
        let header = rdr.byte_headers().map_err(|e| csv_err(e, 0))?.clone();
        if header.is_empty() || (header.len() == 1 && header[0].is_empty()) {
            return Err(TraceError::at_line(1, 0, Problem::Empty));
        }
        let find = |name: &str| {
            header
                .iter()
                .position(|h| h.eq_ignore_ascii_case(name.as_bytes()))
        };
        let need = |name: &str| {
            find(name).ok_or_else(|| {
                let problem = if find("task").is_some() {
                    Problem::TaskTrace("its header has a task column")
                } else {
                    Problem::Line(Line::MissingColumn(name.to_string()))
                };
                TraceError::at_line(1, 0, problem)
            })
        };
        let cols = Columns {
            thread: need("thread")?,
            op: need("op")?,
            addr: need("addr")?,
            size: need("size")?,
            pc: find("pc"),
            gap: find("gap_ns"),
            time: find("time_ns"),
        };
        Ok(CsvReader {
            rdr,
            cols,
            row: csv::ByteRecord::new(),
            records: 0,
        })
    }

    fn parse_row(&self) -> Result<Record, Problem> {
        let row = &self.row;
        let cell = |i: usize| row.get(i).unwrap_or(b"");
        let field = |i: usize, column: &'static str| -> Result<u64, Problem> {
            let c = cell(i);
            parse_num(c).ok_or_else(|| Problem::BadCell {
                column,
                text: show(c),
                hex: c.starts_with(b"0x") || c.starts_with(b"0X"),
            })
        };
        let thread = field(self.cols.thread, "thread")?;
        let thread = u32::try_from(thread)
            .map_err(|_| Problem::Line(Line::ThreadTooWide(thread)))?;
        let op = cell(self.cols.op);
        let kind = parse_op(op).ok_or_else(|| Problem::UnknownOp(show(op)))?;
        let addr = field(self.cols.addr, "addr")?;
        let size = check_size(field(self.cols.size, "size")?)?;
        let mut r = Record::access(thread, kind, addr, size);
        if let Some(i) = self.cols.pc.filter(|&i| !cell(i).is_empty()) {
            r = r.with_pc(field(i, "pc")?);
        }
        let gap = self.cols.gap.filter(|&i| !cell(i).is_empty());
        let time = self.cols.time.filter(|&i| !cell(i).is_empty());
        match (gap, time) {
            (Some(_), Some(_)) => {
                return Err(Problem::Line(Line::GapAndTime));
            }
            (Some(i), None) => r = r.with_gap(horizon::check("gap_ns", field(i, "gap_ns")?)?),
            (None, Some(i)) => r = r.with_time(horizon::check("time_ns", field(i, "time_ns")?)?),
            (None, None) => {}
        }
        Ok(r)
    }
}

impl<R: Read + Send> RecordSource for CsvReader<R> {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let start = out.len();
        while out.len() - start < BATCH {
            let more = self
                .rdr
                .read_byte_record(&mut self.row)
                .map_err(|e| csv_err(e, self.records))?;
            if !more {
                break;
            }
            // Skip blank rows.
            if self.row.len() == 1 && self.row[0].is_empty() {
                continue;
            }
            let line = self.row.position().map(|p| p.line()).unwrap_or(0);
            let r = self
                .parse_row()
                .map_err(|p| TraceError::at_line(line, self.records, p))?;
            out.push(r);
            self.records += 1;
        }
        Ok(out.len() - start)
    }

    fn fields(&self) -> Fields {
        Fields {
            pc: self.cols.pc.is_some(),
            time: self.cols.gap.is_some() || self.cols.time.is_some(),
        }
    }

    fn format_name(&self) -> &'static str {
        "csv"
    }
}

/// Streaming CSV writer; columns follow the [`Fields`] given at creation.
pub struct CsvWriter<W: Write> {
    out: W,
    fields: Fields,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header: `thread,op,addr,size` plus `pc` and
    /// `gap_ns,time_ns` when `fields` says they may occur.
    pub fn new(mut out: W, fields: Fields) -> std::io::Result<Self> {
        let mut header = String::from("thread,op,addr,size");
        if fields.pc {
            header.push_str(",pc");
        }
        if fields.time {
            header.push_str(",gap_ns,time_ns");
        }
        writeln!(out, "{header}")?;
        Ok(CsvWriter { out, fields })
    }

    /// Writes one record. A PC or timing the header has no column for is an error.
    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        let no_col = |what: &str| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("record has a {what} but the CSV output has no {what} column"),
            )
        };
        write!(
            self.out,
            "{},{},0x{:x},{}",
            r.thread,
            r.kind.name(),
            r.addr,
            r.size
        )?;
        if self.fields.pc {
            match r.pc() {
                Some(pc) => write!(self.out, ",0x{pc:x}")?,
                None => self.out.write_all(b",")?,
            }
        } else if r.flags & FLAG_PC != 0 {
            return Err(no_col("pc"));
        }
        if self.fields.time {
            if r.flags & FLAG_GAP != 0 {
                write!(self.out, ",{},", r.time)?;
            } else if r.flags & FLAG_TIME != 0 {
                write!(self.out, ",,{}", r.time)?;
            } else {
                self.out.write_all(b",,")?;
            }
        } else if r.flags & (FLAG_GAP | FLAG_TIME) != 0 {
            return Err(no_col("time"));
        }
        self.out.write_all(b"\n")
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// CSV's registry entry (`crate::FORMATS`): text whose first line is a
/// header with a `thread` column.
pub const FORMAT: crate::format::Entry = crate::format::Entry {
    name: "csv",
    shape: crate::format::Shape::Text(|prefix| {
        let lower = crate::format::first_line(prefix).to_ascii_lowercase();
        lower.contains(&b',') && lower.windows(6).any(|w| w == b"thread")
    }),
    extensions: &[".csv"],
    hints: &[],
    open: |rd| Ok(Box::new(CsvReader::new(rd)?)),
    segments: None,
    writers: &[crate::sink::Writer {
        name: "csv",
        extensions: &[".csv"],
        open: |out, fields, _| Ok(Box::new(CsvWriter::new(out, fields)?)),
    }],
};

impl<W: Write> crate::sink::RecordSink for CsvWriter<W> {
    fn write(&mut self, r: &Record) -> std::io::Result<()> {
        CsvWriter::write(self, r)
    }
    fn finish(self: Box<Self>) -> std::io::Result<()> {
        CsvWriter::finish(*self).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::collect_all;

    #[test]
    fn reads_ops_hex_and_optional_columns() {
        let text = "thread,op,addr,size,pc,gap_ns,time_ns\n\
                    0,L,0x1000,8,0x400,,\n\
                    1,W,4096,4,,12,\n\
                    2,modify,0x40,2,,,99\n\
                    0,I,0x400,4,,,\n";
        let mut r = CsvReader::new(text.as_bytes()).unwrap();
        assert_eq!(
            r.fields(),
            Fields {
                pc: true,
                time: true
            }
        );
        let v = collect_all(&mut r).unwrap();
        assert_eq!(
            v,
            vec![
                Record::access(0, Kind::Load, 0x1000, 8).with_pc(0x400),
                Record::access(1, Kind::Store, 4096, 4).with_gap(12),
                Record::access(2, Kind::Modify, 0x40, 2).with_time(99),
                Record::access(0, Kind::IFetch, 0x400, 4),
            ]
        );
    }

    #[test]
    fn row_errors_name_line_and_record() {
        let text = "thread,op,addr,size\n0,L,0x10,8\n0,Q,0x10,8\n";
        let e = collect_all(&mut CsvReader::new(text.as_bytes()).unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "line 3, record 1: unknown op \"Q\"");
        let text = "thread,op,addr,size\n0,L,0xZZ,8\n";
        let e = collect_all(&mut CsvReader::new(text.as_bytes()).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2, record 0: bad hex address \"0xZZ\" (column addr)"
        );
        let e = CsvReader::new("thread,op,size\n".as_bytes()).err().unwrap();
        assert!(e.to_string().contains("\"addr\""), "{e}");
    }

    #[test]
    fn writer_round_trips() {
        let recs = vec![
            Record::access(3, Kind::Load, 0x1000, 8).with_pc(0x400),
            Record::access(1, Kind::Store, 4096, 4).with_gap(12),
            Record::access(2, Kind::IFetch, 0x40, 2).with_time(99),
        ];
        let f = Fields {
            pc: true,
            time: true,
        };
        let mut w = CsvWriter::new(Vec::new(), f).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        let text = w.finish().unwrap();
        let back = collect_all(&mut CsvReader::new(&text[..]).unwrap()).unwrap();
        assert_eq!(back, recs);
    }
}
