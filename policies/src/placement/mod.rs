//! Page-placement policies, registered by name.

mod bind;
mod first_touch;
mod interleave;
mod migrate;

pub use bind::Bind;
pub use first_touch::FirstTouch;
pub use interleave::Interleave;
pub use migrate::MigrateOnRemote;

use sim::{Machine, Placement};

use crate::PolicyError;

/// Names accepted by [`create`], with what they mean.
pub const NAMES: &[(&str, &str)] = &[
    (
        "first-touch",
        "a page lives on the node of the core that touches it first (Linux default)",
    ),
    (
        "interleave",
        "pages round-robin over the nodes with memory, in order of first touch (numactl --interleave=all)",
    ),
    ("bind:N", "every page on node N (numactl --membind=N)"),
    (
        "migrate:K",
        "first touch, then move a page to a node whose cores read it from memory remotely K times (AutoNUMA-like)",
    ),
];

/// Builds a placement policy from its name, checked against the machine.
pub fn create(name: &str, machine: &Machine) -> Result<Box<dyn Placement>, PolicyError> {
    let (base, arg) = match name.split_once(':') {
        Some((b, a)) => (b, Some(a)),
        None => (name, None),
    };
    let num = |what: &str| -> Result<u64, PolicyError> {
        arg.and_then(|a| a.parse().ok()).ok_or_else(|| {
            PolicyError(format!(
                "placement {name:?}: {base} needs a number, e.g. {base}:{what}"
            ))
        })
    };
    let p: Box<dyn Placement> = match base {
        "first-touch" if arg.is_none() => Box::new(FirstTouch),
        "interleave" if arg.is_none() => Box::new(Interleave::default()),
        "bind" => {
            let node = num("1")? as u32;
            let mem = machine.memory_nodes();
            if !mem.contains(&node) {
                return Err(PolicyError(format!(
                    "placement {name:?}: node {node} has no memory (memory nodes: {mem:?})"
                )));
            }
            Box::new(Bind(node))
        }
        "migrate" => {
            let k = num("64")?;
            if k == 0 {
                return Err(PolicyError(format!(
                    "placement {name:?}: K must be at least 1"
                )));
            }
            Box::new(MigrateOnRemote::new(k as u32))
        }
        _ => {
            let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            return Err(PolicyError(format!(
                "unknown placement {name:?}; expected one of {}",
                names.join(", ")
            )));
        }
    };
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xeon() -> Machine {
        Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap()
    }

    #[test]
    fn names_resolve_and_bad_names_explain() {
        let m = xeon();
        assert_eq!(create("first-touch", &m).unwrap().name(), "first-touch");
        assert_eq!(create("bind:1", &m).unwrap().name(), "bind:1");
        assert_eq!(create("migrate:8", &m).unwrap().name(), "migrate:8");
        let err = |n: &str| create(n, &m).err().map(|e| e.0).unwrap_or_default();
        assert!(err("bind:2").contains("node 2 has no memory"));
        assert!(err("bind").contains("needs a number"));
        assert!(err("nearest").contains("unknown placement"));
    }
}
