//! Results of a timing run: the summary (serialised as `summary.json`) and
//! one row of the per-window time series (`timeseries.csv`). Plain
//! serializable types only: the timing engine fills them
//! (`timing/summary.rs`), the binary writes them, `analysis` reads them.

use serde::{Deserialize, Serialize};

/// Latency distribution over data accesses (ns).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The least (a histogram bucket's lower end: at most the true least).
    #[serde(default)]
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Accesses served at one level of the hierarchy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServedAt {
    pub level: String,
    pub accesses: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Coherence {
    /// Copies removed from other caches by writes.
    pub invalidations: u64,
    /// Misses served by another core's cache.
    pub cache_to_cache: u64,
    /// Writes to clean shared copies that had to invalidate others.
    pub upgrades: u64,
    /// Distinct lines written by two cores at disjoint bytes.
    pub false_sharing_lines: u64,
    /// Writes that found another core's disjoint writes on the line.
    pub false_sharing_events: u64,
}

/// One memory channel (or link) as a queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChannelStats {
    pub node: u32,
    pub channel: u32,
    pub requests: u64,
    pub bytes: u64,
    pub busy_ns: f64,
    /// Mean queueing before service (ns).
    pub mean_wait_ns: f64,
    /// busy / elapsed.
    pub utilization: f64,
    /// Time-average number of requests in the channel (waiting or in service),
    /// integrated over time independently of the per-request sums.
    pub mean_queue_len: f64,
    /// Mean time in the channel, wait + service (ns).
    pub mean_sojourn_ns: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkStats {
    pub a: u32,
    pub b: u32,
    pub requests: u64,
    pub bytes: u64,
    pub busy_ns: f64,
    pub mean_wait_ns: f64,
    pub utilization: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Lines read from memory (fills).
    pub reads: u64,
    /// Dirty lines written back to memory.
    pub writebacks: u64,
    /// All bytes through the channels (fills, write-backs, migrations).
    pub bytes: u64,
    pub channels: Vec<ChannelStats>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeStats {
    pub node: u32,
    /// Memory reads by this node's cores served by its own memory.
    pub local_accesses: u64,
    /// Memory reads by this node's cores served by another node's memory.
    pub remote_accesses: u64,
    /// Pages whose home is this node at the end.
    pub pages: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pages {
    pub placement: String,
    pub placed: u64,
    pub migrations: u64,
    pub migration_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadStats {
    pub thread: u32,
    pub core: u32,
    pub node: u32,
    pub accesses: u64,
    pub mean_latency_ns: f64,
    pub finished_ns: f64,
}

/// What a cache prefetcher did (formulas in `sim::prefetch`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prefetch {
    pub name: String,
    /// Private level it fills (0 = L1D).
    pub level: usize,
    pub issued: u64,
    pub useful: u64,
    pub late: u64,
    pub useless: u64,
    pub early: u64,
    pub demand_misses: u64,
    pub extra_bytes: u64,
    pub accuracy: f64,
    pub coverage: f64,
    /// Simulated decision time charged to the cores (ns).
    #[serde(default)]
    pub predict_cost_ns: f64,
    /// Prefetches not sent: the core's prefetch queue was full.
    #[serde(default)]
    pub dropped: u64,
}

/// Everything a timing run reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub machine: String,
    /// Time of the last completion (ns).
    pub elapsed_ns: f64,
    pub accesses: u64,
    pub data_accesses: u64,
    pub ifetches: u64,
    /// Over data accesses.
    pub latency_ns: Latency,
    pub served: Vec<ServedAt>,
    pub coherence: Coherence,
    pub memory: Memory,
    pub links: Vec<LinkStats>,
    pub nodes: Vec<NodeStats>,
    pub pages: Pages,
    pub threads: Vec<ThreadStats>,
    /// The first prefetcher, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<Prefetch>,
    /// Every prefetcher (one per private level it fills), when more than one ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefetchers: Vec<Prefetch>,
    /// With `[core.tlb]`: data accesses by where their translation was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb: Option<TlbStats>,
    /// With `--sample`: the whole trace's metrics estimated from the
    /// measured units. The fields above then count only the accesses
    /// simulated in detail (units and their detailed warm-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<Sampled>,
}

/// Address translation over a run's data accesses: per TLB level, the
/// lookups it answered (the nearest holding the page) and missed; a miss
/// of the last level is a page walk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TlbStats {
    pub levels: Vec<TlbLevelStats>,
    pub walks: u64,
}

/// One TLB level's share of a run's translations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TlbLevelStats {
    pub name: String,
    /// Translations this level was the nearest to hold.
    pub hits: u64,
    /// Translations that reached it and missed.
    pub misses: u64,
}

