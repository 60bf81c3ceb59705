//! `numasim trace prefetch LOADS --prefetcher SPEC --out PREFETCHES`: runs a
//! cache prefetcher over an ML Prefetching Competition load trace and
//! writes the competition's prefetch file (`instr_id hexaddr` per line) for
//! ChampSim to replay, with a timing-free estimate of accuracy and coverage
//! ([`sim::prefetch::Offline`]).

use std::fs::File;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use lab::prefetchers::OfflineError;

use crate::input::trace_err;
use crate::output::AtomicFile;

#[derive(Args, Debug)]
pub struct PrefetchArgs {
    /// Load trace (`instr_id, cycle, load_addr, pc, llc_hit` lines; plain, .xz, .gz or .zst).
    pub input: PathBuf,
    #[arg(long, default_value = "ip-stride:2",
          help = crate::policy::flag_help("Prefetcher", &policies::prefetch::PREFETCHERS))]
    pub prefetcher: String,
    /// Prefetch file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// At most this many prefetches per load (the competition allows 2).
    #[arg(long, default_value_t = 2)]
    pub max_per_load: usize,
    /// A prefetch counts as useful if its line is loaded within this many loads.
    #[arg(long, default_value_t = 10_000)]
    pub window: u64,
    /// Line size (bytes).
    #[arg(long, default_value_t = 64)]
    pub line: u64,
}

pub fn run(a: PrefetchArgs) -> Result<()> {
    if !a.line.is_power_of_two() || a.line < 8 {
        bail!("--line must be a power of two ≥ 8, got {}", a.line);
    }
    if a.max_per_load == 0 {
        bail!("--max-per-load must be at least 1");
    }
    let pf = crate::policy::prefetcher(&a.prefetcher, a.line, 1, &lab::InputLog::default())?;
    let name = pf.name();
    let file =
        File::open(&a.input).with_context(|| format!("{}: cannot open", a.input.display()))?;
    let rd = traces::format::decompressed(Box::new(file)).map_err(|e| trace_err(&a.input, e))?;
    let mut out = AtomicFile::create(&a.out)?;
    let s = lab::prefetchers::offline(rd, pf, a.line, a.max_per_load, a.window, out.writer())
        .map_err(|e| match e {
            OfflineError::Trace(e) => trace_err(&a.input, e),
            OfflineError::Write(e) => anyhow::anyhow!("{}: write failed: {e}", a.out.display()),
            e => anyhow::anyhow!("{}: {e}", a.input.display()),
        })?;
    out.commit()?;
    println!(
        "{name}: {} loads ({} LLC misses), {} prefetches written to {}",
        s.loads,
        s.llc_misses,
        s.issued,
        a.out.display()
    );
    println!(
        "estimate (no timing; used within {} loads): accuracy {:.3}, coverage {:.3} of LLC misses",
        a.window,
        s.accuracy(),
        s.coverage()
    );
    Ok(())
}
