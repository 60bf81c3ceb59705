//! A request-level workload as a task trace, for `compare --fidelity
//! lines`: the same requests the request model serves (same arrivals,
//! shards, feature items and compute noise, drawn from the same per-request
//! seeds), each a task whose feature lookups are line reads of its shard's
//! region and whose compute is a gap. The mapping, and what it leaves out,
//! is documented in `docs/fidelity.md`.
//!
//! - task id = request id, key = shard, arrival = the request's arrival;
//! - lookup of item *i* of shard *s* (the request model's items:
//!   `WorkloadSpec::request_items`) → `ceil(item_bytes / 64)` line reads
//!   at `base + s·region + i·item_stride`, back to back (the core's MLP
//!   overlaps them); a request with no lookups reads one line of its
//!   region (a task has at least one access);
//! - compute → the gap before the task's first access:
//!   `Compute::request_ms × lognormal(σ)` `+` the request's input
//!   (`tokens × token_bytes`) over the accelerator's PCIe bandwidth; the
//!   batch's fixed cost `batch_ms` ([`batch_fixed_ns`]) is the task
//!   engine's, paid once per batch it forms;
//! - background job *k* (the request model's: at the arrival of request
//!   *k*·`every_requests`, on memory node *k* mod the memory nodes) →
//!   a job of `sweep_gb` of line accesses on a core of that node
//!   ([`jobs`]): with `flushes_cache`, stores over the regions of the
//!   shards homed there, from where that node's last job stopped (they
//!   invalidate every cached copy, as the request model's flush empties
//!   the node's feature cache); without it, loads of a buffer of its own
//!   (they load the channels only);
//! - shard moves and preload are the task engine's (`sim::tasks`);
//!   items beyond `resident` (the far tier) are refused here.

use crate::error::{Param, Problem, Result, TraceError};
use crate::tasks::{MAX_TASK_RECORDS, Task, TaskTrace};
use crate::workload::{ArrivalGen, CdfSampler, WorkloadSpec, zipf_cdf};
use crate::{Access, Kind};

/// Where the derived accesses live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineLayout {
    /// Address of shard 0's region.
    pub base: u64,
    /// Bytes between shards' regions (a multiple of the page size).
    pub region: u64,
    /// Bytes between items (the item size rounded up to whole lines).
    pub item_stride: u64,
    /// Line reads per item lookup.
    pub lines_per_item: u64,
}

/// Line size the derivation reads in.
pub const LINE: u64 = 64;

/// Line reads a lookup of an `item_kb` item takes.
pub fn lines_per_item(item_kb: f64) -> u64 {
    ((item_kb * 1024.0).ceil().max(1.0) as u64).div_ceil(LINE)
}

impl LineLayout {
    /// The layout of `spec`'s shards from `base`, regions rounded up to
    /// `page` bytes.
    pub fn of(spec: &WorkloadSpec, base: u64, page: u64) -> LineLayout {
        let f = &spec.request.features;
        let lines_per_item = lines_per_item(f.item_kb);
        let item_stride = lines_per_item * LINE;
        let region = (f.items as u64 * item_stride).div_ceil(page.max(1)) * page.max(1);
        LineLayout {
            base,
            region,
            item_stride,
            lines_per_item,
        }
    }

    /// The shard whose region holds `addr`, if any.
    pub fn shard_of(&self, addr: u64, shards: u32) -> Option<u32> {
        let off = addr.checked_sub(self.base)?;
        let s = off / self.region;
        (s < shards as u64).then_some(s as u32)
    }
}

fn bad(p: Param) -> TraceError {
    TraceError::at_offset(0, 0, Problem::Param(p))
}

/// Whether the line model can run `spec`: no items on the far tier.
pub fn check(spec: &WorkloadSpec) -> Result<()> {
    let f = &spec.request.features;
    if f.resident < f.items {
        return Err(bad(Param::LinesFarItems {
            far: f.items - f.resident,
            items: f.items,
        }));
    }
    Ok(())
}

