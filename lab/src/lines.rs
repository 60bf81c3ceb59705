//! A request-model experiment at line level: each seed's requests become a
//! task trace ([`traces::workload_lines`]: same arrivals, shards, items
//! and compute noise); the flow model's workers become threads pinned to
//! cores of the same nodes; each shard's region is homed where the flow
//! model homes the shard's data; every row's scheduler dispatches the
//! tasks through the caches, directory, channels and links. The mapping:
//! `docs/fidelity.md`.

use analysis::compare::RunResult;
use traces::workload_lines::LineLayout;

use crate::experiment::{Experiment, RowSpec};

use crate::tasks::{Replay, TaskRunError, replay, run_result};

/// Where shard 0's region starts (above anything a recorded trace uses).
pub const BASE: u64 = 1 << 40;

/// Line reads a request may take at line level before its items are
/// scaled down ([`scale`]).
pub const MAX_READS_PER_REQUEST: u64 = 1024;

/// Line accesses (requests' reads and background jobs') a seed may take
/// at line level before its duration is cut ([`scale`]): about 10 s of
/// one core's replay.
pub const MAX_ACCESSES_PER_SEED: f64 = 2.5e7;

/// How a workload was scaled to run at line level.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// Items and background sweeps were divided by it.
    pub factor: u64,
    /// Item size before and after (KiB).
    pub item_kb: (f64, f64),
    /// Background sweep before and after (GB), if there is one.
    pub sweep_gb: Option<(f64, f64)>,
    /// Duration before and after (s), if it was cut.
    pub duration_s: Option<(f64, f64)>,
    /// Shard moves' times before and after (s), at the same share of
    /// the cut duration.
    pub moves_s: Vec<(f64, f64)>,
}

impl std::fmt::Display for Scaling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "scaled for the line model:")?;
        let mut sep = "";
        if self.factor > 1 {
            let (a, b) = self.item_kb;
            write!(f, " feature items {a} KiB → {b} KiB")?;
            if let Some((a, b)) = self.sweep_gb {
                write!(f, " and background sweeps {a} GB → {b} GB")?;
            }
            write!(f, " (÷{})", self.factor)?;
            sep = ";";
        }
        if let Some((a, b)) = self.duration_s {
            write!(f, "{sep} duration {a} s → {b} s")?;
        }
        for (a, b) in &self.moves_s {
            write!(f, ", shard move at {a} s → {b} s")?;
        }
        Ok(())
    }
}

/// Scales `w` to what the line model runs in reasonable time, the same
/// way every time: feature items (and background sweeps, which are sized
/// against them) halved until a request reads at most
/// [`MAX_READS_PER_REQUEST`] lines, then the duration cut to whole tenths
/// of a second so that a seed takes at most [`MAX_ACCESSES_PER_SEED`] line
/// accesses at the workload's `qps` (a recorded log's duration is kept),
/// and shard moves kept at the same share of it (to whole ms).
/// `None` when `w` runs as given.
pub fn scale(w: &mut traces::workload::WorkloadSpec) -> Option<Scaling> {
    let (lookups, kb) = (w.request.features.lookups, w.request.features.item_kb);
    let lines = traces::workload_lines::lines_per_item;
    let per_request = |kb: f64| u64::from(lookups.max(1)) * lines(kb);
    let mut factor = 1u64;
    while per_request(kb / factor as f64) > MAX_READS_PER_REQUEST && lines(kb / factor as f64) > 1 {
        factor *= 2;
    }
    let item_kb = (kb, kb / factor as f64);
    let mut sweep_gb = None;
    w.request.features.item_kb = item_kb.1;
    if let Some(bg) = &mut w.background {
        sweep_gb = Some((bg.sweep_gb, bg.sweep_gb / factor as f64));
        bg.sweep_gb /= factor as f64;
    }
    let mut per_s = w.qps * per_request(item_kb.1) as f64;
    if let Some(bg) = &w.background
        && bg.every_requests > 0
    {
        per_s += w.qps / bg.every_requests as f64 * (bg.sweep_gb * 1e9 / 64.0);
    }
    let mut duration_s = None;
    let logged = matches!(w.arrivals, traces::workload::Arrivals::Log { .. });
    if !logged && per_s * w.duration_s > MAX_ACCESSES_PER_SEED {
        let cut = ((MAX_ACCESSES_PER_SEED / per_s * 10.0).floor() / 10.0).max(0.1);
        duration_s = Some((w.duration_s, cut));
        w.duration_s = cut;
    }
    let mut moves_s = Vec::new();
    if let Some((from, to)) = duration_s {
        for mv in &mut w.moves {
            // To whole ms: the output states it.
            let at = (mv.at_s * to / from * 1e3).round() / 1e3;
            moves_s.push((mv.at_s, at));
            mv.at_s = at;
        }
    }
    (factor > 1 || duration_s.is_some()).then_some(Scaling {
        factor,
        item_kb,
        sweep_gb: sweep_gb.filter(|_| factor > 1),
        duration_s,
        moves_s,
    })
}

