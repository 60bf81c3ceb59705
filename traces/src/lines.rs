//! Chunked line scanning shared by the text formats (lackey, Dinero din).
//!
//! Reads the input in 1 MiB chunks and hands out whole lines as slices of the
//! chunk, so parsing never allocates per line. Memory is bounded by the chunk
//! size plus the longest line.

use std::io::Read;

use crate::error::{Line, Problem, TraceError};

const CHUNK: usize = 1 << 20;
/// A line longer than this is an error, not a reason to grow without bound.
const MAX_LINE: usize = 1 << 20;

/// A growable read buffer: the unconsumed input is `buf[start..end]`.
pub(crate) struct Chunk {
    pub buf: Vec<u8>,
    pub start: usize,
    pub end: usize,
    pub eof: bool,
}

/// Why [`Chunk::refill`] failed.
pub(crate) enum RefillError {
    /// The buffer is full of one line and may not grow past its limit.
    TooLong,
    Io(std::io::Error),
}

impl Chunk {
    pub fn new() -> Chunk {
        Chunk {
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// Moves the unconsumed bytes to the front and reads more after them,
    /// growing the buffer by a chunk when it is full (up to `max_len`).
    pub fn refill(&mut self, inner: &mut impl Read, max_len: usize) -> Result<(), RefillError> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.buf.len() {
            if self.buf.len() >= max_len {
                return Err(RefillError::TooLong);
            }
            self.buf.resize(self.buf.len() + CHUNK, 0);
        }
        loop {
            match inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(RefillError::Io(e)),
            }
        }
    }
}

pub(crate) struct Lines<R> {
    inner: R,
    c: Chunk,
    /// 1-based number of the line most recently returned.
    pub line_no: u64,
}

impl<R: Read> Lines<R> {
    pub fn new(inner: R) -> Self {
        Lines {
            inner,
            c: Chunk::new(),
            line_no: 0,
        }
    }

    /// Returns the next line without its terminator (`\n` or `\r\n`), or
    /// `None` at end of input. `record` is only used to locate errors.
    #[inline]
    pub fn next_line(&mut self, record: u64) -> Result<Option<&[u8]>, TraceError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.c.buf[self.c.start..self.c.end]) {
                let s = self.c.start;
                self.c.start = s + i + 1;
                self.line_no += 1;
                let mut line = &self.c.buf[s..s + i];
                if let [rest @ .., b'\r'] = line {
                    line = rest;
                }
                return Ok(Some(line));
            }
            if self.c.eof {
                if self.c.start < self.c.end {
                    // Last line without a newline.
                    let s = self.c.start;
                    self.c.start = self.c.end;
                    self.line_no += 1;
                    let mut line = &self.c.buf[s..self.c.end];
                    if let [rest @ .., b'\r'] = line {
                        line = rest;
                    }
                    return Ok(Some(line));
                }
                return Ok(None);
            }
            self.refill(record)?;
        }
    }

    fn refill(&mut self, record: u64) -> Result<(), TraceError> {
        self.c
            .refill(&mut self.inner, MAX_LINE + CHUNK)
            .map_err(|e| {
                let problem = match e {
                    RefillError::TooLong => Problem::Line(Line::TooLong(MAX_LINE)),
                    RefillError::Io(e) => Problem::Io(e),
                };
                TraceError::at_line(self.line_no + 1, record, problem)
            })
    }
}

/// Parses a hex number (no prefix handling), `None` if empty, invalid or over 64 bits.
#[inline]
pub(crate) fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// Parses a decimal number, `None` if empty, invalid or overflowing.
#[inline]
pub(crate) fn parse_dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Lossy, length-limited text of a byte slice for error messages.
pub(crate) fn show(s: &[u8]) -> String {
    let s = if s.len() > 40 { &s[..40] } else { s };
    String::from_utf8_lossy(s).into_owned()
}

/// Checks an access size and narrows it to the record's width.
#[inline]
pub(crate) fn check_size(size: u64) -> Result<u16, Problem> {
    match size {
        0 => Err(Problem::ZeroSize),
        1..=65535 => Ok(size as u16),
        _ => Err(Problem::SizeTooLarge(size)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_and_crlf() {
        let mut text = Vec::new();
        for i in 0..300_000u32 {
            text.extend_from_slice(format!("line{i}\r\n").as_bytes());
        }
        text.extend_from_slice(b"last");
        let mut l = Lines::new(&text[..]);
        let mut n = 0u32;
        while let Some(line) = l.next_line(0).unwrap() {
            if n < 300_000 {
                assert_eq!(line, format!("line{n}").as_bytes());
            } else {
                assert_eq!(line, b"last");
            }
            n += 1;
        }
        assert_eq!(n, 300_001);
        assert_eq!(l.line_no, 300_001);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_hex(b"1fFe"), Some(0x1ffe));
        assert_eq!(parse_hex(b""), None);
        assert_eq!(parse_hex(b"12g"), None);
        assert_eq!(parse_hex(b"11112222333344445"), None);
        assert_eq!(parse_dec(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_dec(b"18446744073709551616"), None);
        assert_eq!(parse_dec(b"1a"), None);
    }
}