/// A sampled run (SMARTS): `unit` accesses measured every `period`, the
/// first at record `offset`, each after up to `warm` accesses simulated in
/// detail (each unit's warm-up cut by up to half); every other access (or,
/// with `functional`, that many before each warm-up) warms caches,
/// directory, prefetchers and pages without timing.
/// Each metric with its interval at `confidence`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampled {
    pub unit: u64,
    pub period: u64,
    pub warm: u64,
    pub offset: u64,
    /// Units measured.
    pub units: u64,
    /// Two-sided confidence of the intervals (0.9973: ±3 standard errors).
    pub confidence: f64,
    /// Accesses measured, simulated in detail (measured or warm-up), and
    /// warmed functionally.
    pub measured: u64,
    pub detailed: u64,
    pub warmed: u64,
    /// Accesses skipped (bounded warming: pinning and pages only).
    #[serde(default)]
    pub skipped: u64,
    /// Records warmed functionally before each unit; absent: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub functional: Option<u64>,
    /// By name: `latency_mean_ns`, `latency_p50_ns`, `latency_p99_ns`,
    /// `llc_miss_rate`, `hit_rate_<LEVEL>`, `invalidations_per_1k`,
    /// `read_bandwidth_gbps`.
    pub metrics: std::collections::BTreeMap<String, crate::estimate::Estimate>,
    /// Ratio metrics the units cannot estimate because none of them had a
    /// denominator (e.g. `llc_miss_rate` when no measured access looked
    /// the LLC up): left out of `metrics` rather than said to be 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_estimated: Vec<String>,
    /// Channels and links (and in a task replay, workers) at least
    /// [`SATURATED`] busy in the detailed phases. A queue at saturation
    /// grows over the whole run, and a sample drains it at every switch to
    /// warming: its waits, and the latencies they are part of, come out
    /// too low (docs/performance.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub saturated: Vec<Busy>,
    /// A task replay's detailed stretches' total span (ns): what the
    /// summary's time averages (utilisation, mean queue length) are over,
    /// the clock moving on through warming. Not written for a trace
    /// replay, whose clock stops while warming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_ns: Option<f64>,
    /// What unit, period, warm-up, offset and the counts count: `records`
    /// (a trace replay; not written) or `tasks` (a task replay, in arrival
    /// order).
    #[serde(default = "records", skip_serializing_if = "is_records")]
    pub counts: String,
}

fn records() -> String {
    "records".into()
}

fn is_records(s: &str) -> bool {
    s == "records"
}

/// Utilization from which a sampled run names a queue as saturated.
pub const SATURATED: f64 = 0.99;

/// A channel (`node N channel C`) or link (`link A-B`) and how busy it was.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Busy {
    pub queue: String,
    pub utilization: f64,
}

/// The per-window time series of a timing run: counts per window of
/// simulated time, bytes per channel and per link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeseries {
    /// Window length (ps).
    pub window_ps: u64,
    /// Channel names, `ch<node>.<channel>`, in the order of `channel_bytes`.
    pub channels: Vec<String>,
    /// Link names, `link<a>-<b>`, in the order of `link_bytes`.
    pub links: Vec<String>,
    pub windows: Vec<WindowRow>,
}

/// One window of a [`Timeseries`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowRow {
    pub start_ns: u64,
    pub accesses: u64,
    /// Sum of the accesses' latencies (ps).
    pub latency_ps: u128,
    pub l1_hits: u64,
    pub llc_hits: u64,
    pub mem_reads: u64,
    pub invalidations: u64,
    pub channel_bytes: Vec<u64>,
    pub link_bytes: Vec<u64>,
}

/// The queues at least [`SATURATED`] busy, channels then links.
pub fn saturated(channels: &[ChannelStats], links: &[LinkStats]) -> Vec<Busy> {
    let ch = channels.iter().map(|c| {
        let queue = format!("node {} channel {}", c.node, c.channel);
        (queue, c.utilization)
    });
    let li = links
        .iter()
        .map(|l| (format!("link {}-{}", l.a, l.b), l.utilization));
    ch.chain(li)
        .filter(|&(_, u)| u >= SATURATED)
        .map(|(queue, utilization)| Busy { queue, utilization })
        .collect()
}
