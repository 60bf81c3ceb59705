//! Task traces: accesses grouped into tasks (requests) that arrive at a
//! time and carry an affinity key, for the task engine's schedulers.
//!
//! **CSV form.** Header with `task,op` and `addr,size,gap_ns,arrival_ns,key`
//! (any order; `thread`, `pc` and other columns may appear: `thread` is
//! the recording's thread, informative only). `op` is `B` (begin: the row
//! gives `arrival_ns` and `key`), `E` (end), or an access op (`L`, `S`, `M`,
//! `I` and the long names, as in plain CSV traces) with `addr`, `size` and
//! an optional `gap_ns` (compute time before it, closed loop). Example:
//!
//! ```text
//! task,op,addr,size,gap_ns,arrival_ns,key
//! 0,B,,,,1000,3
//! 0,L,0x10000040,8,5,,
//! 0,S,0x10000080,8,0,,
//! 0,E,,,,,
//! ```
//!
//! **Rules** (each breach is a one-line error naming the line and the
//! record): tasks may interleave; an access or end names a task that has
//! begun and not ended; a task id begins once; begins arrive in
//! non-decreasing `arrival_ns` within a key; every task ends by the end of
//! the file; a task id fits 32 bits, a key 32 bits. A task without
//! accesses is allowed (it costs nothing). Task traces are held whole in
//! memory (tasks are dispatched by arrival time): at most
//! [`MAX_TASK_RECORDS`] access records, 24 bytes each.

use std::collections::HashMap;
use std::io::Read;

use crate::error::{Line, Problem, Result, Short, TaskRule, TraceError};
use crate::horizon;
use crate::lines::{check_size, show};
use crate::record::{Access, FLAG_GAP, Kind};

/// Most access records a task trace may hold (about 2.4 GB).
pub const MAX_TASK_RECORDS: usize = 100_000_000;

/// One task: its arrival, key and accesses with their compute gaps (ns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub id: u32,
    pub key: u32,
    pub arrival_ns: u64,
    /// Accesses in order; `Access::thread` holds the task id, and the gap
    /// (ns before the access) is in the pair.
    pub accesses: Vec<(Access, u64)>,
}

/// An access kind's letter in the CSV form.
fn op_letter(k: Kind) -> &'static str {
    match k {
        Kind::Load => "L",
        Kind::Store => "S",
        Kind::Modify => "M",
        Kind::IFetch => "I",
    }
}

/// Most warm-up records a task trace may hold (240 MB in memory).
pub const MAX_WARMUP_RECORDS: usize = 10_000_000;

/// The task id that marks a warm-up record (in the native form; `w` in
/// the CSV form's task column).
pub const WARMUP_TASK: u32 = u32::MAX;

/// A task trace: tasks in order of (arrival, begin order), after the
/// warm-up records — what the recorded program did before its first task
/// (its start-up: loading tables, filling buffers). A replay runs the
/// warm-up through the memory system untimed before the first task, so
/// the tasks meet the caches, directory and pages the program left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTrace {
    pub warmup: Vec<Access>,
    pub tasks: Vec<Task>,
}

impl TaskTrace {
    /// Access records over all tasks.
    pub fn accesses(&self) -> usize {
        self.tasks.iter().map(|t| t.accesses.len()).sum()
    }

    /// Distinct keys.
    pub fn keys(&self) -> usize {
        let mut k: Vec<u32> = self.tasks.iter().map(|t| t.key).collect();
        k.sort_unstable();
        k.dedup();
        k.len()
    }

    /// First and last arrival (ns).
    pub fn arrival_span(&self) -> Option<(u64, u64)> {
        Some((
            self.tasks.first()?.arrival_ns,
            self.tasks.last()?.arrival_ns,
        ))
    }

