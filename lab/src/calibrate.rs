//! A host's measurements → a calibrated machine description.
//!
//! [`measure`] runs the measurements on this host (pinned threads, through
//! `live`): pointer-chase sweeps in 4 KiB and huge pages, every (CPU node,
//! memory node) pair, core-to-core, streaming reads and the prefetcher
//! fingerprint. [`machine`] maps them onto the probed description — a pure
//! function of the measurements, so a recorded set maps the same on any
//! host, and the mapping is tested without one. [`refit`] re-derives the
//! prefetchers from a recorded fingerprint.

use live::LiveError;
use live::calibrate::{Level, Point};
use live::fingerprint::Fingerprint;
use live::sysfs::Topology;
use sim::machine::MachineSpec;

use crate::dependent::ReplayError;

/// What to measure.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Options {
    /// Largest pointer-chase working set (bytes).
    pub max_size: u64,
    /// Dependent loads per point.
    pub loads: u64,
    /// Repeats per point (the median is used).
    pub repeats: usize,
    /// Sweep again in transparent huge pages (the machine's levels then
    /// come from that sweep).
    pub huge_pages: bool,
    /// Working set of the fingerprint's stride walks (bytes).
    pub fingerprint_size: u64,
}

/// A chase from a CPU of one node to memory bound to another.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NodePair {
    pub cpu: u32,
    /// Node ids as the host numbers them.
    pub from: u32,
    pub to: u32,
    /// ns per dependent load over `max_size` bytes.
    pub ns: f64,
    /// One thread's streaming read (GB/s).
    pub gbps: f64,
}

/// Everything [`measure`] measured: the input of [`machine`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct Measurements {
    pub options: Options,
    /// The timestamp counter's rate (GHz) and its source.
    pub tsc_ghz: f64,
    pub tsc_source: String,
    /// The pointer chase in 4 KiB pages, by working-set size.
    pub curve: Vec<Point>,
    /// The same in huge pages, with the share the kernel backed with them.
    pub huge: Option<Vec<(Point, f64)>>,
    /// Every (CPU node, memory node) pair with an allowed CPU.
    pub pairs: Vec<NodePair>,
    /// Core-to-core (CAS ping-pong) between two CPUs, ns.
    pub c2c: Option<(u32, u32, f64)>,
    /// Streaming read bandwidth (GB/s) of 1, 2, … threads.
    pub read_gbps: Vec<f64>,
    pub fingerprint: Fingerprint,
}

/// A calibrated machine and the notes of how (in its `sources` too).
pub struct Calibrated {
    pub machine: sim::Machine,
    /// The levels the machine's latencies came from (huge pages when swept).
    pub levels: Vec<Level>,
    /// The prefetchers' notes, which a front end shows as they are made.
    pub prefetch_notes: Vec<String>,
}

/// A calibration that cannot be mapped.
/// One point of a measured latency curve (`.curve.csv`; `huge_share`
/// only in the huge-page sweep).
#[derive(serde::Serialize, Default)]
struct CurveRow {
    bytes: u64,
    #[serde(serialize_with = "analysis::table::f3")]
    ns: f64,
    #[serde(serialize_with = "analysis::table::f4")]
    spread: f64,
    #[serde(
        serialize_with = "analysis::table::opt_f3",
        skip_serializing_if = "Option::is_none"
    )]
    huge_share: Option<f64>,
}

impl Measurements {
    /// The latency curves as CSV: in base pages, and in huge pages if swept.
    pub fn curves_csv(&self) -> Result<(String, Option<String>), analysis::table::TableError> {
        let rows = |points: &mut dyn Iterator<Item = (&Point, Option<f64>)>| {
            points
                .map(|(p, huge_share)| CurveRow {
                    bytes: p.bytes,
                    ns: p.ns,
                    spread: p.spread,
                    huge_share,
                })
                .collect::<Vec<_>>()
        };
        let base = analysis::table::to_csv(&rows(&mut self.curve.iter().map(|p| (p, None))))?;
        let huge = match &self.huge {
            Some(h) => Some(analysis::table::to_csv(&rows(
                &mut h.iter().map(|(p, s)| (p, Some(*s))),
            ))?),
            None => None,
        };
        Ok((base, huge))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(transparent)]
    Fit(#[from] ReplayError),
    #[error("the {what} machine is not a valid description: {error}")]
    Invalid {
        what: &'static str,
        error: sim::MachineError,
    },
    #[error("{path}: cannot read: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: no fingerprint in it: {error}")]
    NoFingerprint {
        path: String,
        error: serde_json::Error,
    },
}

/// The fingerprint in a `.prefetch.json` that `live calibrate` wrote.
pub fn read_fingerprint(path: &std::path::Path) -> Result<Fingerprint, CalibrateError> {
    let p = || path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|error| CalibrateError::Read { path: p(), error })?;
    #[derive(serde::Deserialize)]
    struct File {
        fingerprint: Fingerprint,
    }
    serde_json::from_str::<File>(&text)
        .map(|f| f.fingerprint)
        .map_err(|error| CalibrateError::NoFingerprint { path: p(), error })
}

