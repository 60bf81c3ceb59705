//! Task traces in the native format (version 2): the same blocks,
//! checksums and compression as a plain `.nst`, with task markers among
//! the records, so a recorded server's requests keep the format's speed
//! and integrity checks. Spec in `docs/trace-format.md` ("Task traces").
//!
//! A marker is a record flagged [`FLAG_TASK`]; `thread` is the task id:
//! - **begin**: kind `load` (code 0), `addr` = the affinity key, the time
//!   column = the arrival (ns), flags `FLAG_TASK | FLAG_TIME`;
//! - **end**: kind `store` (code 1), `addr` 0, flags `FLAG_TASK`.
//!
//! Every other record is an access of task `thread`, its time column the
//! compute gap before it (`FLAG_GAP`, or no timing flag for a gap of 0) —
//! or, with `thread` = [`crate::tasks::WARMUP_TASK`] before the first
//! begin, a warm-up record (no time).
//! The rules on markers are the CSV form's ([`crate::tasks`]), checked by
//! the same code. The header carries [`FIELD_TASKS`], so a plain reader
//! refuses the file instead of replaying markers as loads.

use std::io::{Read, Write};

use crate::error::{Problem, Result, TaskRule, TraceError};
use crate::native::write::NativeWriter;
use crate::native::{Codec, FIELD_TASKS, NativeReader};
use crate::record::{Batch, FLAG_GAP, FLAG_TASK, FLAG_TIME, Kind, Record};
use crate::source::RecordSource;
use crate::tasks::{TaskBuilder, TaskTrace};

/// True if `head` (a file's first [`HEADER_BYTES`] or more) is a native
/// task trace's header: the magic, version 2 or later, and [`FIELD_TASKS`].
pub fn is_task_native(head: &[u8]) -> bool {
    head.len() >= 16
        && &head[0..8] == crate::native::MAGIC
        && u16::from_le_bytes([head[8], head[9]]) >= 2
        && u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) & FIELD_TASKS != 0
}

/// Writes `t` as a native task trace (tasks one after another: begin,
/// accesses, end), returning the inner writer.
pub fn write_task_native<W: Write>(
    t: &TaskTrace,
    out: W,
    codec: Codec,
    meta: &serde_json::Value,
) -> std::io::Result<W> {
    let mut w = NativeWriter::for_tasks(out, codec, meta)?;
    for &a in &t.warmup {
        w.write(&Record::from_parts(a, 0, 0))?;
    }
    for task in &t.tasks {
        w.write(&Record {
            addr: task.key as u64,
            pc: 0,
            time: task.arrival_ns,
            thread: task.id,
            size: 1,
            kind: Kind::Load,
            flags: FLAG_TASK | FLAG_TIME,
        })?;
        for &(a, gap) in &task.accesses {
            w.write(&Record::from_parts(a, 0, 0).with_gap(gap))?;
        }
        w.write(&Record {
            addr: 0,
            pc: 0,
            time: 0,
            thread: task.id,
            size: 1,
            kind: Kind::Store,
            flags: FLAG_TASK,
        })?;
    }
    w.finish()
}

