//! The valid range of every numeric field of a machine file, written once.
//!
//! Why: a machine file is user input, and a value the model cannot use
//! (a latency of 10³⁰⁰ ns, a bandwidth of 10⁻³⁰⁰ GB/s, a zero count) used
//! to be accepted and give wrong numbers with exit 0 — a mean latency far
//! above the reported maximum. [`visit`] walks every numeric field of a
//! [`MachineSpec`] with its path (`nodes[1].memory.latency_ns`); [`RULES`]
//! gives each field pattern its range and why; [`check`] refuses the first
//! value outside its range in one line naming the path, the value and the
//! range. `docs/machine.md` carries [`table`]'s rendering (a test keeps
//! them equal). Rules that join two fields (a page holds whole lines, a
//! link joins two existing nodes) stay in [`crate::machine`].
//!
//! The bounds keep every derived time within the engines' clocks: a
//! latency under 1 s and a bandwidth of at least 1 MB/s make each step of
//! an access add well under a second, so a run reaches the time horizon
//! (`traces::horizon`) only by running that long, never by one value.

use crate::spec::{CacheSpec, MachineSpec};

/// Largest confirmation count a calibrated prefetcher may need (the
/// prefetchers clamp to it; `policies::prefetch` re-exports it).
pub const MAX_CONFIRM: u8 = 8;

/// Most fills in flight per core a calibrated stride table may be held to
/// from one cache level (`core.prefetch.fills`, `ip-stride-table`'s
/// `f.LEVEL=N`).
pub const MAX_FILLS: u8 = 64;

/// The region streamer's near step (lines): a step this long or shorter
/// continues a stream (`policies`' `stream`); the stride table's fill
/// limits hold only longer strides, as a host's streamer runs the near
/// ones far ahead from its caches; `live` reads the same step off a
/// host's walks.
pub const NEAR_STEP_LINES: u64 = 2;

/// What a field may hold.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    /// A real number in `lo..hi`, each end open or closed, in `unit`.
    Real {
        lo: f64,
        lo_open: bool,
        hi: f64,
        hi_open: bool,
        unit: &'static str,
    },
    /// An integer in `lo..=hi`.
    Int { lo: i128, hi: i128 },
    /// A power of two in `lo..=hi`.
    Pow2 { lo: u64, hi: u64 },
}

/// A latency: from 1 ps (the clock's resolution: a shorter one would be
/// 0) to under 1 s.
const LATENCY: Rule = Rule::Real {
    lo: 1e-3,
    lo_open: false,
    hi: 1e9,
    hi_open: true,
    unit: "ns",
};
/// A latency an access adds on top of another (a link crossed, a
/// cache-to-cache transfer): 0 (an ideal link) to under 1 s.
const ADDED_LATENCY: Rule = Rule::Real {
    lo: 0.0,
    lo_open: false,
    hi: 1e9,
    hi_open: true,
    unit: "ns",
};
/// A bandwidth: 1 MB/s to 100 TB/s.
const BANDWIDTH: Rule = Rule::Real {
    lo: 1e-3,
    lo_open: false,
    hi: 1e5,
    hi_open: false,
    unit: "GB/s",
};
/// A cache's capacity: 16 B to 1 TiB (the geometry rules also apply).
const CACHE_SIZE: Rule = Rule::Int {
    lo: 16,
    hi: 1 << 40,
};
const ASSOC: Rule = Rule::Int { lo: 1, hi: 64 };
const LOOKAHEAD: Rule = Rule::Int { lo: 0, hi: 1 << 16 };
const STRIDE_LINES: Rule = Rule::Int { lo: 0, hi: 1 << 32 };

