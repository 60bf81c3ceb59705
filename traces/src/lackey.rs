//! Valgrind lackey `--trace-mem=yes` text traces.
//!
//! Grammar, one access per line:
//! `I  ADDR,SIZE` (instruction fetch), ` L ADDR,SIZE`, ` S ADDR,SIZE`,
//! ` M ADDR,SIZE` (load+store by one instruction), ADDR in hex without `0x`,
//! SIZE in decimal. Lines starting with `==` (valgrind's `==PID==` banner)
//! and empty lines are skipped; anything else is an error. Lackey traces
//! carry one thread (id 0), no PC column and no timing.

use std::io::Read;

pub(crate) mod whole;

use crate::error::{Line, Problem, Result, TraceError};
use crate::lines::{Chunk, RefillError, check_size, parse_dec, parse_hex, show};
use crate::record::{BATCH, Fields};
use crate::record::{Batch, Kind, Record};
use crate::source::RecordSource;

/// Streaming lackey reader.
///
/// Speed: the input is read in 1 MiB chunks; each chunk's complete lines
/// are scanned in place by a table-driven fast path (fixed op prefix, hex
/// digits to the comma, decimal size to the newline) with no per-line
/// search or call. Any line the fast path does not recognise — banner
/// lines, blank lines, `\r\n`, extra spaces, errors — goes to the careful
/// per-line parser, which also produces the error messages.
pub struct LackeyReader<R> {
    inner: R,
    /// Unparsed bytes are `c.buf[c.start..c.end]`; `c.buf[c.start..limit]` holds whole lines.
    c: Chunk,
    n: Counts,
}

const CHUNK: usize = 1 << 20;

/// Hex digit value of each byte, 0xFF for non-digits.
static HEX: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

impl<R: Read + Send> LackeyReader<R> {
    pub fn new(inner: R) -> Self {
        LackeyReader {
            inner,
            c: Chunk::new(),
            n: Counts::default(),
        }
    }

    /// Moves the partial line to the front and reads more input.
    fn refill(&mut self) -> Result<()> {
        self.c.refill(&mut self.inner, 16 * CHUNK).map_err(|e| {
            let problem = match e {
                RefillError::TooLong => Problem::Line(Line::TooLong(16 << 20)),
                RefillError::Io(e) => Problem::Io(e),
            };
            TraceError::at_line(self.n.lines + 1, self.n.records, problem)
        })
    }
}

/// Line and record counters of a parse, for error locations.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    /// Lines parsed (the last one's 1-based number).
    pub lines: u64,
    /// Records produced.
    pub records: u64,
}

/// Parses the lines of `b[p..limit]` (`limit` at a line end, or the end of
/// input) into `out` until `max` more records; returns where it stopped.
/// Well-formed lines take the fast path; anything else the careful one,
/// which also words the errors.
#[inline]
pub(crate) fn parse_lines(
    b: &[u8],
    mut p: usize,
    limit: usize,
    max: usize,
    out: &mut Batch,
    n: &mut Counts,
) -> Result<usize> {
    let b = &b[..limit];
    let first = out.len();
    while p < limit && out.len() - first < max {
        match fast_line(b, p) {
            Some((kind, addr, size, next)) => {
                out.push(Record::access(0, kind, addr, size as u16));
                n.records += 1;
                n.lines += 1;
                p = next;
            }
            None => p = slow_line(b, p, out, n)?,
        }
    }
    Ok(p)
}

