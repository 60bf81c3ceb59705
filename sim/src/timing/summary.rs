//! Fills the plain result types of [`crate::results`] from the engine's
//! books: the summary and the per-window time series.

use crate::results::*;

use super::Engine;

fn ns(ps: u64) -> f64 {
    ps as f64 / 1000.0
}

/// `span`: the time the time averages (utilisation, mean queue length)
/// are over, when not the run's elapsed time (a sampled task replay's
/// detailed stretches, between which the clock moved without timing).
fn summarize(e: &Engine, span: Option<u64>) -> Summary {
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
    let c = &e.stats.counters;
    let elapsed = span.unwrap_or(e.stats.elapsed_ps).max(1);
    let hist = e.stats.latency_hist();
    let q = |x: f64| ns(hist.value_at_quantile(x));
    let latency_ns = if c.data_accesses == 0 {
        Latency::default()
    } else {
        Latency {
            min: ns(hist.min()),
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
    for (node, chs) in e.mem.channels.iter().enumerate() {
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
                mean_queue_len: qu.occupancy_area() as f64
                    / if span.is_some() {
                        elapsed
                    } else {
                        elapsed.max(qu.last_departure)
                    } as f64,
                mean_sojourn_ns: if qu.requests == 0 {
                    0.0
                } else {
                    qu.sojourn_ps as f64 / qu.requests as f64 / 1000.0
                },
            });
        }
    }
    let links: Vec<LinkStats> = e
        .mem
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
    let sampled = e.sampled().map(|mut x| {
        x.saturated = saturated(&channels, &links);
        x
    });
    Summary {
        machine: m.spec.name.clone(),
        elapsed_ns: ns(e.stats.elapsed_ps),
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
        tlb: m.spec.core.tlb.as_ref().map(|t| {
            let found = &c.tlb;
            let levels = t
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| crate::results::TlbLevelStats {
                    name: l.name.clone(),
                    hits: found[i],
                    misses: found[i + 1..].iter().sum(),
                })
                .collect();
            crate::results::TlbStats {
                levels,
                walks: found[t.levels.len()],
            }
        }),
        sampled,
    }
}

impl Engine<'_> {
    /// The per-window time series (`timeseries.csv` once rendered).
    pub fn timeseries(&self) -> Timeseries {
        let mut channels = Vec::new();
        for (node, chs) in self.mem.channels.iter().enumerate() {
            for ch in 0..chs.len() {
                channels.push(format!("ch{node}.{ch}"));
            }
        }
        let links = self
            .m
            .spec
            .links
            .iter()
            .map(|l| format!("link{}-{}", l.a, l.b))
            .collect();
        let window_ps = self.stats.window_ps;
        let windows = self.stats.series().to_vec();
        Timeseries {
            window_ps,
            channels,
            links,
            windows,
        }
    }
}

impl Engine<'_> {
    /// The results of the run so far.
    pub fn summary(&self) -> Summary {
        summarize(self, None)
    }

    /// The results with the time averages over `span_ps` instead of the
    /// elapsed time (see `summarize`).
    pub fn summary_over(&self, span_ps: u64) -> Summary {
        summarize(self, Some(span_ps))
    }

    /// Per-thread (id, core, accesses, mean latency ps, last completion ps).
    pub(super) fn thread_stats(&self) -> Vec<(u32, usize, u64, f64, u64)> {
        self.threads
            .iter()
            .map(|t| {
                let mean = if t.accesses == 0 {
                    0.0
                } else {
                    t.latency_ps as f64 / t.accesses as f64
                };
                (t.id, t.core, t.accesses, mean, t.last_done)
            })
            .collect()
    }

    pub(super) fn false_sharing_lines(&self) -> u64 {
        self.false_shared.len() as u64
    }
}