/// Every numeric field pattern (`[]` for any index) and its rule, in file order.
pub const RULES: &[(&str, Rule)] = &[
    ("line_size", Rule::Pow2 { lo: 16, hi: 256 }),
    (
        "page_size",
        Rule::Pow2 {
            lo: 16,
            hi: 1 << 30,
        },
    ),
    ("c2c_latency_ns", ADDED_LATENCY),
    (
        "core.freq_ghz",
        Rule::Real {
            lo: 0.01,
            lo_open: false,
            hi: 100.0,
            hi_open: false,
            unit: "GHz",
        },
    ),
    ("core.mlp", Rule::Int { lo: 1, hi: 256 }),
    ("core.caches[].size", CACHE_SIZE),
    ("core.caches[].assoc", ASSOC),
    ("core.caches[].latency_ns", LATENCY),
    ("core.l1i.size", CACHE_SIZE),
    ("core.l1i.assoc", ASSOC),
    ("core.l1i.latency_ns", LATENCY),
    (
        "core.prefetch.followed_strides[]",
        Rule::Int {
            lo: -(1 << 32),
            hi: 1 << 32,
        },
    ),
    ("core.prefetch.max_stride_lines", STRIDE_LINES),
    (
        "core.prefetch.unit_speedup",
        Rule::Real {
            lo: 0.0,
            lo_open: false,
            hi: 1e6,
            hi_open: false,
            unit: "",
        },
    ),
    ("core.prefetch.streams", LOOKAHEAD),
    ("core.prefetch.ahead_lines", LOOKAHEAD),
    ("core.prefetch.stride_ahead", LOOKAHEAD),
    ("core.prefetch.reach_lines", STRIDE_LINES),
    ("core.prefetch.far_ahead", LOOKAHEAD),
    (
        "core.prefetch.confirm",
        Rule::Int {
            lo: 1,
            hi: MAX_CONFIRM as i128,
        },
    ),
    (
        "core.prefetch.fills.LEVEL",
        Rule::Int {
            lo: 1,
            hi: MAX_FILLS as i128,
        },
    ),
    (
        "core.tlb.page_size",
        Rule::Pow2 {
            lo: 16,
            hi: 1 << 30,
        },
    ),
    (
        "core.tlb.levels[].entries",
        Rule::Int { lo: 1, hi: 1 << 20 },
    ),
    ("core.tlb.levels[].assoc", ASSOC),
    ("core.tlb.levels[].latency_ns", ADDED_LATENCY),
    ("core.tlb.walk_ns", ADDED_LATENCY),
    ("nodes[].cores", Rule::Int { lo: 0, hi: 255 }),
    ("nodes[].llc.size", CACHE_SIZE),
    ("nodes[].llc.assoc", ASSOC),
    ("nodes[].llc.latency_ns", LATENCY),
    (
        "nodes[].memory.capacity",
        Rule::Int {
            lo: 1 << 12,
            hi: 1 << 50,
        },
    ),
    ("nodes[].memory.channels", Rule::Int { lo: 1, hi: 64 }),
    ("nodes[].memory.channel_gbps", BANDWIDTH),
    ("nodes[].memory.latency_ns", LATENCY),
    (
        "nodes[].memory.interleave",
        Rule::Pow2 {
            lo: 16,
            hi: 1 << 30,
        },
    ),
    (
        "nodes[].accelerators[].count",
        Rule::Int { lo: 1, hi: 1024 },
    ),
    ("nodes[].accelerators[].pcie_gbps", BANDWIDTH),
    (
        "nodes[].accelerators[].memory",
        Rule::Int { lo: 0, hi: 1 << 50 },
    ),
    ("links[].a", Rule::Int { lo: 0, hi: 63 }),
    ("links[].b", Rule::Int { lo: 0, hi: 63 }),
    ("links[].latency_ns", ADDED_LATENCY),
    ("links[].bandwidth_gbps", BANDWIDTH),
];

/// A field's value.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    Real(f64),
    Int(i128),
}

impl Rule {
    /// Whether `v` is in range.
    pub fn holds(&self, v: Value) -> bool {
        match (*self, v) {
            (
                Rule::Real {
                    lo,
                    lo_open,
                    hi,
                    hi_open,
                    ..
                },
                Value::Real(x),
            ) => {
                x.is_finite()
                    && if lo_open { x > lo } else { x >= lo }
                    && if hi_open { x < hi } else { x <= hi }
            }
            (Rule::Int { lo, hi }, Value::Int(x)) => (lo..=hi).contains(&x),
            (Rule::Pow2 { lo, hi }, Value::Int(x)) => {
                (lo as i128..=hi as i128).contains(&x) && (x as u64).is_power_of_two()
            }
            _ => false,
        }
    }
}

