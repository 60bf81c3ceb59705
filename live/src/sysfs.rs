//! The host's topology from sysfs, as a machine description.
//!
//! Reads, under a root directory (`/sys` on a live host, a recorded tree in
//! tests): `devices/system/node/node*/{cpulist,distance,meminfo}` and
//! `devices/system/cpu/cpu<first>/cache/index*/{level,type,size,
//! ways_of_associativity,coherency_line_size,shared_cpu_list}`. Caches shared
//! by at most one core's hardware threads are private; the largest shared one
//! becomes each node's LLC (summed over its slices on the node). sysfs has no
//! latencies or bandwidths: those are typical values marked uncalibrated until
//! `numasim live calibrate` measures them. A set count that is not a power of
//! two is rounded down (the model needs powers of two), and said so.

use std::path::{Path, PathBuf};

use sim::machine::{Bytes, CacheSpec, CoreSpec, LinkSpec, MachineSpec, MemorySpec, NodeSpec};

use crate::LiveError;

/// Parses a Linux cpu list ("0-3,8,10-11").
pub fn parse_cpulist(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.trim().parse().ok()?),
        }
    }
    Some(v)
}

fn read(path: &Path) -> Result<String, LiveError> {
    std::fs::read_to_string(path).map_err(|error| LiveError::SysfsRead {
        path: path.display().to_string(),
        error,
    })
}

fn bad(path: &Path, what: &'static str) -> LiveError {
    LiveError::Sysfs {
        path: path.display().to_string(),
        what,
    }
}

/// Parses sizes like "48K", "1280K", "49152K", "16M".
fn parse_size(s: &str) -> Option<u64> {
    sim::geometry::parse_bytes(s.trim())
}

/// One cache level as sysfs describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct SysCache {
    pub level: u32,
    pub kind: String,
    pub size: u64,
    pub ways: u32,
    pub line: u64,
    pub shared: Vec<u32>,
}

/// What a probe found.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// Node id → its CPUs.
    pub nodes: Vec<(u32, Vec<u32>)>,
    /// SLIT distances, row per node in `nodes` order.
    pub distance: Vec<Vec<u32>>,
    /// Node memory (bytes).
    pub memory: Vec<u64>,
    /// Caches of the first CPU.
    pub caches: Vec<SysCache>,
}

/// Reads the topology under `root` (e.g. "/sys").
pub fn probe(root: &Path) -> Result<Topology, LiveError> {
    let node_dir = root.join("devices/system/node");
    let mut nodes = Vec::new();
    let entries = std::fs::read_dir(&node_dir).map_err(|error| LiveError::SysfsRead {
        path: node_dir.display().to_string(),
        error,
    })?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(id) = name
            .strip_prefix("node")
            .and_then(|n| n.parse::<u32>().ok())
        {
            let p = e.path().join("cpulist");
            let cpus = parse_cpulist(&read(&p)?).ok_or_else(|| bad(&p, "not a cpu list"))?;
            nodes.push((id, cpus));
        }
    }
    nodes.sort_by_key(|(id, _)| *id);
    if nodes.is_empty() {
        return Err(bad(&node_dir, "no node directories"));
    }
    let mut distance = Vec::new();
    let mut memory = Vec::new();
    for (id, _) in &nodes {
        let p = node_dir.join(format!("node{id}/distance"));
        let row: Vec<u32> = read(&p)?
            .split_whitespace()
            .map(|x| x.parse().map_err(|_| bad(&p, "not a distance row")))
            .collect::<Result<_, _>>()?;
        if row.len() != nodes.len() {
            return Err(LiveError::Distances {
                path: p.display().to_string(),
                row: row.len(),
                nodes: nodes.len(),
            });
        }
        distance.push(row);
        let p = node_dir.join(format!("node{id}/meminfo"));
        let text = read(&p)?;
        let kb = text
            .lines()
            .find(|l| l.contains("MemTotal:"))
            .and_then(|l| l.split_whitespace().rev().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| bad(&p, "no MemTotal"))?;
        memory.push(kb * 1024);
    }
    let first = nodes
        .iter()
        .find_map(|(_, c)| c.first().copied())
        .ok_or(LiveError::NoCpus)?;
    let cache_dir = root.join(format!("devices/system/cpu/cpu{first}/cache"));
    let mut caches = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&cache_dir) {
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("index"))
            })
            .collect();
        dirs.sort();
        for d in dirs {
            let f = |n: &str| read(&d.join(n)).map(|s| s.trim().to_string());
            let level: u32 = f("level")?.parse().map_err(|_| bad(&d, "bad level"))?;
            let size = parse_size(&f("size")?).ok_or_else(|| bad(&d, "bad size"))?;
            let ways: u32 = f("ways_of_associativity")?
                .parse()
                .map_err(|_| bad(&d, "bad ways"))?;
            let line: u64 = f("coherency_line_size")?
                .parse()
                .map_err(|_| bad(&d, "bad line size"))?;
            let shared = parse_cpulist(&f("shared_cpu_list")?)
                .ok_or_else(|| bad(&d, "bad shared_cpu_list"))?;
            caches.push(SysCache {
                level,
                kind: f("type")?,
                size,
                ways,
                line,
                shared,
            });
        }
    }
    Ok(Topology {
        nodes,
        distance,
        memory,
        caches,
    })
}

