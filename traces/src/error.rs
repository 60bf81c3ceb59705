//! Typed errors for everything that turns bytes into records.
//!
//! Every error carries a [`Location`] (line or byte offset, plus the index of
//! the record being read) so the binary can print one line naming the file,
//! the place and the problem.

use std::fmt;

/// Where in the input an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A text format: 1-based line number and 0-based record index.
    Line { line: u64, record: u64 },
    /// A binary format: byte offset from the start of the (decompressed) stream
    /// and 0-based record index.
    Offset { offset: u64, record: u64 },
    /// Generated records (no file): the 0-based record index.
    Record { record: u64 },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line { line, record } => write!(f, "line {line}, record {record}"),
            Location::Offset { offset, record } => {
                write!(f, "byte offset {offset}, record {record}")
            }
            Location::Record { record } => write!(f, "record {record}"),
        }
    }
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("empty input: no records and no header")]
    Empty,
    #[error("bad magic {found:?}: not a {format} file")]
    BadMagic { format: &'static str, found: String },
    #[error(
        "format version {found} is newer than this numasim supports ({supported}); upgrade numasim"
    )]
    FutureVersion { found: u32, supported: u32 },
    #[error("truncated: {0}")]
    Truncated(Short),
    #[error("checksum mismatch in block {block}: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        block: u64,
        stored: u32,
        computed: u32,
    },
    #[error("bad hex address {0:?}")]
    BadHex(String),
    #[error("bad number {0:?}")]
    BadNumber(String),
    #[error("unknown op {0:?}")]
    UnknownOp(String),
    /// A native record's op kind code that names no op.
    #[error("unknown op kind code {0}")]
    KindCode(u8),
    /// A CSV cell that is not a number (`hex`: written as hex).
    #[error("bad {} {text:?} (column {column})", if *hex { "hex address" } else { "number" })]
    BadCell {
        column: &'static str,
        text: String,
        hex: bool,
    },
    #[error("zero access size")]
    ZeroSize,
    #[error("access size {0} exceeds the maximum of 65535 bytes")]
    SizeTooLarge(u64),
    /// A native trace's header breaks the format.
    #[error(transparent)]
    Header(Header),
    /// A native trace's block, record or trailer breaks the format.
    #[error(transparent)]
    Block(Block),
    /// A text line or CSV row that is not what its format says.
    #[error(transparent)]
    Line(Line),
    /// A time past the horizon (`crate::horizon`).
    #[error(transparent)]
    PastHorizon(#[from] crate::horizon::PastHorizon),
    /// A generator's or a request workload's parameter out of its range.
    #[error(transparent)]
    Param(Param),
    /// The thread decoding ahead of a whole-file reader stopped.
    #[error("the decoding thread failed")]
    DecoderLost,
    /// A task trace given to a plain trace reader (`.0` says how it shows).
    #[error("a task trace ({0}), not a plain trace")]
    TaskTrace(&'static str),
    /// A task trace breaks a task rule.
    #[error(transparent)]
    Task(#[from] TaskRule),
    /// A recorded request log breaks its layout's rules.
    #[error(transparent)]
    Log(LogRule),
    /// Neither the first bytes nor the name tell the format.
    #[error("cannot tell the trace format from its first bytes or its name")]
    UnknownFormat,
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// What a part cut short had, and should have had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Short {
    #[error("header has {got} of {want} bytes")]
    Header { got: usize, want: usize },
    #[error("metadata has {got} of {want} bytes")]
    Metadata { got: usize, want: u32 },
    #[error("file ends without the end-of-trace trailer")]
    NoTrailer,
    #[error("block header has {got} of {want} bytes")]
    BlockHeader { got: usize, want: usize },
    #[error("block {block} has {got} of {want} payload bytes")]
    Payload { block: u64, got: usize, want: usize },
    #[error("last instruction has {got} of {want} bytes")]
    Instruction { got: usize, want: usize },
    #[error("task {0} has no end by the end of the file")]
    OpenTask(u32),
}

/// A native trace header that breaks the format.
#[derive(Debug, thiserror::Error)]
pub enum Header {
    #[error("format version 0 does not exist")]
    VersionZero,
    #[error("unknown field bits {0:#x}")]
    FieldBits(u32),
    #[error("a task trace without the time column (arrivals and gaps)")]
    TasksWithoutTime,
    #[error("record size {found} does not match the field set (expected {expected})")]
    RecordSize { found: usize, expected: usize },
    #[error("unknown codec {0}")]
    Codec(u8),
    #[error("records per block {0} out of range")]
    BlockRecords(u32),
    #[error("metadata length {0} too large")]
    MetadataLength(u32),
    #[error("header checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum { stored: u32, computed: u32 },
    #[error("metadata is not JSON: {0}")]
    Metadata(serde_json::Error),
}

/// A native trace's block, record or trailer that breaks the format.
#[derive(Debug, thiserror::Error)]
pub enum Block {
    #[error("block {block}: bad block tag {tag:?}")]
    Tag { block: u64, tag: String },
    #[error("malformed end-of-trace trailer")]
    Trailer,
    #[error("block {block}: record count {n} out of range 1..={max}")]
    Count { block: u64, n: u32, max: u32 },
    #[error("block {block}: payload length {stored} != {n} records × {record_bytes} bytes")]
    Length {
        block: u64,
        stored: usize,
        n: u32,
        record_bytes: usize,
    },
    #[error("block {block}: payload length {stored} too large")]
    TooLong { block: u64, stored: usize },
    #[error("block {block}: {error}")]
    Unpack { block: u64, error: Unpack },
    #[error("bad record flags {0:#04x}")]
    Flags(u8),
    #[error("trailer says {total} records, the blocks hold {records}")]
    TrailerCount { total: u64, records: u64 },
    #[error("trailing bytes after the end-of-trace trailer")]
    TrailingBytes,
}

/// A compressed block that does not unpack.
#[derive(Debug, thiserror::Error)]
pub enum Unpack {
    #[error("decompressed to {len} bytes, expected {raw_len}")]
    Size { len: usize, raw_len: usize },
    #[error("zstd decompression failed: {0}")]
    Zstd(std::io::Error),
}

/// A text line or CSV row that is not what its format says (`String`s
/// hold the offending text, shown escaped).
#[derive(Debug, thiserror::Error)]
pub enum Line {
    #[error("line longer than {0} bytes")]
    TooLong(usize),
    #[error("row has {found} fields, header has {expected}")]
    Fields { found: u64, expected: u64 },
    /// Any other CSV problem, as the `csv` crate names it.
    #[error("{0:?}")]
    Csv(Box<csv::ErrorKind>),
    #[error("CSV header lacks required column {0:?} (need thread,op,addr,size)")]
    MissingColumn(String),
    #[error("thread id {0} exceeds 32 bits")]
    ThreadTooWide(u64),
    #[error("row has both gap_ns and time_ns; give one")]
    GapAndTime,
    #[error("missing address")]
    MissingAddress,
    #[error("extended din line lacks a size")]
    DinSize,
    #[error("not a lackey trace line: {0:?}")]
    NotLackey(String),
    #[error("expected ADDR,SIZE, found {0:?}")]
    AddrSize(String),
    #[error("expected 5 fields (instr_id, cycle, load_addr, pc, llc_hit), found {0}")]
    MlDpcFields(usize),
    #[error("llc_hit must be 0 or 1, found {0:?}")]
    LlcHit(String),
}

/// A generator's (`crate::synth`) or a request workload's
/// (`crate::workload`, `crate::workload_lines`) parameter out of range;
/// `field` names the parameter as the file or the generator spells it.
#[derive(Debug, thiserror::Error)]
pub enum Param {
    #[error("{field} must be positive, found {value}")]
    NotPositive { field: String, value: f64 },
    #[error("{field} must be from 0 to {max:e}, found {value}")]
    OutOfRange { field: String, max: f64, value: f64 },
    #[error("{field} {seconds} s is past {}", crate::horizon::describe())]
    PastHorizon { field: String, seconds: f64 },
    #[error("{field} must be at least {min}, found {value}")]
    BelowMin { field: String, min: f64, value: f64 },
    #[error("{field} must be ≥ 0, found {value}")]
    Negative { field: String, value: f64 },
    #[error("{field} must be at most {max}, found {value}")]
    TooLarge { field: String, max: u64, value: u64 },
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    #[error("shards.count, request.batch and features.items must be at least 1")]
    ZeroCount,
    #[error("features.miss_share must be in (0, 1], found {0}")]
    MissShare(f64),
    #[error("features.resident cannot exceed features.items")]
    ResidentExceedsItems,
    #[error("mmpp needs as many rates as dwell_ms, at least one")]
    MmppShape,
    #[error("move of shard {shard}: there are {shards} shards")]
    MoveShard { shard: u32, shards: u32 },
    #[error("write ratio {0} is not in [0, 1]")]
    WriteRatio(f64),
    #[error("footprint {footprint} is smaller than one {line}-byte line")]
    FootprintSmall { footprint: u64, line: u64 },
    #[error("footprint too large for chase/zipf (max 2^32 lines)")]
    FootprintLarge,
    #[error(
        "interleaved needs 1 or more streams, each over more than one stride of the footprint; got {streams} streams over {footprint} bytes"
    )]
    Interleaved { streams: u32, footprint: u64 },
    #[error(
        "gapped needs a skip probability in [0, 1] and at least 1 skip line; got {prob} and {lines}"
    )]
    Gapped { prob: f64, lines: u64 },
    #[error(
        "false sharing needs threads × size ≤ {line} bytes (one slot per thread in a line); got {threads} × {size}"
    )]
    FalseSharing { threads: u32, size: u16, line: u64 },
    #[error("a backward walk is for the sequential and stride patterns; got {0}")]
    Backward(&'static str),
    #[error(
        "a backward walk needs accesses no larger than the footprint; got {size} bytes over {footprint}"
    )]
    BackwardSize { size: u16, footprint: u64 },
    #[error("rate {0} accesses/µs must be positive")]
    Rate(f64),
    #[error("give a gap (closed loop) or a rate (open loop), not both")]
    GapAndRate,
    #[error("zipf exponent {0} must be non-negative")]
    ZipfExponent(f64),
    #[error("zipf parameters: {0}")]
    Zipf(rand_distr::ZipfError),
    #[error(
        "workload.background: more than {max} line accesses in its jobs ({per_job} a job): shorten workload.duration_s or shrink sweep_gb"
    )]
    LinesJobs { max: usize, per_job: u64 },
    #[error(
        "workload.request.features: items beyond resident ({far} of {items}) live on the far tier, which the line model lacks; set resident = items to run at line level"
    )]
    LinesFarItems { far: u32, items: u32 },
    #[error("more than {} requests: task ids are 32-bit", u32::MAX)]
    LinesRequests,
    #[error(
        "more than {max} line reads ({per_request} per request): shorten workload.duration_s or shrink the items"
    )]
    LinesReads { max: usize, per_request: u64 },
    /// `arrivals = { log = ... }` given to the generator before its log was read.
    #[error(
        "arrivals.log: the request log was not read (a loader reads it relative to the experiment file)"
    )]
    LogNotRead,
}

