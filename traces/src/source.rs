//! The streaming interface every reader and generator implements.

use crate::error::Result;
use crate::record::{BATCH, Batch, Fields, Record};

/// A stream of records, read in batches with bounded memory.
pub trait RecordSource: Send {
    /// Appends up to [`BATCH`] records to `out` (made with
    /// `Batch::new(self.fields())`) and returns how many it appended;
    /// `Ok(0)` means the stream is finished. (A [`crate::WholeReader`]
    /// appends a whole segment at a time.)
    fn fill(&mut self, out: &mut Batch) -> Result<usize>;

    /// Optional columns this stream may carry.
    fn fields(&self) -> Fields;

    /// Short name of the format (`lackey`, `csv`, `native`, ...).
    fn format_name(&self) -> &'static str;
}

/// Batches handed to a consumer in stream order; consumed batches go back
/// for reuse.
pub trait Batches {
    /// The next batch, `None` at the end of the stream.
    fn next_batch(&mut self) -> Option<Result<Batch>>;

    /// Returns a consumed batch for reuse.
    fn recycle(&mut self, b: Batch);

    /// The consumer reads records in place ([`Batch::in_place`]) as well
    /// as from `acc`: a reader over a mapped file may then hand out the
    /// checked record cores where they lie instead of copying them. The
    /// consumer must recycle each batch before it asks for the one after
    /// the next (the reader releases the bytes of earlier ones). Readers
    /// that cannot ignore it.
    fn allow_in_place(&mut self) {}
}

/// Reads every record of a source into memory (tests and small traces only).
pub fn collect_all(src: &mut dyn RecordSource) -> Result<Vec<Record>> {
    let mut all = Vec::new();
    let mut batch = Batch::new(src.fields());
    loop {
        batch.clear();
        if src.fill(&mut batch)? == 0 {
            return Ok(all);
        }
        all.extend(batch.iter());
    }
}

/// A source over records already in memory (tests, small generated inputs).
pub struct VecSource {
    records: Vec<Record>,
    pos: usize,
    fields: Fields,
}

impl VecSource {
    /// Wraps `records`; `fields` says which optional columns they may carry.
    pub fn new(records: Vec<Record>, fields: Fields) -> Self {
        VecSource {
            records,
            pos: 0,
            fields,
        }
    }
}

impl RecordSource for VecSource {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let end = (self.pos + BATCH).min(self.records.len());
        for r in &self.records[self.pos..end] {
            out.push(*r);
        }
        let n = end - self.pos;
        self.pos = end;
        Ok(n)
    }
    fn fields(&self) -> Fields {
        self.fields
    }
    fn format_name(&self) -> &'static str {
        "memory"
    }
}
