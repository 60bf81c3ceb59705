//! One worker view: the request model and the task engine show a
//! scheduler the same signals, defined once (`sim::signals`). Each engine
//! runs with a recording scheduler; every view it was given is checked
//! against the definition, computed here from the engine's own records:
//! `outstanding` = the worker's requests or tasks dispatched earlier and
//! not yet finished, of which `queued` have not started and the worker is
//! `busy` while one runs; `idle_fraction` = max(0, 1 − outstanding / slots)
//! (a batch in the request model; in the task engine its batch, one task
//! unless it batches); `stall_ms` and its EWMA (α = 0.2) over the batches
//! whose stall was known by then (in the request model once its data
//! arrived; in the task engine once it ended, its service less its tasks'
//! compute). The task engine once showed 1 / (1 + outstanding) instead.

use std::sync::{Arc, Mutex};

use sim::policy::{RequestView, Scheduler, WorkerView};

type Seen = Arc<Mutex<Vec<(u64, u64, Vec<WorkerView>)>>>;

/// Round-robin that records (now_ns, id, views) of every dispatch.
struct Recording {
    next: usize,
    seen: Seen,
}

impl Scheduler for Recording {
    fn name(&self) -> String {
        "recording".into()
    }
    fn pick(&mut self, req: &RequestView, w: &[WorkerView]) -> usize {
        self.seen
            .lock()
            .unwrap()
            .push((req.now_ns, req.id, w.to_vec()));
        self.next = (self.next + 1) % w.len();
        self.next
    }
}

/// (last stall, its EWMA) over `stalls` (ms, in the order they became known).
fn stall_of(stalls: &[f64]) -> (f64, f64) {
    let mut ewma = 0.0;
    for &s in stalls {
        ewma = 0.2 * s + 0.8 * ewma;
    }
    (stalls.last().copied().unwrap_or(0.0), ewma)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// The seed experiment's workload.
fn seed_workload() -> traces::workload::WorkloadSpec {
    let mut exp: toml::Table = toml::from_str(
        &std::fs::read_to_string(common_root("scenarios/seed-inference.toml")).unwrap(),
    )
    .unwrap();
    exp.remove("workload").unwrap().try_into().unwrap()
}

/// Runs the request model on `w` (seed 1) with a recording round-robin:
/// the views it was shown and every request's record, by id.
fn run_requests(
    m: &sim::Machine,
    w: &traces::workload::WorkloadSpec,
) -> (Seen, Vec<sim::serve::RequestRecord>) {
    let seen = Seen::default();
    let sched = Box::new(Recording {
        next: 0,
        seen: seen.clone(),
    });
    let ctx = policies::registry::Ctx::default();
    let warm = policies::warmup::WARMUPS.build("none", &ctx).unwrap();
    let mut e = sim::serve::ServeEngine::new(m, w, sched, warm).unwrap();
    let mut recs = Vec::new();
    e.run(1, |r| recs.push(*r)).unwrap();
    recs.sort_by_key(|r| r.id);
    (seen, recs)
}

/// Runs the task engine on `trace` with workers on `cores` and a recording
/// round-robin: the views it was shown and every task's record.
fn run_tasks(
    m: &sim::Machine,
    cores: &[usize],
    trace: &traces::tasks::TaskTrace,
) -> (Seen, Vec<sim::tasks::TaskRecord>) {
    run_tasks_batched(m, cores, trace, (1, 0))
}

/// [`run_tasks`] with workers batching `(size, fixed ps)`.
fn run_tasks_batched(
    m: &sim::Machine,
    cores: &[usize],
    trace: &traces::tasks::TaskTrace,
    batching: (usize, u64),
) -> (Seen, Vec<sim::tasks::TaskRecord>) {
    let ctx = policies::registry::Ctx::for_machine(m);
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &ctx)
        .unwrap();
    let e = sim::Engine::new(m, sim::Config::default(), p).unwrap();
    let seen = Seen::default();
    let sched = Box::new(Recording {
        next: 0,
        seen: seen.clone(),
    });
    let mut te = sim::tasks::TaskEngine::new(e, m, cores, sched).unwrap();
    te.set_batching(batching.0, batching.1);
    let mut recs = Vec::new();
    te.run(trace, |r| recs.push(*r)).unwrap();
    (seen, recs)
}