/// The request model's background jobs of `spec` on `seed` as line-level
/// jobs: `(memory node, job)` in start order. `mem_nodes` are the
/// machine's memory nodes, `homes[s]` the node shard *s*'s region is homed
/// on; a job without `flushes_cache` reads a buffer at `buffer_base` +
/// (its node's index) × its size. Job ids count from `first_id`.
pub fn jobs(
    spec: &WorkloadSpec,
    seed: u64,
    layout: &LineLayout,
    mem_nodes: &[u32],
    homes: &[u32],
    buffer_base: u64,
    first_id: u32,
) -> Result<Vec<(u32, Task)>> {
    let Some(bg) = &spec.background else {
        return Ok(Vec::new());
    };
    if bg.every_requests == 0 || mem_nodes.is_empty() {
        return Ok(Vec::new());
    }
    let lines = (bg.sweep_gb * 1e9 / LINE as f64).ceil() as u64;
    let buffer = (lines * LINE).div_ceil(1 << 21) << 21;
    // Where each node's next flushing sweep starts, in its shards' bytes.
    let mut cursor = vec![0u64; mem_nodes.len()];
    let (mut out, mut total) = (Vec::new(), 0u64);
    let mut seen = 0u64;
    for a in ArrivalGen::new(spec, seed)? {
        seen += 1;
        if !seen.is_multiple_of(bg.every_requests) {
            continue;
        }
        total += lines;
        if total > MAX_TASK_RECORDS as u64 {
            return Err(bad(Param::LinesJobs {
                max: MAX_TASK_RECORDS,
                per_job: lines,
            }));
        }
        let k = seen / bg.every_requests;
        let slot = (k % mem_nodes.len() as u64) as usize;
        let node = mem_nodes[slot];
        let id = first_id.saturating_add(out.len() as u32);
        let shards: Vec<u64> = (0..homes.len())
            .filter(|&s| homes[s] == node)
            .map(|s| layout.base + s as u64 * layout.region)
            .collect();
        let span = shards.len() as u64 * layout.region;
        let mut accesses = Vec::with_capacity(lines as usize);
        for l in 0..lines {
            let acc = if bg.flushes_cache && span > 0 {
                let off = (cursor[slot] + l * LINE) % span;
                let at = shards[(off / layout.region) as usize] + off % layout.region;
                Access::new(id, Kind::Store, at, 8)
            } else {
                let at = buffer_base + slot as u64 * buffer + l * LINE;
                Access::new(id, Kind::Load, at, 8)
            };
            accesses.push((acc, 0));
        }
        if span > 0 {
            cursor[slot] = (cursor[slot] + lines * LINE) % span;
        }
        out.push((
            node,
            Task {
                id,
                key: node,
                arrival_ns: a.arrival_ns,
                accesses,
            },
        ));
    }
    Ok(out)
}

/// A batch's fixed compute (`batch_ms`) in whole ns, which the task
/// engine pays once per batch.
pub fn batch_fixed_ns(spec: &WorkloadSpec) -> u64 {
    (spec.request.compute.batch_ms * 1e6) as u64
}

