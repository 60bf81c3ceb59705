//! `numasim loaded-latency`: Intel MLC's loaded-latency view of the model.
//!
//! One open-loop thread on a core of `--from` issues random line reads to
//! memory bound on `--to` at Poisson times, at a series of offered loads
//! (fractions of the target node's peak channel bandwidth). For each point it
//! prints the offered and achieved bandwidth and the read latency: latency
//! stays near the idle value, then climbs at the knee where achieved
//! bandwidth stops following offered load — the channels' (or, remotely,
//! the link's) configured bandwidth.

use anyhow::{Result, bail};
use serde_json::json;
use traces::Batch;
use traces::RecordSource;
use traces::synth::{GenConfig, Generator, Pattern};

use crate::machines::load_machine;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Machine preset or TOML file.
    #[arg(long, default_value = "xeon-2s")]
    pub machine: String,
    /// Node whose core issues the reads.
    #[arg(long, default_value_t = 0)]
    pub from: u32,
    /// Node whose memory serves them.
    #[arg(long, default_value_t = 0)]
    pub to: u32,
    /// Offered loads as fractions of the target node's peak bandwidth.
    #[arg(
        long,
        default_value = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.85,0.9,0.95,1.0,1.1,1.25"
    )]
    pub loads: String,
    /// Reads per point.
    #[arg(long, default_value_t = 200_000)]
    pub requests: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let m = load_machine(&a.machine, &lab::InputLog::default())?;
    let n = m.nodes() as u32;
    if a.from >= n || a.to >= n {
        bail!("--from/--to: the machine has nodes 0..{}", n - 1);
    }
    if m.spec.nodes[a.from as usize].cores == 0 {
        bail!("--from {}: node has no cores", a.from);
    }
    let Some(mem) = m.spec.nodes[a.to as usize].memory.clone() else {
        bail!("--to {}: node has no memory", a.to);
    };
    let loads: Vec<f64> = a
        .loads
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--loads: expected comma-separated numbers"))?;
    if loads.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
        bail!("--loads: every load must be positive");
    }
    let line = m.spec.line_size as f64;
    let peak_gbps = mem.channels as f64 * mem.channel_gbps;
    let core = m.first_core[a.from as usize];
    let mut rows = Vec::new();
    for &f in &loads {
        let rate_per_us = f * peak_gbps / line * 1000.0;
        let cfg = GenConfig {
            pattern: Pattern::Random,
            count: a.requests,
            footprint: 64 << 30,
            size: 8,
            threads: 1,
            rate_per_us: Some(rate_per_us),
            seed: a.seed,
            ..GenConfig::default()
        };
        let mut g = Generator::new(cfg).map_err(|e| anyhow::anyhow!("{}", e.problem))?;
        let placement = policies::placement::PLACEMENTS.build(
            &format!("bind:{}", a.to),
            &policies::registry::Ctx::for_machine(&m),
        )?;
        let ecfg = sim::Config {
            pin: sim::Pin::Explicit(vec![(0, core)]),
            ..sim::Config::default()
        };
        let mut e = sim::Engine::new(&m, ecfg, placement)?;
        let mut b = Batch::new(g.fields());
        loop {
            b.clear();
            if g.fill(&mut b).map_err(|e| anyhow::anyhow!("{e}"))? == 0 {
                break;
            }
            e.feed(&b)?;
        }
        e.finish()?;
        let s = e.summary();
        let achieved = s.memory.bytes as f64 / s.elapsed_ns.max(1.0);
        rows.push(json!({
            "load": f,
            "offered_gbps": f * peak_gbps,
            "achieved_gbps": achieved,
            "mean_latency_ns": s.latency_ns.mean,
            "p99_latency_ns": s.latency_ns.p99,
            "reads": s.memory.reads,
        }));
    }
    if a.json {
        let v = json!({ "machine": m.spec.name, "from": a.from, "to": a.to, "peak_gbps": peak_gbps, "points": rows });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{}: core on node {} reading node {}'s memory ({} channels × {} GB/s = {:.1} GB/s peak)",
        m.spec.name, a.from, a.to, mem.channels, mem.channel_gbps, peak_gbps
    );
    println!(
        "{:>6} {:>13} {:>14} {:>16} {:>15}",
        "load", "offered GB/s", "achieved GB/s", "mean latency ns", "p99 latency ns"
    );
    for r in &rows {
        println!(
            "{:>5.0}% {:>13.1} {:>14.1} {:>16.1} {:>15.1}",
            r["load"].as_f64().unwrap_or(0.0) * 100.0,
            r["offered_gbps"].as_f64().unwrap_or(0.0),
            r["achieved_gbps"].as_f64().unwrap_or(0.0),
            r["mean_latency_ns"].as_f64().unwrap_or(0.0),
            r["p99_latency_ns"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(())
}