    /// Re-times the arrivals as a Poisson process of `qps` tasks per second
    /// (seeded), keeping the tasks' order: a recorded trace replayed at any
    /// load. An arrival past the time horizon (a rate too low for the
    /// trace's length) is refused.
    pub fn retime_poisson(&mut self, qps: f64, seed: u64) -> Result<(), Problem> {
        let mut x = seed ^ 0xA11_1BE5;
        let mut t = 0.0f64;
        for task in &mut self.tasks {
            let u = crate::workload::unit(crate::workload::splitmix(&mut x)).max(1e-300);
            t += -u.ln() / qps * 1e9;
            task.arrival_ns = t as u64;
        }
        self.check_horizon()
    }

    /// The first arrival, or arrival plus a task's gaps, past the time
    /// horizon, as a problem naming the task: for traces made in code
    /// (generated, re-timed), which no reader has checked.
    pub fn check_horizon(&self) -> Result<(), Problem> {
        for t in &self.tasks {
            horizon::check(&format!("task {} arrival_ns", t.id), t.arrival_ns)?;
            let mut end = t.arrival_ns as u128;
            for &(_, gap) in &t.accesses {
                horizon::check(&format!("task {} gap_ns", t.id), gap)?;
                end += gap as u128;
            }
            if end > horizon::HORIZON_NS as u128 {
                let field = format!("task {} arrival_ns plus its gaps", t.id);
                return Err(horizon::past(&field, u64::try_from(end).unwrap_or(u64::MAX)).into());
            }
        }
        Ok(())
    }

    /// The trace in the CSV form above.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("task,op,addr,size,gap_ns,arrival_ns,key\n");
        for a in &self.warmup {
            s.push_str(&format!(
                "w,{},{:#x},{},,,\n",
                op_letter(a.kind),
                a.addr,
                a.size
            ));
        }
        for t in &self.tasks {
            s.push_str(&format!("{},B,,,,{},{}\n", t.id, t.arrival_ns, t.key));
            for (a, gap) in &t.accesses {
                let op = op_letter(a.kind);
                s.push_str(&format!("{},{op},{:#x},{},{gap},,\n", t.id, a.addr, a.size));
            }
            s.push_str(&format!("{},E,,,,,\n", t.id));
        }
        s
    }
}

/// An inference-like service as a task trace (`trace gen tasks`): requests
/// whose keys have Zipf popularity, each looking up `lookups` feature items
/// (lines) of its key's data region (Zipf over `items_per_key` items: hot
/// items are shared by the key's requests), with a compute gap between
/// lookups and a final store of its result line; Poisson arrivals. Every
/// `background_every` requests a background task (key = `keys`) streams
/// `sweep_lines` lines of its own region and then writes `dirty_lines` hot
/// lines of every key — copies other cores hold, invalidated: the seed's
/// invalidation storm as a mechanism. Regions are `region` bytes apart
/// from `base` (key k at base + k·region; the sweep region after the last
/// key's), so a placement policy homes them.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceGen {
    pub tasks: u64,
    pub keys: u32,
    pub key_zipf: f64,
    pub items_per_key: u32,
    pub item_zipf: f64,
    pub lookups: u32,
    pub gap_ns: u64,
    pub qps: f64,
    pub background_every: u64,
    pub sweep_lines: u64,
    pub dirty_lines: u32,
    pub base: u64,
    pub region: u64,
    pub seed: u64,
}

impl Default for ServiceGen {
    /// `trace gen tasks`' defaults: a million requests over 16 keys.
    fn default() -> ServiceGen {
        ServiceGen {
            tasks: 1_000_000,
            keys: 16,
            key_zipf: 0.8,
            items_per_key: 4096,
            item_zipf: 0.9,
            lookups: 32,
            gap_ns: 20,
            qps: 100_000.0,
            background_every: 0,
            sweep_lines: 16384,
            dirty_lines: 64,
            base: 0x1000_0000,
            region: 1 << 20,
            seed: 1,
        }
    }
}