/// Reads a native task trace (the header must carry [`FIELD_TASKS`]).
/// Errors name the record's byte offset in the decompressed stream and
/// its index.
pub fn read_task_native<R: Read + Send>(inner: R) -> Result<TaskTrace> {
    let mut rd = NativeReader::new_tasks(inner)?;
    if !rd.has_tasks() {
        return Err(TraceError::at_offset(
            12,
            0,
            Problem::Task(TaskRule::NoTaskBit(FIELD_TASKS)),
        ));
    }
    let mut b = TaskBuilder::default();
    let mut batch = Batch::new(rd.fields());
    let mut record = 0u64;
    loop {
        batch.clear();
        let n = rd.fill(&mut batch)?;
        if n == 0 {
            break;
        }
        let base = rd.fill_offset();
        for (j, r) in batch.iter().enumerate() {
            let rule =
                |r: TaskRule| TraceError::at_offset(base + 16 * j as u64, record, Problem::Task(r));
            let id = r.thread;
            if r.flags & FLAG_TASK != 0 {
                match (r.kind, r.flags & !FLAG_TASK) {
                    (Kind::Load, FLAG_TIME) => {
                        let key = u32::try_from(r.addr).map_err(|_| {
                            rule(TaskRule::KeyTooWide {
                                task: id as u64,
                                key: r.addr,
                            })
                        })?;
                        b.begin(id, key, r.time).map_err(rule)?;
                    }
                    (Kind::Store, 0) => b.end(id).map_err(rule)?,
                    (k, f) => {
                        return Err(rule(TaskRule::Marker {
                            kind: k.name(),
                            flags: f,
                        }));
                    }
                }
            } else {
                if r.flags & FLAG_TIME != 0 {
                    return Err(rule(TaskRule::AccessTime(id)));
                }
                if id == crate::tasks::WARMUP_TASK {
                    b.warm(r.core()).map_err(rule)?;
                } else {
                    let gap = if r.flags & FLAG_GAP != 0 { r.time } else { 0 };
                    let t = b.open_task(id).map_err(rule)?;
                    b.push(t, r.core(), gap);
                }
            }
            record += 1;
        }
    }
    b.finish()
        .map_err(|p| TraceError::at_offset(rd.position(), record, p))
}

/// The two forms a task trace comes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskForm {
    /// CSV with a `task` column.
    Csv,
    /// Native, version 2 with task markers.
    Native,
}

impl TaskForm {
    /// The name `trace info` reports.
    pub fn name(self) -> &'static str {
        match self {
            TaskForm::Csv => "csv-tasks",
            TaskForm::Native => "native-tasks",
        }
    }
}

/// The task form `prefix` (a stream's first bytes, decompressed) starts,
/// if any.
pub fn task_form(prefix: &[u8]) -> Option<TaskForm> {
    if is_task_native(prefix) {
        return Some(TaskForm::Native);
    }
    let line = prefix.split(|&b| b == b'\n').next().unwrap_or(b"");
    (!prefix.starts_with(crate::native::MAGIC) && crate::tasks::is_task_csv(line))
        .then_some(TaskForm::Csv)
}

/// A stream's task form (unwrapping xz, gzip or zstd), or None for a
/// plain trace or an unreadable stream.
pub fn sniff(inner: Box<dyn Read + Send>) -> Option<TaskForm> {
    let mut r = crate::format::decompressed(inner).ok()?;
    let mut prefix = Vec::new();
    while prefix.len() < 4096 {
        let buf = std::io::BufRead::fill_buf(&mut r).ok()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len().min(4096 - prefix.len());
        prefix.extend_from_slice(&buf[..n]);
        std::io::BufRead::consume(&mut r, n);
    }
    task_form(&prefix)
}