/// A latency step: the next plateau is 40 % above the last.
const JUMP: f64 = 0.4;

/// The plateaus of a measured curve.
pub fn levels(curve: &[Point]) -> Vec<Level> {
    live::calibrate::levels(curve, JUMP)
}

/// Measures this host. `t` and `spec` are its probed topology and
/// description (the stride walks run inside its cache levels);
/// `on_point` sees each chase point as it is measured (with the huge-page
/// share in the huge-page sweep). The calling thread is left pinned to
/// the first allowed CPU.
pub fn measure(
    t: &Topology,
    spec: &MachineSpec,
    o: &Options,
    sysfs: &std::path::Path,
    on_point: &mut dyn FnMut(&Point, Option<f64>),
) -> Result<Measurements, LiveError> {
    let cpus = live::os::allowed_cpus()?;
    live::os::pin_current_thread(cpus[0])?;
    let sizes = live::calibrate::sizes(o.max_size);
    let mut curve = Vec::new();
    for (i, &s) in sizes.iter().enumerate() {
        let p = live::calibrate::chase(s, o.loads, o.repeats, 0xC0FFEE + i as u64)?;
        on_point(&p, None);
        curve.push(p);
    }
    let mut huge = None;
    if o.huge_pages {
        let mut hc = Vec::new();
        for (i, &s) in sizes.iter().enumerate() {
            let (p, share) =
                live::calibrate::chase_huge(s, o.loads, o.repeats, 0xC0FFEE + i as u64)?;
            on_point(&p, Some(share));
            hc.push((p, share));
        }
        huge = Some(hc);
    }
    let mut pairs = Vec::new();
    for (from, node_cpus) in &t.nodes {
        let Some(&cpu) = node_cpus.iter().find(|c| cpus.contains(c)) else {
            continue;
        };
        for (to, _) in &t.nodes {
            let (p, gbps) =
                live::calibrate::node_pair(cpu, *to, o.max_size, o.loads, o.repeats, sysfs)?;
            pairs.push(NodePair {
                cpu,
                from: *from,
                to: *to,
                ns: p.ns,
                gbps,
            });
        }
    }
    live::os::pin_current_thread(cpus[0])?;
    let c2c = if cpus.len() >= 2 {
        let ns = live::calibrate::core_to_core(cpus[0], cpus[1], 200_000)?;
        Some((cpus[0], cpus[1], ns))
    } else {
        None
    };
    let read_gbps = (1..=cpus.len().min(4))
        .map(|k| live::calibrate::read_bandwidth(&cpus[..k], 256 << 20, 3))
        .collect::<Result<Vec<_>, _>>()?;
    // The host's prefetchers: stride walks against a random chase, then the
    // same walks inside each cache level, L1 included (at half its
    // modelled size, so after the levels are mapped), recorded beside them.
    let mut fp =
        live::fingerprint::fingerprint(o.fingerprint_size, o.loads.min(400_000), o.repeats, 0xF1)?;
    let rate = live::tsc::rate();
    let mut m = Measurements {
        options: o.clone(),
        tsc_ghz: rate.ghz,
        tsc_source: rate.source.to_string(),
        curve,
        huge,
        pairs,
        c2c,
        read_gbps,
        fingerprint: fp.clone(),
    };
    let mut sized = spec.clone();
    map_levels(&mut sized, &m);
    let sets: Vec<(String, u64)> = sized
        .core
        .caches
        .iter()
        .chain(sized.nodes.iter().filter_map(|n| n.llc.as_ref()).take(1))
        .map(|c| (c.name.clone(), c.size.0 / 2))
        .filter(|(_, b)| *b >= 64 * 64)
        .collect();
    fp.levels = live::fingerprint::level_walks(&sets, o.loads.min(200_000), o.repeats, 0xF2)?;
    // The TLBs: one line a page, the data in L1 or L2 (`tlb_fit`).
    fp.pages = live::fingerprint::page_walks(o.loads.min(200_000), o.repeats, 0xF3)?;
    m.fingerprint = fp;
    Ok(m)
}

