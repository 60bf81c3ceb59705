//! `numasim compare EXPERIMENT.toml --fidelity lines`: a request-model
//! experiment run by the line-level task engine instead of the flow
//! model. Each seed's requests become a task trace
//! ([`traces::workload_lines`]: same arrivals, shards, items and compute
//! noise); the flow model's workers become threads pinned to cores of the
//! same nodes; each shard's region is homed where the flow model homes the
//! shard's data; every row's scheduler dispatches the tasks through the
//! caches, directory, channels and links. Results are in ms, in the flow
//! run's table and `compare.csv` form, so the two fidelities compare
//! column by column. The mapping: `docs/fidelity.md`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;
use serde_json::json;

use analysis::compare::{self, RunResult};
use traces::workload_lines::{LineLayout, derive};

use crate::experiment::{Experiment, RowSpec, write_latency_plots};
use crate::output::{ensure_dir, write_file, write_json};
use crate::task_runs::{Replay, replay_tasks};

/// Where shard 0's region starts (above anything a recorded trace uses).
const BASE: u64 = 1 << 40;

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
/// flow model's `shard_node`); every other page where it is first touched.
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

/// Rows the line model can run: no shard moves, no preload.
fn mappable(row: &RowSpec) -> bool {
    !row.moves && row.preload == "none"
}

pub fn run(
    exp: &Experiment,
    path: &Path,
    out: Option<&Path>,
    threads: Option<usize>,
    rec: &crate::manifest::Record,
) -> Result<()> {
    let origin = path.display().to_string();
    traces::workload_lines::check(&exp.workload)
        .map_err(|e| anyhow::anyhow!("{origin}: {}", e.problem))?;
    let m = crate::machines::load_machine(&exp.workload.machine, &exp.inputs)?;
    let cores = flow_worker_cores(&m);
    let rows: Vec<&RowSpec> = exp.row.iter().filter(|r| mappable(r)).collect();
    for r in exp.row.iter().filter(|r| !mappable(r)) {
        eprintln!(
            "*** row {}: shard moves and preload have no line-level mapping; not run at --fidelity lines ***",
            r.name
        );
    }
    if rows.is_empty() {
        bail!("{origin}: no row runs at --fidelity lines (every row moves shards or preloads)");
    }
    let page = m.spec.page_size;
    let layout = LineLayout::of(&exp.workload, BASE, page);
    let shards = exp.workload.shards.count;
    let homes: Vec<u32> = (0..shards as usize)
        .map(|s| m.core_node[cores[s % cores.len()]])
        .collect();
    let transfer_ns = m
        .spec
        .nodes
        .iter()
        .find_map(|n| n.accelerators.first())
        .map_or(0, |a| {
            let bytes =
                exp.workload.request.tokens as f64 * exp.workload.request.token_bytes as f64;
            (bytes / a.pcie_gbps) as u64
        });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("thread pool")?;
    let seeds = &exp.experiment.seeds;
    let traces: Vec<traces::tasks::TaskTrace> = pool
        .install(|| {
            seeds
                .par_iter()
                .map(|&s| derive(&exp.workload, s, &layout, transfer_ns))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| anyhow::anyhow!("{origin}: {}", e.problem))?;
    let jobs: Vec<(usize, usize)> = (0..rows.len())
        .flat_map(|r| (0..seeds.len()).map(move |s| (r, s)))
        .collect();
    let results: Vec<Result<RunResult>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(r, s)| {
                let placement = Box::new(ShardHomes {
                    layout,
                    shards,
                    page_bits: page.trailing_zeros(),
                    homes: homes.clone(),
                });
                let how = Replay {
                    row: &rows[r].name,
                    scheduler: &rows[r].scheduler,
                    prefetch: &[],
                    mlp: None,
                    seed: seeds[s],
                    log: &exp.inputs,
                };
                let (lat_ps, span, memory_bytes) =
                    replay_tasks(&m, &traces[s], &cores, placement, &how)?;
                let lat: Vec<u64> = lat_ps.iter().map(|&p| p / 1000).collect();
                Ok(RunResult {
                    seed: seeds[s],
                    requests: lat.len() as u64,
                    latency_sum_ns: lat.iter().map(|&x| x as u128).sum(),
                    latency_max_ns: lat.iter().copied().max().unwrap_or(0),
                    latency_ns: lat,
                    memory_bytes,
                    span_ns: span,
                    ..RunResult::default()
                })
            })
            .collect()
    });
    let mut by_row: Vec<Vec<RunResult>> = vec![Vec::new(); rows.len()];
    for (&(r, _), res) in jobs.iter().zip(results) {
        by_row[r].push(res?);
    }
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let table = compare::compare(
        &names,
        &by_row,
        exp.experiment.spike_k,
        exp.experiment.bootstrap,
    );
    if !rec.quiet {
        println!(
            "{} on {} at line level: {:.0} QPS for {} s × {} seeds ({} requests per row; {} line reads per request, {} workers)",
            exp.experiment.name,
            exp.workload.machine,
            exp.workload.qps,
            exp.workload.duration_s,
            seeds.len(),
            table.first().map_or(0, |r| r.requests),
            exp.workload.request.features.lookups as u64 * layout.lines_per_item,
            cores.len()
        );
        print!("{}", compare::render(&table, exp.experiment.spike_k));
    }
    if let Some(dir) = out {
        ensure_dir(dir)?;
        write_file(
            &dir.join("compare.csv"),
            compare::to_csv(&table)?.as_bytes(),
        )?;
        write_json(
            &dir.join("compare.json"),
            &json!({
                "experiment": exp.experiment.name,
                "fidelity": "lines",
                "machine": exp.workload.machine,
                "seeds": seeds,
                "duration_s": exp.workload.duration_s,
                "workers": cores,
                "rows": table,
            }),
        )?;
        write_latency_plots(
            dir,
            &format!("{}: request latency (line level)", exp.experiment.name),
            &names,
            &by_row,
        )?;
        let inputs = vec![rec.experiment.clone()];
        write_json(
            &dir.join("manifest.json"),
            &crate::manifest::manifest_as(
                &rec.args,
                inputs,
                json!({ "fidelity": "lines", "duration_s": exp.workload.duration_s, "seeds": seeds }),
                &exp.inputs,
            ),
        )?;
    }
    Ok(())
}