/// Parses one line at `p` the slow, careful way; returns the index after
/// its newline (or the end of `b`).
fn slow_line(b: &[u8], p: usize, out: &mut Batch, n: &mut Counts) -> Result<usize> {
    let limit = b.len();
    let nl = memchr::memchr(b'\n', &b[p..]).map_or(limit, |i| p + i);
    let mut line = &b[p..nl];
    if let [rest @ .., b'\r'] = line {
        line = rest;
    }
    n.lines += 1;
    match parse_line(line) {
        Ok(Some(r)) => {
            out.push(r);
            n.records += 1;
        }
        Ok(None) => {}
        Err(p) => return Err(TraceError::at_line(n.lines, n.records, p)),
    }
    Ok((nl + 1).min(limit))
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Per byte: high bit set iff the byte is ≥ `k` (bytes < 0x80, `k` ≤ 0x80; no
/// borrow crosses bytes because every lane stays ≥ 0).
#[inline(always)]
fn ge(x: u64, k: u8) -> u64 {
    (x | HIGH).wrapping_sub(ONES * k as u64) & HIGH
}

/// Per byte: high bit set iff the byte is an ASCII hex digit.
#[inline(always)]
fn hex_bytes(x: u64) -> u64 {
    let digit = ge(x, b'0') & !ge(x, b'9' + 1);
    let y = x | (ONES * 0x20); // 'A'..'F' -> 'a'..'f'; no other byte lands there
    let alpha = ge(y, b'a') & !ge(y, b'f' + 1);
    (digit | alpha) & !x & HIGH
}

/// Packs 8 nibble bytes (byte 0 = most significant digit) into a u32.
#[inline(always)]
fn pack8(w: u64) -> u64 {
    // Each step joins neighbouring lanes: (left << width) + right, keeping
    // the even lanes (no carries: every lane is below 2^width before).
    let t1 = ((w << 4) + (w >> 8)) & 0x00FF_00FF_00FF_00FF;
    let t2 = ((t1 << 8) + (t1 >> 16)) & 0x0000_FFFF_0000_FFFF;
    ((t2 << 16) + (t2 >> 32)) & 0x0000_0000_FFFF_FFFF
}

/// SWAR parse of 1..=16 hex digits at `q` followed by a comma, reading 16
/// bytes at once: `(value, digits)`, or `None` (fewer than 16 bytes left,
/// no comma within 16 bytes, or a non-hex byte before it).
#[inline(always)]
fn swar_hex(b: &[u8], q: usize) -> Option<(u64, usize)> {
    let w = b.get(q..q + 16)?;
    let lo = u64::from_le_bytes(w[0..8].try_into().ok()?);
    let hi = u64::from_le_bytes(w[8..16].try_into().ok()?);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let comma = ONES * b',' as u64;
    let (c_lo, c_hi) = (zero(lo ^ comma), zero(hi ^ comma));
    // The lowest flagged byte of the zero-byte test is always exact.
    let n = if c_lo != 0 {
        (c_lo.trailing_zeros() / 8) as usize
    } else if c_hi != 0 {
        8 + (c_hi.trailing_zeros() / 8) as usize
    } else {
        return None;
    };
    if n == 0 {
        return None;
    }
    let nib = |x: u64| (x & (ONES * 0x0F)) + ((x >> 6) & ONES) * 9;
    if n <= 8 {
        // The common case (lackey's 8- to 10-digit addresses are mostly ≤ 8
        // for code): the high half is not needed.
        let m = if n == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        };
        if hex_bytes(lo) & m != HIGH & m {
            return None;
        }
        return Some((pack8(nib(lo) & m) >> (4 * (8 - n)), n));
    }
    // 9..=15 digits: all of the low half, part of the high half (a comma
    // always ends the digits within the 16 bytes, so n < 16).
    let m_hi = (1u64 << (8 * (n - 8))) - 1;
    if hex_bytes(lo) != HIGH || hex_bytes(hi) & m_hi != HIGH & m_hi {
        return None;
    }
    let v = (pack8(nib(lo)) << 32) | pack8(nib(hi) & m_hi);
    Some((v >> (4 * (16 - n)), n))
}

/// The fast path for one well-formed line at `p`: returns the record and the
/// index after its newline, or `None` to defer to the careful parser.
#[inline(always)]
fn fast_line(b: &[u8], p: usize) -> Option<(Kind, u64, u64, usize)> {
    let kind = match b.get(p..p + 3)? {
        b"I  " => Kind::IFetch,
        b" L " => Kind::Load,
        b" S " => Kind::Store,
        b" M " => Kind::Modify,
        _ => return None,
    };
    let mut q = p + 3;
    let addr = match swar_hex(b, q) {
        Some((v, n)) => {
            q += n;
            v
        }
        None => {
            // Near the end of the buffer: one digit at a time.
            let mut v = 0u64;
            let digits_start = q;
            loop {
                let d = HEX[*b.get(q)? as usize];
                if d > 15 {
                    break;
                }
                v = (v << 4) | d as u64;
                q += 1;
            }
            let nd = q - digits_start;
            if nd == 0 || nd > 16 || *b.get(q)? != b',' {
                return None;
            }
            v
        }
    };
    q += 1;
    // One or two digits and the newline (nearly every line): no loop.
    let digit = |c: u8| c.wrapping_sub(b'1') < 9;
    match b.get(q..q + 3) {
        Some(&[c, b'\n', _]) if digit(c) => return Some((kind, addr, (c - b'0') as u64, q + 2)),
        Some(&[c1, c2, b'\n']) if digit(c1) && c2.is_ascii_digit() => {
            let size = ((c1 - b'0') * 10 + (c2 - b'0')) as u64;
            return Some((kind, addr, size, q + 3));
        }
        _ => {}
    }
    let size_start = q;
    let mut size = 0u64;
    loop {
        let c = *b.get(q)?;
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if q - size_start == 5 {
            return None; // more than five digits: the careful path explains
        }
        size = size * 10 + d as u64;
        q += 1;
    }
    let ns = q - size_start;
    if ns == 0 || ns > 5 || size == 0 || size > 65535 || *b.get(q)? != b'\n' {
        return None;
    }
    Some((kind, addr, size, q + 1))
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
            return Err(Problem::Line(Line::NotLackey(show(line))));
        }
    };
    let mut i = 0;
    while i < rest.len() && rest[i] == b' ' {
        i += 1;
    }
    let rest = &rest[i..];
    let Some(comma) = memchr::memchr(b',', rest) else {
        return Err(Problem::Line(Line::AddrSize(show(rest))));
    };
    let addr = parse_hex(&rest[..comma]).ok_or_else(|| Problem::BadHex(show(&rest[..comma])))?;
    let size_txt = rest[comma + 1..].trim_ascii_end();
    let size = parse_dec(size_txt).ok_or_else(|| Problem::BadNumber(show(size_txt)))?;
    Ok(Some(Record::access(0, kind, addr, check_size(size)?)))
}

