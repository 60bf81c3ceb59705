//! `numasim machine list|show`.

use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::machines::load_machine;

#[derive(Subcommand, Debug)]
pub enum MachineCmd {
    /// List the built-in machine presets.
    List,
    /// Describe a machine (preset name or TOML file).
    Show(ShowArgs),
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Preset name or path to a machine TOML file.
    pub machine: String,
    /// Print JSON (the spec plus the derived "distance" matrix and routes).
    #[arg(long, conflicts_with = "toml")]
    pub json: bool,
    /// Print TOML that `--machine FILE` accepts back.
    #[arg(long)]
    pub toml: bool,
}

pub fn run(cmd: MachineCmd) -> Result<()> {
    match cmd {
        MachineCmd::List => {
            for (name, text) in sim::presets::PRESETS {
                let m = sim::Machine::from_toml(text)?;
                println!("{name:<16} {}", m.spec.description);
            }
            Ok(())
        }
        MachineCmd::Show(a) => {
            let m = load_machine(&a.machine, &lab::InputLog::default())?;
            if a.toml {
                print!("{}", m.to_toml());
            } else if a.json {
                let routes: Vec<Vec<Vec<usize>>> = m.route.clone();
                let v = json!({
                    "spec": m.spec,
                    "cores": m.cores(),
                    "core_node": m.core_node,
                    "distance": m.distance,
                    "route_links": routes,
                    "route_latency_ns": m.route_ps.iter().map(|r| r.iter().map(|p| *p as f64 / 1000.0).collect::<Vec<_>>()).collect::<Vec<_>>(),
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print!("{m}");
            }
            Ok(())
        }
    }
}
