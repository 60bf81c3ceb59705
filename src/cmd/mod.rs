//! Subcommands, one module each.

pub mod replay;
pub mod trace;

use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Generate, convert and inspect traces.
    #[command(subcommand)]
    Trace(trace::TraceCmd),
    /// Replay a trace through the cache model (cachegrind-compatible by default).
    Replay(replay::ReplayArgs),
}

pub fn run(cmd: Command) -> Result<()> {
    match cmd {
        Command::Trace(t) => trace::run(t),
        Command::Replay(r) => replay::run(r),
    }
}
