//! The machine description: NUMA nodes, caches, memory channels, links.
//!
//! A [`MachineSpec`] is what a TOML file (or a built-in preset) says; a
//! [`Machine`] is the checked spec plus everything derived from it: the
//! node/link graph (`petgraph`), shortest routes by latency, the SLIT-style
//! distance matrix, and the core → node map. Nothing derived is ever typed
//! twice: the distance matrix and routes come from the link graph alone.
//! Schema documented in `docs/machine.md`.

use std::fmt;

use petgraph::graph::{NodeIndex, UnGraph};
use serde::{Deserialize, Deserializer, Serialize};

use crate::cache::Replacement;
use crate::geometry::{Geometry, GeometryError, parse_bytes};

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
    /// Cache-to-cache transfer latency between two cores of one node (ns); a
    /// transfer across nodes adds the route latency.
    pub c2c_latency_ns: f64,
    pub core: CoreSpec,
    pub nodes: Vec<NodeSpec>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
}

/// Why a machine description is unusable.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("TOML: {0}")]
    Toml(String),
    #[error("{0}")]
    Invalid(String),
    #[error("cache {name}: {source}")]
    Geometry {
        name: String,
        #[source]
        source: GeometryError,
    },
}

/// Finite and > 0 (rejects NaN).
fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// Finite and ≥ 0 (rejects NaN).
fn non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

fn invalid(s: impl Into<String>) -> MachineError {
    MachineError::Invalid(s.into())
}

/// Picoseconds per nanosecond.
pub const PS_PER_NS: f64 = 1000.0;

/// ns (f64) → ps (u64), rounded.
pub fn ns_to_ps(ns: f64) -> u64 {
    (ns * PS_PER_NS).round() as u64
}

/// Time in ps to move `bytes` at `gbps` GB/s.
pub fn transfer_ps(bytes: u64, gbps: f64) -> u64 {
    (bytes as f64 / gbps * PS_PER_NS).round().max(1.0) as u64
}

impl CacheSpec {
    /// The cache's geometry with the machine's line size.
    pub fn geometry(&self, line: u64) -> Result<Geometry, MachineError> {
        Geometry::new(self.size.0, self.assoc, line).map_err(|source| MachineError::Geometry {
            name: self.name.clone(),
            source,
        })
    }
}

/// A checked machine with its derived structure.
#[derive(Clone, Debug)]
pub struct Machine {
    pub spec: MachineSpec,
    /// Node/link graph: node weights are node ids, edge weights link indices.
    pub graph: UnGraph<u32, usize>,
    /// `route[i][j]`: link indices on the lowest-latency path from i to j.
    pub route: Vec<Vec<Vec<usize>>>,
    /// `route_ps[i][j]`: summed link latency of that path (ps).
    pub route_ps: Vec<Vec<u64>>,
    /// SLIT-style distance: 10 for local, else 10 × (memory latency of j +
    /// route latency i→j) / memory latency of i, rounded.
    pub distance: Vec<Vec<u32>>,
    /// Node of each core, cores numbered node by node.
    pub core_node: Vec<u32>,
    /// First core of each node.
    pub first_core: Vec<u32>,
}

impl Machine {
    /// Parses and checks a TOML description.
    pub fn from_toml(text: &str) -> Result<Machine, MachineError> {
        let spec: MachineSpec = traces::config::parse_toml(text).map_err(|e| match e {
            traces::config::ConfigError::Toml(s) => MachineError::Toml(s),
            other => MachineError::Invalid(other.to_string()),
        })?;
        Machine::new(spec)
    }

