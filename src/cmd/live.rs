//! `numasim live probe|calibrate|replay` and `numasim validate`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use sim::machine::MachineSpec;
use traces::{Access, Batch, Format, RecordSource};

use crate::input::{open_trace, parse_format, trace_err};
use crate::output::{ensure_dir, write_file, write_json};

#[derive(Subcommand, Debug)]
pub enum LiveCmd {
    /// Describe this host from sysfs as a machine file (latencies uncalibrated).
    Probe(ProbeArgs),
    /// Measure this host (pointer chase, core-to-core, bandwidth) and write a calibrated machine file.
    Calibrate(CalibrateArgs),
    /// Replay a trace's data accesses on pinned threads of this host.
    Replay(ReplayArgs),
}

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// sysfs root (a recorded tree in tests).
    #[arg(long, default_value = "/sys")]
    pub sysfs: PathBuf,
    /// Write the machine TOML here (else print it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[arg(long, default_value = "/sys")]
    pub sysfs: PathBuf,
    /// Calibrated machine TOML; the measured curve goes beside it (.curve.csv).
    #[arg(long, default_value = "host-calibrated.toml")]
    pub out: PathBuf,
    /// Largest pointer-chase working set (K/M/G).
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    pub max_size: u64,
    /// Dependent loads per point.
    #[arg(long, default_value_t = 1_000_000)]
    pub loads: u64,
    /// Repeats per point (the median is used).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Also sweep in transparent huge pages (madvise; .curve-huge.csv).
    #[arg(long)]
    pub huge_pages: bool,
}

fn parse_size(s: &str) -> Result<u64, String> {
    sim::geometry::parse_bytes(s).ok_or_else(|| format!("bad size {s:?}"))
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace file.
    pub trace: PathBuf,
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// CPUs for trace threads (in order of first appearance), comma-separated; default all allowed.
    #[arg(long, value_delimiter = ',')]
    pub cpus: Option<Vec<u32>>,
    /// Untimed passes before the timed one.
    #[arg(long, default_value_t = 1)]
    pub warm: usize,
    /// Write summary.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(cmd: LiveCmd) -> Result<()> {
    match cmd {
        LiveCmd::Probe(a) => probe(a),
        LiveCmd::Calibrate(a) => calibrate(a),
        LiveCmd::Replay(a) => live_replay(a),
    }
}

