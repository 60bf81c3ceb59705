//! Page-placement policies: one file each, registered below.

use sim::Placement;

use crate::error::{PolicyError, SpecProblem};
use crate::registry::{Spec, registry};

registry! {
    /// Every placement policy, by name.
    pub static PLACEMENTS: dyn Placement = ("placement", "placements");
    first_touch: [ENTRY],
    interleave: [ENTRY],
    bind: [ENTRY],
    migrate: [ENTRY],
}

/// The one number a spec such as `bind:1` carries (`example`: what the
/// error suggests).
fn number(spec: &Spec, example: &'static str) -> Result<u64, PolicyError> {
    spec.rest.and_then(|a| a.parse().ok()).ok_or_else(|| {
        spec.error(
            "placement",
            SpecProblem::NeedsNumber {
                name: spec.name.to_string(),
                example,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Ctx;
    use sim::Machine;

    fn create(name: &str, m: &Machine) -> Result<Box<dyn Placement>, PolicyError> {
        PLACEMENTS.build(name, &Ctx::for_machine(m))
    }

    fn xeon() -> Machine {
        Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap()
    }

    #[test]
    fn names_resolve_and_bad_names_explain() {
        let m = xeon();
        assert_eq!(create("first-touch", &m).unwrap().name(), "first-touch");
        assert_eq!(create("bind:1", &m).unwrap().name(), "bind:1");
        assert_eq!(create("migrate:8", &m).unwrap().name(), "migrate:8");
        let err = |n: &str| {
            create(n, &m)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err("bind:2").contains("node 2 has no memory"));
        assert!(err("bind").contains("needs a number"));
        assert_eq!(
            err("nearest"),
            "unknown placement \"nearest\"; expected one of first-touch, interleave, bind:N, migrate:K"
        );
        assert!(err("migrate:0").contains("K must be"));
        assert!(err("interleave:2").contains("takes no arguments"));
    }
}