/// A task rule a task trace breaks (`tasks::TaskBuilder`; the same words
/// for the CSV and the native form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskRule {
    #[error("task {0} begins a second time")]
    BeginsTwice(u32),
    #[error("task {id}: arrival_ns {arrival} is before the previous arrival of key {key} ({prev})")]
    ArrivalBackwards {
        id: u32,
        arrival: u64,
        key: u32,
        prev: u64,
    },
    #[error("task {0} ends a second time")]
    EndsTwice(u32),
    #[error("task {0} ends without a begin")]
    EndWithoutBegin(u32),
    #[error("access of task {0} outside the task (no open begin)")]
    AccessOutside(u32),
    #[error("more than {0} access records: task traces are held in memory")]
    TooManyRecords(usize),
    #[error("more than {0} access records in tasks: task traces are held in memory")]
    TooManyTaskRecords(usize),
    #[error("more than 2^32 tasks")]
    TooManyTasks,
    #[error("task id {0} exceeds 32 bits")]
    IdTooWide(u64),
    #[error("task {task}: key {key} exceeds 32 bits")]
    KeyTooWide { task: u64, key: u64 },
    #[error(
        "task marker of kind {kind} with flags {flags:#x}: a begin is a load with the time flag, an end a store with none"
    )]
    Marker { kind: &'static str, flags: u8 },
    #[error("access of task {0} has an absolute time: task accesses carry gaps")]
    AccessTime(u32),
    #[error("more than {0} columns")]
    Columns(usize),
    #[error("task CSV header needs columns task and op")]
    HeaderColumns,
    #[error("not a task trace: the header lacks the tasks field bit ({0})")]
    NoTaskBit(u32),
    #[error("not a task trace: a native trace whose header lacks the tasks field bit ({0})")]
    NativeNoTaskBit(u32),
    #[error(
        "not a task trace: neither a CSV whose header has a task column nor a native task trace"
    )]
    NotATaskTrace,
    #[error(
        "more than {0} warm-up records before the first task (is the task address right? the converter can drop the warm-up)"
    )]
    TooManyWarmup(usize),
    #[error("a warm-up record after the first task begins: warm-up records come first")]
    WarmupAfterTask,
    #[error("task id {0} is reserved for warm-up records")]
    ReservedId(u32),
}