/// Reads a task trace in either form, unwrapping a compression layer.
pub fn read_task_trace(inner: Box<dyn Read + Send>) -> Result<(TaskTrace, TaskForm)> {
    let mut r = crate::format::decompressed(inner)?;
    let prefix = std::io::BufRead::fill_buf(&mut r)
        .map_err(|e| TraceError::at_offset(0, 0, Problem::Io(e)))?
        .to_vec();
    match task_form(&prefix) {
        Some(TaskForm::Native) => Ok((read_task_native(r)?, TaskForm::Native)),
        Some(TaskForm::Csv) => Ok((crate::tasks::read_task_csv(r)?, TaskForm::Csv)),
        None if prefix.starts_with(crate::native::MAGIC) => Err(TraceError::at_offset(
            12,
            0,
            Problem::Task(TaskRule::NativeNoTaskBit(FIELD_TASKS)),
        )),
        None => Err(TraceError::at_line(
            1,
            0,
            Problem::Task(TaskRule::NotATaskTrace),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::write::NativeWriter;
    use crate::record::Fields;

    const EXAMPLE: &str = "task,op,addr,size,gap_ns,arrival_ns,key\n0,B,,,,1000,3\n0,L,0x10000040,8,5,,\n0,S,0x10000080,8,0,,\n0,E,,,,,\n";

    fn native(t: &TaskTrace, codec: Codec) -> Vec<u8> {
        write_task_native(t, Vec::new(), codec, &serde_json::json!({})).unwrap()
    }

    #[test]
    fn csv_and_native_round_trip_each_other() {
        let t = crate::tasks::read_task_csv(EXAMPLE.as_bytes()).unwrap();
        for codec in [Codec::None, Codec::Zstd] {
            let bytes = native(&t, codec);
            assert!(is_task_native(&bytes));
            assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2, "version 2");
            let back = read_task_native(&bytes[..]).unwrap();
            assert_eq!(back, t);
            assert_eq!(back.to_csv(), EXAMPLE);
        }
    }

    #[test]
    fn a_plain_reader_refuses_a_task_trace_and_a_task_reader_a_plain_one() {
        let t = crate::tasks::read_task_csv(EXAMPLE.as_bytes()).unwrap();
        let bytes = native(&t, Codec::None);
        let e = NativeReader::new(&bytes[..]).err().unwrap().to_string();
        assert!(e.contains("a task trace"), "{e}");
        let fields = Fields {
            pc: false,
            time: true,
        };
        let mut w =
            NativeWriter::new(Vec::new(), fields, Codec::None, &serde_json::json!({})).unwrap();
        w.write(&Record::access(0, Kind::Load, 64, 8)).unwrap();
        let plain = w.finish().unwrap();
        assert_eq!(
            u16::from_le_bytes([plain[8], plain[9]]),
            1,
            "plain files stay version 1"
        );
        assert!(!is_task_native(&plain));
        let e = read_task_native(&plain[..]).unwrap_err().to_string();
        assert!(e.contains("not a task trace"), "{e}");
        // A plain writer refuses a marker.
        let mut w =
            NativeWriter::new(Vec::new(), fields, Codec::None, &serde_json::json!({})).unwrap();
        let mut m = Record::access(0, Kind::Load, 3, 1).with_time(5);
        m.flags |= FLAG_TASK;
        assert!(w.write(&m).is_err());
    }

    /// Writes raw records into a task file (bypassing the trace model).
    fn raw(records: &[Record]) -> Vec<u8> {
        let mut w =
            NativeWriter::for_tasks(Vec::new(), Codec::None, &serde_json::json!({})).unwrap();
        for r in records {
            w.write(r).unwrap();
        }
        w.finish().unwrap()
    }

    fn begin(id: u32, key: u64, at: u64) -> Record {
        let mut r = Record::access(id, Kind::Load, key, 1).with_time(at);
        r.flags |= FLAG_TASK;
        r
    }

    fn end(id: u32) -> Record {
        let mut r = Record::access(id, Kind::Store, 0, 1);
        r.flags |= FLAG_TASK;
        r
    }

    #[test]
    fn bad_markers_name_the_offset_and_record() {
        let load = |id| Record::access(id, Kind::Load, 64, 8).with_gap(1);
        // The first record core sits after the header, the metadata ("{}")
        // and the first block header; each core is 16 bytes.
        let first = (crate::native::HEADER_BYTES + 2 + crate::native::BLOCK_HEADER_BYTES) as u64;
        for (recs, want) in [
            (
                vec![load(0)],
                format!("byte offset {first}, record 0: access of task 0 outside"),
            ),
            (vec![end(0)], "record 0: task 0 ends without a begin".into()),
            (
                vec![begin(0, 1, 9), end(0), begin(0, 1, 10)],
                format!(
                    "byte offset {}, record 2: task 0 begins a second time",
                    first + 32
                ),
            ),
            (
                vec![begin(0, 1, 9), begin(1, 1, 5)],
                "record 1: task 1: arrival_ns 5 is before".into(),
            ),
            (vec![begin(0, 1, 9)], "task 0 has no end".into()),
            (vec![begin(0, 1 << 33, 9)], "exceeds 32 bits".into()),
            (
                vec![{
                    let mut r = end(0);
                    r.kind = Kind::Modify;
                    r
                }],
                "task marker of kind modify".into(),
            ),
            (
                vec![
                    begin(0, 1, 9),
                    Record::access(0, Kind::Load, 64, 8).with_time(3),
                ],
                "absolute time".into(),
            ),
        ] {
            let e = read_task_native(&raw(&recs)[..]).unwrap_err().to_string();
            assert!(e.contains(&want), "{recs:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
}
