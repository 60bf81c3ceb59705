//! Lackey text held whole in memory, as segments of whole lines.
//!
//! Segment `k` holds the lines that begin in bytes `[k·S, (k+1)·S)`
//! (S = [`SEGMENT`]): it starts just after the first newline at or after
//! `k·S − 1`, so any thread finds its bounds with one short search and no
//! shared state. A line longer than a segment leaves later segments empty.

use std::sync::Arc;

use super::{Counts, parse_lines};
use crate::error::Result;
use crate::record::Batch;
use crate::record::Fields;
use crate::whole::{Segments, Whole};

/// Bytes per segment: ~70 000 lackey lines, a batch of about 1 MiB.
pub(crate) const SEGMENT: usize = 1 << 20;

pub(crate) struct LackeySegments {
    whole: Arc<dyn Whole>,
    segment: usize,
}

impl LackeySegments {
    /// Segments of `segment` bytes (tests use small ones).
    pub(crate) fn new(whole: Arc<dyn Whole>, segment: usize) -> Self {
        LackeySegments {
            whole,
            segment: segment.max(1),
        }
    }

    /// Where segment `k` starts: the first line start at or after `k·S`.
    fn start(&self, k: usize) -> usize {
        let b = self.whole.bytes();
        let at = k.saturating_mul(self.segment);
        if at == 0 {
            return 0;
        }
        if at >= b.len() {
            return b.len();
        }
        memchr::memchr(b'\n', &b[at - 1..]).map_or(b.len(), |i| at + i)
    }
}

impl Segments for LackeySegments {
    fn count(&self) -> usize {
        self.whole.bytes().len().div_ceil(self.segment)
    }

    fn decode(&self, k: usize, out: &mut Batch) -> Result<u64> {
        let (s, e) = (self.start(k), self.start(k + 1));
        let b = &self.whole.bytes()[s..e];
        let mut n = Counts::default();
        parse_lines(b, 0, b.len(), usize::MAX, out, &mut n)?;
        Ok(n.lines)
    }

    fn end(&self, k: usize) -> u64 {
        self.start(k + 1) as u64
    }

    fn finish(&self) -> Result<()> {
        Ok(())
    }

    fn fields(&self) -> Fields {
        Fields::default()
    }

    fn format_name(&self) -> &'static str {
        "lackey"
    }
}

/// Lackey's registry entry (`crate::FORMATS`), here because it names both
/// its readers (this whole-file one and the streaming one): text whose
/// first line is a Valgrind banner (`==`) or an `I  ` / ` L ` / ` S ` / ` M ` record.
pub const FORMAT: crate::format::Entry = crate::format::Entry {
    name: "lackey",
    shape: crate::format::Shape::Text(|prefix| {
        let first = crate::format::first_line(prefix);
        first.starts_with(b"==")
            || first.starts_with(b"I  ")
            || [b" L ", b" S ", b" M "].iter().any(|p| first.starts_with(*p))
    }),
    extensions: &[],
    hints: &["lackey"],
    open: |rd| Ok(Box::new(super::LackeyReader::new(rd))),
    segments: Some(|w| Ok(Box::new(LackeySegments::new(w, SEGMENT)))),
    writers: &[crate::sink::Writer {
        name: "lackey",
        extensions: &[".lackey"],
        open: |out, _, _| Ok(Box::new(super::LackeySink(out))),
    }],
};