/// Generates the service's task trace (deterministic for a seed).
pub fn generate_service(g: &ServiceGen) -> Result<TaskTrace, Problem> {
    use crate::workload::{CdfSampler, splitmix, unit, zipf_cdf};
    let keys = CdfSampler::new(zipf_cdf(g.keys.max(1), g.key_zipf));
    let items = CdfSampler::new(zipf_cdf(g.items_per_key.max(1), g.item_zipf));
    let mut x = g.seed ^ 0x5E2_71CE;
    let mut t = 0.0f64;
    let mut out = Vec::new();
    let region = |k: u64| g.base + k * g.region;
    let line = |k: u64, item: u64| region(k) + (item * 64) % g.region.max(64);
    let mut id = 0u32;
    for n in 0..g.tasks {
        t += -unit(splitmix(&mut x)).max(1e-300).ln() / g.qps * 1e9;
        let key = keys.sample(unit(splitmix(&mut x))) as u64;
        let mut acc = Vec::with_capacity(g.lookups as usize + 1);
        for _ in 0..g.lookups {
            let item = items.sample(unit(splitmix(&mut x))) as u64;
            acc.push((Access::new(id, Kind::Load, line(key, item), 8), g.gap_ns));
        }
        // The result: a per-request line after the items.
        let result = g.items_per_key as u64 + n % 1024;
        acc.push((Access::new(id, Kind::Store, line(key, result), 8), g.gap_ns));
        for a in &mut acc {
            a.0.flags = FLAG_GAP;
        }
        out.push(Task {
            id,
            key: key as u32,
            arrival_ns: t as u64,
            accesses: acc,
        });
        id += 1;
        if g.background_every > 0 && (n + 1) % g.background_every == 0 {
            let mut acc = Vec::new();
            let sweep = g.keys as u64;
            for l in 0..g.sweep_lines {
                acc.push((Access::new(id, Kind::Load, line(sweep, l), 8), 0));
            }
            for k in 0..g.keys as u64 {
                for item in 0..g.dirty_lines as u64 {
                    acc.push((Access::new(id, Kind::Store, line(k, item), 8), 0));
                }
            }
            for a in &mut acc {
                a.0.flags = FLAG_GAP;
            }
            out.push(Task {
                id,
                key: g.keys,
                arrival_ns: t as u64,
                accesses: acc,
            });
            id += 1;
        }
    }
    let t = TaskTrace {
        tasks: out,
        ..TaskTrace::default()
    };
    t.check_horizon()?;
    Ok(t)
}

/// Cuts a record stream into tasks: a task begins at every instruction
/// fetch of `task_pc` (that fetch is its first record) and runs until the
/// next one begins or, with `end_pc`, through the fetch of `end_pc`.
/// Records before the first task are the trace's warm-up (unless
/// [`TaskSplitter::drop_warmup`]); records between an end and the next
/// begin belong to no task and are dropped. Task `i` gets key `i % keys`; its
/// arrival is its first record's open-loop time (`time_ns`) if it has one,
/// else 0 (re-time with [`TaskTrace::retime_poisson`]).
pub struct TaskSplitter {
    task_pc: u64,
    end_pc: Option<u64>,
    keys: u32,
    open: bool,
    timed: bool,
    total: usize,
    keep_warmup: bool,
    pub trace: TaskTrace,
}

impl TaskSplitter {
    pub fn new(task_pc: u64, end_pc: Option<u64>, keys: u32) -> TaskSplitter {
        TaskSplitter {
            task_pc,
            end_pc,
            keys: keys.max(1),
            open: false,
            timed: true,
            total: 0,
            keep_warmup: true,
            trace: TaskTrace::default(),
        }
    }

    /// Drops the records before the first task instead of keeping them
    /// as the warm-up.
    pub fn drop_warmup(mut self) -> TaskSplitter {
        self.keep_warmup = false;
        self
    }

