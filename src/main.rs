//! `numasim` — the command line. This crate alone knows about flags, files,
//! progress bars and output directories; the work lives in the library
//! crates (`traces`, `sim`, `policies`, `analysis`).

mod cmd;
mod input;
mod manifest;
mod output;
mod progress;

use std::process::ExitCode;

use clap::Parser;

/// Replay memory-access traces and inference workloads through a NUMA machine model.
#[derive(Parser, Debug)]
#[command(name = "numasim", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: cmd::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cmd::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the context chain joined by ": ".
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("numasim: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