/// The flow model's workers as cores: per node, one worker per
/// accelerator (else per core), each on the node's next core.
pub fn flow_worker_cores(m: &sim::Machine) -> Vec<usize> {
    let accel = m.spec.nodes.iter().any(|n| !n.accelerators.is_empty());
    let mut cores = Vec::new();
    for (i, node) in m.spec.nodes.iter().enumerate() {
        let n = if accel {
            node.accelerators.iter().map(|a| a.count as usize).sum()
        } else {
            node.cores as usize
        };
        cores.extend(
            (0..m.core_node.len())
                .filter(|&c| m.core_node[c] as usize == i)
                .take(n),
        );
    }
    cores
}

/// Data homes: shard s's region on the node of worker s mod workers (the
/// flow model's `shard_node`), move i's new copy (region shards + i) on its
/// worker's node; every other page where it is first touched.
struct ShardHomes {
    layout: LineLayout,
    shards: u32,
    page_bits: u32,
    homes: Vec<u32>,
}

impl sim::Placement for ShardHomes {
    fn name(&self) -> String {
        "shard-homes".into()
    }

    fn place(&mut self, page: u64, from: u32, _m: &sim::Machine) -> u32 {
        match self.layout.shard_of(page << self.page_bits, self.shards) {
            Some(s) => self.homes[s as usize],
            None => from,
        }
    }
}

/// Whether `exp`'s workload has a line-level mapping (no background job,
/// no far tier…); `origin` names the experiment in the error.
pub fn check(exp: &Experiment, origin: &str) -> Result<(), crate::LabError> {
    traces::workload_lines::check(&exp.workload).map_err(|e| crate::LabError::LineWorkload {
        origin: origin.to_string(),
        problem: e.problem,
    })
}

/// The row's policies (its preload and warm-up run at line level).
fn policies(
    exp: &Experiment,
    row: &RowSpec,
    seed: u64,
) -> Result<crate::experiment::RowPolicies, TaskRunError> {
    exp.policies(row, seed, None)
        .map_err(|error| TaskRunError::Policy {
            row: row.name.clone(),
            error,
        })
}

/// An experiment mapped onto machine `m` at line level.
pub struct Mapping {
    pub cores: Vec<usize>,
    pub layout: LineLayout,
    /// Shards' homes, then each move's new copy's.
    homes: Vec<u32>,
    page_bits: u32,
    /// The accelerator's PCIe bandwidth: each request's compute includes
    /// its input's transfer at it (infinite: no accelerator).
    pub pcie_gbps: f64,
    /// The request model's batch: its size and fixed cost (ps).
    pub batching: (usize, u64),
}

impl Mapping {
    pub fn new(exp: &Experiment, m: &sim::Machine) -> Mapping {
        let cores = flow_worker_cores(m);
        let page = m.spec.page_size;
        let layout = LineLayout::of(&exp.workload, BASE, page);
        let moved = exp.workload.moves.iter().map(|mv| mv.to_worker as usize);
        let homes: Vec<u32> = (0..exp.workload.shards.count as usize)
            .chain(moved)
            .map(|s| m.core_node[cores[s % cores.len()]])
            .collect();
        let pcie_gbps = m
            .spec
            .nodes
            .iter()
            .find_map(|n| n.accelerators.first())
            .map_or(f64::INFINITY, |a| a.pcie_gbps);
        let r = &exp.workload.request;
        Mapping {
            cores,
            layout,
            homes,
            page_bits: page.trailing_zeros(),
            pcie_gbps,
            batching: (
                r.batch.max(1) as usize,
                traces::workload_lines::batch_fixed_ns(&exp.workload).saturating_mul(1000),
            ),
        }
    }