    /// Takes the next record (`index`: its position in the input, for errors).
    pub fn push(&mut self, r: &crate::record::Record, index: u64) -> Result<()> {
        if r.kind == Kind::IFetch && r.addr == self.task_pc {
            let id = u32::try_from(self.trace.tasks.len()).map_err(|_| {
                TraceError::at_offset(0, index, Problem::Task(TaskRule::TooManyTasks))
            })?;
            let arrival = match r.timing() {
                crate::record::Timing::At(ns) => ns,
                _ => {
                    self.timed = false;
                    0
                }
            };
            self.trace.tasks.push(Task {
                id,
                key: id % self.keys,
                arrival_ns: arrival,
                accesses: Vec::new(),
            });
            self.open = true;
        }
        let warmup = self.trace.tasks.is_empty();
        if !(self.open || warmup && self.keep_warmup) {
            return Ok(());
        }
        if warmup {
            if self.trace.warmup.len() >= MAX_WARMUP_RECORDS {
                return Err(TraceError::at_offset(
                    0,
                    index,
                    Problem::Task(TaskRule::TooManyWarmup(MAX_WARMUP_RECORDS)),
                ));
            }
            let mut a = r.core();
            a.thread = WARMUP_TASK;
            a.flags = 0;
            self.trace.warmup.push(a);
            return Ok(());
        }
        if self.total >= MAX_TASK_RECORDS {
            return Err(TraceError::at_offset(
                0,
                index,
                Problem::Task(TaskRule::TooManyTaskRecords(MAX_TASK_RECORDS)),
            ));
        }
        let task = self.trace.tasks.last_mut().expect("open task");
        let mut a = r.core();
        a.thread = task.id;
        a.flags = FLAG_GAP;
        let gap = match r.timing() {
            crate::record::Timing::Gap(ns) => ns,
            _ => 0,
        };
        task.accesses.push((a, gap));
        self.total += 1;
        if r.kind == Kind::IFetch && Some(r.addr) == self.end_pc {
            self.open = false;
        }
        Ok(())
    }

    /// Every task had an arrival time from the trace.
    pub fn timed(&self) -> bool {
        self.timed
    }

    /// Every record of `src` split into tasks: the trace, whether every
    /// task had an arrival time, and how many records were read.
    pub fn split(
        mut self,
        src: &mut dyn crate::source::RecordSource,
    ) -> Result<(TaskTrace, bool, u64)> {
        let mut batch = crate::record::Batch::new(src.fields());
        let mut index = 0u64;
        loop {
            batch.clear();
            if src.fill(&mut batch)? == 0 {
                break;
            }
            for r in batch.iter() {
                self.push(&r, index)?;
                index += 1;
            }
        }
        let timed = self.timed;
        Ok((self.trace, timed, index))
    }
}

/// Whether a CSV header (its first line) is a task trace's: it has a
/// `task` column.
pub fn is_task_csv(first_line: &[u8]) -> bool {
    first_line
        .split(|&b| b == b',')
        .any(|c| c.trim_ascii().eq_ignore_ascii_case(b"task"))
}

/// Most columns a task-trace row may have.
const MAX_COLUMNS: usize = 32;

/// Splits a CSV line at commas into trimmed cells (no quoting: task
/// traces hold numbers and op letters only); None with too many cells.
fn split<'a>(line: &'a [u8], out: &mut [&'a [u8]; MAX_COLUMNS]) -> Option<usize> {
    let mut n = 0;
    for c in line.split(|&b| b == b',') {
        if n == MAX_COLUMNS {
            return None;
        }
        out[n] = c.trim_ascii();
        n += 1;
    }
    Some(n)
}

