//! `numasim loaded-latency`: Intel MLC's loaded-latency view of the model
//! (`lab::loaded_latency`), at a series of offered loads.

use anyhow::Result;
use lab::loaded_latency::LoadedError;
use serde_json::json;

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
    let flag = |e: LoadedError| match e {
        LoadedError::NoNode { .. } => anyhow::anyhow!("--from/--to: {e}"),
        LoadedError::NoCores(n) => anyhow::anyhow!("--from {n}: node has no cores"),
        LoadedError::NoMemory(n) => anyhow::anyhow!("--to {n}: node has no memory"),
        LoadedError::Load => anyhow::anyhow!("--loads: {e}"),
        e => e.into(),
    };
    let (peak_gbps, channels, channel_gbps) =
        lab::loaded_latency::peak(&m, a.from, a.to).map_err(flag)?;
    let loads: Vec<f64> = a
        .loads
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--loads: expected comma-separated numbers"))?;
    let rows = loads
        .iter()
        .map(|&f| lab::loaded_latency::point(&m, a.from, a.to, f, a.requests, a.seed))
        .collect::<Result<Vec<_>, _>>()
        .map_err(flag)?;
    if a.json {
        let v = json!({ "machine": m.spec.name, "from": a.from, "to": a.to, "peak_gbps": peak_gbps, "points": rows });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{}: core on node {} reading node {}'s memory ({} channels × {} GB/s = {:.1} GB/s peak)",
        m.spec.name, a.from, a.to, channels, channel_gbps, peak_gbps
    );
    println!(
        "{:>6} {:>13} {:>14} {:>16} {:>15}",
        "load", "offered GB/s", "achieved GB/s", "mean latency ns", "p99 latency ns"
    );
    for r in &rows {
        println!(
            "{:>5.0}% {:>13.1} {:>14.1} {:>16.1} {:>15.1}",
            r.load * 100.0,
            r.offered_gbps,
            r.achieved_gbps,
            r.mean_latency_ns,
            r.p99_latency_ns
        );
    }
    Ok(())
}