impl<R: Read + Send> RecordSource for LackeyReader<R> {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let first = out.len();
        loop {
            // Whole lines available: up to and including the last newline
            // (or everything, at end of input).
            let limit = if self.c.eof {
                self.c.end
            } else {
                match memchr::memrchr(b'\n', &self.c.buf[self.c.start..self.c.end]) {
                    Some(i) => self.c.start + i + 1,
                    None => self.c.start,
                }
            };
            let max = BATCH - (out.len() - first);
            let p = parse_lines(&self.c.buf, self.c.start, limit, max, out, &mut self.n)?;
            self.c.start = p;
            if out.len() - first >= BATCH || (self.c.eof && self.c.start >= self.c.end) {
                return Ok(out.len() - first);
            }
            if self.c.start >= limit {
                if self.c.eof {
                    return Ok(out.len() - first);
                }
                self.refill()?;
            }
        }
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


/// Lackey's text, one line per record.
pub(crate) struct LackeySink<W>(pub(crate) W);

impl<W: std::io::Write> crate::sink::RecordSink for LackeySink<W> {
    fn write(&mut self, r: &Record) -> std::io::Result<()> {
        write_record(&mut self.0, r)
    }
    fn finish(mut self: Box<Self>) -> std::io::Result<()> {
        self.0.flush()
    }
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