/// Reads a task trace in the CSV form.
pub fn read_task_csv<R: Read>(mut inner: R) -> Result<TaskTrace> {
    let at = |line: u64, record: u64, p: Problem| TraceError::at_line(line, record, p);
    let mut text = Vec::new();
    inner
        .read_to_end(&mut text)
        .map_err(|e| TraceError::at_line(0, 0, Problem::Io(e)))?;
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let mut cells: [&[u8]; MAX_COLUMNS] = [b""; MAX_COLUMNS];
    let header_line = lines.next().unwrap_or(b"");
    let Some(width) = split(header_line, &mut cells) else {
        return Err(at(1, 0, Problem::Task(TaskRule::Columns(MAX_COLUMNS))));
    };
    let header: Vec<Vec<u8>> = cells[..width].iter().map(|c| c.to_vec()).collect();
    let find = |name: &str| {
        header
            .iter()
            .position(|h| h.eq_ignore_ascii_case(name.as_bytes()))
    };
    let (Some(c_task), Some(c_op)) = (find("task"), find("op")) else {
        return Err(at(1, 0, Problem::Task(TaskRule::HeaderColumns)));
    };
    let (c_addr, c_size, c_gap, c_arr, c_key) = (
        find("addr"),
        find("size"),
        find("gap_ns"),
        find("arrival_ns"),
        find("key"),
    );
    let mut b = TaskBuilder::default();
    let mut record = 0u64;
    let mut end_line = 1u64;
    for (i, text_line) in lines.enumerate() {
        let line = i as u64 + 2;
        end_line = line;
        if text_line.trim_ascii().is_empty() {
            continue;
        }
        let n = split(text_line, &mut cells).unwrap_or(MAX_COLUMNS + 1);
        if n != width {
            return Err(at(
                line,
                record,
                Problem::Line(Line::Fields {
                    found: n as u64,
                    expected: width as u64,
                }),
            ));
        }
        let row = &cells[..width];
        let rule = |r: TaskRule| at(line, record, Problem::Task(r));
        let cell = |c: Option<usize>| c.and_then(|i| row.get(i).copied()).unwrap_or(b"");
        let field = |c: Option<usize>, column: &'static str| -> Result<u64> {
            let v = cell(c);
            crate::csvfmt::parse_num(v).ok_or_else(|| {
                at(
                    line,
                    record,
                    Problem::BadCell {
                        column,
                        text: show(v),
                        hex: false,
                    },
                )
            })
        };
        let op = cell(Some(c_op));
        if cell(Some(c_task)).eq_ignore_ascii_case(b"w") {
            let kind = crate::csvfmt::parse_op(op)
                .ok_or_else(|| at(line, record, Problem::UnknownOp(show(op))))?;
            let addr = field(c_addr, "addr")?;
            let size = check_size(field(c_size, "size")?).map_err(|p| at(line, record, p))?;
            b.warm(Access::new(WARMUP_TASK, kind, addr, size))
                .map_err(rule)?;
            record += 1;
            continue;
        }
        let id = field(Some(c_task), "task")?;
        let id = u32::try_from(id).map_err(|_| rule(TaskRule::IdTooWide(id)))?;
        match op {
            b"B" | b"b" => {
                let arrival = field(c_arr, "arrival_ns")?;
                let arrival = horizon::check("arrival_ns", arrival)
                    .map_err(|p| at(line, record, p.into()))?;
                let key = field(c_key, "key")?;
                let key = u32::try_from(key).map_err(|_| {
                    rule(TaskRule::KeyTooWide {
                        task: id as u64,
                        key,
                    })
                })?;
                b.begin(id, key, arrival).map_err(rule)?;
            }
            b"E" | b"e" => b.end(id).map_err(rule)?,
            _ => {
                let kind = crate::csvfmt::parse_op(op)
                    .ok_or_else(|| at(line, record, Problem::UnknownOp(show(op))))?;
                let t = b.open_task(id).map_err(rule)?;
                let addr = field(c_addr, "addr")?;
                let size = check_size(field(c_size, "size")?).map_err(|p| at(line, record, p))?;
                let gap = if cell(c_gap).is_empty() {
                    0
                } else {
                    let gap = field(c_gap, "gap_ns")?;
                    horizon::check("gap_ns", gap).map_err(|p| at(line, record, p.into()))?
                };
                b.push(t, Access::new(id, kind, addr, size), gap);
            }
        }
        record += 1;
    }
    b.finish()
        .map_err(|p| TraceError::at_line(end_line, record, p))
}

/// The task rules of the module doc, applied record by record: the CSV
/// and the native reader share them, so both refuse the same files with
/// the same words.
#[derive(Default)]
pub(crate) struct TaskBuilder {
    /// Open tasks: id → index in `tasks`; ids that have begun; last
    /// arrival per key.
    open: HashMap<u32, usize>,
    seen: HashMap<u32, ()>,
    last_arrival: HashMap<u32, u64>,
    tasks: Vec<Task>,
    warmup: Vec<Access>,
    total: usize,
    /// The task of the previous access (most accesses continue it).
    last: Option<(u32, usize)>,
}

