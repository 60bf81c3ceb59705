//! `numasim validate TRACE... --machine FILE`: each trace simulated and
//! replayed live on a pinned thread, latencies side by side.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use traces::Access;

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
    /// Live replays per trace; each metric is their median (a shared VM's
    /// latencies move by tens of percent from one run to the next).
    #[arg(long, default_value_t = 3)]
    pub live_runs: usize,
    /// Also write OUT/report.html: the table, the plot and the manifest in one self-contained page.
    #[arg(long)]
    pub report: bool,
}

/// One line of `validate.csv`.
#[derive(serde::Serialize, Default)]
struct ValidateRow {
    trace: String,
    metric: &'static str,
    #[serde(serialize_with = "analysis::table::f3")]
    sim: f64,
    #[serde(serialize_with = "analysis::table::f3")]
    live: f64,
    #[serde(serialize_with = "analysis::table::f2")]
    error_pct: f64,
    /// The live replay's loop: `chain` or `ops` (see `live::replay`).
    harness: &'static str,
    /// The host's memory latency around this trace's live replays (see
    /// [`memory_now`]), beside the machine file's: how far the host has
    /// drifted since it was calibrated.
    #[serde(serialize_with = "analysis::table::f2")]
    memory_now_ns: f64,
    #[serde(serialize_with = "analysis::table::f2")]
    memory_model_ns: f64,
}

/// One line of `prefetch.csv`: what each simulated prefetcher did on a
/// trace's timed pass.
#[derive(serde::Serialize, Default)]
struct PrefetchRow {
    trace: String,
    prefetcher: String,
    level: String,
    issued: u64,
    useful: u64,
    late: u64,
    useless: u64,
    dropped: u64,
}

/// What each live replay loop adds to an access beyond the load itself:
/// its per-access time over 16 KiB (L1-resident) minus the pointer chase's
/// time there, each the least of several runs (noise on a shared VM only
/// adds: a median of five once put the overhead at 2.7 ns, against 0.6 ns
/// in the run before it). The chain harness is measured on 256 lines
/// visited 8 times each (its limit), the op-list one on 256 lines visited
/// 781 times.
struct Overhead {
    chain: f64,
    ops: f64,
}

impl Overhead {
    fn measure(cpu: u32) -> Result<Overhead> {
        live::os::pin_current_thread(cpu)?;
        let chase = (0..5)
            .map(|k| live::calibrate::chase(16 << 10, 200_000, 3, 7 + k).map(|p| p.ns))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        let loop_of = |n: u64, warm: usize| -> Result<f64> {
            let lines: Vec<Access> = (0..n)
                .map(|i| Access::new(0, traces::Kind::Load, (i % 256) * 64, 8))
                .collect();
            let least = (0..9)
                .map(|_| live::replay::replay(&lines, &[cpu], warm, true).map(|r| r.p50_ns))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .fold(f64::INFINITY, f64::min);
            Ok((least - chase).max(0.0))
        };
        Ok(Overhead {
            chain: loop_of(256 * 8, 100)?,
            ops: loop_of(200_000, 1)?,
        })
    }

    fn of(&self, h: live::replay::Harness) -> f64 {
        match h {
            live::replay::Harness::Chain => self.chain,
            live::replay::Harness::Ops => self.ops,
        }
    }
}

/// The host's memory latency now: a random chase over 64 MiB in huge pages
/// (as `live calibrate --huge-pages` measures memory). A shared VM's
/// memory latency moved from 190 to 264 ns between a calibration and a
/// validation minutes later; a live latency is only comparable with the
/// model of a host that has not moved since.
fn memory_now() -> Result<f64> {
    Ok(live::calibrate::chase_huge(64 << 20, 200_000, 3, 0x3E3)?
        .0
        .ns)
}

