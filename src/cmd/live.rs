//! `numasim live probe|calibrate|replay`: the real machine.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use sim::machine::MachineSpec;
use traces::Format;

use crate::input::parse_format;
use crate::output::{check_creatable, ensure_dir, write_file, write_json};

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
    #[arg(long, default_value = "256M", value_parser = crate::input::parse_size)]
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
    /// .curve-huge.csv), and the machine's levels come from it (validate
    /// replays in huge pages): the validated path.
    #[arg(long, conflicts_with = "no_huge_pages")]
    pub huge_pages: bool,
    /// Calibrate in 4 KiB pages only, even where huge pages are offered
    /// (a machine file that validate's held-out table was not measured with).
    #[arg(long)]
    pub no_huge_pages: bool,
    /// Working set of the prefetcher fingerprint's stride walks (K/M/G;
    /// beyond the caches). The walks and the verdict go to .prefetch.json.
    #[arg(long, default_value = "64M", value_parser = crate::input::parse_size)]
    pub fingerprint_size: u64,
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

fn refit(a: RefitArgs) -> Result<()> {
    let fp = lab::calibrate::read_fingerprint(&a.measured)?;
    let spec =
        crate::machines::load_machine(&a.machine.to_string_lossy(), &lab::InputLog::default())?
            .spec;
    let file = a
        .measured
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (m, notes) = lab::calibrate::refit(spec, &fp, &file)?;
    for n in &notes {
        println!("{n}");
    }
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
    check_creatable(&a.out)?;
    let t = live::sysfs::probe(&a.sysfs)?;
    let (huge, pages_note) = huge_pages(&a)?;
    let spec: MachineSpec = live::sysfs::to_machine(&t, "host-calibrated")?;
    let o = lab::calibrate::Options {
        max_size: a.max_size,
        loads: a.loads,
        repeats: a.repeats,
        huge_pages: huge,
        fingerprint_size: a.fingerprint_size,
    };
    let m = lab::calibrate::measure(&t, &spec, &o, &a.sysfs, &mut |p, share| match share {
        None => eprintln!(
            "{:>10} B  {:7.2} ns  (spread {:.0}%)",
            p.bytes,
            p.ns,
            p.spread * 100.0
        ),
        Some(share) => eprintln!(
            "{:>10} B  {:7.2} ns  (spread {:.0}%, huge pages {:.0}%)  [2 MiB pages]",
            p.bytes,
            p.ns,
            p.spread * 100.0,
            share * 100.0
        ),
    })?;
    let measured = a.out.with_extension("prefetch.json");
    let name = measured
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let c = lab::calibrate::machine(spec, &t, &m, pages_note, &name)?;
    for n in &c.prefetch_notes {
        eprintln!("{n}");
    }
    write_file(&a.out, c.machine.to_toml().as_bytes())?;
    let (curve, huge) = m.curves_csv()?;
    write_file(&a.out.with_extension("curve.csv"), curve.as_bytes())?;
    if let Some(csv) = huge {
        write_file(&a.out.with_extension("curve-huge.csv"), csv.as_bytes())?;
    }
    let fp = &m.fingerprint;
    write_json(
        &measured,
        &serde_json::json!({ "fingerprint": fp, "verdict": live::fingerprint::verdict(fp) }),
    )?;
    println!("levels (ns, effective capacity):");
    for l in &c.levels {
        println!("  {:8.2} ns  up to {} B", l.ns, l.capacity);
    }
    println!(
        "wrote {} and {}",
        a.out.display(),
        a.out.with_extension("curve.csv").display()
    );
    Ok(())
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
