//! `numasim` — the command line: arguments → `lab` → files and text. This
//! crate alone knows flags, progress bars and output directories (it writes
//! every file); the work lives in the library crates (`lab` over `traces`,
//! `sim`, `policies`, `analysis`, `live`).

mod cmd;
mod comparison;
mod experiment;
mod flags;
mod input;
mod machines;
mod manifest;
mod output;
mod policy;
mod progress;
mod report;
mod task_io;
mod timeline;
mod workers;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};

/// Replay memory-access traces and inference workloads through a NUMA machine model.
#[derive(Parser, Debug)]
#[command(name = "numasim", version, about, long_about = None, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: cmd::Command,
}

/// A `replay` flag given on the command line that does not apply to the
/// mode the other flags choose (a usage error, as clap's own are).
fn inapplicable(cli: &Cli, m: &clap::ArgMatches) -> Option<String> {
    let cmd::Command::Replay(a) = &cli.command else {
        return None;
    };
    let sub = m.subcommand_matches("replay")?;
    let given: Vec<String> = sub
        .ids()
        .filter(|id| sub.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| id.to_string())
        .collect();
    let command = Cli::command();
    let replay = command.find_subcommand("replay")?;
    let long = |id: &str| {
        replay
            .get_arguments()
            .find(|x| x.get_id() == id)
            .and_then(|x| x.get_long())
            .unwrap_or(id)
            .to_string()
    };
    cmd::replay::inapplicable(a, &given, long)
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
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let cli = match parsed {
        Ok((cli, m)) => {
            if let Some(msg) = inapplicable(&cli, &m) {
                eprintln!("numasim: error: {msg} (see numasim --help)");
                return ExitCode::from(2);
            }
            cli
        }
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            // One line: clap's first paragraph (a missing argument's name is
            // on its second line), without its own "error: " prefix.
            let text = e.render().to_string();
            let para: Vec<&str> = text
                .split("\n\n")
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            let first = para.join(" ");
            let first = first.strip_prefix("error: ").unwrap_or(&first);
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