/// A number as a reader would write it (`1e9`, `1048576`).
fn num(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e6 || x.abs() < 1e-2) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Rule::Real {
                lo,
                lo_open,
                hi,
                hi_open,
                unit,
            } => {
                let (l, h) = (
                    if lo_open { "<" } else { "≤" },
                    if hi_open { "<" } else { "≤" },
                );
                let unit = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                };
                write!(f, "{} {l} x {h} {}{unit}", num(lo), num(hi))
            }
            Rule::Int { lo, hi } => write!(f, "an integer {lo} ≤ x ≤ {hi}"),
            Rule::Pow2 { lo, hi } => write!(f, "a power of two {lo} ≤ x ≤ {hi}"),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Real(x) => write!(f, "{}", num(x)),
            Value::Int(x) => write!(f, "{x}"),
        }
    }
}

/// The rule of a field pattern (`None`: a pattern [`RULES`] lacks, a bug
/// that the tests catch).
pub fn rule(pattern: &str) -> Option<Rule> {
    RULES.iter().find(|(p, _)| *p == pattern).map(|(_, r)| *r)
}

/// Calls `f(pattern, path, value)` for every numeric field of `spec`.
pub fn visit(spec: &MachineSpec, mut f: impl FnMut(&str, &str, Value)) {
    let int = |x: u64| Value::Int(x as i128);
    f("line_size", "line_size", int(spec.line_size));
    f("page_size", "page_size", int(spec.page_size));
    f(
        "c2c_latency_ns",
        "c2c_latency_ns",
        Value::Real(spec.c2c_latency_ns),
    );
    let c = &spec.core;
    f("core.freq_ghz", "core.freq_ghz", Value::Real(c.freq_ghz));
    f("core.mlp", "core.mlp", int(c.mlp as u64));
    let mut cache = |pat: &str, path: &str, s: &CacheSpec| {
        f(
            &format!("{pat}.size"),
            &format!("{path}.size"),
            int(s.size.0),
        );
        f(
            &format!("{pat}.assoc"),
            &format!("{path}.assoc"),
            int(s.assoc as u64),
        );
        f(
            &format!("{pat}.latency_ns"),
            &format!("{path}.latency_ns"),
            Value::Real(s.latency_ns),
        );
    };
    for (i, s) in c.caches.iter().enumerate() {
        cache("core.caches[]", &format!("core.caches[{i}]"), s);
    }
    if let Some(s) = &c.l1i {
        cache("core.l1i", "core.l1i", s);
    }
    for (i, node) in spec.nodes.iter().enumerate() {
        if let Some(s) = &node.llc {
            cache("nodes[].llc", &format!("nodes[{i}].llc"), s);
        }
    }
    if let Some(p) = &c.prefetch {
        let pf = |name: &str| format!("core.prefetch.{name}");
        for (i, &s) in p.followed_strides.iter().enumerate() {
            f(
                "core.prefetch.followed_strides[]",
                &format!("core.prefetch.followed_strides[{i}]"),
                Value::Int(s as i128),
            );
        }
        for (name, v) in [
            ("max_stride_lines", int(p.max_stride_lines)),
            ("unit_speedup", Value::Real(p.unit_speedup)),
            ("streams", int(p.streams as u64)),
            ("ahead_lines", int(p.ahead_lines as u64)),
            ("stride_ahead", int(p.stride_ahead as u64)),
            ("reach_lines", int(p.reach_lines)),
            ("far_ahead", int(p.far_ahead as u64)),
            ("confirm", int(p.confirm as u64)),
        ] {
            f(&pf(name), &pf(name), v);
        }
        for (level, &n) in &p.fills {
            f(
                "core.prefetch.fills.LEVEL",
                &format!("core.prefetch.fills.{level}"),
                int(n as u64),
            );
        }
    }
    if let Some(t) = &c.tlb {
        f("core.tlb.page_size", "core.tlb.page_size", int(t.page_size));
        for (i, l) in t.levels.iter().enumerate() {
            for (name, v) in [
                ("entries", int(l.entries as u64)),
                ("assoc", int(l.assoc as u64)),
                ("latency_ns", Value::Real(l.latency_ns)),
            ] {
                f(
                    &format!("core.tlb.levels[].{name}"),
                    &format!("core.tlb.levels[{i}].{name}"),
                    v,
                );
            }
        }
        f(
            "core.tlb.walk_ns",
            "core.tlb.walk_ns",
            Value::Real(t.walk_ns),
        );
    }
    for (i, node) in spec.nodes.iter().enumerate() {
        let at = |name: &str| format!("nodes[{i}].{name}");
        f("nodes[].cores", &at("cores"), int(node.cores as u64));
        if let Some(m) = &node.memory {
            for (name, v) in [
                ("capacity", int(m.capacity.0)),
                ("channels", int(m.channels as u64)),
                ("channel_gbps", Value::Real(m.channel_gbps)),
                ("latency_ns", Value::Real(m.latency_ns)),
                ("interleave", int(m.interleave)),
            ] {
                f(
                    &format!("nodes[].memory.{name}"),
                    &at(&format!("memory.{name}")),
                    v,
                );
            }
        }
        for (k, a) in node.accelerators.iter().enumerate() {
            for (name, v) in [
                ("count", int(a.count as u64)),
                ("pcie_gbps", Value::Real(a.pcie_gbps)),
                ("memory", int(a.memory.0)),
            ] {
                f(
                    &format!("nodes[].accelerators[].{name}"),
                    &at(&format!("accelerators[{k}].{name}")),
                    v,
                );
            }
        }
    }
    for (k, l) in spec.links.iter().enumerate() {
        for (name, v) in [
            ("a", int(l.a as u64)),
            ("b", int(l.b as u64)),
            ("latency_ns", Value::Real(l.latency_ns)),
            ("bandwidth_gbps", Value::Real(l.bandwidth_gbps)),
        ] {
            f(&format!("links[].{name}"), &format!("links[{k}].{name}"), v);
        }
    }
}

