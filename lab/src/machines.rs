//! A machine by built-in preset name or TOML file, noted in the run's
//! input log.

use std::path::Path;

use sim::Machine;

use crate::{InputLog, LabError};

/// A preset by name, or a TOML file by path.
pub fn load(arg: &str, log: &InputLog) -> Result<Machine, LabError> {
    if let Some(text) = sim::presets::preset(arg) {
        log.note_preset("machine", arg, text);
        return Machine::from_toml(text).map_err(|error| LabError::Machine {
            origin: format!("preset {arg}"),
            error,
        });
    }
    let path = Path::new(arg);
    if !path.exists() {
        let names: Vec<&str> = sim::presets::PRESETS.iter().map(|(n, _)| *n).collect();
        return Err(LabError::NoMachine {
            arg: arg.to_string(),
            presets: names.join(", "),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|error| LabError::Read {
        path: path.display().to_string(),
        what: "machine file",
        error,
    })?;
    log.note_file("machine", path, text.as_bytes());
    Machine::from_toml(&text).map_err(|error| LabError::Machine {
        origin: path.display().to_string(),
        error,
    })
}