    /// A reader that hands out 1..=7 bytes per call, to move chunk and line
    /// boundaries everywhere.
    struct Dribble<'a>(&'a [u8], usize);
    impl std::io::Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 = self.1 % 7 + 1;
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn fast_and_careful_paths_agree_across_any_boundaries() {
        let mut text = Vec::new();
        let mut expect = Vec::new();
        for i in 0..5000u64 {
            let (line, r): (String, Record) = match i % 6 {
                0 => (
                    format!("I  {:08x},{}\n", 0x400000 + i * 3, 1 + i % 15),
                    Record::access(0, Kind::IFetch, 0x400000 + i * 3, (1 + i % 15) as u16),
                ),
                1 => (
                    format!(" L {:x},8\n", 0x1ffefff000 + i),
                    Record::access(0, Kind::Load, 0x1ffefff000 + i, 8),
                ),
                2 => (
                    format!(" S {:08X},4\r\n", 0xABC0 + i),
                    Record::access(0, Kind::Store, 0xABC0 + i, 4),
                ),
                3 => (
                    format!(" M  {:x},16\n", i),
                    Record::access(0, Kind::Modify, i, 16),
                ),
                4 => ("==77== banner line\n\n".to_string(), Record::default()),
                _ => (
                    format!(" L {:016x},512\n", u64::MAX - i),
                    Record::access(0, Kind::Load, u64::MAX - i, 512),
                ),
            };
            text.extend_from_slice(line.as_bytes());
            if i % 6 != 4 {
                expect.push(r);
            }
        }
        text.extend_from_slice(b" L 10,2"); // last line without a newline
        expect.push(Record::access(0, Kind::Load, 0x10, 2));
        let whole = collect_all(&mut LackeyReader::new(&text[..])).unwrap();
        assert_eq!(whole, expect);
        let dribbled = collect_all(&mut LackeyReader::new(Dribble(&text, 0))).unwrap();
        assert_eq!(dribbled, expect);
        // An error deep in the stream names the right line.
        let mut bad = text.clone();
        bad.extend_from_slice(b"\n L 12,0\n");
        let e = collect_all(&mut LackeyReader::new(Dribble(&bad, 0))).unwrap_err();
        // The bad line is the last one: its number is the count of newlines.
        let last_line = bad.iter().filter(|&&c| c == b'\n').count();
        assert_eq!(
            e.to_string(),
            format!(
                "line {last_line}, record {}: zero access size",
                expect.len()
            )
        );
    }

    #[test]
    fn swar_hex_agrees_with_a_digit_loop() {
        // Oracle: parse_hex on the text before the first comma.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let alphabet = b"0123456789abcdefABCDEF,,,g:/@` \n";
        for _ in 0..200_000 {
            let mut buf = [0u8; 20];
            for c in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly hex digits, sometimes a comma or an edge character.
                *c = if x.is_multiple_of(5) {
                    alphabet[(x >> 8) as usize % alphabet.len()]
                } else {
                    alphabet[(x >> 8) as usize % 22]
                };
            }
            let expect = buf[..16]
                .iter()
                .position(|&c| c == b',')
                .and_then(|n| parse_hex(&buf[..n]).map(|v| (v, n)));
            assert_eq!(
                swar_hex(&buf, 0),
                expect,
                "{:?}",
                String::from_utf8_lossy(&buf)
            );
        }
        // A comma must fall inside the 16 bytes read: 16 digits take the slow path.
        assert_eq!(swar_hex(b"ffffffffffffffff,....", 0), None);
        assert_eq!(
            swar_hex(b"fffffffffffffff,.....", 0),
            Some((u64::MAX >> 4, 15))
        );
        assert_eq!(swar_hex(b"0401b8a,3\n.........", 0), Some((0x401b8a, 7)));
        assert_eq!(swar_hex(b",0401b8a,3\n........", 0), None);
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