fn probe(a: ProbeArgs) -> Result<()> {
    let t = live::sysfs::probe(&a.sysfs)?;
    let spec = live::sysfs::to_machine(&t, "host")?;
    let m = sim::Machine::new(spec).context("the probed machine is not a valid description")?;
    let text = m.to_toml();
    match &a.out {
        Some(p) => {
            write_file(p, text.as_bytes())?;
            eprintln!(
                "wrote {} ({} nodes, {} cores)",
                p.display(),
                m.nodes(),
                m.cores()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}

fn calibrate(a: CalibrateArgs) -> Result<()> {
    let t = live::sysfs::probe(&a.sysfs)?;
    let mut spec: MachineSpec = live::sysfs::to_machine(&t, "host-calibrated")?;
    let cpus = live::os::allowed_cpus()?;
    live::os::pin_current_thread(cpus[0])?;
    let sizes = live::calibrate::sizes(a.max_size);
    let mut curve = Vec::new();
    for (i, &s) in sizes.iter().enumerate() {
        let p = live::calibrate::chase(s, a.loads, a.repeats, 0xC0FFEE + i as u64)?;
        eprintln!(
            "{:>10} B  {:7.2} ns  (spread {:.0}%)",
            p.bytes,
            p.ns,
            p.spread * 100.0
        );
        curve.push(p);
    }
    let levels = live::calibrate::levels(&curve, 0.4);
    let mut huge_csv = None;
    let mut huge_note = None;
    if a.huge_pages {
        let mut hc = Vec::new();
        let mut csv = String::from("bytes,ns,spread,huge_share\n");
        for (i, &s) in sizes.iter().enumerate() {
            let (p, share) =
                live::calibrate::chase_huge(s, a.loads, a.repeats, 0xC0FFEE + i as u64)?;
            eprintln!(
                "{:>10} B  {:7.2} ns  (spread {:.0}%, huge pages {:.0}%)  [2 MiB pages]",
                p.bytes,
                p.ns,
                p.spread * 100.0,
                share * 100.0
            );
            csv.push_str(&format!(
                "{},{:.3},{:.4},{:.3}\n",
                p.bytes, p.ns, p.spread, share
            ));
            hc.push(p);
        }
        let hl = live::calibrate::levels(&hc, 0.4);
        huge_note = Some(format!(
            "pointer chase in transparent huge pages: levels {} (4 KiB pages: {})",
            hl.iter()
                .map(|l| format!("{:.1} ns up to {} B", l.ns, l.capacity))
                .collect::<Vec<_>>()
                .join(", "),
            levels
                .iter()
                .map(|l| format!("{:.1} ns", l.ns))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        huge_csv = Some(csv);
    }
    let mut notes = vec![format!(
        "calibrated by numasim live calibrate: pointer chase {} loads × {} repeats per size (median), TSC at {:.3} GHz ({}); levels {}",
        a.loads,
        a.repeats,
        live::tsc::rate().ghz,
        live::tsc::rate().source,
        levels
            .iter()
            .map(|l| format!("{:.1} ns up to {} B", l.ns, l.capacity))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    notes.extend(live::calibrate::apply(&mut spec, &curve, &levels));
    notes.extend(huge_note);
    // Every (CPU node, memory node) pair: memory bound with mbind, a chase
    // over the largest working set and one thread's streaming read.
    let mut pair = std::collections::BTreeMap::new();
    for (from, node_cpus) in &t.nodes {
        let Some(&cpu) = node_cpus.iter().find(|c| cpus.contains(c)) else {
            continue;
        };
        for (to, _) in &t.nodes {
            let (p, gbps) =
                live::calibrate::node_pair(cpu, *to, a.max_size, a.loads, a.repeats, &a.sysfs)?;
            notes.push(format!(
                "cpu {cpu} (node {from}) to memory of node {to} (mbind): {:.1} ns over {} B, {gbps:.1} GB/s one thread",
                p.ns, a.max_size
            ));
            pair.insert((*from, *to), (p.ns, gbps));
        }
    }
    live::os::pin_current_thread(cpus[0])?;
    for l in spec.links.iter_mut() {
        let ids = (t.nodes[l.a as usize].0, t.nodes[l.b as usize].0);
        if let (Some(&(remote, gbps)), Some(&(local, _))) =
            (pair.get(&ids), pair.get(&(ids.0, ids.0)))
        {
            l.latency_ns = ((remote - local).max(0.0) * 10.0).round() / 10.0;
            l.bandwidth_gbps = (gbps * 10.0).round() / 10.0;
        }
    }
    if cpus.len() >= 2 {
        let c2c = live::calibrate::core_to_core(cpus[0], cpus[1], 200_000)?;
        notes.push(format!(
            "core-to-core (CAS ping-pong, cpus {} and {}): {c2c:.1} ns",
            cpus[0], cpus[1]
        ));
        spec.c2c_latency_ns = (c2c * 10.0).round() / 10.0;
    }
    let mut best = 0.0f64;
    let mut one = 0.0f64;
    for k in 1..=cpus.len().min(4) {
        let gbps = live::calibrate::read_bandwidth(&cpus[..k], 256 << 20, 3)?;
        notes.push(format!("streaming read, {k} thread(s): {gbps:.1} GB/s"));
        best = best.max(gbps);
        if k == 1 {
            one = gbps;
        }
    }
    // One core's misses in flight, by Little's law: its streaming bandwidth
    // × memory latency / line size.
    let dram_ns = spec
        .nodes
        .iter()
        .find_map(|n| n.memory.as_ref().map(|m| m.latency_ns))
        .unwrap_or(0.0);
    let mlp = (one * dram_ns / spec.line_size as f64)
        .round()
        .clamp(1.0, 64.0);
    if one > 0.0 && dram_ns > 0.0 {
        notes.push(format!(
            "core.mlp = {one:.1} GB/s × {dram_ns:.1} ns / {} B = {mlp} lines in flight (Little's law)",
            spec.line_size
        ));
        spec.core.mlp = mlp as u32;
    }
    for n in spec.nodes.iter_mut() {
        if let Some(m) = n.memory.as_mut() {
            m.channel_gbps = (best * 10.0).round() / 10.0;
        }
    }
    spec.sources.extend(notes);
    let m = sim::Machine::new(spec).context("the calibrated machine is not a valid description")?;
    write_file(&a.out, m.to_toml().as_bytes())?;
    let mut csv = String::from("bytes,ns,spread\n");
    for p in &curve {
        csv.push_str(&format!("{},{:.3},{:.4}\n", p.bytes, p.ns, p.spread));
    }
    write_file(&a.out.with_extension("curve.csv"), csv.as_bytes())?;
    if let Some(h) = &huge_csv {
        write_file(&a.out.with_extension("curve-huge.csv"), h.as_bytes())?;
    }
    println!("levels (ns, effective capacity):");
    for l in &levels {
        println!("  {:8.2} ns  up to {} B", l.ns, l.capacity);
    }
    println!(
        "wrote {} and {}",
        a.out.display(),
        a.out.with_extension("curve.csv").display()
    );
    Ok(())
}

/// Every data access of a trace, in order (bounded only by the trace: live
/// replay needs the whole footprint mapped anyway).
fn load_accesses(path: &Path, format: Option<Format>) -> Result<Vec<Access>> {
    let mut input = open_trace(path, format, false, 2)?;
    let mut batch = Batch::new(input.source.fields());
    let mut all = Vec::new();
    loop {
        batch.clear();
        if input
            .source
            .fill(&mut batch)
            .map_err(|e| trace_err(path, e))?
            == 0
        {
            break;
        }
        all.extend(batch.acc.iter().filter(|a| a.kind != traces::Kind::IFetch));
    }
    if all.is_empty() {
        bail!("{}: no data accesses to replay", path.display());
    }
    Ok(all)
}

fn live_replay(a: ReplayArgs) -> Result<()> {
    let acc = load_accesses(&a.trace, a.format)?;
    let cpus = match a.cpus {
        Some(c) => c,
        None => live::os::allowed_cpus()?,
    };
    let r = live::replay::replay(&acc, &cpus, a.warm)?;
    println!(
        "{}: {} accesses, latency mean {:.2} ns, p50 {:.2}, p99 {:.2} (per {}-access chunk, dependent loads)",
        a.trace.display(),
        r.accesses,
        r.mean_ns,
        r.p50_ns,
        r.p99_ns,
        live::replay::CHUNK
    );
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        write_json(
            &dir.join("summary.json"),
            &json!({ "accesses": r.accesses, "elapsed_ns": r.elapsed_ns, "latency_ns": { "mean": r.mean_ns, "p50": r.p50_ns, "p99": r.p99_ns }, "source": "live" }),
        )?;
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Traces to run both simulated and live.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Machine file (from `numasim live calibrate`).
    #[arg(long)]
    pub machine: String,
    /// Output directory: validate.csv, validate.svg.
    #[arg(long)]
    pub out: PathBuf,
    /// CPU for the live replay.
    #[arg(long)]
    pub cpu: Option<u32>,
    /// Prefetchers standing in for the host's hardware prefetchers in the
    /// simulated run, SPEC[@LEVEL], repeatable ("none" to model none).
    #[arg(long, default_values_t = ["stream:16:16".to_string()])]
    pub prefetch: Vec<String>,
    /// Its prefetch queue (fills in flight beyond the private levels);
    /// default the machine's per-core outstanding-miss limit (`core.mlp`).
    #[arg(long)]
    pub prefetch_queue: Option<usize>,
}

/// What the live replay's loop adds to each access beyond the load itself
/// (the index arithmetic on the dependence chain): its per-access time on
/// a loop over 16 KiB (L1-resident) minus the pointer chase's time there.
fn harness_overhead(cpu: u32) -> Result<f64> {
    live::os::pin_current_thread(cpu)?;
    let chase = live::calibrate::chase(16 << 10, 200_000, 5, 7)?.ns;
    let lines: Vec<Access> = (0..200_000u64)
        .map(|i| Access::new(0, traces::Kind::Load, (i % 256) * 64, 8))
        .collect();
    let mut runs: Vec<f64> = (0..5)
        .map(|_| live::replay::replay(&lines, &[cpu], 1).map(|r| r.p50_ns))
        .collect::<Result<_, _>>()?;
    runs.sort_by(f64::total_cmp);
    Ok((runs[2] - chase).max(0.0))
}

pub fn validate(a: ValidateArgs) -> Result<()> {
    let m = crate::machines::load_machine(&a.machine)?;
    let cpu = match a.cpu {
        Some(c) => c,
        None => live::os::allowed_cpus()?[0],
    };
    ensure_dir(&a.out)?;
    let overhead = harness_overhead(cpu)?;
    println!(
        "live harness overhead: {overhead:.2} ns per access (replay of an L1-resident loop minus the chase's L1 latency), subtracted from live"
    );
    let mut csv = String::from("trace,metric,sim,live,error_pct\n");
    let mut points = Vec::new();
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>8}",
        "trace", "metric", "sim ns", "live ns", "error %"
    );
    for t in &a.traces {
        let acc = load_accesses(t, None)?;
        let footprint: std::collections::HashSet<u64> = acc.iter().map(|x| x.addr >> 6).collect();
        // Simulated: one thread, every miss blocking (as the live loads are dependent).
        let placement = policies::placement::create("first-touch", &m)?;
        let mut e = sim::Engine::new(
            &m,
            sim::Config {
                mlp: Some(1),
                pin: sim::Pin::Compact,
                prefetch_level: 1.min(m.spec.core.caches.len().saturating_sub(1)),
                prefetch_queue: Some(a.prefetch_queue.unwrap_or(m.spec.core.mlp as usize)),
                ..sim::Config::default()
            },
            placement,
        )?;
        let specs: Vec<String> = a
            .prefetch
            .iter()
            .filter(|p| *p != "none")
            .cloned()
            .collect();
        crate::prefetchers::attach(
            &mut e,
            &m,
            &specs,
            1.min(m.spec.core.caches.len().saturating_sub(1)),
        )?;
        let fields = traces::Fields::default();
        // Two passes, the first to warm the caches as the live replay does;
        // the second timed per chunk of accesses, as the live replay is.
        let mut chunks = Vec::with_capacity(acc.len() / live::replay::CHUNK + 1);
        for pass in 0..2 {
            for chunk in acc.chunks(live::replay::CHUNK) {
                let mut b = Batch::new(fields);
                for x in chunk {
                    b.push(traces::Record::access(0, x.kind, x.addr, x.size));
                }
                let before = e.latency_totals();
                e.feed(&b)
                    .map_err(|x| anyhow::anyhow!("{}: {x}", t.display()))?;
                e.finish()?;
                let after = e.latency_totals();
                if pass == 1 && after.0 > before.0 {
                    chunks.push((after.1 - before.1) as f64 / 1000.0 / (after.0 - before.0) as f64);
                }
            }
            if pass == 0 {
                e.clear_stats();
            }
        }
        let s = live::replay::chunk_stats(&mut chunks);
        let mut live = live::replay::replay(&acc, &[cpu], 1)?;
        for x in [&mut live.mean_ns, &mut live.p50_ns, &mut live.p99_ns] {
            *x = (*x - overhead).max(0.0);
        }
        let name = t
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (metric, simv, livev) in [
            ("mean_ns", s.0, live.mean_ns),
            ("p50_ns", s.1, live.p50_ns),
            ("p99_ns", s.2, live.p99_ns),
        ] {
            let err = if livev == 0.0 {
                0.0
            } else {
                100.0 * (simv - livev) / livev
            };
            csv.push_str(&format!("{name},{metric},{simv:.3},{livev:.3},{err:.2}\n"));
            println!("{name:<28} {metric:>8} {simv:>10.2} {livev:>10.2} {err:>+7.1}%");
        }
        points.push((footprint.len() as u64 * 64, s.0, live.mean_ns));
    }
    write_file(&a.out.join("validate.csv"), csv.as_bytes())?;
    let svg = analysis::plots::pairs_svg("latency vs working set: simulated and live", &points)
        .map_err(anyhow::Error::msg)?;
    write_file(&a.out.join("validate.svg"), svg.as_bytes())?;
    Ok(())
}
