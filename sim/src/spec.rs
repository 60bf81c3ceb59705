//! A machine as a TOML file says it: the plain, serializable spec types
//! (nodes, caches, memory, links, accelerators, a calibrated host's
//! prefetchers). Nothing here checks or derives anything: the valid range
//! of every numeric field is in [`crate::ranges`], the rules that join
//! fields and everything derived (routes, distances) in
//! [`crate::machine`]. Schema documented in `docs/machine.md`.

use serde::{Deserialize, Deserializer, Serialize};

use crate::cache::Replacement;
use crate::geometry::parse_bytes;

/// Bytes, written as an integer or a string with a K/M/G suffix ("48K").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(Bytes(n)),
            Raw::Text(s) => parse_bytes(&s).map(Bytes).ok_or_else(|| {
                serde::de::Error::custom(format!("bad byte size {s:?} (e.g. 4096, 48K, 2M)"))
            }),
        }
    }
}

fn default_line() -> u64 {
    64
}
fn default_page() -> u64 {
    4096
}
fn is_identity(f: &crate::frames::FrameMapping) -> bool {
    *f == crate::frames::FrameMapping::Identity
}
fn default_replacement() -> Replacement {
    Replacement::Lru
}

/// One cache level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// Name for reports ("L1D", "L2", "LLC").
    pub name: String,
    pub size: Bytes,
    pub assoc: u32,
    /// Load-to-use latency of a hit at this level, from the core (ns).
    pub latency_ns: f64,
    #[serde(default = "default_replacement")]
    pub replacement: Replacement,
}

/// What every core has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreSpec {
    /// Core clock (GHz): one access issues per cycle at most.
    pub freq_ghz: f64,
    /// Outstanding misses a core may have in flight (memory-level parallelism).
    pub mlp: u32,
    /// Private data-cache levels, nearest first (L1D, L2, ...); may be empty.
    #[serde(default)]
    pub caches: Vec<CacheSpec>,
    /// Private instruction cache, looked up instead of the first data level
    /// for instruction fetches.
    #[serde(default)]
    pub l1i: Option<CacheSpec>,
    /// The host's hardware prefetchers as `numasim live calibrate`
    /// fingerprinted them, and the prefetchers that model them (`model`,
    /// what `validate` runs by default; other commands take `--prefetch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<HostPrefetch>,
    /// Address translation: the core's TLB levels and the page walk behind
    /// them (`crate::tlb`). Without it translation costs nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb: Option<TlbSpec>,
}

/// A core's data TLBs: set-associative LRU levels of translations, nearest
/// first, each `page_size` bytes. A data access whose page the first level
/// holds pays nothing more (that hit is part of the L1D's latency; the
/// first level's `latency_ns` must be 0); found first at level *i* it pays
/// that level's `latency_ns`; found nowhere it pays `walk_ns`. A prefetch
/// into another page than its trigger's arrives later by the same cost
/// and fills no level.
/// Instruction fetches are not translated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbSpec {
    /// Bytes one translation covers. A guest whose huge pages the
    /// hypervisor backs with 4 KiB pages still translates 4 KiB at a time.
    #[serde(default = "default_page")]
    pub page_size: u64,
    pub levels: Vec<TlbLevelSpec>,
    /// Added latency of a translation no level holds (ns).
    pub walk_ns: f64,
}

/// One TLB level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbLevelSpec {
    /// Name for reports ("DTLB", "STLB").
    pub name: String,
    pub entries: u32,
    pub assoc: u32,
    /// Added latency when this level is the nearest holding the
    /// translation (ns); the first level's must be 0.
    #[serde(default)]
    pub latency_ns: f64,
}

