//! The native format's streaming writer: records are gathered column-wise
//! into blocks, each checksummed and optionally zstd-compressed, then the
//! end trailer with the record count.

use std::io::Write;

use super::*;

/// Streaming native writer.
pub struct NativeWriter<W: Write> {
    out: W,
    fields: Fields,
    codec: Codec,
    block_records: usize,
    /// Column buffers of the block being filled.
    acc: Vec<u8>,
    pc: Vec<u8>,
    time: Vec<u8>,
    raw: Vec<u8>,
    packed: Vec<u8>,
    in_block: usize,
    total: u64,
    level: i32,
    /// A task trace: markers allowed, header version 2 with FIELD_TASKS.
    tasks: bool,
}

impl<W: Write> NativeWriter<W> {
    /// Writes the header. `meta` is a JSON object describing the source.
    pub fn new(
        out: W,
        fields: Fields,
        codec: Codec,
        meta: &serde_json::Value,
    ) -> std::io::Result<Self> {
        Self::with_block_records(out, fields, codec, meta, DEFAULT_BLOCK_RECORDS)
    }

    /// As [`NativeWriter::new`], with blocks of at most `block_records`
    /// records (1..=[`MAX_BLOCK_RECORDS`]).
    pub fn with_block_records(
        out: W,
        fields: Fields,
        codec: Codec,
        meta: &serde_json::Value,
        block_records: u32,
    ) -> std::io::Result<Self> {
        Self::open(out, fields, codec, meta, block_records, false)
    }

    /// A task trace's writer (version 2, time column, markers allowed):
    /// used by [`crate::task_native::write_task_native`].
    pub(crate) fn for_tasks(
        out: W,
        codec: Codec,
        meta: &serde_json::Value,
    ) -> std::io::Result<Self> {
        let fields = Fields {
            pc: false,
            time: true,
        };
        Self::open(out, fields, codec, meta, DEFAULT_BLOCK_RECORDS, true)
    }

    fn open(
        mut out: W,
        fields: Fields,
        codec: Codec,
        meta: &serde_json::Value,
        block_records: u32,
        tasks: bool,
    ) -> std::io::Result<Self> {
        if block_records == 0 || block_records > MAX_BLOCK_RECORDS {
            return Err(std::io::Error::other(format!(
                "records per block {block_records} out of range 1..={MAX_BLOCK_RECORDS}"
            )));
        }
        let meta = serde_json::to_vec(meta).map_err(std::io::Error::other)?;
        let rec_bytes = record_bytes(fields);
        let block_records = block_records as usize;
        let mut head = [0u8; HEADER_BYTES];
        head[0..8].copy_from_slice(MAGIC);
        let (version, bits) = if tasks {
            (VERSION, field_bits(fields) | FIELD_TASKS)
        } else {
            (1u16, field_bits(fields))
        };
        head[8..10].copy_from_slice(&version.to_le_bytes());
        head[10..12].copy_from_slice(&(rec_bytes as u16).to_le_bytes());
        head[12..16].copy_from_slice(&bits.to_le_bytes());
        head[16] = codec as u8;
        head[20..24].copy_from_slice(&(block_records as u32).to_le_bytes());
        head[24..28].copy_from_slice(&(meta.len() as u32).to_le_bytes());
        let ck = header_checksum(&head, &meta);
        head[28..32].copy_from_slice(&ck.to_le_bytes());
        out.write_all(&head)?;
        out.write_all(&meta)?;
        Ok(NativeWriter {
            out,
            fields,
            codec,
            block_records,
            acc: Vec::with_capacity(block_records * 16),
            pc: Vec::new(),
            time: Vec::new(),
            raw: Vec::new(),
            packed: Vec::new(),
            in_block: 0,
            total: 0,
            level: 3,
            tasks,
        })
    }

    /// Appends one record.
    #[inline]
    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        if (r.flags & FLAG_PC != 0 && !self.fields.pc)
            || (r.flags & (FLAG_GAP | FLAG_TIME) != 0 && !self.fields.time)
            || (r.flags & FLAG_TASK != 0 && !self.tasks)
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "record {} carries a column (pc or time) or a task marker the output was not opened with",
                    self.total
                ),
            ));
        }
        let mut b = [0u8; 16];
        b[0..8].copy_from_slice(&r.addr.to_le_bytes());
        b[8..12].copy_from_slice(&r.thread.to_le_bytes());
        b[12..14].copy_from_slice(&r.size.to_le_bytes());
        b[14] = r.kind as u8;
        b[15] = r.flags;
        self.acc.extend_from_slice(&b);
        if self.fields.pc {
            self.pc.extend_from_slice(&r.pc.to_le_bytes());
        }
        if self.fields.time {
            self.time.extend_from_slice(&r.time.to_le_bytes());
        }
        self.in_block += 1;
        self.total += 1;
        if self.in_block == self.block_records {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Appends every record of a batch.
    pub fn write_batch(&mut self, b: &Batch) -> std::io::Result<()> {
        for r in b.iter() {
            self.write(&r)?;
        }
        Ok(())
    }

    fn write_block(
        &mut self,
        tag: &[u8; 4],
        n: u32,
        payload_is_packed: bool,
    ) -> std::io::Result<()> {
        let payload: &[u8] = if payload_is_packed {
            &self.packed
        } else {
            &self.raw
        };
        let mut h = [0u8; BLOCK_HEADER_BYTES];
        h[0..4].copy_from_slice(tag);
        h[4..8].copy_from_slice(&n.to_le_bytes());
        h[8..12].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        h[16..20].copy_from_slice(&block_checksum(payload).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(payload)
    }

    fn flush_block(&mut self) -> std::io::Result<()> {
        if self.in_block == 0 {
            return Ok(());
        }
        let n = self.in_block as u32;
        self.raw.clear();
        self.raw.extend_from_slice(&self.acc);
        self.raw.extend_from_slice(&self.pc);
        self.raw.extend_from_slice(&self.time);
        match self.codec {
            Codec::None => self.write_block(BLOCK_TAG, n, false)?,
            Codec::Zstd => {
                self.packed = zstd::bulk::compress(&self.raw, self.level)?;
                self.write_block(BLOCK_TAG, n, true)?;
            }
        }
        self.acc.clear();
        self.pc.clear();
        self.time.clear();
        self.in_block = 0;
        Ok(())
    }

    /// Writes the last block and the trailer, flushes, returns the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.flush_block()?;
        self.raw.clear();
        self.raw.extend_from_slice(&self.total.to_le_bytes());
        self.write_block(END_TAG, 0, false)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> crate::sink::RecordSink for NativeWriter<W> {
    fn write(&mut self, r: &Record) -> std::io::Result<()> {
        NativeWriter::write(self, r)
    }
    fn finish(self: Box<Self>) -> std::io::Result<()> {
        NativeWriter::finish(*self).map(drop)
    }
}
