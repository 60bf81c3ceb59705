//! `numasim live probe|calibrate|replay`: the real machine.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use sim::machine::MachineSpec;
use traces::Format;

use crate::input::parse_format;
use crate::output::{ensure_dir, write_file, write_json};

#[derive(Subcommand, Debug)]
pub enum LiveCmd {
    /// Describe this host from sysfs as a machine file (latencies uncalibrated).
    Probe(ProbeArgs),
    /// Measure this host (pointer chase, core-to-core, bandwidth) and write a calibrated machine file.
    Calibrate(CalibrateArgs),
    /// Replay a trace's data accesses on pinned threads of this host.
    Replay(ReplayArgs),
    /// Re-derive a calibrated machine file's prefetchers (`[core.prefetch]`)
    /// from the fingerprint `live calibrate` recorded beside it, without
    /// measuring again (after the model's prefetchers or the fit change).
    Refit(RefitArgs),
}

#[derive(Args, Debug)]
pub struct RefitArgs {
    /// The fingerprint (`.prefetch.json`, written by `live calibrate`).
    pub measured: PathBuf,
    /// The machine file calibrated with it.
    #[arg(long)]
    pub machine: PathBuf,
    /// The re-derived machine file.
    #[arg(long)]
    pub out: PathBuf,
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
    /// Require the sweep in transparent huge pages (an error where the host
    /// does not offer them). Without this flag or --no-huge-pages, the
    /// sweep runs in huge pages whenever the host offers them (madvise;
    /// .curve-huge.csv), and the machine's levels come from it (the model
    /// has no TLB; validate replays in huge pages): the validated path.
    #[arg(long, conflicts_with = "no_huge_pages")]
    pub huge_pages: bool,
    /// Calibrate in 4 KiB pages only, even where huge pages are offered
    /// (a machine file that validate's held-out table was not measured with).
    #[arg(long)]
    pub no_huge_pages: bool,
    /// Working set of the prefetcher fingerprint's stride walks (K/M/G;
    /// beyond the caches). The walks and the verdict go to .prefetch.json.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub fingerprint_size: u64,
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
        LiveCmd::Refit(a) => refit(a),
    }
}

/// The sources notes of [`prefetch_model`] (each starts so) that a refit
/// replaces; "core.mlp raised to" stays, as the raised `core.mlp` does.
const PREFETCH_NOTES: [&str; 2] = ["Prefetchers (", "prefetchers' confirmation count"];

/// The host's prefetchers from a fingerprint into `spec`: the verdict and
/// its model (`live::fingerprint::apply`), `core.mlp` at least the unit
/// walk's lookahead, the confirmation count fitted to the ramp walks
/// (`confirm_fit`); returns the notes for its sources.
fn prefetch_model(
    spec: &mut MachineSpec,
    fp: &live::fingerprint::Fingerprint,
    measured: &str,
) -> Result<Vec<String>> {
    let mut notes = vec![live::fingerprint::apply(spec, fp, measured)];
    // The unit-stride walk is a second Little's-law reading of the lines a
    // core keeps in flight (its prefetches' lookahead): the larger one
    // stands (a noisy streaming read must not cap the prefetch queue below
    // what the walk showed).
    let ahead = live::fingerprint::verdict(fp).ahead_lines;
    if ahead > spec.core.mlp {
        notes.push(format!(
            "core.mlp raised to {ahead}: the unit-stride walk kept that many lines in flight (random chase / walk)"
        ));
        spec.core.mlp = ahead;
    }
    if let Some(fit) = crate::confirm_fit::fit(spec, fp)? {
        live::fingerprint::apply_confirm(spec, fp, fit.confirm);
        let model = spec.core.prefetch.as_ref().map(|p| p.model.join(" "));
        notes.push(format!(
            "{}; modelled as {}",
            fit.note,
            model.unwrap_or_default()
        ));
    }
    Ok(notes)
}