/// The prefetchers the simulated run uses (see `ValidateArgs::prefetch`).
fn prefetchers(given: &[String], m: &sim::Machine) -> Vec<String> {
    let chosen: Vec<String> = if !given.is_empty() {
        given.to_vec()
    } else {
        match &m.spec.core.prefetch {
            Some(p) if p.detected && !p.model.is_empty() => p.model.clone(),
            Some(p) if !p.detected => Vec::new(),
            _ => vec!["stream:16:16".to_string()],
        }
    };
    chosen.into_iter().filter(|p| p != "none").collect()
}

pub fn validate(a: ValidateArgs) -> Result<()> {
    let log = lab::InputLog::default();
    let m = crate::machines::load_machine(&a.machine, &log)?;
    let specs = prefetchers(&a.prefetch, &m);
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
        .map_or(0.0, |x| x.latency_ns);
    println!(
        "memory latency: {memory_model_ns:.1} ns in the machine file; \"memory ns\" is the host's now, around each trace's live runs"
    );
    let mut rows = Vec::new();
    let mut pf_rows = Vec::new();
    let mut points = Vec::new();
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>8} {:>8} {:>10}",
        "trace", "metric", "sim ns", "live ns", "error %", "harness", "memory ns"
    );
    for t in &a.traces {
        let acc = load_accesses(t, None)?;
        let footprint: std::collections::HashSet<u64> = acc.iter().map(|x| x.addr >> 6).collect();
        // Simulated: one thread, every miss blocking (as the live loads are
        // dependent), two passes, the first to warm the caches as the live
        // replay does; the second timed per chunk of accesses, as the live
        // replay is.
        let mut sim_replay = lab::dependent::DependentReplay::new(
            &m,
            &specs,
            a.prefetch_queue.unwrap_or(m.spec.core.mlp as usize),
            &log,
        )
        .map_err(crate::flags::replay)?;
        let mut chunks = Vec::with_capacity(acc.len() / live::replay::CHUNK + 1);
        for pass in 0..2 {
            for chunk in acc.chunks(live::replay::CHUNK) {
                let (n, ns) = sim_replay
                    .run(chunk)
                    .map_err(|x| anyhow::anyhow!("{}: {x}", t.display()))?;
                if pass == 1 && n > 0 {
                    chunks.push(ns / n as f64);
                }
            }
            if pass == 0 {
                sim_replay.clear_stats();
            }
        }
        let s = live::replay::chunk_stats(&mut chunks);
        let name = t
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (pf, level, st) in sim_replay.engine().prefetchers() {
            pf_rows.push(PrefetchRow {
                trace: name.clone(),
                prefetcher: pf,
                level: m.spec.core.caches[level].name.clone(),
                issued: st.issued,
                useful: st.useful,
                late: st.late,
                useless: st.useless,
                dropped: st.dropped,
            });
        }
        // The live side, `--live-runs` times: each metric's median; the
        // host's memory latency before and after.
        let before = memory_now()?;
        let runs = (0..a.live_runs.max(1))
            .map(|_| live::replay::replay(&acc, &[cpu], 1, true))
            .collect::<Result<Vec<_>, _>>()?;
        let memory_now_ns = (before + memory_now()?) / 2.0;
        let harness = runs[0].harness;
        let overhead = overheads.of(harness);
        let med = |f: fn(&live::replay::LiveResult) -> f64| {
            (live::fingerprint::median(runs.iter().map(f).collect()) - overhead).max(0.0)
        };
        let live = live::replay::LiveResult {
            mean_ns: med(|r| r.mean_ns),
            p50_ns: med(|r| r.p50_ns),
            p99_ns: med(|r| r.p99_ns),
            ..runs[0].clone()
        };
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
            rows.push(ValidateRow {
                trace: name.clone(),
                metric,
                sim: simv,
                live: livev,
                error_pct: err,
                harness: harness.name(),
                memory_now_ns,
                memory_model_ns,
            });
            println!(
                "{name:<28} {metric:>8} {simv:>10.2} {livev:>10.2} {err:>+7.1}% {:>8} {memory_now_ns:>10.1}",
                harness.name()
            );
        }
        points.push((footprint.len() as u64 * 64, s.0, live.mean_ns));
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