/// The chase sweep's levels mapped onto `spec`'s caches and memory: from
/// the huge-page sweep when there is one (as validate replays), else from
/// the 4 KiB one. Returns the notes.
fn map_levels(spec: &mut MachineSpec, m: &Measurements) -> Vec<String> {
    let levels4k = levels(&m.curve);
    let Some(huge) = &m.huge else {
        return live::calibrate::apply(spec, &m.curve, &levels4k);
    };
    let hc: Vec<Point> = huge.iter().map(|h| h.0).collect();
    let hl = levels(&hc);
    let mut notes = vec![
        format!(
            "pointer chase in transparent huge pages: levels {} (4 KiB pages: {})",
            hl.iter()
                .map(|l| format!("{:.1} ns up to {} B", l.ns, l.capacity))
                .collect::<Vec<_>>()
                .join(", "),
            levels4k
                .iter()
                .map(|l| format!("{:.1} ns", l.ns))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "the machine's levels come from the huge-page sweep (validate replays in huge pages)"
            .to_string(),
    ];
    notes.extend(live::calibrate::apply_huge(spec, &hc, &hl));
    notes
}

/// Rounds to 0.1.
fn tenth(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `m` mapped onto the probed `spec` of the host with topology `t`:
/// levels and memory latency from the chase, links from the node pairs
/// (remote − local latency, the remote pair's bandwidth), the
/// cache-to-cache latency, `core.mlp` by Little's law, channel bandwidth,
/// and the prefetchers from the fingerprint (`measured` names its file).
/// `pages_note` says how the pages were chosen, when that needs saying.
pub fn machine(
    mut spec: MachineSpec,
    t: &Topology,
    m: &Measurements,
    pages_note: Option<String>,
    measured: &str,
) -> Result<Calibrated, CalibrateError> {
    let o = &m.options;
    let levels4k = levels(&m.curve);
    let mut notes = vec![format!(
        "calibrated by numasim live calibrate: pointer chase {} loads × {} repeats per size (median), TSC at {:.3} GHz ({}); levels {}",
        o.loads,
        o.repeats,
        m.tsc_ghz,
        m.tsc_source,
        levels4k
            .iter()
            .map(|l| format!("{:.1} ns up to {} B", l.ns, l.capacity))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    notes.extend(pages_note);
    let nominal = spec.clone();
    notes.extend(map_levels(&mut spec, m));
    // The TLBs first, so that the LLC fitted to the chase and memory's
    // latency are what is left once translation is paid (`tlb_fit`).
    let tlb = crate::tlb_fit::fit(&spec, &m.fingerprint.pages)?;
    notes.push(tlb.note);
    if let Some(t) = tlb.tlb {
        // The chase's memory plateau walks on every load when its pages
        // outnumber the last level's entries; memory's own latency is
        // then what is left, unless that would not lie above every cache's.
        let reach = t
            .levels
            .last()
            .map_or(0, |l| l.entries as u64 * t.page_size);
        let biggest = m.curve.last().map_or(0, |p| p.bytes);
        let slowest_cache = spec
            .core
            .caches
            .iter()
            .chain(spec.nodes.iter().filter_map(|n| n.llc.as_ref()))
            .map(|c| c.latency_ns)
            .fold(0.0, f64::max);
        for mem in spec.nodes.iter_mut().filter_map(|n| n.memory.as_mut()) {
            let chased = mem.latency_ns;
            let net = tenth(chased - t.walk_ns);
            if biggest > reach && net > slowest_cache {
                mem.latency_ns = net;
                notes.push(format!(
                    "memory latency {net:.1} ns: the chase's {chased:.1} ns less a walk's {:.1} ns (its {biggest} B outnumber the STLB's reach of {reach} B)",
                    t.walk_ns
                ));
            } else {
                notes.push(format!(
                    "memory latency kept at the chase's {chased:.1} ns (its {biggest} B against the STLB's reach of {reach} B; less a walk it would be {net:.1} ns, the slowest cache {slowest_cache:.1} ns)"
                ));
            }
        }
        spec.core.tlb = Some(t);
    }
    // The chase the levels came from decides the frames (`frames_fit`).
    let chased: Vec<Point> = match &m.huge {
        Some(h) => h.iter().map(|h| h.0).collect(),
        None => m.curve.clone(),
    };
    let frames = crate::frames_fit::fit(&spec, &nominal, &chased)?;
    spec = frames.spec;
    notes.push(frames.note);
    let mut pair = std::collections::BTreeMap::new();
    for p in &m.pairs {
        notes.push(format!(
            "cpu {} (node {}) to memory of node {} (mbind): {:.1} ns over {} B, {:.1} GB/s one thread",
            p.cpu, p.from, p.to, p.ns, o.max_size, p.gbps
        ));
        pair.insert((p.from, p.to), (p.ns, p.gbps));
    }
    for l in spec.links.iter_mut() {
        let ids = (t.nodes[l.a as usize].0, t.nodes[l.b as usize].0);
        if let (Some(&(remote, gbps)), Some(&(local, _))) =
            (pair.get(&ids), pair.get(&(ids.0, ids.0)))
        {
            l.latency_ns = tenth((remote - local).max(0.0));
            l.bandwidth_gbps = tenth(gbps);
        }
    }
    if let Some((a, b, c2c)) = m.c2c {
        notes.push(format!(
            "core-to-core (CAS ping-pong, cpus {a} and {b}): {c2c:.1} ns"
        ));
        spec.c2c_latency_ns = tenth(c2c);
    }
    for (i, gbps) in m.read_gbps.iter().enumerate() {
        notes.push(format!(
            "streaming read, {} thread(s): {gbps:.1} GB/s",
            i + 1
        ));
    }
    let best = m.read_gbps.iter().copied().fold(0.0f64, f64::max);
    let one = m.read_gbps.first().copied().unwrap_or(0.0);
    // One core's misses in flight, by Little's law: its streaming bandwidth
    // × memory latency / line size.
    let dram_ns = spec
        .nodes
        .iter()
        .find_map(|n| n.memory.as_ref().map(|m| m.latency_ns))
        .unwrap_or(0.0);
    let mlp = (one * dram_ns / spec.line_size as f64)
        .round()
        .clamp(1.0, 64.0);
    if one > 0.0 && dram_ns > 0.0 {
        notes.push(format!(
            "core.mlp = {one:.1} GB/s × {dram_ns:.1} ns / {} B = {mlp} lines in flight (Little's law)",
            spec.line_size
        ));
        spec.core.mlp = mlp as u32;
    }
    for n in spec.nodes.iter_mut() {
        if let Some(mem) = n.memory.as_mut() {
            mem.channel_gbps = tenth(best);
        }
    }
    for l in &m.fingerprint.levels {
        let unit = live::fingerprint::unit_walk(&l.walks).unwrap_or(0.0);
        let max = l.walks.iter().map(|w| w.1).fold(0.0, f64::max);
        notes.push(format!(
            "stride walks inside {} ({} B): a random chase {:.1} ns, a unit-stride walk {unit:.1} ns, the slowest stride {max:.1} ns",
            l.level, l.bytes, l.random_ns
        ));
    }
    let prefetch_notes = prefetch_model(&mut spec, &m.fingerprint, measured)?;
    notes.extend(prefetch_notes.iter().cloned());
    spec.sources.extend(notes);
    let checked = sim::Machine::new(spec).map_err(|error| CalibrateError::Invalid {
        what: "calibrated",
        error,
    })?;
    let levels = match &m.huge {
        Some(h) => levels(&h.iter().map(|h| h.0).collect::<Vec<_>>()),
        None => levels4k,
    };
    Ok(Calibrated {
        machine: checked,
        levels,
        prefetch_notes,
    })
}

/// The sources notes of [`prefetch_model`] (each starts so) that a refit
/// replaces; "core.mlp raised to" stays, as the raised `core.mlp` does.
const PREFETCH_NOTES: [&str; 4] = [
    "Prefetchers (",
    "prefetchers' confirmation count",
    "stride table's fills from ",
    "Prefetched lines land",
];

/// The note on where prefetched lines land ([`live::fingerprint::landing`],
/// against `spec`'s latencies); `None` when no set's unit walk is followed.
fn landing_note(spec: &MachineSpec, fp: &Fingerprint) -> Option<String> {
    let node = spec.nodes.first();
    let levels: Vec<(String, f64)> = spec
        .core
        .caches
        .iter()
        .chain(node.and_then(|n| n.llc.as_ref()))
        .map(|c| (c.name.clone(), c.latency_ns))
        .chain(
            node.and_then(|n| n.memory.as_ref())
                .map(|m| ("memory".to_string(), m.latency_ns)),
        )
        .collect();
    let sets: Vec<String> = live::fingerprint::landing(fp, &levels)
        .iter()
        .map(|l| {
            format!(
                "{} ({} B): {:.1} ns, {}",
                l.set, l.bytes, l.walk_ns, l.level
            )
        })
        .collect();
    (!sets.is_empty()).then(|| {
        format!(
            "Prefetched lines land (the unit-stride walk against the nearest level's latency) at: {}",
            sets.join("; ")
        )
    })
}

/// The host's prefetchers from a fingerprint into `spec`: the verdict and
/// its model (`live::fingerprint::apply`), `core.mlp` at least the unit
/// walk's lookahead, the confirmation count fitted to the ramp walks
/// ([`crate::confirm_fit`]), the stride table's fills in flight from each
/// cache level fitted to the ascending walks inside it
/// ([`crate::fill_fit`]); returns the notes for its sources.
fn prefetch_model(
    spec: &mut MachineSpec,
    fp: &Fingerprint,
    measured: &str,
) -> Result<Vec<String>, ReplayError> {
    let mut notes = vec![live::fingerprint::apply(spec, fp, measured)];
    notes.extend(landing_note(spec, fp));
    // The unit-stride walk is a second Little's-law reading of the lines a
    // core keeps in flight (its prefetches' lookahead): the larger one
    // stands (a noisy streaming read must not cap the prefetch queue below
    // what the walk showed).
    let ahead = live::fingerprint::verdict(fp).ahead_lines;
    if ahead > spec.core.mlp {
        notes.push(format!(
            "core.mlp raised to {ahead}: the unit-stride walk kept that many lines in flight (random chase / walk)"
        ));
        spec.core.mlp = ahead;
    }
    // Each fit's note, with the model it leaves.
    let modelled = |spec: &MachineSpec, note: &str| {
        let model = spec.core.prefetch.as_ref().map(|p| p.model.join(" "));
        format!("{note}; modelled as {}", model.unwrap_or_default())
    };
    if let Some(fit) = crate::confirm_fit::fit(spec, fp)? {
        live::fingerprint::apply_confirm(spec, fp, fit.confirm);
        notes.push(modelled(spec, &fit.note));
    }
    for fit in crate::fill_fit::fit(spec, fp)? {
        live::fingerprint::apply_fills(spec, fp, &fit.level, fit.fills);
        notes.push(modelled(spec, &fit.note));
    }
    Ok(notes)
}

/// A calibrated machine's prefetchers re-derived from its recorded
/// fingerprint (`measured` names the fingerprint's file when the machine
/// does not): the old prefetcher notes replaced by the new. Returns the
/// machine and the new notes.
pub fn refit(
    mut spec: MachineSpec,
    fp: &Fingerprint,
    measured: &str,
) -> Result<(sim::Machine, Vec<String>), CalibrateError> {
    spec.sources
        .retain(|n| !PREFETCH_NOTES.iter().any(|p| n.starts_with(p)));
    let name = spec
        .core
        .prefetch
        .as_ref()
        .map(|p| p.measured.clone())
        .unwrap_or_else(|| measured.to_string());
    let notes = prefetch_model(&mut spec, fp, &name)?;
    spec.sources.extend(notes.iter().cloned());
    let checked = sim::Machine::new(spec).map_err(|error| CalibrateError::Invalid {
        what: "re-derived",
        error,
    })?;
    Ok((checked, notes))
}