/// Derives the task trace of `spec` on `seed`. Every request's compute
/// includes its input's copy to the accelerator at `pcie_gbps` (the line
/// model has no device for it; infinite for none).
pub fn derive(
    spec: &WorkloadSpec,
    seed: u64,
    layout: &LineLayout,
    pcie_gbps: f64,
) -> Result<TaskTrace> {
    check(spec)?;
    let f = &spec.request.features;
    let items = CdfSampler::new(zipf_cdf(f.items, f.zipf));
    let per_request =
        |a: &crate::workload::Arrival| spec.lookups_of(a).max(1) as u64 * layout.lines_per_item;
    let c = &spec.request.compute;
    let mut tasks = Vec::new();
    let mut total = 0u64;
    for a in ArrivalGen::new(spec, seed)? {
        let id = u32::try_from(a.id).map_err(|_| bad(Param::LinesRequests))?;
        let per_request = per_request(&a);
        total += per_request;
        if total > MAX_TASK_RECORDS as u64 {
            return Err(bad(Param::LinesReads {
                max: MAX_TASK_RECORDS,
                per_request,
            }));
        }
        let region = layout.base + a.shard as u64 * layout.region;
        let mut accesses = Vec::with_capacity(per_request as usize);
        // The request model's items and compute noise, from the same
        // stream, so both fidelities cost the request alike.
        let z = spec.request_items(&a, &items, |item| {
            let at = region + item as u64 * layout.item_stride;
            for l in 0..layout.lines_per_item {
                let mut acc = Access::new(id, Kind::Load, at + l * LINE, 8);
                acc.flags = crate::record::FLAG_GAP;
                accesses.push((acc, 0));
            }
        });
        if accesses.is_empty() {
            let mut acc = Access::new(id, Kind::Load, region, 8);
            acc.flags = crate::record::FLAG_GAP;
            accesses.push((acc, 0));
        }
        let compute = c.request_ms(&a) * 1e6 * (c.sigma * z).exp();
        // Saturating: a gap past the horizon is refused by the task engine.
        let input = a.input_tokens as f64 * spec.request.token_bytes as f64;
        let transfer_ns = (input / pcie_gbps) as u64;
        accesses[0].1 = (compute as u64).saturating_add(transfer_ns);
        tasks.push(Task {
            id,
            key: a.shard,
            arrival_ns: a.arrival_ns,
            accesses,
        });
    }
    Ok(TaskTrace {
        tasks,
        ..TaskTrace::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WorkloadSpec {
        let mut s = crate::workload::tests::small();
        s.background = None;
        s.duration_s = 0.2;
        s.request.features.item_kb = 0.2;
        s.request.features.resident = s.request.features.items;
        s
    }

    #[test]
    fn requests_become_tasks_with_their_shards_items_and_compute() {
        let s = spec();
        let lay = LineLayout::of(&s, 1 << 32, 4096);
        let t = derive(&s, 7, &lay, f64::INFINITY).unwrap();
        let arrivals: Vec<_> = ArrivalGen::new(&s, 7).unwrap().collect();
        assert_eq!(t.tasks.len(), arrivals.len());
        let f = &s.request.features;
        let c = &s.request.compute;
        for (task, a) in t.tasks.iter().zip(&arrivals) {
            assert_eq!(
                (task.id as u64, task.key, task.arrival_ns),
                (a.id, a.shard, a.arrival_ns)
            );
            assert_eq!(
                task.accesses.len() as u64,
                f.lookups as u64 * lay.lines_per_item
            );
            assert!(
                task.accesses
                    .iter()
                    .all(|(x, _)| lay.shard_of(x.addr, s.shards.count) == Some(a.shard))
            );
            // The gap is the request's compute (the batch's is the
            // engine's): within the log-normal's ±5σ of the mean.
            let per = task.accesses[0].1 as f64 / (c.per_request_ms * 1e6);
            assert!(
                per > (-5.0 * c.sigma).exp() && per < (5.0 * c.sigma).exp(),
                "{per}"
            );
            assert!(task.accesses[1..].iter().all(|&(_, g)| g == 0));
        }
        assert_eq!(t, derive(&s, 7, &lay, f64::INFINITY).unwrap(), "seeded");
    }

    #[test]
    fn a_logged_requests_blocks_and_tokens_set_its_reads_and_gap() {
        let mut s = spec();
        s.request.compute.sigma = 0.0;
        s.request.compute.per_input_token_ms = 0.001;
        s.request.compute.per_output_token_ms = 0.01;
        let log = crate::request_log::read(
            "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 10, \"hash_ids\": [5, 100005]}\n\
             {\"timestamp\": 1, \"input_length\": 0, \"output_length\": 0, \"hash_ids\": []}\n"
                .as_bytes(),
            1.0,
        )
        .unwrap();
        s.arrivals = crate::workload::Arrivals::Log {
            log: "l.jsonl".into(),
            time_scale: 1.0,
            requests: Some(std::sync::Arc::new(log)),
        };
        let lay = LineLayout::of(&s, 1 << 32, 4096);
        // 100 000 items: block 100005 is item 5, as block 5 is.
        let t = derive(&s, 1, &lay, 25.0).unwrap();
        assert_eq!(t.tasks.len(), 2);
        let a = &t.tasks[0];
        assert_eq!(a.accesses.len() as u64, 2 * lay.lines_per_item);
        let region = lay.base + a.key as u64 * lay.region;
        assert_eq!(a.accesses[0].0.addr, region + 5 * lay.item_stride);
        assert_eq!(
            a.accesses[lay.lines_per_item as usize].0.addr,
            region + 5 * lay.item_stride
        );
        // (0.4 + 100 × 0.001 + 10 × 0.01) ms + 100 × 4 B / 25 GB/s.
        let want = 0.6e6 + 16.0;
        assert!(
            (a.accesses[0].1 as f64 - want).abs() <= 1.0,
            "{}",
            a.accesses[0].1
        );
        // No blocks: one read of its region, its compute alone.
        assert_eq!(t.tasks[1].accesses.len(), 1);
        assert!((t.tasks[1].accesses[0].1 as f64 - 0.4e6).abs() <= 1.0);
    }

    #[test]
    fn what_the_line_model_lacks_is_refused() {
        let mut s = spec();
        s.request.features.resident = 1;
        let lay = LineLayout::of(&s, 0, 4096);
        assert!(
            derive(&s, 1, &lay, f64::INFINITY)
                .unwrap_err()
                .to_string()
                .contains("far tier")
        );
    }

    /// Job k at request k·every's arrival, alternating memory nodes; a
    /// flushing job stores over its node's shards from where the last one
    /// stopped, a plain one loads its own buffer.
    #[test]
    fn background_jobs_follow_the_request_models_jobs() {
        let mut s = spec();
        s.shards.count = 4;
        s.background = Some(crate::workload::Background {
            every_requests: 100,
            sweep_gb: 64.0 * 1000.0 / 1e9,
            flushes_cache: true,
        });
        let lay = LineLayout::of(&s, 1 << 32, 4096);
        let arrivals: Vec<_> = ArrivalGen::new(&s, 3).unwrap().collect();
        // Shards 0 and 2 on node 0, 1 and 3 on node 1.
        let homes = [0, 1, 0, 1];
        let j = jobs(&s, 3, &lay, &[0, 1], &homes, 1 << 50, 7).unwrap();
        assert_eq!(j.len(), arrivals.len() / 100);
        for (k, (node, job)) in j.iter().enumerate() {
            assert_eq!(job.arrival_ns, arrivals[(k + 1) * 100 - 1].arrival_ns);
            assert_eq!(*node, ((k + 1) % 2) as u32);
            assert_eq!(job.id, 7 + k as u32);
            assert_eq!(job.accesses.len(), 1000);
            assert!(
                job.accesses
                    .iter()
                    .all(|(a, g)| a.kind == Kind::Store && *g == 0)
            );
        }
        // Node 1's first job (k = 1) starts at shard 1's first line; its
        // second (k = 3) where that one stopped: 1000 lines on.
        let first = |k: usize| j[k].1.accesses[0].0.addr;
        assert_eq!(first(0), lay.base + lay.region);
        let span = 2 * lay.region;
        let off = 1000 * LINE % span;
        let want = [lay.base + lay.region, lay.base + 3 * lay.region][(off / lay.region) as usize]
            + off % lay.region;
        assert_eq!(first(2), want);
        // Without the flush: loads of the node's own buffer.
        s.background.as_mut().unwrap().flushes_cache = false;
        let j = jobs(&s, 3, &lay, &[0, 1], &homes, 1 << 50, 0).unwrap();
        assert!(j[0].1.accesses.iter().all(|(a, _)| a.kind == Kind::Load));
        let buffer = (1000 * LINE).div_ceil(1 << 21) << 21;
        assert_eq!(j[0].1.accesses[0].0.addr, (1 << 50) + buffer);
    }
}