    /// Seed `seed`'s requests as a task trace.
    pub fn trace(
        &self,
        exp: &Experiment,
        seed: u64,
    ) -> Result<traces::tasks::TaskTrace, traces::TraceError> {
        traces::workload_lines::derive(&exp.workload, seed, &self.layout, self.pcie_gbps)
    }

    /// Seed `seed`'s background jobs, each on the last core of its node
    /// that no worker holds (the request model runs them beside the
    /// workers); a node without such a core is an error.
    pub fn jobs(
        &self,
        m: &sim::Machine,
        exp: &Experiment,
        seed: u64,
    ) -> Result<Vec<(usize, traces::tasks::Task)>, crate::errors::JobsError> {
        let first_id = u32::MAX / 2;
        let buffers = BASE + self.homes.len() as u64 * self.layout.region;
        let shards = exp.workload.shards.count as usize;
        let jobs = traces::workload_lines::jobs(
            &exp.workload,
            seed,
            &self.layout,
            &m.memory_nodes(),
            &self.homes[..shards],
            buffers.next_multiple_of(1 << 30),
            first_id,
        )?;
        jobs.into_iter()
            .map(|(node, job)| {
                let core = (0..m.core_node.len())
                    .rev()
                    .find(|&c| m.core_node[c] == node && !self.cores.contains(&c))
                    .ok_or(crate::errors::JobsError::NoCore { node })?;
                Ok((core, job))
            })
            .collect()
    }

    /// One row on one seed's `trace`: every request's latency in ns. An
    /// oracle preload is told which requests miss from a paired run of
    /// the row without preload.
    pub fn run(
        &self,
        m: &sim::Machine,
        exp: &Experiment,
        row: &RowSpec,
        seed: u64,
        trace: &traces::tasks::TaskTrace,
    ) -> Result<RunResult, TaskRunError> {
        let preload = self.preload(m, exp, row, seed, trace)?;
        let r = self.replay(m, exp, row, seed, trace, preload)?;
        // At the request model's resolution (whole ns), so the two
        // fidelities' tables compare column by column.
        let lat: Vec<u64> = r.latency_ps.iter().map(|&p| p / 1000 * 1000).collect();
        Ok(run_result(seed, lat, r.span_ps, r.memory_bytes))
    }

    /// The row's preload at line level (`sim::tasks::TaskPreload`), if it has one.
    fn preload(
        &self,
        m: &sim::Machine,
        exp: &Experiment,
        row: &RowSpec,
        seed: u64,
        trace: &traces::tasks::TaskTrace,
    ) -> Result<Option<sim::tasks::TaskPreload>, TaskRunError> {
        if row.preload == "none" {
            return Ok(None);
        }
        let policy = policies(exp, row, seed)?.preload;
        let truth = if policy.oracle() {
            let plain = RowSpec {
                preload: "none".into(),
                ..row.clone()
            };
            let r = self.replay(m, exp, &plain, seed, trace, None)?;
            let share = row
                .miss_share
                .unwrap_or(exp.workload.request.features.miss_share);
            let missed = trace
                .tasks
                .iter()
                .zip(&r.memory_lines)
                .map(|(t, &mem)| sim::tasks::missed(t.accesses.len() as u64, mem, share));
            Some(missed.collect())
        } else {
            None
        };
        let (base, region) = (self.layout.base, self.layout.region);
        sim::tasks::TaskPreload::new(policy, trace.tasks.len(), base, region, truth)
            .map(Some)
            .map_err(|error| TaskRunError::Preload {
                row: row.name.clone(),
                error,
            })
    }