impl TaskBuilder {
    /// A warm-up record: only before the first begin.
    pub(crate) fn warm(&mut self, mut a: Access) -> Result<(), TaskRule> {
        if !self.tasks.is_empty() {
            return Err(TaskRule::WarmupAfterTask);
        }
        if self.warmup.len() >= MAX_WARMUP_RECORDS {
            return Err(TaskRule::TooManyWarmup(MAX_WARMUP_RECORDS));
        }
        a.thread = WARMUP_TASK;
        a.flags = 0;
        self.warmup.push(a);
        Ok(())
    }

    /// A begin marker.
    pub(crate) fn begin(&mut self, id: u32, key: u32, arrival: u64) -> Result<(), TaskRule> {
        if id == WARMUP_TASK {
            return Err(TaskRule::ReservedId(id));
        }
        if self.seen.insert(id, ()).is_some() {
            return Err(TaskRule::BeginsTwice(id));
        }
        if let Some(&prev) = self.last_arrival.get(&key)
            && arrival < prev
        {
            return Err(TaskRule::ArrivalBackwards {
                id,
                arrival,
                key,
                prev,
            });
        }
        self.last_arrival.insert(key, arrival);
        self.open.insert(id, self.tasks.len());
        self.tasks.push(Task {
            id,
            key,
            arrival_ns: arrival,
            accesses: Vec::new(),
        });
        Ok(())
    }

    /// An end marker.
    pub(crate) fn end(&mut self, id: u32) -> Result<(), TaskRule> {
        if self.last.is_some_and(|(l, _)| l == id) {
            self.last = None;
        }
        if self.open.remove(&id).is_none() {
            return Err(if self.seen.contains_key(&id) {
                TaskRule::EndsTwice(id)
            } else {
                TaskRule::EndWithoutBegin(id)
            });
        }
        Ok(())
    }

    /// The open task an access of task `id` joins (an index for [`TaskBuilder::push`]).
    pub(crate) fn open_task(&mut self, id: u32) -> Result<usize, TaskRule> {
        let t = match self.last {
            Some((l, t)) if l == id => t,
            _ => {
                let Some(&t) = self.open.get(&id) else {
                    return Err(TaskRule::AccessOutside(id));
                };
                self.last = Some((id, t));
                t
            }
        };
        if self.total >= MAX_TASK_RECORDS {
            return Err(TaskRule::TooManyRecords(MAX_TASK_RECORDS));
        }
        Ok(t)
    }

    /// Appends an access (with its gap) to task index `t`.
    pub(crate) fn push(&mut self, t: usize, mut a: Access, gap: u64) {
        a.flags = FLAG_GAP;
        self.tasks[t].accesses.push((a, gap));
        self.total += 1;
    }