#[test]
fn the_request_model_shows_the_defined_signals() {
    let mut w = seed_workload();
    w.duration_s = 0.3;
    w.moves.clear();
    let batch = w.request.batch;
    let m = sim::Machine::from_toml(sim::presets::preset(&w.machine).unwrap()).unwrap();
    let (seen, recs) = run_requests(&m, &w);
    let seen = seen.lock().unwrap();
    assert!(seen.len() > 1000);
    let (mut busy_views, mut running_views) = (0, 0);
    for (now_ns, id, views) in seen.iter() {
        let now = now_ns * 1000;
        for v in views {
            let mine = recs.iter().filter(|r| r.worker as usize == v.id);
            let outstanding = mine
                .clone()
                .filter(|r| (r.arrival_ps, r.id) < (now, *id) && r.end_ps > now)
                .count();
            assert_eq!(v.outstanding, outstanding, "request {id}, worker {}", v.id);
            // Running: in a batch that started before now and has not ended;
            // the rest of the outstanding ones are queued.
            let running = mine
                .clone()
                .filter(|r| (r.arrival_ps, r.id) < (now, *id))
                .filter(|r| r.start_ps <= now && r.end_ps > now)
                .count();
            assert_eq!(v.busy, running > 0, "request {id}: {v:?}");
            assert_eq!(v.queued, outstanding - running, "request {id}: {v:?}");
            running_views += (running > 0) as u32;
            let idle = (1.0 - outstanding as f64 / batch as f64).max(0.0);
            assert!(close(v.idle_fraction, idle), "request {id}: {v:?}");
            // Batches: one stall per (worker, start), known at start + stall.
            let mut batches: Vec<(u64, u64)> = mine.map(|r| (r.start_ps, r.stall_ps)).collect();
            batches.sort();
            batches.dedup();
            let known: Vec<f64> = batches
                .iter()
                .filter(|(start, stall)| start + stall <= now)
                .map(|(_, stall)| *stall as f64 / 1e9)
                .collect();
            let (last, ewma) = stall_of(&known);
            assert!(
                close(v.stall_ms, last) && close(v.stall_ewma_ms, ewma),
                "request {id}: {v:?} want {last} {ewma}"
            );
            busy_views += (outstanding > 0) as u32;
        }
    }
    assert!(
        busy_views > 1000 && running_views > 1000,
        "{busy_views} {running_views}"
    );
}

#[test]
fn the_task_engine_shows_the_defined_signals() {
    task_engine_signals((1, 0));
}

/// Batching workers (4 tasks, 50 ns fixed): a batch's tasks run together,
/// `slots` is the batch, and one stall per batch — its service less its
/// tasks' compute (the fixed cost included) — is known from its end.
#[test]
fn the_task_engine_shows_the_defined_signals_when_it_batches() {
    task_engine_signals((4, 50_000));
}

fn task_engine_signals(batching: (usize, u64)) {
    let slots = batching.0;
    let mut csv = String::from("task,op,addr,size,gap_ns,arrival_ns,key\n");
    for i in 0..600u64 {
        let key = i % 5;
        csv += &format!("{i},B,,,,{},{key}\n", i * 120);
        for j in 0..(8 + i % 24) {
            let addr = 0x1000_0000 + key * 0x10_0000 + 64 * ((j * 7 + i) % 512);
            csv += &format!("{i},L,{addr:#x},8,{},,\n", 10 + j % 3);
        }
        csv += &format!("{i},E,,,,,\n");
    }
    let trace = traces::tasks::read_task_csv(csv.as_bytes()).unwrap();
    let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let (seen, recs) = run_tasks_batched(&m, &[0, 1, 28], &trace, batching);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 600);
    let (mut busy, mut stalled, mut running_views, mut batched_views) = (0, 0, 0, 0);
    for (now_ns, id, views) in seen.iter() {
        let now_ps = trace.tasks[*id as usize].arrival_ns * 1000;
        assert_eq!(now_ns * 1000, now_ps, "dispatched at its arrival");
        for v in views {
            let mine = recs.iter().filter(|r| r.worker as usize == v.id);
            let outstanding = mine
                .clone()
                .filter(|r| (r.arrival_ps, r.task) < (now_ps, *id as u32) && r.end_ps > now_ps)
                .count();
            assert_eq!(v.outstanding, outstanding, "task {id}, worker {}", v.id);
            // One batch runs at a time: busy while a task that started
            // before now has not ended; the rest of the outstanding ones
            // are queued.
            let running = mine
                .clone()
                .filter(|r| (r.arrival_ps, r.task) < (now_ps, *id as u32))
                .filter(|r| r.start_ps <= now_ps && r.end_ps > now_ps)
                .count();
            assert!(
                running <= slots,
                "task {id}: {running} tasks running on one worker"
            );
            assert_eq!(v.busy, running > 0, "task {id}: {v:?}");
            running_views += (running > 0) as u32;
            batched_views += (running > 1) as u32;
            assert_eq!(v.queued, outstanding - running, "task {id}: {v:?}");
            let idle = (1.0 - outstanding as f64 / slots as f64).max(0.0);
            assert!(close(v.idle_fraction, idle), "task {id}: {v:?}");
            // Finished batches, by end: (start, end, Σ compute).
            let mut done: Vec<(u64, u64, u64)> = Vec::new();
            let mut ended: Vec<_> = mine.filter(|r| r.end_ps <= now_ps).collect();
            ended.sort_by_key(|r| (r.end_ps, r.start_ps));
            for r in ended {
                match done.last_mut() {
                    Some(b) if (b.0, b.1) == (r.start_ps, r.end_ps) => b.2 += r.compute_ps,
                    _ => done.push((r.start_ps, r.end_ps, r.compute_ps)),
                }
            }
            let known: Vec<f64> = done
                .iter()
                .map(|&(start, end, compute)| (end - start - compute) as f64 / 1e9)
                .collect();
            let (last, ewma) = stall_of(&known);
            assert!(
                close(v.stall_ms, last) && close(v.stall_ewma_ms, ewma),
                "task {id}: {v:?} want {last} {ewma}"
            );
            busy += (outstanding > 0) as u32;
            stalled += (last > 0.0) as u32;
        }
    }
    assert!(
        busy > 100 && stalled > 100 && running_views > 100,
        "{busy} {stalled} {running_views}"
    );
    // Batching shows batches of more than one task running.
    assert_eq!(batched_views > 20, slots > 1, "{batched_views}");
}

