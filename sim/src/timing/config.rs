//! How a timing run is set up — pinning, MLP, windows, prefetch level and
//! queue, the fast paths — and what can go wrong in one.

/// How trace threads map to cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Thread k (in order of first appearance) on core k: fills node 0 first.
    Compact,
    /// Round-robin across the nodes that have cores.
    Spread,
    /// Explicit `(trace thread id, core)` pairs.
    Explicit(Vec<(u32, u32)>),
}

/// A pinning that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("{0:?}: expected compact, spread or T=CORE,... (e.g. 0=0,1=28)")]
pub struct PinError(String);

impl std::str::FromStr for Pin {
    type Err = PinError;
    /// `compact`, `spread`, or `T=CORE,T=CORE,...`.
    fn from_str(s: &str) -> Result<Pin, PinError> {
        match s {
            "compact" => Ok(Pin::Compact),
            "spread" => Ok(Pin::Spread),
            _ => s
                .split(',')
                .map(|part| {
                    let (t, c) = part.split_once('=')?;
                    Some((t.trim().parse().ok()?, c.trim().parse().ok()?))
                })
                .collect::<Option<Vec<_>>>()
                .map(Pin::Explicit)
                .ok_or_else(|| PinError(s.to_string())),
        }
    }
}

/// Time-series windows kept by default: about 250 MB at most on a
/// two-socket machine (a window holds a count per channel and link).
pub const DEFAULT_MAX_WINDOWS: usize = 1 << 20;

/// Run configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Override of the machine's outstanding-miss limit.
    pub mlp: Option<u32>,
    pub pin: Pin,
    /// Time-series window (ns).
    pub window_ns: u64,
    /// Keep the per-window time series (off: nothing per window is kept).
    pub timeseries: bool,
    /// Most time-series windows kept (only windows that saw an access or
    /// a transfer count); more is [`EngineError::TooManyWindows`].
    pub max_windows: usize,
    /// Most records buffered while waiting for a thread's next record.
    pub max_buffered: usize,
    /// Private data level (index into the core's caches) a prefetcher fills
    /// and watches: 0 = L1D, 1 = L2, ...
    pub prefetch_level: usize,
    /// Most prefetches a core keeps in flight beyond its private levels (its
    /// fill buffers); further prefetches are dropped. `None`: no limit (a
    /// late prefetch still makes its demand wait for the fill).
    pub prefetch_queue: Option<usize>,
    /// The exact fast paths (a core's repeated load, write while dirty, or
    /// fetch of the line it touched last answered without the lookup, runs
    /// of such accesses without the event loop's general steps). Results are identical either way;
    /// off, every access takes the general path, which tests use as the
    /// reference.
    pub shortcuts: bool,
    /// Sampled replay: measure units, warm functionally between them
    /// ([`super::Sample`]); `None` simulates every record in detail.
    pub sample: Option<super::sample::Sample>,
    /// Stores retire into a store buffer: a store costs its core the L1D's
    /// hit latency and holds no miss slot, while its line is still brought
    /// in (the caches, directory and queues change as for any store). For
    /// a replay of a loop whose stores nothing waits for (`validate`'s
    /// live loops); off, a store waits for its line like a load. Only
    /// records fed to the event loop; the task path (`Engine::issue_on`)
    /// charges stores in full. Not modelled: when the line lands — a load
    /// of it right after the store hits at once.
    pub posted_stores: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mlp: None,
            pin: Pin::Compact,
            window_ns: 10_000,
            timeseries: true,
            max_windows: DEFAULT_MAX_WINDOWS,
            max_buffered: 1 << 22,
            prefetch_level: 1,
            prefetch_queue: None,
            shortcuts: true,
            sample: None,
            posted_stores: false,
        }
    }
}

/// What can go wrong in a run (all caused by the input or the configuration).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "record {record}: trace thread {thread} needs a core, but the machine has only {cores} (threads are pinned in order of first appearance)"
    )]
    TooManyThreads {
        record: u64,
        thread: u32,
        cores: usize,
    },
    #[error("record {record}: trace thread {thread} is not in the explicit pinning")]
    Unpinned { record: u64, thread: u32 },
    #[error("pinning: core {core} does not exist (the machine has {cores})")]
    NoSuchCore { core: u32, cores: usize },
    #[error("pinning: core {core} is given to two threads")]
    CoreTaken { core: u32 },
    #[error(
        "record {record}: time_ns {time_ns} is earlier than thread {thread}'s previous access ({prev_ns} ns)"
    )]
    TimeBackwards {
        record: u64,
        thread: u32,
        time_ns: u64,
        prev_ns: u64,
    },
    #[error(
        "the time series needs more than {max} windows of {window_ns} ns (simulated time reached {reached_ms:.3} ms); raise the window or the most windows kept"
    )]
    TooManyWindows {
        max: usize,
        window_ns: u64,
        reached_ms: f64,
    },
    #[error("record {record}: {field} {ns} ns is past {h}", h = traces::horizon::describe())]
    TimePastHorizon {
        record: u64,
        field: &'static str,
        ns: u64,
    },
    #[error(
        "record {record}: thread {thread} would issue or complete an access at {ns} ns, past {h}",
        ns = ps / 1000,
        h = traces::horizon::describe()
    )]
    ClockPastHorizon { record: u64, thread: u32, ps: u64 },
    #[error("the outstanding-miss limit (MLP) must be at least 1")]
    ZeroMlp,
    #[error(
        "sample: the trace's {records} records hold {units} unit(s), the first at record {offset}; an interval needs at least 2 (shorten the period)"
    )]
    TooFewUnits {
        units: u64,
        records: u64,
        offset: u64,
    },
    #[error(
        "sample: more than {units} units or {measured} measured accesses; a sample is meant to be small (lengthen the period or shorten the unit)"
    )]
    SampleTooLarge { units: u64, measured: u64 },
    #[error(transparent)]
    SampleShape(#[from] super::sample::SampleShapeError),
    #[error("a part of a sample needs a sampled run")]
    NotSampled,
    #[error("prefetch level {0}: the machine's cores have {1} private data levels")]
    NoSuchLevel(usize, usize),
}