/// Typical latencies (ns) for a level before calibration.
fn default_latency(level: u32) -> f64 {
    match level {
        1 => 1.5,
        2 => 5.0,
        _ => 20.0,
    }
}

/// Untimed defaults: DRAM latency and per-node bandwidth before calibration.
pub const DEFAULT_DRAM_NS: f64 = 90.0;
pub const DEFAULT_NODE_GBPS: f64 = 20.0;

/// A cache spec from sysfs values, rounding sets down to a power of two.
fn spec(name: &str, c: &SysCache, size: u64, notes: &mut Vec<String>) -> Option<CacheSpec> {
    if c.ways == 0 || c.line == 0 || size == 0 {
        return None;
    }
    let sets = size / (c.ways as u64 * c.line);
    if sets == 0 {
        return None;
    }
    let p2 = 1u64 << (63 - sets.leading_zeros());
    if p2 != sets {
        let note = format!(
            "{name}: sysfs gives {size} B {}-way ({sets} sets); modelled with {p2} sets ({} B), as set counts must be powers of two",
            c.ways,
            p2 * c.ways as u64 * c.line
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Some(CacheSpec {
        name: name.into(),
        size: Bytes(p2 * c.ways as u64 * c.line),
        assoc: c.ways.min(64),
        latency_ns: default_latency(c.level),
        replacement: sim::cache::Replacement::Lru,
    })
}

/// The topology as a machine description (uncalibrated latencies).
pub fn to_machine(t: &Topology, name: &str) -> Result<MachineSpec, LiveError> {
    let mut notes = vec!["probed from sysfs by numasim live probe; latencies and bandwidths are typical values until `numasim live calibrate` measures them".to_string()];
    let line = t.caches.iter().map(|c| c.line).max().unwrap_or(64).max(16);
    // A cache is private when it is shared only among one core's SMT siblings:
    // at most as many CPUs as the L1D is shared by.
    let l1_share = t
        .caches
        .iter()
        .filter(|c| c.level == 1)
        .map(|c| c.shared.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut private: Vec<&SysCache> = t
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction" && c.shared.len() <= l1_share)
        .collect();
    private.sort_by_key(|c| c.level);
    let shared: Option<&SysCache> = t
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction" && c.shared.len() > l1_share)
        .max_by_key(|c| c.level);
    let mut caches = Vec::new();
    for c in &private {
        let name = if c.level == 1 {
            "L1D".to_string()
        } else {
            format!("L{}", c.level)
        };
        if let Some(s) = spec(&name, c, c.size, &mut notes) {
            caches.push(s);
        }
    }
    let l1i = t
        .caches
        .iter()
        .find(|c| c.kind == "Instruction")
        .and_then(|c| spec("L1I", c, c.size, &mut notes));
    let mut nodes = Vec::new();
    for (i, (_, cpus)) in t.nodes.iter().enumerate() {
        // The node's LLC: all slices whose CPUs lie on the node (sysfs lists one per slice).
        let llc = shared.and_then(|c| {
            let slices = if c.shared.is_empty() {
                1
            } else {
                (cpus.len() as u64).div_ceil(c.shared.len() as u64).max(1)
            };
            spec("LLC", c, c.size * slices, &mut notes)
        });
        let memory = (t.memory[i] > 0).then(|| MemorySpec {
            capacity: Bytes(t.memory[i]),
            channels: 1,
            channel_gbps: DEFAULT_NODE_GBPS,
            latency_ns: DEFAULT_DRAM_NS,
            interleave: line,
        });
        nodes.push(NodeSpec {
            cores: cpus.len() as u32,
            llc,
            memory,
            accelerators: Vec::new(),
        });
    }
    // Links from the SLIT: an extra (distance/10 − 1) × DRAM latency per hop.
    let mut links = Vec::new();
    for i in 0..t.nodes.len() {
        for j in i + 1..t.nodes.len() {
            let d = t.distance[i][j].max(t.distance[j][i]) as f64;
            links.push(LinkSpec {
                a: i as u32,
                b: j as u32,
                latency_ns: ((d / 10.0 - 1.0) * DEFAULT_DRAM_NS).max(0.0),
                bandwidth_gbps: DEFAULT_NODE_GBPS,
            });
        }
    }
    if shared.is_none() {
        notes.push("no shared cache found: nodes have no LLC".into());
    }
    Ok(MachineSpec {
        name: name.into(),
        description: format!(
            "host probed from sysfs: {} node(s), {} CPUs",
            t.nodes.len(),
            t.nodes.iter().map(|(_, c)| c.len()).sum::<usize>()
        ),
        sources: notes,
        line_size: line,
        page_size: 4096,
        frames: Default::default(),
        c2c_latency_ns: 50.0,
        core: CoreSpec {
            freq_ghz: 2.0,
            mlp: 10,
            caches,
            l1i,
            prefetch: None,
            tlb: None,
        },
        nodes,
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist("0"), Some(vec![0]));
        assert_eq!(parse_cpulist(""), Some(vec![]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("a"), None);
    }
}
