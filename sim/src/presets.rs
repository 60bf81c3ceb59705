//! Built-in machine presets: the TOML files under `sim/machines/`, compiled in
//! so `--machine NAME` works with no file at hand.

/// (name, TOML text) of every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("xeon-2s", include_str!("../machines/xeon-2s.toml")),
    ("epyc-4numa", include_str!("../machines/epyc-4numa.toml")),
    (
        "dgx-a100-2numa",
        include_str!("../machines/dgx-a100-2numa.toml"),
    ),
    ("cxl-tiered", include_str!("../machines/cxl-tiered.toml")),
    ("one-channel", include_str!("../machines/one-channel.toml")),
];

/// The TOML of a preset.
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;

    #[test]
    fn every_preset_loads_round_trips_and_names_itself() {
        for (name, text) in PRESETS {
            let m = Machine::from_toml(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.spec.name, *name);
            assert!(!m.spec.sources.is_empty(), "{name} cites its sources");
            let again = Machine::from_toml(&m.to_toml()).unwrap();
            assert_eq!(again.spec, m.spec, "{name} round-trips through TOML");
        }
    }

    #[test]
    fn distances_derive_from_links() {
        let m = Machine::from_toml(preset("xeon-2s").unwrap()).unwrap();
        // 10 × (81 + 58) / 81 = 17.16 → 17.
        assert_eq!(m.distance, vec![vec![10, 17], vec![17, 10]]);
        let e = Machine::from_toml(preset("epyc-4numa").unwrap()).unwrap();
        // Adjacent 10 × (92 + 13) / 92 = 11.4 → 11; diagonal 10 × 112 / 92 = 12.2 → 12.
        assert_eq!(e.distance[0], vec![10, 11, 11, 12]);
        assert_eq!(
            e.route[0][3],
            vec![4],
            "the direct diagonal link is the fastest route"
        );
        let c = Machine::from_toml(preset("cxl-tiered").unwrap()).unwrap();
        assert_eq!(c.cpu_nodes(), vec![0]);
        assert_eq!(c.memory_nodes(), vec![0, 1]);
        // From node 0: 10 × (90 + 140) / 110 = 20.9 → 21.
        assert_eq!(c.distance[0][1], 21);
    }
}
