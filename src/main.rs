//! `numasim` — the command line. This crate alone knows about flags, files,
//! progress bars and output directories; the work lives in the library
//! crates (`traces`, `sim`, `policies`, `analysis`).

mod cmd;
mod confirm_fit;
mod dependent;
mod experiment;
mod input;
mod machines;
mod manifest;
mod npy;
mod output;
mod policy;
mod progress;
mod report;
mod serve_timeline;
mod sweep;
mod task_io;
mod timeline;

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
    // Output into a closed pipe (`numasim ... | head`) ends the process
    // quietly, as it does for other Unix tools, instead of a panic in
    // `println!`. Rust starts programs with SIGPIPE ignored.
    // SAFETY: called first, before any thread exists; restores the default
    // disposition of one signal.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                e.exit();
            }
            // One line: clap's first line, without its own "error: " prefix.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("bad arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("numasim: error: {first} (see numasim --help)");
            return ExitCode::from(2);
        }
    };
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