    fn replay(
        &self,
        m: &sim::Machine,
        exp: &Experiment,
        row: &RowSpec,
        seed: u64,
        trace: &traces::tasks::TaskTrace,
        preload: Option<sim::tasks::TaskPreload>,
    ) -> Result<crate::tasks::Replayed, TaskRunError> {
        let placement = Box::new(ShardHomes {
            layout: self.layout,
            shards: self.homes.len() as u32,
            page_bits: self.page_bits,
            homes: self.homes.clone(),
        });
        let how = Replay {
            row: &row.name,
            scheduler: &row.scheduler,
            prefetch: &[],
            mlp: None,
            seed,
            log: &exp.inputs,
            custom: exp.custom.as_deref(),
            batching: self.batching,
            warmed: None,
        };
        let jobs = self
            .jobs(m, exp, seed)
            .map_err(|error| TaskRunError::Jobs {
                row: row.name.clone(),
                error,
            })?;
        let moves = self.moves(exp, row, seed)?;
        let beside = crate::tasks::Beside {
            jobs,
            preload,
            moves,
        };
        replay(m, trace, &self.cores, placement, &how, beside)
    }

    /// The row's shard moves at line level, if it applies the workload's:
    /// move i's key switches to a copy in region `shards + i`, its state
    /// fetched from the far tier (`sim::tasks::Moves`), before the switch
    /// if the row's warm-up prefetches.
    fn moves(
        &self,
        exp: &Experiment,
        row: &RowSpec,
        seed: u64,
    ) -> Result<Option<sim::tasks::Moves>, TaskRunError> {
        let w = &exp.workload;
        if !row.moves || w.moves.is_empty() {
            return Ok(None);
        }
        let warm = policies(exp, row, seed)?.warmup.prefetch_before_traffic();
        let shards = w.shards.count as u64;
        let list = w
            .moves
            .iter()
            .enumerate()
            .map(|(i, mv)| sim::tasks::TaskMove {
                // At the request model's resolution (whole ns).
                at_ps: (mv.at_s * 1e9) as u64 * 1000,
                key: mv.shard,
                to_worker: mv.to_worker as usize,
                shift: (shards + i as u64 - mv.shard as u64) * self.layout.region,
            })
            .collect();
        let store = sim::tasks::ObjectStore {
            latency_ps: (w.far_tier.latency_ms * 1e9) as u64,
            // GB/s is bytes per ns.
            bytes_per_ps: w.far_tier.bandwidth_gbps / 1e3,
            state_bytes: (w.shards.state_mb * 1e6) as u64,
        };
        Ok(Some(sim::tasks::Moves::new(list, store, warm)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed experiment's workload, scaled by hand: 32 lookups of
    /// 128 KiB are 32 × 2048 line reads; halved six times, 1024. Then
    /// 5000 requests/s × 1024 reads + 2 jobs/s × 0.125 GB / 64 B =
    /// 9 026 250 accesses a second, so 2.5e7 fit in 2.77 s: cut to 2.7 s,
    /// and the move at 6 s of 10 to 6 × 2.7 / 10 = 1.62 s.
    #[test]
    fn the_seed_workload_scales_as_computed_by_hand() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/seed-inference.toml"
        );
        let mut w = Experiment::load(std::path::Path::new(path))
            .unwrap()
            .workload;
        let s = scale(&mut w).unwrap();
        assert_eq!(s.factor, 64);
        assert_eq!(w.request.features.item_kb, 2.0);
        assert_eq!(w.background.as_ref().unwrap().sweep_gb, 0.125);
        assert_eq!(s.duration_s, Some((10.0, 2.7)));
        assert_eq!(s.moves_s, vec![(6.0, 1.62)]);
        assert_eq!(w.moves[0].at_s, 1.62);
        assert_eq!(
            s.to_string(),
            "scaled for the line model: feature items 128 KiB → 2 KiB and background sweeps 8 GB → 0.125 GB (÷64); duration 10 s → 2.7 s, shard move at 6 s → 1.62 s"
        );
        // What already fits runs as given.
        assert_eq!(scale(&mut w.clone()), None);
    }
}