/// What a recorded request log's line can break (`crate::request_log`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LogRule {
    #[error(
        "not a request log: the first line is none of Azure's (TIMESTAMP,ContextTokens,GeneratedTokens), BurstGPT's (Timestamp,Model,Request tokens,...), Mooncake's (a JSON object with timestamp) or a plain CSV's (arrival_s or arrival_ms)"
    )]
    UnknownLayout,
    #[error("bad timestamp {0:?} (expected YYYY-MM-DD HH:MM:SS[.fffffff])")]
    Timestamp(String),
    #[error("{column} {text:?} is not a number")]
    Number { column: &'static str, text: String },
    #[error("{column} {value} is negative")]
    Negative { column: &'static str, value: String },
    #[error(
        "arrival {at} is before the previous request's {previous}: a log must be in time order"
    )]
    Unsorted { at: String, previous: String },
    #[error("row has {found} fields, the header has {expected}")]
    Fields { found: usize, expected: usize },
    #[error("not a JSON object with a numeric timestamp: {0}")]
    Json(String),
    #[error("more than {0} requests: a log is held in memory")]
    TooManyRequests(usize),
    #[error("more than {0} hash_ids in all: a log is held in memory")]
    TooManyHashIds(usize),
    #[error("time_scale {0} must be positive and finite")]
    TimeScale(f64),
    #[error("the log has no requests")]
    NoRequests,
    #[error("{column} {found} is more than the {max} a request may have")]
    TooManyTokens {
        column: &'static str,
        found: u64,
        max: u64,
    },
    #[error("{found} hash_ids: a request makes at most {max} lookups")]
    TooManyBlocks { found: usize, max: u64 },
}

/// An error reading or writing a trace, with its location.
#[derive(Debug, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct TraceError {
    pub location: Location,
    pub problem: Problem,
}

impl TraceError {
    /// Error at a text line.
    pub fn at_line(line: u64, record: u64, problem: Problem) -> Self {
        TraceError {
            location: Location::Line { line, record },
            problem,
        }
    }

    /// Error at a byte offset.
    pub fn at_offset(offset: u64, record: u64, problem: Problem) -> Self {
        TraceError {
            location: Location::Offset { offset, record },
            problem,
        }
    }
}

/// Shorthand result type.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;
