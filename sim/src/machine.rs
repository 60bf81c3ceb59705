//! The machine description: NUMA nodes, caches, memory channels, links.
//!
//! A [`MachineSpec`] (`spec.rs`) is what a TOML file (or a built-in preset)
//! says, each number within its range (`ranges.rs`); a
//! [`Machine`] is the checked spec plus everything derived from it: the
//! node/link graph (`petgraph`), shortest routes by latency, the SLIT-style
//! distance matrix, and the core → node map. Nothing derived is ever typed
//! twice: the distance matrix and routes come from the link graph alone.
//! Schema documented in `docs/machine.md`.

use std::fmt;

use petgraph::graph::{NodeIndex, UnGraph};

use crate::geometry::{Geometry, GeometryError};
pub use crate::spec::{
    AcceleratorSpec, Bytes, CacheSpec, CoreSpec, HostPrefetch, LinkSpec, MachineSpec, MemorySpec,
    NodeSpec,
};

/// Why a machine description is unusable.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("TOML: {}", traces::config::one_line(.0))]
    Toml(Box<toml::de::Error>),
    #[error("{0}")]
    Config(traces::config::ConfigError),
    #[error("a machine needs at least one node")]
    NoNodes,
    #[error("at most 64 nodes are supported")]
    TooManyNodes,
    #[error("page_size = {page}: must be at least line_size ({line})")]
    PageBelowLine { page: u64, line: u64 },
    #[error("{path} ({name}): {error}")]
    CacheGeometry {
        path: String,
        name: String,
        error: GeometryError,
    },
    #[error("{path} ({name}): {error}")]
    CacheReplacement {
        path: String,
        name: String,
        error: crate::cache::CacheError,
    },
    #[error("nodes[{node}].memory.interleave = {interleave}: must be at least line_size ({line})")]
    InterleaveBelowLine {
        node: usize,
        interleave: u64,
        line: u64,
    },
    #[error("the machine has no cores")]
    NoCores,
    #[error("{cores} cores + {nodes} nodes exceed the directory's 256 caching agents")]
    TooManyAgents { cores: u32, nodes: usize },
    #[error("no node has memory")]
    NoMemory,
    #[error("links[{link}]: {a}–{b} does not join two distinct nodes")]
    BadLink { link: usize, a: u32, b: u32 },
    #[error("the links do not connect every node")]
    Disconnected,
    #[error("no route from node {from} to node {to}")]
    NoRoute { from: usize, to: usize },
    #[error("route uses a missing edge")]
    MissingEdge,
    #[error(transparent)]
    Range(Box<crate::ranges::RangeError>),
    #[error(
        "core.prefetch.fills.{level}: the machine has no cache level {level} below its first (levels: {levels})"
    )]
    FillsLevel { level: String, levels: String },
    #[error("core.tlb.levels: needs at least one level")]
    TlbNoLevels,
    #[error("core.tlb.page_size = {page}: must be at least line_size ({line})")]
    TlbPageBelowLine { page: u64, line: u64 },
    #[error(
        "core.tlb.levels[0].latency_ns = {0}: must be 0 (a first-level hit is part of the L1D's latency)"
    )]
    TlbFirstLatency(f64),
    #[error(
        "core.tlb.levels[{level}] ({name}): {entries} entries in {assoc}-way sets: the set count must be a whole power of two"
    )]
    TlbSets {
        level: usize,
        name: String,
        entries: u32,
        assoc: u32,
    },
    #[error("cache {name}: {source}")]
    Geometry {
        name: String,
        #[source]
        source: GeometryError,
    },
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
            traces::config::ConfigError::Toml(e) => MachineError::Toml(e),
            other => MachineError::Config(other),
        })?;
        Machine::new(spec)
    }

    /// Checks a spec and derives routes and distances.
    pub fn new(spec: MachineSpec) -> Result<Machine, MachineError> {
        let n = spec.nodes.len();
        if n == 0 {
            return Err(MachineError::NoNodes);
        }
        if n > 64 {
            return Err(MachineError::TooManyNodes);
        }
        // Every numeric field within its documented range (`ranges.rs`);
        // below, the rules that join fields.
        crate::ranges::check(&spec).map_err(|e| MachineError::Range(Box::new(e)))?;
        if spec.page_size < spec.line_size {
            return Err(MachineError::PageBelowLine {
                page: spec.page_size,
                line: spec.line_size,
            });
        }
        // A cache's geometry and replacement, named by its path.
        let check_cache = |path: &str, c: &CacheSpec| -> Result<(), MachineError> {
            let g = c.geometry(spec.line_size).map_err(|e| match e {
                MachineError::Geometry { source, .. } => MachineError::CacheGeometry {
                    path: path.to_string(),
                    name: c.name.clone(),
                    error: source,
                },
                other => other,
            })?;
            crate::cache::Cache::check(&g, c.replacement).map_err(|error| {
                MachineError::CacheReplacement {
                    path: path.to_string(),
                    name: c.name.clone(),
                    error,
                }
            })?;
            Ok(())
        };
        for (i, c) in spec.core.caches.iter().enumerate() {
            check_cache(&format!("core.caches[{i}]"), c)?;
        }
        if let Some(c) = &spec.core.l1i {
            check_cache("core.l1i", c)?;
        }
        if let Some(t) = &spec.core.tlb {
            if t.page_size < spec.line_size {
                return Err(MachineError::TlbPageBelowLine {
                    page: t.page_size,
                    line: spec.line_size,
                });
            }
            let Some(first) = t.levels.first() else {
                return Err(MachineError::TlbNoLevels);
            };
            if first.latency_ns != 0.0 {
                return Err(MachineError::TlbFirstLatency(first.latency_ns));
            }
            for (level, l) in t.levels.iter().enumerate() {
                if crate::tlb::geometry(l, t.page_size).is_err() {
                    return Err(MachineError::TlbSets {
                        level,
                        name: l.name.clone(),
                        entries: l.entries,
                        assoc: l.assoc,
                    });
                }
            }
        }
        if let Some(p) = &spec.core.prefetch {
            let levels = fill_levels(&spec);
            if let Some(level) = p.fills.keys().find(|l| !levels.contains(&l.as_str())) {
                return Err(MachineError::FillsLevel {
                    level: level.clone(),
                    levels: match levels.join(", ") {
                        l if l.is_empty() => "none".to_string(),
                        l => l,
                    },
                });
            }
        }
        let mut cores = 0u32;
        let mut core_node = Vec::new();
        let mut first_core = Vec::new();
        for (i, node) in spec.nodes.iter().enumerate() {
            if let Some(l) = &node.llc {
                check_cache(&format!("nodes[{i}].llc"), l)?;
            }
            if let Some(m) = &node.memory
                && m.interleave < spec.line_size
            {
                return Err(MachineError::InterleaveBelowLine {
                    node: i,
                    interleave: m.interleave,
                    line: spec.line_size,
                });
            }
            first_core.push(cores);
            for _ in 0..node.cores {
                core_node.push(i as u32);
            }
            cores += node.cores;
        }
        if cores == 0 {
            return Err(MachineError::NoCores);
        }
        if cores as usize + n > 256 {
            return Err(MachineError::TooManyAgents { cores, nodes: n });
        }
        if !spec.nodes.iter().any(|x| x.memory.is_some()) {
            return Err(MachineError::NoMemory);
        }
        let mut graph = UnGraph::<u32, usize>::new_undirected();
        let idx: Vec<NodeIndex> = (0..n as u32).map(|i| graph.add_node(i)).collect();
        for (k, l) in spec.links.iter().enumerate() {
            if l.a as usize >= n || l.b as usize >= n || l.a == l.b {
                return Err(MachineError::BadLink {
                    link: k,
                    a: l.a,
                    b: l.b,
                });
            }
            graph.add_edge(idx[l.a as usize], idx[l.b as usize], k);
        }
        if petgraph::algo::connected_components(&graph) != 1 {
            return Err(MachineError::Disconnected);
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
                .ok_or(MachineError::NoRoute { from: i, to: j })?;
                let _ = cost;
                let mut links = Vec::new();
                for w in path.windows(2) {
                    let e = graph
                        .edges_connecting(w[0], w[1])
                        .min_by_key(|e| (ns_to_ps(spec.links[*e.weight()].latency_ns), *e.weight()))
                        .ok_or(MachineError::MissingEdge)?;
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
        if let Some(t) = &s.core.tlb {
            for l in &t.levels {
                writeln!(
                    f,
                    "  per core {}: {} entries of {} B, {}-way, +{} ns",
                    l.name, l.entries, t.page_size, l.assoc, l.latency_ns
                )?;
            }
            writeln!(f, "  page walk: +{} ns", t.walk_ns)?;
        }
        if s.frames == crate::frames::FrameMapping::Random {
            writeln!(
                f,
                "  physical frames: random, a {} B page each",
                s.page_size
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

/// The cache levels a prefetcher's fills may come from: the private
/// levels below the first, then the nodes' LLCs (`core.prefetch.fills`,
/// `ip-stride-table:f.LEVEL=N`).
pub fn fill_levels(spec: &MachineSpec) -> Vec<&str> {
    let private = spec.core.caches.iter().skip(1).map(|c| c.name.as_str());
    let llcs = spec
        .nodes
        .iter()
        .filter_map(|n| n.llc.as_ref().map(|l| l.name.as_str()));
    let mut v: Vec<&str> = Vec::new();
    for l in private.chain(llcs) {
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v
}
