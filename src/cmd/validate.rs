//! `numasim validate TRACE... --machine FILE`: each trace simulated and
//! replayed live on a pinned thread (`lab::validate`), latencies side by side.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use lab::validate::{Overhead, ValidateError};

use crate::input::load_accesses;
use crate::output::{ensure_dir, write_file};

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Traces to run both simulated and live.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Machine file (from `numasim live calibrate`).
    #[arg(long)]
    pub machine: String,
    /// Output directory: validate.csv, validate.svg, prefetch.csv (what
    /// each simulated prefetcher did per trace).
    #[arg(long)]
    pub out: PathBuf,
    /// CPU for the live replay.
    #[arg(long)]
    pub cpu: Option<u32>,
    /// Prefetchers standing in for the host's hardware prefetchers in the
    /// simulated run, SPEC[@LEVEL], repeatable ("none" to model none);
    /// default the machine's calibrated ones (`core.prefetch.model`, from
    /// `live calibrate`), or `stream:16:16` when it has none.
    #[arg(long)]
    pub prefetch: Vec<String>,
    /// Its prefetch queue (fills in flight beyond the private levels);
    /// default the machine's per-core outstanding-miss limit (`core.mlp`).
    #[arg(long)]
    pub prefetch_queue: Option<usize>,
    /// Live replays per trace, at least 3: the error is their median's, their least and
    /// greatest beside it (a shared VM's latencies move by tens of percent run to run).
    #[arg(long, default_value_t = 3)]
    pub live_runs: usize,
    /// Also write OUT/report.html: the table, the plot and the manifest in one self-contained page.
    #[arg(long)]
    pub report: bool,
}

pub fn validate(a: ValidateArgs) -> Result<()> {
    if a.live_runs < 3 {
        bail!(
            "--live-runs {}: at least 3 (each live metric is reported as the least, median and greatest of its runs)",
            a.live_runs
        );
    }
    let log = lab::InputLog::default();
    let m = crate::machines::load_machine(&a.machine, &log)?;
    let specs = lab::validate::prefetchers(&a.prefetch, &m);
    println!(
        "simulated prefetchers: {}",
        if specs.is_empty() {
            "none".to_string()
        } else {
            specs.join(" ")
        }
    );
    let cpu = match a.cpu {
        Some(c) => c,
        None => live::os::allowed_cpus()?[0],
    };
    ensure_dir(&a.out)?;
    let overheads = Overhead::measure(cpu)?;
    println!(
        "live harness overhead per access (replay of an L1-resident loop minus the chase's L1 latency), subtracted from live: chain {:.2} ns, ops {:.2} ns",
        overheads.chain, overheads.ops
    );
    let memory_model_ns = m
        .spec
        .nodes
        .iter()
        .find_map(|n| n.memory.as_ref())
        .map_or(0.0, |x| x.latency_ns)
        // A random load over memory also walks the page tables.
        + m.spec.core.tlb.as_ref().map_or(0.0, |t| t.walk_ns);
    println!(
        "memory latency: {memory_model_ns:.1} ns in the machine file (memory, and a page walk if it has a TLB); \"memory ns\" is the host's just before → just after each trace's live runs; \"live ns\" the median of {} live runs, \"live min..max\" their least and greatest",
        a.live_runs
    );
    let mut rows = Vec::new();
    let mut pf_rows = Vec::new();
    let mut points = Vec::new();
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>21} {:>8} {:>8} {:>15}",
        "trace", "metric", "sim ns", "live ns", "live min..max", "error %", "harness", "memory ns"
    );
    let ask = lab::validate::Ask {
        machine: &m,
        prefetchers: &specs,
        prefetch_queue: a.prefetch_queue.unwrap_or(m.spec.core.mlp as usize),
        cpu,
        live_runs: a.live_runs,
        overheads: &overheads,
        memory_model_ns,
        log: &log,
    };
    for t in &a.traces {
        let acc = load_accesses(t, None)?;
        let name = t
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let v = lab::validate::one(&ask, &name, &acc).map_err(|e| match e {
            ValidateError::Replay(r) => crate::flags::replay(r),
            ValidateError::Engine { error, .. } => anyhow::anyhow!("{}: {error}", t.display()),
            e => e.into(),
        })?;
        for r in &v.rows {
            println!(
                "{name:<28} {:>8} {:>10.2} {:>10.2} {:>21} {:>+7.1}% {:>8} {:>15}",
                r.metric,
                r.sim,
                r.live,
                format!("{:.2}..{:.2}", r.live_min, r.live_max),
                r.error_pct,
                r.harness,
                format!("{:.1}→{:.1}", r.memory_before_ns, r.memory_after_ns)
            );
        }
        rows.extend(v.rows);
        pf_rows.extend(v.prefetch);
        points.push(v.point);
    }
    if let Some((first, last, lo, hi)) = lab::validate::memory_drift(&rows) {
        println!(
            "host memory latency during the run: {first:.1} ns at the start, {last:.1} ns at the end ({:+.1}%), {lo:.1}..{hi:.1} ns in all; {memory_model_ns:.1} ns in the machine file (memory, and a page walk if it has a TLB)",
            100.0 * (last - first) / first
        );
    }
    write_file(
        &a.out.join("validate.csv"),
        analysis::table::to_csv(&rows)?.as_bytes(),
    )?;
    write_file(
        &a.out.join("prefetch.csv"),
        analysis::table::to_csv(&pf_rows)?.as_bytes(),
    )?;
    let svg = analysis::plots::pairs_svg("latency vs working set: simulated and live", &points)?;
    write_file(&a.out.join("validate.svg"), svg.as_bytes())?;
    crate::output::write_json(
        &a.out.join("manifest.json"),
        &crate::manifest::manifest(
            Vec::new(),
            serde_json::json!({ "cpu": cpu, "prefetch": specs }),
            &log,
        ),
    )?;
    crate::report::after(a.report, Some(&a.out))
}