    /// Checks a spec and derives routes and distances.
    pub fn new(spec: MachineSpec) -> Result<Machine, MachineError> {
        let n = spec.nodes.len();
        if n == 0 {
            return Err(invalid("a machine needs at least one node"));
        }
        if n > 64 {
            return Err(invalid("at most 64 nodes are supported"));
        }
        if !spec.line_size.is_power_of_two() || spec.line_size < 16 || spec.line_size > 256 {
            return Err(invalid(format!(
                "line_size {} must be a power of two in 16..=256",
                spec.line_size
            )));
        }
        if !spec.page_size.is_power_of_two() || spec.page_size < spec.line_size {
            return Err(invalid(format!(
                "page_size {} must be a power of two ≥ line_size",
                spec.page_size
            )));
        }
        if !positive(spec.core.freq_ghz) {
            return Err(invalid("core.freq_ghz must be positive"));
        }
        if spec.core.mlp == 0 || spec.core.mlp > 256 {
            return Err(invalid("core.mlp must be in 1..=256"));
        }
        if !non_negative(spec.c2c_latency_ns) {
            return Err(invalid("c2c_latency_ns must be non-negative"));
        }
        let check_cache = |c: &CacheSpec| -> Result<(), MachineError> {
            let g = c.geometry(spec.line_size)?;
            crate::cache::Cache::check(&g, c.replacement)
                .map_err(|e| invalid(format!("cache {}: {e}", c.name)))?;
            if !non_negative(c.latency_ns) {
                return Err(invalid(format!(
                    "cache {}: latency_ns must be non-negative",
                    c.name
                )));
            }
            Ok(())
        };
        for c in spec.core.caches.iter().chain(spec.core.l1i.iter()) {
            check_cache(c)?;
        }
        let mut cores = 0u32;
        let mut core_node = Vec::new();
        let mut first_core = Vec::new();
        for (i, node) in spec.nodes.iter().enumerate() {
            if let Some(l) = &node.llc {
                check_cache(l)?;
            }
            if let Some(m) = &node.memory {
                if m.channels == 0 || !positive(m.channel_gbps) || !positive(m.latency_ns) {
                    return Err(invalid(format!(
                        "node {i}: memory needs channels ≥ 1, channel_gbps > 0 and latency_ns > 0"
                    )));
                }
                if !m.interleave.is_power_of_two() || m.interleave < spec.line_size {
                    return Err(invalid(format!(
                        "node {i}: interleave must be a power of two ≥ line_size"
                    )));
                }
            }
            first_core.push(cores);
            for _ in 0..node.cores {
                core_node.push(i as u32);
            }
            cores += node.cores;
        }
        if cores == 0 {
            return Err(invalid("the machine has no cores"));
        }
        if cores as usize + n > 256 {
            return Err(invalid(format!(
                "{cores} cores + {n} nodes exceed the directory's 256 caching agents"
            )));
        }
        if !spec.nodes.iter().any(|x| x.memory.is_some()) {
            return Err(invalid("no node has memory"));
        }
        let mut graph = UnGraph::<u32, usize>::new_undirected();
        let idx: Vec<NodeIndex> = (0..n as u32).map(|i| graph.add_node(i)).collect();
        for (k, l) in spec.links.iter().enumerate() {
            if l.a as usize >= n || l.b as usize >= n || l.a == l.b {
                return Err(invalid(format!(
                    "link {k}: {}–{} does not join two distinct nodes",
                    l.a, l.b
                )));
            }
            if !non_negative(l.latency_ns) || !positive(l.bandwidth_gbps) {
                return Err(invalid(format!(
                    "link {k}: needs latency_ns ≥ 0 and bandwidth_gbps > 0"
                )));
            }
            graph.add_edge(idx[l.a as usize], idx[l.b as usize], k);
        }
        if petgraph::algo::connected_components(&graph) != 1 {
            return Err(invalid("the links do not connect every node"));
        }
        // Lowest-latency routes (ties: fewer hops, then lower link indices — deterministic).
        let mut route = vec![vec![Vec::new(); n]; n];
        let mut route_ps = vec![vec![0u64; n]; n];
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let (cost, path) = petgraph::algo::astar(
                    &graph,
                    idx[i],
                    |x| x == idx[j],
                    |e| ns_to_ps(spec.links[*e.weight()].latency_ns) * 1024 + 1,
                    |_| 0,
                )
                .ok_or_else(|| invalid(format!("no route from node {i} to node {j}")))?;
                let _ = cost;
                let mut links = Vec::new();
                for w in path.windows(2) {
                    let e = graph
                        .edges_connecting(w[0], w[1])
                        .min_by_key(|e| (ns_to_ps(spec.links[*e.weight()].latency_ns), *e.weight()))
                        .ok_or_else(|| invalid("route uses a missing edge"))?;
                    links.push(*e.weight());
                }
                route_ps[i][j] = links
                    .iter()
                    .map(|&k| ns_to_ps(spec.links[k].latency_ns))
                    .sum();
                route[i][j] = links;
            }
        }
        let mem_ps = |i: usize| {
            spec.nodes[i]
                .memory
                .as_ref()
                .map(|m| ns_to_ps(m.latency_ns))
        };
        let ref_ps = spec
            .nodes
            .iter()
            .filter_map(|x| x.memory.as_ref())
            .map(|m| ns_to_ps(m.latency_ns))
            .min()
            .unwrap_or(1);
        let mut distance = vec![vec![10u32; n]; n];
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let own = mem_ps(i).unwrap_or(ref_ps);
                let far = mem_ps(j).unwrap_or(ref_ps) + route_ps[i][j];
                distance[i][j] = ((10.0 * far as f64 / own as f64).round() as u32).max(11);
            }
        }
        Ok(Machine {
            spec,
            graph,
            route,
            route_ps,
            distance,
            core_node,
            first_core,
        })
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.spec.nodes.len()
    }

    /// Number of cores.
    pub fn cores(&self) -> usize {
        self.core_node.len()
    }

    /// Nodes that have memory.
    pub fn memory_nodes(&self) -> Vec<u32> {
        (0..self.nodes() as u32)
            .filter(|&i| self.spec.nodes[i as usize].memory.is_some())
            .collect()
    }

    /// Nodes that have cores.
    pub fn cpu_nodes(&self) -> Vec<u32> {
        (0..self.nodes() as u32)
            .filter(|&i| self.spec.nodes[i as usize].cores > 0)
            .collect()
    }

    /// The spec as TOML (round-trips through [`Machine::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.spec).unwrap_or_default()
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec;
        writeln!(f, "machine {}: {}", s.name, s.description)?;
        writeln!(
            f,
            "  {} nodes, {} cores, line {} B, page {} B, core {} GHz, MLP {}",
            self.nodes(),
            self.cores(),
            s.line_size,
            s.page_size,
            s.core.freq_ghz,
            s.core.mlp
        )?;
        for c in s.core.l1i.iter().chain(s.core.caches.iter()) {
            writeln!(
                f,
                "  per core {}: {} B, {}-way, {} ns, {:?}",
                c.name, c.size.0, c.assoc, c.latency_ns, c.replacement
            )?;
        }
        for (i, n) in s.nodes.iter().enumerate() {
            write!(f, "  node {i}: {} cores", n.cores)?;
            if let Some(l) = &n.llc {
                write!(
                    f,
                    ", {} {} B {}-way {} ns",
                    l.name, l.size.0, l.assoc, l.latency_ns
                )?;
            }
            if let Some(m) = &n.memory {
                write!(
                    f,
                    ", memory {} GiB in {} × {} GB/s channels, {} ns",
                    m.capacity.0 >> 30,
                    m.channels,
                    m.channel_gbps,
                    m.latency_ns
                )?;
            }
            for a in &n.accelerators {
                write!(f, ", {} × {} ({} GB/s)", a.count, a.kind, a.pcie_gbps)?;
            }
            writeln!(f)?;
        }
        for l in &s.links {
            writeln!(
                f,
                "  link {}–{}: {} ns, {} GB/s",
                l.a, l.b, l.latency_ns, l.bandwidth_gbps
            )?;
        }
        writeln!(f, "  cache-to-cache: {} ns within a node", s.c2c_latency_ns)?;
        writeln!(f, "  distance (SLIT-style, derived from the links):")?;
        for row in &self.distance {
            let cells: Vec<String> = row.iter().map(|d| format!("{d:>4}")).collect();
            writeln!(f, "   {}", cells.join(""))?;
        }
        for src in &s.sources {
            writeln!(f, "  source: {src}")?;
        }
        Ok(())
    }
}