    /// The trace in dispatch order, or the first task left open.
    pub(crate) fn finish(self) -> Result<TaskTrace, Problem> {
        if let Some(id) = self.open.keys().min() {
            return Err(Problem::Truncated(Short::OpenTask(*id)));
        }
        let mut tasks = self.tasks;
        // Dispatch order: by arrival, ties in begin order (stable).
        tasks.sort_by_key(|t| t.arrival_ns);
        Ok(TaskTrace {
            warmup: self.warmup,
            tasks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "task,op,addr,size,gap_ns,arrival_ns,key\n0,B,,,,1000,3\n0,L,0x10000040,8,5,,\n0,S,0x10000080,8,0,,\n0,E,,,,,\n";

    #[test]
    fn the_service_generator_has_its_keys_background_and_storm() {
        let g = ServiceGen {
            tasks: 1000,
            keys: 8,
            key_zipf: 1.0,
            items_per_key: 1000,
            item_zipf: 0.9,
            lookups: 16,
            gap_ns: 50,
            qps: 100_000.0,
            background_every: 250,
            sweep_lines: 100,
            dirty_lines: 4,
            base: 0x1000_0000,
            region: 1 << 20,
            seed: 3,
        };
        let t = generate_service(&g).unwrap();
        assert_eq!(t.tasks.len(), 1004, "1000 requests and 4 background tasks");
        assert_eq!(t, generate_service(&g).unwrap(), "seeded");
        let bg: Vec<&Task> = t.tasks.iter().filter(|x| x.key == 8).collect();
        assert_eq!(bg.len(), 4);
        // A sweep of 100 lines, then 4 hot lines of each of the 8 keys written.
        assert_eq!(bg[0].accesses.len(), 100 + 32);
        assert!(
            bg[0].accesses[100..]
                .iter()
                .all(|(a, _)| a.kind == Kind::Store)
        );
        // Key 0 is the most popular (Zipf 1 over 8: about 37%).
        let k0 = t.tasks.iter().filter(|x| x.key == 0).count() as f64 / 1000.0;
        assert!((0.30..0.45).contains(&k0), "{k0}");
        // Requests look up their own key's region and store one result.
        let r = t.tasks.iter().find(|x| x.key == 3).unwrap();
        assert_eq!(r.accesses.len(), 17);
        assert!(
            r.accesses
                .iter()
                .all(|(a, _)| (a.addr - 0x1000_0000) >> 20 == 3)
        );
        assert!(
            t.tasks
                .windows(2)
                .all(|w| w[0].arrival_ns <= w[1].arrival_ns)
        );
        // And it round-trips through CSV.
        assert_eq!(read_task_csv(t.to_csv().as_bytes()).unwrap(), t);
    }

    #[test]
    fn poisson_retiming_keeps_order_and_has_the_asked_rate() {
        let mut t = TaskTrace {
            warmup: Vec::new(),
            tasks: (0..20_000)
                .map(|i| Task {
                    id: i,
                    key: i % 3,
                    arrival_ns: 0,
                    accesses: Vec::new(),
                })
                .collect(),
        };
        t.retime_poisson(1000.0, 5).unwrap();
        assert!(
            t.tasks
                .windows(2)
                .all(|w| w[0].arrival_ns <= w[1].arrival_ns)
        );
        let span_s = t.tasks.last().unwrap().arrival_ns as f64 / 1e9;
        assert!((20_000.0 / span_s - 1000.0).abs() < 30.0, "{span_s}");
        let mut u = t.clone();
        u.retime_poisson(1000.0, 5).unwrap();
        assert_eq!(t, u, "seeded");
    }

    #[test]
    fn the_issues_example_reads_and_round_trips() {
        let t = read_task_csv(EXAMPLE.as_bytes()).unwrap();
        assert_eq!(t.tasks.len(), 1);
        let k = &t.tasks[0];
        assert_eq!((k.id, k.key, k.arrival_ns), (0, 3, 1000));
        assert_eq!(k.accesses.len(), 2);
        assert_eq!(k.accesses[0].0.addr, 0x10000040);
        assert_eq!(k.accesses[0].1, 5);
        assert_eq!(k.accesses[1].0.kind, Kind::Store);
        assert_eq!(t.to_csv(), EXAMPLE);
        assert_eq!(read_task_csv(t.to_csv().as_bytes()).unwrap(), t);
        assert!(is_task_csv(b"task,op,addr"));
        assert!(!is_task_csv(b"thread,op,addr,size"));
    }

    #[test]
    fn warm_up_records_come_first_and_round_trip() {
        let text = "task,op,addr,size,gap_ns,arrival_ns,key\n\
                    w,S,0x1000,8,,,\nW,L,0x2000,4,,,\n0,B,,,,10,0\n0,L,0x1000,8,0,,\n0,E,,,,,\n";
        let t = read_task_csv(text.as_bytes()).unwrap();
        assert_eq!(t.warmup.len(), 2);
        assert_eq!(
            (t.warmup[0].kind, t.warmup[0].addr, t.warmup[1].size),
            (Kind::Store, 0x1000, 4)
        );
        assert_eq!(t.accesses(), 1, "warm-up records are no task's");
        assert_eq!(read_task_csv(t.to_csv().as_bytes()).unwrap(), t);
        let native = crate::task_native::write_task_native(
            &t,
            Vec::new(),
            crate::native::Codec::None,
            &serde_json::json!({}),
        )
        .unwrap();
        assert_eq!(
            crate::task_native::read_task_native(&native[..]).unwrap(),
            t
        );
        for (body, want) in [
            (
                "0,B,,,,10,0\n0,E,,,,,\nw,L,0x40,8,,,\n",
                "line 4, record 2: a warm-up record after the first task begins",
            ),
            (
                "4294967295,B,,,,10,0\n",
                "task id 4294967295 is reserved for warm-up records",
            ),
        ] {
            let text = format!("task,op,addr,size,gap_ns,arrival_ns,key\n{body}");
            let e = read_task_csv(text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn the_splitter_keeps_what_runs_before_the_first_task_as_warm_up() {
        use crate::record::Record;
        let rec = |kind, addr| Record {
            addr,
            pc: 0,
            time: 0,
            thread: 0,
            size: 8,
            kind,
            flags: 0,
        };
        let records = [
            rec(Kind::IFetch, 0x400000),
            rec(Kind::Store, 0x1000),
            rec(Kind::IFetch, 0x500000),
            rec(Kind::Load, 0x1000),
        ];
        let run = |s: TaskSplitter| {
            let mut s = s;
            for (i, r) in records.iter().enumerate() {
                s.push(r, i as u64).unwrap();
            }
            s.trace
        };
        let kept = run(TaskSplitter::new(0x500000, None, 1));
        assert_eq!(
            kept.warmup.iter().map(|a| a.addr).collect::<Vec<_>>(),
            [0x400000, 0x1000]
        );
        assert_eq!(kept.tasks.len(), 1);
        assert_eq!(kept.tasks[0].accesses.len(), 2, "its fetch and its load");
        let dropped = run(TaskSplitter::new(0x500000, None, 1).drop_warmup());
        assert!(dropped.warmup.is_empty());
        assert_eq!(dropped.tasks, kept.tasks);
    }

    #[test]
    fn interleaved_tasks_with_a_thread_column_sort_by_arrival() {
        let text = "thread,task,op,addr,size,gap_ns,arrival_ns,key\n\
                    7,1,B,,,,500,1\n7,0,B,,,,200,2\n7,1,L,64,8,,,\n7,0,L,128,8,3,,\n7,0,E,,,,,\n7,1,E,,,,,\n";
        let t = read_task_csv(text.as_bytes()).unwrap();
        assert_eq!(t.tasks.iter().map(|x| x.id).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(t.tasks[1].accesses[0].0.addr, 64);
        assert_eq!((t.keys(), t.accesses()), (2, 2));
        assert_eq!(t.arrival_span(), Some((200, 500)));
    }

    #[test]
    fn bad_markers_are_one_line_errors_naming_the_line() {
        let h = "task,op,addr,size,gap_ns,arrival_ns,key\n";
        for (body, want) in [
            (
                "0,L,64,8,,,\n",
                "line 2, record 0: access of task 0 outside the task",
            ),
            (
                "0,E,,,,,\n",
                "line 2, record 0: task 0 ends without a begin",
            ),
            (
                "0,B,,,,1,1\n0,E,,,,,\n0,B,,,,2,1\n",
                "line 4, record 2: task 0 begins a second time",
            ),
            (
                "0,B,,,,9,1\n1,B,,,,5,1\n",
                "line 3, record 1: task 1: arrival_ns 5 is before",
            ),
            ("0,B,,,,9,1\n", "task 0 has no end"),
            ("0,B,,,,9,1\n0,X,64,8,,,\n", "line 3, record 1"),
            ("0,B,,,,x,1\n", "line 2, record 0"),
            ("4294967296,B,,,,1,1\n", "exceeds 32 bits"),
        ] {
            let e = read_task_csv(format!("{h}{body}").as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{body:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        // Different keys may arrive out of order.
        assert!(
            read_task_csv(format!("{h}0,B,,,,9,1\n0,E,,,,,\n1,B,,,,5,2\n1,E,,,,,\n").as_bytes())
                .is_ok()
        );
    }
}