/// Both engines in one state: the same machine (8 workers, 4 on each
/// node), the same 48 arrivals within 48 µs, dispatched round-robin by the
/// same recording scheduler, each request or task running ≥ 5 ms with no
/// data to fetch, so no request or task ends during the burst. At every
/// dispatch the two engines must show the same views, field by field, and
/// `utilization` the busy fraction its definition gives.
#[test]
fn both_engines_in_one_state_show_the_same_view() {
    let mut w = seed_workload();
    w.moves.clear();
    w.background = None;
    w.qps = 1e6;
    w.duration_s = 48e-6;
    w.request.batch = 1;
    w.request.features.lookups = 0;
    w.request.compute.batch_ms = 5.0;
    let m = sim::Machine::from_toml(sim::presets::preset(&w.machine).unwrap()).unwrap();
    let (seen_requests, recs) = run_requests(&m, &w);
    let first_end = recs.iter().map(|r| r.end_ps).min().unwrap();
    let last_arrival = recs.iter().map(|r| r.arrival_ps).max().unwrap();
    assert!(recs.len() >= 30, "{} requests", recs.len());
    assert!(first_end > last_arrival, "a request ended within the burst");

    // The same arrivals as tasks, one per request, each computing 5 ms.
    let mut csv = String::from("task,op,addr,size,gap_ns,arrival_ns,key\n");
    for (i, r) in recs.iter().enumerate() {
        csv += &format!(
            "{i},B,,,,{},0\n{i},L,0x1000,8,5000000,,\n{i},E,,,,,\n",
            r.arrival_ps / 1000
        );
    }
    let trace = traces::tasks::read_task_csv(csv.as_bytes()).unwrap();
    let cores: Vec<usize> = (0..4).chain(64..68).collect();
    let (seen_tasks, _) = run_tasks(&m, &cores, &trace);

    let (a, b) = (seen_requests.lock().unwrap(), seen_tasks.lock().unwrap());
    assert_eq!(a.len(), recs.len());
    assert_eq!(a.len(), b.len());
    let mut busy = 0;
    for ((now_a, id_a, va), (now_b, id_b, vb)) in a.iter().zip(b.iter()) {
        assert_eq!((now_a, id_a), (now_b, id_b));
        assert_eq!(va.len(), vb.len());
        for (x, y) in va.iter().zip(vb) {
            let same = (x.id, x.node, x.queued, x.busy, x.outstanding)
                == (y.id, y.node, y.queued, y.busy, y.outstanding)
                && close(x.idle_fraction, y.idle_fraction)
                && close(x.utilization, y.utilization)
                && close(x.stall_ms, y.stall_ms)
                && close(x.stall_ewma_ms, y.stall_ewma_ms);
            assert!(
                same,
                "request {id_a}: request model {x:?}, task engine {y:?}"
            );
            // The averaged busy fraction, from its definition: busy since the
            // worker's first start (time constant 100 ms), 0 before.
            let start = recs
                .iter()
                .filter(|r| r.worker as usize == x.id && r.id < *id_a)
                .map(|r| r.start_ps)
                .min();
            let now = now_a * 1000;
            let util = start.map_or(0.0, |s| 1.0 - (-((now - s) as f64) / 100e9).exp());
            assert!(
                close(x.utilization, util),
                "request {id_a}: {x:?} want {util}"
            );
            busy += x.busy as u32;
        }
    }
    // The burst fills every worker: views with work queued behind a running one.
    let queued = a
        .iter()
        .flat_map(|(_, _, v)| v)
        .filter(|v| v.queued > 0)
        .count();
    assert!(
        busy > 100 && queued > 50,
        "{busy} busy, {queued} queued views"
    );
}

fn common_root(p: &str) -> String {
    format!("{}/{p}", env!("CARGO_MANIFEST_DIR"))
}
