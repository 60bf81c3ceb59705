//! Resolving `--machine NAME|FILE` (through `lab::machines`).

use anyhow::{Result, anyhow};
use sim::Machine;

/// A preset by name, or a TOML file by path, noted in `log`.
pub fn load_machine(arg: &str, log: &lab::InputLog) -> Result<Machine> {
    lab::machines::load(arg, log).map_err(|e| match e {
        lab::LabError::NoMachine { arg, presets } => {
            anyhow!("--machine {arg:?}: no such preset ({presets}) and no such file")
        }
        other => anyhow!(other),
    })
}
