//! The human summary of a timing run.

use std::fmt::Write;

use sim::results::Summary;

use crate::cgreport::commas;

/// Renders a [`Summary`] as a terminal report.
pub fn render(s: &Summary) -> String {
    let mut o = String::new();
    let l = &s.latency_ns;
    let _ = writeln!(
        o,
        "machine {} | placement {} | {} threads",
        s.machine,
        s.pages.placement,
        s.threads.len()
    );
    let _ = writeln!(
        o,
        "accesses     {} ({} data, {} ifetch) in {:.3} µs simulated",
        commas(s.accesses),
        commas(s.data_accesses),
        commas(s.ifetches),
        s.elapsed_ns / 1000.0
    );
    let _ = writeln!(
        o,
        "latency (ns) min {:.1}  mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
        l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max
    );
    let total: u64 = s.served.iter().map(|x| x.accesses).sum::<u64>().max(1);
    let _ = write!(o, "served by   ");
    for x in &s.served {
        let _ = write!(
            o,
            " {} {:.2}%",
            x.level,
            100.0 * x.accesses as f64 / total as f64
        );
    }
    let _ = writeln!(o);
    let c = &s.coherence;
    let _ = writeln!(
        o,
        "coherence    {} invalidations, {} cache-to-cache, {} upgrades, {} falsely shared lines",
        commas(c.invalidations),
        commas(c.cache_to_cache),
        commas(c.upgrades),
        c.false_sharing_lines
    );
    if let Some(t) = &s.tlb {
        // Misses per 1 000 data accesses (no instruction count to give MPKI).
        let per_k = |n: u64| 1000.0 * n as f64 / s.data_accesses.max(1) as f64;
        let levels: Vec<String> = t
            .levels
            .iter()
            .map(|l| {
                format!(
                    "{} {} misses ({:.2} per 1 000 accesses)",
                    l.name,
                    commas(l.misses),
                    per_k(l.misses)
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "tlb          {}; {} walks",
            levels.join(", "),
            commas(t.walks)
        );
    }
    let m = &s.memory;
    let secs = (s.elapsed_ns / 1e9).max(1e-12);
    let _ = writeln!(
        o,
        "memory       {} line reads, {} write-backs, {:.2} GB/s over the run",
        commas(m.reads),
        commas(m.writebacks),
        m.bytes as f64 / secs / 1e9
    );
    for ch in m.channels.iter().filter(|c| c.requests > 0) {
        let _ = writeln!(
            o,
            "  node {} channel {}: {} requests, {:.1}% busy, mean wait {:.2} ns",
            ch.node,
            ch.channel,
            commas(ch.requests),
            100.0 * ch.utilization,
            ch.mean_wait_ns
        );
    }
    for lk in s.links.iter().filter(|x| x.requests > 0) {
        let _ = writeln!(
            o,
            "  link {}–{}: {} transfers, {:.1}% busy, mean wait {:.2} ns",
            lk.a,
            lk.b,
            commas(lk.requests),
            100.0 * lk.utilization,
            lk.mean_wait_ns
        );
    }
    for n in &s.nodes {
        if n.local_accesses + n.remote_accesses + n.pages > 0 {
            let _ = writeln!(
                o,
                "  node {}: {} local / {} remote memory reads by its cores, {} pages homed",
                n.node,
                commas(n.local_accesses),
                commas(n.remote_accesses),
                commas(n.pages)
            );
        }
    }
    let all: Vec<&sim::results::Prefetch> = if s.prefetchers.is_empty() {
        s.prefetch.iter().collect()
    } else {
        s.prefetchers.iter().collect()
    };
    for p in all {
        let _ = writeln!(
            o,
            "prefetch     {} into level {}: {} issued, {} useful ({} late), {} useless ({} evicted early); accuracy {:.3}, coverage {:.3}, {} extra bytes",
            p.name,
            p.level,
            commas(p.issued),
            commas(p.useful),
            commas(p.late),
            commas(p.useless),
            commas(p.early),
            p.accuracy,
            p.coverage,
            commas(p.extra_bytes)
        );
        if p.dropped > 0 {
            let _ = writeln!(
                o,
                "prefetch     {} dropped: the prefetch queue was full",
                commas(p.dropped)
            );
        }
        if p.predict_cost_ns > 0.0 {
            let _ = writeln!(
                o,
                "prefetch     decisions cost the cores {:.0} ns of simulated time",
                p.predict_cost_ns
            );
        }
    }
    if s.pages.migrations > 0 {
        let _ = writeln!(
            o,
            "migrations   {} pages ({} bytes)",
            s.pages.migrations,
            commas(s.pages.migration_bytes)
        );
    }
    if let Some(x) = &s.sampled {
        render_sampled(&mut o, x);
    }
    o
}

/// A sampled run's estimates: each metric, its interval, the units'
/// coefficient of variation and the units ±3% would need.
pub fn render_sampled(o: &mut String, x: &sim::results::Sampled) {
    let _ = writeln!(
        o,
        "sampled      {} units of {} {} every {} (warm-up up to {}, first at {} {}, {} warmed functionally): {} measured, {} in detail, {} warmed, {} skipped; the lines above count the detailed part",
        x.units,
        commas(x.unit),
        x.counts,
        commas(x.period),
        commas(x.warm),
        x.counts.trim_end_matches('s'),
        commas(x.offset),
        x.functional.map_or("all others".to_string(), |f| format!(
            "{} before each",
            commas(f)
        )),
        commas(x.measured),
        commas(x.detailed),
        commas(x.warmed),
        commas(x.skipped)
    );
    let _ = writeln!(
        o,
        "  {:<24} {:>12} {:>27} {:>8} {:>14}",
        "estimate",
        "value",
        format!("{:.2}% interval", 100.0 * x.confidence),
        "CV",
        "units for ±3%"
    );
    for (name, e) in &x.metrics {
        let _ = writeln!(
            o,
            "  {:<24} {:>12.4} [{:>12.4}, {:>12.4}] {:>8.3} {:>14}",
            name,
            e.estimate,
            e.ci_low,
            e.ci_high,
            e.cv,
            if e.cv > 0.0 {
                commas(e.units_for_3pct)
            } else {
                "-".into()
            }
        );
    }
    if !x.not_estimated.is_empty() {
        let _ = writeln!(
            o,
            "  not estimated (no unit had a denominator): {}",
            x.not_estimated.join(", ")
        );
    }
    for b in &x.saturated {
        let _ = writeln!(
            o,
            "  warning: {} was {:.1}% busy in the detailed phases: a queue at saturation grows over the run and a sample drains it at every switch, so its waits come out too low",
            b.queue,
            100.0 * b.utilization
        );
    }
}

/// `timeseries.csv`: window start, accesses, mean latency, L1 and LLC hit
/// rates, memory reads, invalidations, then GB/s per channel
/// (`ch<node>.<channel>_gbps`) and per link (`link<a>-<b>_gbps`).
pub fn timeseries_csv(ts: &sim::results::Timeseries) -> Result<String, crate::table::TableError> {
    let mut header: Vec<String> = [
        "window_start_ns",
        "accesses",
        "mean_latency_ns",
        "l1_hit_rate",
        "llc_hit_rate",
        "mem_reads",
        "invalidations",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(
        ts.channels
            .iter()
            .chain(&ts.links)
            .map(|c| format!("{c}_gbps")),
    );
    let win_ns = ts.window_ps as f64 / 1000.0;
    let rows: Vec<Vec<String>> = ts
        .windows
        .iter()
        .map(|w| {
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
            let mut r = vec![
                w.start_ns.to_string(),
                w.accesses.to_string(),
                format!("{mean:.3}"),
                format!("{:.4}", rate(w.l1_hits)),
                format!("{:.4}", rate(w.llc_hits)),
                w.mem_reads.to_string(),
                w.invalidations.to_string(),
            ];
            r.extend(
                w.channel_bytes
                    .iter()
                    .chain(&w.link_bytes)
                    .map(|b| format!("{:.3}", *b as f64 / win_ns)),
            );
            r
        })
        .collect();
    crate::table::records_to_csv(&header, &rows)
}
