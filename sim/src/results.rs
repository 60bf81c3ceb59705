//! Results of a timing run: the summary (serialised as `summary.json`) and
//! the per-window time series (`timeseries.csv`). Built from the engine's
//! counters; rendered to strings here, written to files by the binary.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;

/// Latency distribution over data accesses (ns).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
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
}

fn ns(ps: u64) -> f64 {
    ps as f64 / 1000.0
}

pub(crate) fn summarize(e: &Engine) -> Summary {
    let m = e.m;
    let all: Vec<Prefetch> = e
        .prefetchers()
        .into_iter()
        .map(|(name, level, p)| Prefetch {
            name,
            level,
            issued: p.issued,
            useful: p.useful,
            late: p.late,
            useless: p.useless,
            early: p.early,
            demand_misses: p.demand_misses,
            extra_bytes: p.extra_bytes,
            accuracy: p.accuracy(),
            coverage: p.coverage(),
            predict_cost_ns: p.predict_cost_ps as f64 / 1000.0,
            dropped: p.dropped,
        })
        .collect();
    let c = &e.counters;
    let elapsed = e.elapsed_ps.max(1);
    let hist = e.latency_hist();
    let q = |x: f64| ns(hist.value_at_quantile(x));
    let latency_ns = if c.data_accesses == 0 {
        Latency::default()
    } else {
        Latency {
            mean: c.latency_sum_ps as f64 / c.data_accesses as f64 / 1000.0,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: ns(hist.max()),
        }
    };
    let mut served = Vec::new();
    let caches = &m.spec.core.caches;
    for (i, lvl) in caches.iter().enumerate() {
        served.push(ServedAt {
            level: lvl.name.clone(),
            accesses: c.served[i],
        });
    }
    if caches.is_empty() {
        served.push(ServedAt {
            level: "none".into(),
            accesses: c.served[0],
        });
    }
    let p = caches.len().max(1);
    for (k, name) in ["LLC", "remote cache", "local memory", "remote memory"]
        .iter()
        .enumerate()
    {
        served.push(ServedAt {
            level: name.to_string(),
            accesses: c.served[p + k],
        });
    }
    let mut channels = Vec::new();
    let mut bytes = 0;
    for (node, chs) in e.channels.iter().enumerate() {
        for (ch, qu) in chs.iter().enumerate() {
            bytes += qu.bytes;
            channels.push(ChannelStats {
                node: node as u32,
                channel: ch as u32,
                requests: qu.requests,
                bytes: qu.bytes,
                busy_ns: ns(qu.busy_ps),
                mean_wait_ns: qu.mean_wait_ps() / 1000.0,
                utilization: qu.busy_ps as f64 / elapsed as f64,
                mean_queue_len: qu.occupancy_area() as f64 / elapsed.max(qu.last_departure) as f64,
                mean_sojourn_ns: if qu.requests == 0 {
                    0.0
                } else {
                    qu.sojourn_ps as f64 / qu.requests as f64 / 1000.0
                },
            });
        }
    }
    let links = e
        .links
        .iter()
        .zip(&m.spec.links)
        .map(|(qu, l)| LinkStats {
            a: l.a,
            b: l.b,
            requests: qu.requests,
            bytes: qu.bytes,
            busy_ns: ns(qu.busy_ps),
            mean_wait_ns: qu.mean_wait_ps() / 1000.0,
            utilization: qu.busy_ps as f64 / elapsed as f64,
        })
        .collect();
    let nodes = (0..m.nodes())
        .map(|i| NodeStats {
            node: i as u32,
            local_accesses: c.node_local[i],
            remote_accesses: c.node_remote[i],
            pages: c.pages_on_node[i],
        })
        .collect();
    let threads = e
        .thread_stats()
        .into_iter()
        .map(|(id, core, accesses, mean_ps, done)| ThreadStats {
            thread: id,
            core: core as u32,
            node: m.core_node[core],
            accesses,
            mean_latency_ns: mean_ps / 1000.0,
            finished_ns: ns(done),
        })
        .collect();
    Summary {
        machine: m.spec.name.clone(),
        elapsed_ns: ns(e.elapsed_ps),
        accesses: c.accesses,
        data_accesses: c.data_accesses,
        ifetches: c.ifetches,
        latency_ns,
        served,
        coherence: Coherence {
            invalidations: c.invalidations,
            cache_to_cache: c.cache_to_cache,
            upgrades: c.upgrades,
            false_sharing_lines: e.false_sharing_lines(),
            false_sharing_events: c.false_sharing_events,
        },
        memory: Memory {
            reads: c.mem_reads,
            writebacks: c.mem_writebacks,
            bytes,
            channels,
        },
        links,
        nodes,
        pages: Pages {
            placement: e.placement_name(),
            placed: c.pages_on_node.iter().sum(),
            migrations: c.migrations,
            migration_bytes: c.migration_bytes,
        },
        threads,
        prefetch: all.first().cloned(),
        prefetchers: if all.len() > 1 { all } else { Vec::new() },
    }
}

impl Engine<'_> {
    /// The per-window time series as CSV: window start, accesses, mean
    /// latency, L1 and LLC hit rates, memory reads, invalidations, then GB/s
    /// per channel (`ch<node>.<channel>_gbps`) and per link (`link<a>-<b>_gbps`).
    pub fn timeseries_csv(&self) -> String {
        let mut s = String::from(
            "window_start_ns,accesses,mean_latency_ns,l1_hit_rate,llc_hit_rate,mem_reads,invalidations",
        );
        for (node, chs) in self.channels.iter().enumerate() {
            for ch in 0..chs.len() {
                s.push_str(&format!(",ch{node}.{ch}_gbps"));
            }
        }
        for l in &self.m.spec.links {
            s.push_str(&format!(",link{}-{}_gbps", l.a, l.b));
        }
        s.push('\n');
        let win_ns = self.window_ps as f64 / 1000.0;
        for (i, w) in self.windows.iter().enumerate() {
            let rate = |x: u64| {
                if w.accesses == 0 {
                    0.0
                } else {
                    x as f64 / w.accesses as f64
                }
            };
            let mean = if w.accesses == 0 {
                0.0
            } else {
                w.latency_ps as f64 / w.accesses as f64 / 1000.0
            };
            s.push_str(&format!(
                "{},{},{:.3},{:.4},{:.4},{},{}",
                i as u64 * self.window_ps / 1000,
                w.accesses,
                mean,
                rate(w.l1_hits),
                rate(w.llc_hits),
                w.mem_reads,
                w.invalidations
            ));
            for b in w.channel_bytes.iter().chain(w.link_bytes.iter()) {
                s.push_str(&format!(",{:.3}", *b as f64 / win_ns));
            }
            s.push('\n');
        }
        s
    }
}