/// A field outside its range.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RangeError {
    #[error("{path} = {value}: must be {rule}")]
    Outside {
        path: String,
        value: Value,
        rule: Rule,
    },
    #[error("{0}: no range is defined (a numasim bug)")]
    NoRule(String),
}

/// The first field of `spec` outside its range.
pub fn check(spec: &MachineSpec) -> Result<(), RangeError> {
    let mut first = None;
    visit(spec, |pattern, path, value| {
        if first.is_some() {
            return;
        }
        match rule(pattern) {
            Some(r) if r.holds(value) => {}
            Some(rule) => {
                first = Some(RangeError::Outside {
                    path: path.to_string(),
                    value,
                    rule,
                })
            }
            None => first = Some(RangeError::NoRule(path.to_string())),
        }
    });
    first.map_or(Ok(()), Err)
}

/// [`RULES`] as the Markdown table `docs/machine.md` shows.
pub fn table() -> String {
    let mut s = String::from("| field | valid values |\n|---|---|\n");
    for (p, r) in RULES {
        s.push_str(&format!("| `{p}` | {r} |\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibrated host's prefetchers (no preset has them).
    fn prefetch() -> crate::spec::HostPrefetch {
        crate::spec::HostPrefetch {
            detected: true,
            followed_strides: vec![1, -1],
            backward: true,
            crosses_pages: false,
            max_stride_lines: 1,
            unit_speedup: 2.0,
            streams: 1,
            ahead_lines: 1,
            stride_ahead: 1,
            reach_lines: 0,
            far_ahead: 0,
            next_line: false,
            adjacent_line: false,
            confirm: 1,
            fills: [("LLC".to_string(), 3)].into(),
            model: vec![],
            measured: String::new(),
        }
    }

    /// Two TLB levels (`[core.tlb]`, which no preset has).
    fn tlb() -> crate::spec::TlbSpec {
        let level = |name: &str, entries, assoc, latency_ns| crate::spec::TlbLevelSpec {
            name: name.into(),
            entries,
            assoc,
            latency_ns,
        };
        crate::spec::TlbSpec {
            page_size: 4096,
            levels: vec![level("DTLB", 64, 4, 0.0), level("STLB", 1536, 12, 2.0)],
            walk_ns: 10.0,
        }
    }

    #[test]
    fn every_preset_field_has_a_rule_and_every_rule_a_field() {
        let mut seen = std::collections::BTreeSet::new();
        for (name, text) in crate::presets::PRESETS {
            let m = crate::Machine::from_toml(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            visit(&m.spec, |pattern, _, _| {
                assert!(rule(pattern).is_some(), "{pattern} has no rule");
                seen.insert(pattern.to_string());
            });
        }
        // Fields no preset has (an instruction cache, a calibrated
        // prefetcher): a spec that has them.
        let mut spec = crate::Machine::from_toml(crate::presets::PRESETS[0].1)
            .unwrap()
            .spec;
        spec.core.l1i = Some(spec.core.caches[0].clone());
        spec.core.prefetch = Some(prefetch());
        spec.core.tlb = Some(tlb());
        visit(&spec, |pattern, _, _| {
            seen.insert(pattern.to_string());
        });
        for (p, _) in RULES {
            assert!(seen.contains(*p), "rule {p} matches no field");
        }
    }

    /// Every numeric leaf of a spec with every optional part present, as
    /// its serialized TOML has them, is a field [`visit`] reports: a field
    /// added to the spec without a range fails here.
    #[test]
    fn visit_reports_every_numeric_field_of_the_schema() {
        fn leaves(v: &toml::Value, path: String, out: &mut std::collections::BTreeSet<String>) {
            match v {
                toml::Value::Integer(_) | toml::Value::Float(_) => {
                    out.insert(path);
                }
                toml::Value::Array(a) => {
                    for (i, x) in a.iter().enumerate() {
                        leaves(x, format!("{path}[{i}]"), out);
                    }
                }
                toml::Value::Table(t) => {
                    for (k, x) in t {
                        let p = if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        };
                        leaves(x, p, out);
                    }
                }
                _ => {}
            }
        }
        let mut spec = crate::Machine::from_toml(crate::presets::preset("dgx-a100-2numa").unwrap())
            .unwrap()
            .spec;
        assert!(!spec.nodes[0].accelerators.is_empty() && !spec.links.is_empty());
        spec.core.l1i = Some(spec.core.caches[0].clone());
        spec.core.prefetch = Some(prefetch());
        spec.core.tlb = Some(tlb());
        let mut want = std::collections::BTreeSet::new();
        leaves(
            &toml::Value::try_from(&spec).unwrap(),
            String::new(),
            &mut want,
        );
        let mut got = std::collections::BTreeSet::new();
        visit(&spec, |_, path, _| {
            got.insert(path.to_string());
        });
        assert_eq!(got, want);
    }

    #[test]
    fn ranges_hold_at_their_ends_and_refuse_past_them() {
        let lat = rule("nodes[].memory.latency_ns").unwrap();
        assert!(!lat.holds(Value::Real(0.0)));
        assert!(!lat.holds(Value::Real(9.9e-4)), "under 1 ps rounds to 0");
        assert!(lat.holds(Value::Real(1e-3)));
        assert!(lat.holds(Value::Real(999_999_999.9)));
        assert!(!lat.holds(Value::Real(1e9)));
        assert!(!lat.holds(Value::Real(f64::NAN)));
        let bw = rule("links[].bandwidth_gbps").unwrap();
        assert!(bw.holds(Value::Real(1e-3)) && bw.holds(Value::Real(1e5)));
        assert!(!bw.holds(Value::Real(9.99e-4)) && !bw.holds(Value::Real(1.0001e5)));
        let line = rule("line_size").unwrap();
        assert!(line.holds(Value::Int(64)) && !line.holds(Value::Int(96)));
        assert!(!line.holds(Value::Int(512)));
        assert_eq!(
            lat.to_string(),
            "1e-3 ≤ x < 1e9 ns",
            "the words an error and the docs use"
        );
    }
}
