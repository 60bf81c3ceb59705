//! Resolving `--machine NAME|FILE` and `--pin` arguments.

use std::path::Path;

use anyhow::{Context, Result, bail};
use sim::{Machine, Pin};

/// A preset by name, or a TOML file by path.
pub fn load_machine(arg: &str) -> Result<Machine> {
    if let Some(text) = sim::presets::preset(arg) {
        crate::manifest::note_preset("machine", arg, text);
        return Machine::from_toml(text).with_context(|| format!("preset {arg}"));
    }
    let path = Path::new(arg);
    if !path.exists() {
        let names: Vec<&str> = sim::presets::PRESETS.iter().map(|(n, _)| *n).collect();
        bail!(
            "--machine {arg:?}: no such preset ({}) and no such file",
            names.join(", ")
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read machine file", path.display()))?;
    crate::manifest::note_file("machine", path, text.as_bytes());
    Machine::from_toml(&text).with_context(|| format!("{}", path.display()))
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