fn refit(a: RefitArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.measured)
        .with_context(|| format!("{}: cannot read", a.measured.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not JSON", a.measured.display()))?;
    let fp: live::fingerprint::Fingerprint =
        serde_json::from_value(v.get("fingerprint").cloned().unwrap_or_default())
            .with_context(|| format!("{}: no fingerprint in it", a.measured.display()))?;
    let mut spec =
        crate::machines::load_machine(&a.machine.to_string_lossy(), &lab::InputLog::default())?
            .spec;
    spec.sources
        .retain(|n| !PREFETCH_NOTES.iter().any(|p| n.starts_with(p)));
    let name = spec
        .core
        .prefetch
        .as_ref()
        .map(|p| p.measured.clone())
        .unwrap_or_else(|| {
            a.measured
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let notes = prefetch_model(&mut spec, &fp, &name)?;
    for n in &notes {
        println!("{n}");
    }
    spec.sources.extend(notes);
    let m = sim::Machine::new(spec).context("the re-derived machine is not a valid description")?;
    write_file(&a.out, m.to_toml().as_bytes())?;
    println!("wrote {}", a.out.display());
    Ok(())
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

/// Whether calibration sweeps in huge pages: by default whenever the host
/// offers them (the path `validate` is validated with), saying so in one
/// line when it does not; `--huge-pages` requires them, `--no-huge-pages`
/// declines them. Returns the choice and a note for the machine's sources.
fn huge_pages(a: &CalibrateArgs) -> Result<(bool, Option<String>)> {
    if a.no_huge_pages {
        let note = "calibrated in 4 KiB pages (--no-huge-pages): not the path validate's held-out table was measured with";
        return Ok((false, Some(note.to_string())));
    }
    match live::os::thp_offered(&a.sysfs) {
        Ok(()) => Ok((true, None)),
        Err(why) if a.huge_pages => {
            bail!("--huge-pages: this host does not offer transparent huge pages ({why})")
        }
        Err(why) => {
            let note = format!(
                "calibrated in 4 KiB pages: this host does not offer transparent huge pages ({why}); validate's replays get 4 KiB pages here too"
            );
            eprintln!("live calibrate: {note}");
            Ok((false, Some(note)))
        }
    }
}

fn calibrate(a: CalibrateArgs) -> Result<()> {
    let t = live::sysfs::probe(&a.sysfs)?;
    let (huge, pages_note) = huge_pages(&a)?;
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
    let mut huge_curve = None;
    if huge {
        let mut hc = Vec::new();
        let mut rows = Vec::new();
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
            rows.push(CurveRow {
                bytes: p.bytes,
                ns: p.ns,
                spread: p.spread,
                huge_share: Some(share),
            });
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
        huge_csv = Some(analysis::table::to_csv(&rows)?);
        huge_curve = Some((hc, hl));
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
    // In huge pages the plateaus are the caches' and memory's without page
    // walks, which the model does not have: the machine comes from them
    // (and `validate` replays in huge pages too).
    notes.extend(pages_note);
    match &huge_curve {
        Some((hc, hl)) => {
            notes.extend(huge_note);
            notes.push("the machine's levels come from the huge-page sweep (the model has no TLB; validate replays in huge pages)".to_string());
            notes.extend(live::calibrate::apply_huge(&mut spec, hc, hl));
        }
        None => notes.extend(live::calibrate::apply(&mut spec, &curve, &levels)),
    }
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
    // The host's prefetchers: stride walks against a random chase.
    let mut fp =
        live::fingerprint::fingerprint(a.fingerprint_size, a.loads.min(400_000), a.repeats, 0xF1)?;
    // The same walks inside each cache level past L1 (at half its modelled
    // size), recorded beside the DRAM-sized ones.
    let sets: Vec<(String, u64)> = spec
        .core
        .caches
        .iter()
        .skip(1)
        .chain(spec.nodes.iter().filter_map(|n| n.llc.as_ref()).take(1))
        .map(|c| (c.name.clone(), c.size.0 / 2))
        .filter(|(_, b)| *b >= 64 * 64)
        .collect();
    fp.levels = live::fingerprint::level_walks(&sets, a.loads.min(200_000), a.repeats, 0xF2)?;
    for l in &fp.levels {
        let unit = l.walks.iter().find(|w| w.0 == 1).map_or(0.0, |w| w.1);
        let max = l.walks.iter().map(|w| w.1).fold(0.0, f64::max);
        notes.push(format!(
            "stride walks inside {} ({} B): a random chase {:.1} ns, a unit-stride walk {unit:.1} ns, the slowest stride {max:.1} ns",
            l.level, l.bytes, l.random_ns
        ));
    }
    let measured = a.out.with_extension("prefetch.json");
    let name = measured
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in prefetch_model(&mut spec, &fp, &name)? {
        eprintln!("{n}");
        notes.push(n);
    }
    spec.sources.extend(notes);
    let m = sim::Machine::new(spec).context("the calibrated machine is not a valid description")?;
    write_file(&a.out, m.to_toml().as_bytes())?;
    let rows: Vec<CurveRow> = curve
        .iter()
        .map(|p| CurveRow {
            bytes: p.bytes,
            ns: p.ns,
            spread: p.spread,
            huge_share: None,
        })
        .collect();
    write_file(
        &a.out.with_extension("curve.csv"),
        analysis::table::to_csv(&rows)?.as_bytes(),
    )?;
    if let Some(h) = &huge_csv {
        write_file(&a.out.with_extension("curve-huge.csv"), h.as_bytes())?;
    }
    write_json(
        &measured,
        &serde_json::json!({ "fingerprint": fp, "verdict": live::fingerprint::verdict(&fp) }),
    )?;
    println!("levels (ns, effective capacity):");
    for l in huge_curve.as_ref().map_or(&levels, |h| &h.1) {
        println!("  {:8.2} ns  up to {} B", l.ns, l.capacity);
    }
    println!(
        "wrote {} and {}",
        a.out.display(),
        a.out.with_extension("curve.csv").display()
    );
    Ok(())
}

/// One point of a measured latency curve (`.curve.csv`; `huge_share`
/// only in the huge-page sweep).
#[derive(serde::Serialize, Default)]
struct CurveRow {
    bytes: u64,
    #[serde(serialize_with = "analysis::table::f3")]
    ns: f64,
    #[serde(serialize_with = "analysis::table::f4")]
    spread: f64,
    #[serde(
        serialize_with = "analysis::table::opt_f3",
        skip_serializing_if = "Option::is_none"
    )]
    huge_share: Option<f64>,
}

fn live_replay(a: ReplayArgs) -> Result<()> {
    let acc = crate::input::load_accesses(&a.trace, a.format)?;
    let cpus = match a.cpus {
        Some(c) => c,
        None => live::os::allowed_cpus()?,
    };
    let r = live::replay::replay(&acc, &cpus, a.warm, false)?;
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
