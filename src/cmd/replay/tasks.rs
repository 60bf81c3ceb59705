//! `replay TASKTRACE --machine M --workers SPEC --scheduler NAME`: a task
//! trace dispatched to workers pinned on cores, every task's accesses
//! through the timing model (`sim::tasks`). Writes `tasks.csv` (one line
//! per task) and `summary.json` (the memory system's summary plus a
//! `tasks` section) with `--out`.

use anyhow::{Result, bail};
use serde_json::json;

use super::ReplayArgs;
use crate::manifest::manifest;
use crate::output::{ensure_dir, write_file, write_json};
use crate::workers::{parse_arrivals, worker_cores};

/// One line of `tasks.csv` (times in ns).
#[derive(serde::Serialize, Default)]
struct TaskRow {
    task: u32,
    key: u32,
    worker: u32,
    core: u32,
    node: u32,
    arrival_ns: u64,
    start_ns: u64,
    end_ns: u64,
    queue_ns: u64,
    service_ns: u64,
    accesses: u64,
    misses: u64,
}

pub fn run(a: &ReplayArgs, workers: &str) -> Result<()> {
    let Some(machine_arg) = &a.machine else {
        bail!("--workers needs --machine (tasks run on the timing model)");
    };
    let log = lab::InputLog::default();
    let machine = crate::machines::load_machine(machine_arg, &log)?;
    let (mut trace, _) = crate::task_io::load_tasks(&a.trace)?;
    if let Some(spec) = &a.arrivals {
        let (qps, seed) = parse_arrivals(spec)?;
        trace
            .retime_poisson(qps, seed)
            .map_err(|p| anyhow::anyhow!("--arrivals {spec}: {p}"))?;
    }
    let cores = worker_cores(workers, &machine)?;
    let ctx = policies::registry::Ctx {
        seed: a.seed,
        ..policies::registry::Ctx::for_machine(&machine)
    };
    let sched = policies::sched::SCHEDULERS
        .build(&a.scheduler, &ctx)
        .map_err(|e| anyhow::anyhow!("--scheduler: {e}"))?;
    let placement = policies::placement::PLACEMENTS
        .build(&a.placement, &ctx)
        .map_err(|e| anyhow::anyhow!("--placement: {e}"))?;
    let cfg = sim::Config {
        mlp: a.mlp,
        prefetch_level: a.prefetch_level,
        prefetch_queue: a.prefetch_queue,
        ..sim::Config::default()
    };
    let mut engine = sim::Engine::new(&machine, cfg, placement)
        .map_err(|e| anyhow::anyhow!(crate::flags::engine(&e)))?;
    crate::policy::attach_prefetchers(&mut engine, &machine, &a.prefetch, a.prefetch_level, &log)?;
    let mut te = sim::tasks::TaskEngine::new(engine, &machine, &cores, sched)
        .map_err(|e| anyhow::anyhow!("--workers {workers}: {e}"))?;
    let mut recs = Vec::with_capacity(trace.tasks.len());
    te.run(&trace, |r| recs.push(*r))
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.trace.display()))?;
    recs.sort_by_key(|r| (r.arrival_ps, r.task));
    let ns = |v: Vec<u64>| v.into_iter().map(|ps| ps / 1000).collect::<Vec<_>>();
    let lat = analysis::stats::percentiles(&ns(recs.iter().map(|r| r.latency_ps()).collect()));
    let mean = |f: fn(&sim::tasks::TaskRecord) -> u64| {
        if recs.is_empty() {
            0.0
        } else {
            recs.iter().map(|r| f(r) as f64).sum::<f64>() / recs.len() as f64 / 1e9
        }
    };
    let tasks = json!({
        "count": recs.len(),
        "workers": cores,
        "scheduler": a.scheduler,
        "latency_ms": { "mean": lat.mean_ms, "p50": lat.tp50_ms, "p90": lat.tp90_ms, "p99": lat.tp99_ms, "p999": lat.tp999_ms, "max": lat.max_ms },
        "queue_ms": { "mean": mean(|r| r.queue_ps()) },
        "service_ms": { "mean": mean(|r| r.service_ps()) },
    });
    if let Some(path) = &a.timeline {
        let window = crate::timeline::parse_window(&a.timeline_window)?;
        let events = lab::timeline::tasks::events(&recs, &cores, &machine, window);
        write_file(path, lab::timeline::to_json(&events)?.as_bytes())?;
    }
    let summary = te.engine.summary();
    let us = |ms: f64| ms * 1e3;
    println!(
        "{} tasks ({} keys) on {} workers, scheduler {}: latency (µs) mean {:.3}  TP50 {:.3}  TP90 {:.3}  TP99 {:.3}  TP99.9 {:.3}  max {:.3}; queue mean {:.3} µs, service mean {:.3} µs",
        recs.len(),
        trace.keys(),
        cores.len(),
        a.scheduler,
        us(lat.mean_ms),
        us(lat.tp50_ms),
        us(lat.tp90_ms),
        us(lat.tp99_ms),
        us(lat.tp999_ms),
        us(lat.max_ms),
        us(mean(|r| r.queue_ps())),
        us(mean(|r| r.service_ps()))
    );
    print!("{}", analysis::timing::render(&summary));
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        let rows: Vec<TaskRow> = recs
            .iter()
            .map(|r| TaskRow {
                task: r.task,
                key: r.key,
                worker: r.worker,
                core: r.core,
                node: r.node,
                arrival_ns: r.arrival_ps / 1000,
                start_ns: r.start_ps / 1000,
                end_ns: r.end_ps / 1000,
                queue_ns: r.queue_ps() / 1000,
                service_ns: r.service_ps() / 1000,
                accesses: r.accesses,
                misses: r.misses,
            })
            .collect();
        write_file(
            &dir.join("tasks.csv"),
            analysis::table::to_csv(&rows)?.as_bytes(),
        )?;
        let mut s = serde_json::to_value(&summary)?;
        s["tasks"] = tasks;
        write_json(&dir.join("summary.json"), &s)?;
        let input = json!({ "role": "task trace", "path": a.trace.display().to_string() });
        let config = json!({
            "machine": machine.spec,
            "workers": cores,
            "scheduler": a.scheduler,
            "placement": a.placement,
            "mlp": a.mlp,
            "prefetch": a.prefetch,
        });
        write_json(
            &dir.join("manifest.json"),
            &manifest(vec![input], config, &log),
        )?;
    }
    crate::report::after(a.report, a.out.as_deref())
}
