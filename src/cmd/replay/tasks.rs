//! `replay TASKTRACE --machine M --workers SPEC --scheduler NAME`: a task
//! trace dispatched to workers pinned on cores, every task's accesses
//! through the timing model (`sim::tasks`). Writes `tasks.csv` (one line
//! per task) and `summary.json` (the memory system's summary plus a
//! `tasks` section) with `--out`.

use anyhow::{Result, bail};
use serde_json::json;

use lab::tasks::BuildError;

use super::ReplayArgs;
use crate::manifest::manifest;
use crate::output::{ensure_dir, write_file, write_json};
use crate::workers::{retime, worker_cores};

pub fn run(a: &ReplayArgs, workers: &str) -> Result<()> {
    let Some(machine_arg) = &a.machine else {
        bail!("--workers needs --machine (tasks run on the timing model)");
    };
    let log = lab::InputLog::default();
    let machine = crate::machines::load_machine(machine_arg, &log)?;
    let (mut trace, _) = crate::task_io::load_tasks(&a.trace)?;
    if let Some(spec) = &a.arrivals {
        retime(&mut trace, spec, &log)?;
    }
    let cores = worker_cores(workers, &machine)?;
    let ctx = policies::registry::Ctx {
        seed: a.seed,
        ..policies::registry::Ctx::for_machine(&machine)
    };
    let placement = policies::placement::PLACEMENTS
        .build(&a.placement, &ctx)
        .map_err(|e| anyhow::anyhow!("--placement: {e}"))?;
    let build = lab::tasks::Build {
        scheduler: &a.scheduler,
        placement,
        prefetch: &a.prefetch,
        cfg: sim::Config {
            mlp: a.mlp,
            prefetch_level: a.prefetch_level,
            prefetch_queue: a.prefetch_queue,
            ..sim::Config::default()
        },
        seed: a.seed,
        log: &log,
        custom: None,
    };
    let mut te = lab::tasks::engine(&machine, &cores, build).map_err(|e| match e {
        BuildError::Scheduler(e) => anyhow::anyhow!("--scheduler: {e}"),
        BuildError::Engine(e) => anyhow::anyhow!(crate::flags::engine(&e)),
        BuildError::Prefetch(e) => anyhow::anyhow!(crate::flags::prefetch(&e)),
        BuildError::Workers(e) => anyhow::anyhow!("--workers {workers}: {e}"),
    })?;
    let sample = (a.sample).map(|s| s.place(a.sample_seed, !a.prefetch.is_empty()));
    let (recs, summary) = lab::tasks::replay_summary(&mut te, &trace, sample)
        .map_err(|e| anyhow::anyhow!("{}: {}{e}", a.trace.display(), e.flag_prefix()))?;
    let st = lab::tasks::TaskStats::of(&recs);
    let lat = &st.latency;
    if let Some(path) = &a.timeline {
        let window = crate::timeline::parse_window(&a.timeline_window)?;
        let events = lab::timeline::tasks::events(&recs, &cores, &machine, window);
        write_file(path, lab::timeline::to_json(&events)?.as_bytes())?;
    }
    let us = |ms: f64| ms * 1e3;
    println!(
        "{}{} tasks ({} keys) on {} workers, scheduler {}: latency (µs) mean {:.3}  TP50 {:.3}  TP90 {:.3}  TP99 {:.3}  TP99.9 {:.3}  max {:.3}; queue mean {:.3} µs, service mean {:.3} µs",
        recs.len(),
        if sample.is_some() { " measured" } else { "" },
        trace.keys(),
        cores.len(),
        a.scheduler,
        us(lat.mean),
        us(lat.tp50),
        us(lat.tp90),
        us(lat.tp99),
        us(lat.tp999),
        us(lat.max),
        us(st.queue_mean_ms),
        us(st.service_mean_ms)
    );
    print!("{}", analysis::timing::render(&summary));
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        write_file(
            &dir.join("tasks.csv"),
            lab::tasks::tasks_csv(&recs)?.as_bytes(),
        )?;
        let s = lab::tasks::summary_json(&summary, &recs, &cores, &a.scheduler)?;
        write_json(&dir.join("summary.json"), &s)?;
        let input = json!({ "role": "task trace", "path": a.trace.display().to_string() });
        let config = json!({
            "machine": machine.spec,
            "workers": cores,
            "scheduler": a.scheduler,
            "placement": a.placement,
            "mlp": a.mlp,
            "prefetch": a.prefetch,
            "sample": sample,
        });
        write_json(
            &dir.join("manifest.json"),
            &manifest(vec![input], config, &log),
        )?;
    }
    crate::report::after(a.report, a.out.as_deref())
}