/// What stride walks showed of a host's hardware prefetchers
/// (`live::fingerprint`; `docs/machine.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostPrefetch {
    /// Some constant-stride walk ran at under half a random chase's latency.
    pub detected: bool,
    /// The strides (lines) followed that way.
    pub followed_strides: Vec<i64>,
    /// A descending walk is followed.
    pub backward: bool,
    /// A stride of a 4 KiB page or more is followed.
    pub crosses_pages: bool,
    /// The largest stride followed (lines).
    pub max_stride_lines: u64,
    /// The random chase's latency over the unit-stride walk's.
    pub unit_speedup: f64,
    /// The most concurrent region streams followed (unit strides in
    /// randomly placed regions, walked round-robin).
    #[serde(default)]
    pub streams: u32,
    /// Lines in flight ahead of a unit-stride walk (random chase over the
    /// walk's latency, Little's law).
    #[serde(default)]
    pub ahead_lines: u32,
    /// The same for longer strides up to `reach_lines`.
    #[serde(default)]
    pub stride_ahead: u32,
    /// The longest stride given `stride_ahead` (lines; 0: every stride).
    #[serde(default)]
    pub reach_lines: u64,
    /// The lookahead of strides beyond `reach_lines`.
    #[serde(default)]
    pub far_ahead: u32,
    /// A miss brings the next line.
    #[serde(default)]
    pub next_line: bool,
    /// A miss brings the other half of its 128-byte pair.
    #[serde(default)]
    pub adjacent_line: bool,
    /// Repeats of a stride (steps of a stream) the model's prefetchers
    /// need before they run ahead: fitted by simulation to the ramp walks
    /// (runs of lines at random places), 1 when not fitted.
    #[serde(default = "one")]
    pub confirm: u8,
    /// Fills the stride table keeps in flight per core from each cache
    /// level named (its `f.LEVEL=` parameters): fitted by simulation to
    /// the fingerprint's ascending stride walks inside the level (1 to
    /// [`crate::ranges::MAX_FILLS`]); a level not named has no limit (not
    /// fitted, or no limit fits better).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fills: std::collections::BTreeMap<String, u8>,
    /// The prefetchers the model runs for this host (`SPEC@LEVEL`, as
    /// `--prefetch` takes them); `numasim validate` runs these by default.
    #[serde(default)]
    pub model: Vec<String>,
    /// The file beside the machine file with the measurements.
    pub measured: String,
}

fn one() -> u8 {
    1
}

/// A node's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    pub capacity: Bytes,
    pub channels: u32,
    /// Peak bandwidth of one channel (GB/s, 10^9 bytes/s).
    pub channel_gbps: f64,
    /// Unloaded latency of a read served by this node's memory to a core on
    /// the same node, end to end (what Intel MLC calls idle latency), ns.
    pub latency_ns: f64,
    /// Bytes of consecutive addresses on one channel before moving to the next.
    #[serde(default = "default_line")]
    pub interleave: u64,
}

/// Accelerators attached to a node (used by request-level workloads).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceleratorSpec {
    pub kind: String,
    pub count: u32,
    /// Host↔device bandwidth per device (GB/s).
    pub pcie_gbps: f64,
    /// Device memory per device.
    #[serde(default = "zero_bytes")]
    pub memory: Bytes,
}

fn zero_bytes() -> Bytes {
    Bytes(0)
}

/// A NUMA node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Cores on this node (0 for a CPU-less memory node).
    pub cores: u32,
    /// Last-level cache shared by the node's cores.
    #[serde(default)]
    pub llc: Option<CacheSpec>,
    #[serde(default)]
    pub memory: Option<MemorySpec>,
    #[serde(default)]
    pub accelerators: Vec<AcceleratorSpec>,
}

/// A link between two nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    /// Latency an access adds by crossing this link (request and response), ns.
    pub latency_ns: f64,
    /// Data bandwidth (GB/s).
    pub bandwidth_gbps: f64,
}

/// A machine as written in TOML.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where the numbers come from.
    #[serde(default)]
    pub sources: Vec<String>,
    #[serde(default = "default_line")]
    pub line_size: u64,
    #[serde(default = "default_page")]
    pub page_size: u64,
    /// Which physical frame holds each `page_size` page: `"identity"` (the
    /// default: caches indexed by the trace's addresses) or `"random"`
    /// (`crate::frames`).
    #[serde(default, skip_serializing_if = "is_identity")]
    pub frames: crate::frames::FrameMapping,
    /// Cache-to-cache transfer latency between two cores of one node (ns); a
    /// transfer across nodes adds the route latency.
    pub c2c_latency_ns: f64,
    pub core: CoreSpec,
    pub nodes: Vec<NodeSpec>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
}
