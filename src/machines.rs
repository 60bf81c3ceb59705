//! Resolving `--machine NAME|FILE` (through `lab::machines`) and `--pin` arguments.

use anyhow::{Result, anyhow};
use sim::{Machine, Pin};

/// A preset by name, or a TOML file by path, noted in `log`.
pub fn load_machine(arg: &str, log: &lab::InputLog) -> Result<Machine> {
    lab::machines::load(arg, log).map_err(|e| match e {
        lab::LabError::NoMachine { arg, presets } => {
            anyhow!("--machine {arg:?}: no such preset ({presets}) and no such file")
        }
        other => anyhow!(other),
    })
}

/// `compact`, `spread`, or `T=CORE,T=CORE,...`.
pub fn parse_pin(s: &str) -> Result<Pin, String> {
    match s {
        "compact" => Ok(Pin::Compact),
        "spread" => Ok(Pin::Spread),
        _ => {
            let mut pairs = Vec::new();
            for part in s.split(',') {
                let (t, c) = part.split_once('=').ok_or_else(|| {
                    format!("--pin {s:?}: expected compact, spread or T=CORE,... (e.g. 0=0,1=28)")
                })?;
                let t: u32 = t
                    .trim()
                    .parse()
                    .map_err(|_| format!("--pin: bad thread id {t:?}"))?;
                let c: u32 = c
                    .trim()
                    .parse()
                    .map_err(|_| format!("--pin: bad core {c:?}"))?;
                pairs.push((t, c));
            }
            Ok(Pin::Explicit(pairs))
        }
    }
}
