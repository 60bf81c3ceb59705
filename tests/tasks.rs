//! The task engine against independent oracles: queueing through the
//! memory model (the Lindley recursion, exact; M/D/1), cache affinity,
//! remote-memory locality, invalidations between workers; and the binary's
//! `replay --workers` output.

mod common;

use sim::tasks::{TaskEngine, TaskRecord};
use traces::tasks::TaskTrace;

/// A task: arrival (ns), key, accesses as (op, address, gap ns).
type Spec = (u64, u32, Vec<(char, u64, u64)>);

/// Task-trace CSV from task specs.
fn csv(tasks: &[Spec]) -> String {
    let mut s = String::from("task,op,addr,size,gap_ns,arrival_ns,key\n");
    for (i, (at, key, acc)) in tasks.iter().enumerate() {
        s.push_str(&format!("{i},B,,,,{at},{key}\n"));
        for (op, addr, gap) in acc {
            s.push_str(&format!("{i},{op},{addr:#x},8,{gap},,\n"));
        }
        s.push_str(&format!("{i},E,,,,,\n"));
    }
    s
}

fn trace(tasks: &[Spec]) -> TaskTrace {
    traces::tasks::read_task_csv(csv(tasks).as_bytes()).unwrap()
}

/// Runs `t` on `machine` with workers on `cores`; (records by task id, summary).
fn run(
    machine: &str,
    t: &TaskTrace,
    cores: &[usize],
    sched: &str,
    placement: &str,
    mlp: Option<u32>,
) -> (Vec<TaskRecord>, sim::results::Summary) {
    let m = sim::Machine::from_toml(sim::presets::preset(machine).unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let s = policies::sched::SCHEDULERS.build(sched, &ctx).unwrap();
    let p = policies::placement::PLACEMENTS
        .build(placement, &ctx)
        .unwrap();
    let cfg = sim::Config {
        mlp,
        ..sim::Config::default()
    };
    let e = sim::Engine::new(&m, cfg, p).unwrap();
    let mut te = TaskEngine::new(e, &m, cores, s).unwrap();
    let mut recs = Vec::new();
    te.run(t, |r| recs.push(*r)).unwrap();
    recs.sort_by_key(|r| r.task);
    let summary = te.engine.summary();
    (recs, summary)
}

/// Poisson arrival times (ns) at `rate` per ns, from a fixed LCG.
fn poisson(n: usize, mean_gap_ns: f64, seed: u64) -> Vec<u64> {
    let mut x = seed;
    let mut t = 0.0f64;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            t += -mean_gap_ns * u.ln();
            t as u64
        })
        .collect()
}

/// Identical cache-resident tasks: 8 loads of the same 8 lines, 100 ns apart.
fn resident_tasks(arrivals: &[u64]) -> TaskTrace {
    let acc: Vec<(char, u64, u64)> = (0..8).map(|i| ('L', 0x4000 + 64 * i, 100)).collect();
    trace(
        &arrivals
            .iter()
            .map(|&a| (a, 0u32, acc.clone()))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn queue_waits_through_the_memory_model_follow_lindley_exactly() {
    let arrivals = poisson(20_000, 1000.0, 7);
    let (r, _) = run(
        "xeon-2s",
        &resident_tasks(&arrivals),
        &[0],
        "round-robin",
        "first-touch",
        None,
    );
    assert_eq!(r.len(), arrivals.len());
    // The first task misses (cold caches), the rest hit: one service time.
    let d = r[1].service_ps();
    assert!(
        r[1..].iter().all(|x| x.service_ps() == d),
        "deterministic service"
    );
    assert!(r[0].service_ps() > d, "the first task warms the caches");
    let mut w = 0u64;
    for k in 1..r.len() {
        let gap = r[k].arrival_ps - r[k - 1].arrival_ps;
        w = (w + r[k - 1].service_ps()).saturating_sub(gap);
        assert_eq!(r[k].queue_ps(), w, "task {k}");
    }
}

/// Batching (the request model's: an idle worker takes up to `size` queued
/// tasks) against its recursion computed here: a batch starts when its
/// first task arrives at an idle worker (alone), or when the worker frees
/// (with every task that arrived before, up to `size`, in order), and
/// takes `fixed + k × 800 ns + h` for k cache-resident tasks of eight
/// 100 ns gaps (h: the last access's hit latency, read off the second
/// batch; the first is cold). Every task of a batch ends at its end.
#[test]
fn batches_follow_the_batch_recursion_exactly() {
    let arrivals = poisson(20_000, 1400.0, 11);
    let t = resident_tasks(&arrivals);
    let (size, fixed) = (4usize, 1_500_000u64);
    let r = run_batched_with_jobs(&t, (size, fixed), vec![]);
    assert_eq!(r.len(), arrivals.len());
    let arr: Vec<u64> = r.iter().map(|x| x.arrival_ps).collect();
    // The first batch (cold) as the engine ran it, then h from the second.
    let first = r.iter().take_while(|x| x.start_ps == r[0].start_ps).count();
    let second = r[first..]
        .iter()
        .take_while(|x| x.start_ps == r[first].start_ps)
        .count();
    let h = r[first].service_ps() - fixed - second as u64 * 800_000;
    assert!(h > 0 && h < 100_000, "a hit's latency: {h} ps");
    let (mut i, mut free) = (first, r[0].end_ps);
    let mut sizes = [0usize; 5];
    while i < arr.len() {
        let (start, mut j) = if arr[i] >= free {
            (arr[i], i + 1)
        } else {
            let mut j = i;
            while j < arr.len() && j - i < size && arr[j] < free {
                j += 1;
            }
            (free, j)
        };
        j = j.max(i + 1);
        let end = start + fixed + (j - i) as u64 * 800_000 + h;
        for x in &r[i..j] {
            assert_eq!((x.start_ps, x.end_ps), (start, end), "task {}", x.task);
        }
        sizes[j - i] += 1;
        (i, free) = (j, end);
    }
    // The load makes batches of every size.
    assert!(sizes[1..].iter().all(|&n| n > 0), "batch sizes {sizes:?}");
}

/// A background job: core, arrival (ns), accesses as (op, address, gap ns).
type Job = (usize, u64, Vec<(char, u64, u64)>);

/// Runs `t` on one worker (core 0 of xeon-2s, round robin) beside
/// background `jobs`: the records by task.
fn run_with_jobs(t: &TaskTrace, jobs: Vec<Job>) -> Vec<TaskRecord> {
    run_batched_with_jobs(t, (1, 0), jobs)
}

/// [`run_with_jobs`] with the worker batching `(size, fixed ps)`.
fn run_batched_with_jobs(t: &TaskTrace, batching: (usize, u64), jobs: Vec<Job>) -> Vec<TaskRecord> {
    let m = common::preset("xeon-2s");
    let mut te = common::task_engine(&m, &[0], "round-robin", sim::Config::default());
    te.set_batching(batching.0, batching.1);
    let jobs = jobs
        .into_iter()
        .enumerate()
        .map(|(i, (core, at, acc))| {
            let mut task = trace(&[(at, 0, acc)]).tasks.remove(0);
            task.id = 1000 + i as u32;
            (core, task)
        })
        .collect();
    te.set_jobs(&m, jobs).unwrap();
    let mut r = Vec::new();
    te.run(t, |x| r.push(*x)).unwrap();
    r.sort_by_key(|x| x.task);
    r
}

/// A background job's writes invalidate the worker's cached copies: the
/// first task after a job that writes its eight lines misses all eight,
/// every other warm task none. No job is reported as a task.
#[test]
fn a_background_jobs_writes_invalidate_the_workers_copies() {
    let arrivals: Vec<u64> = (0..20).map(|k| k * 10_000).collect();
    let t = resident_tasks(&arrivals);
    let quiet = run_with_jobs(&t, vec![]);
    assert!(quiet[1..].iter().all(|x| x.misses == 0), "{quiet:?}");
    // On the other socket, 55 µs in: between tasks 5 and 6.
    let writes: Vec<(char, u64, u64)> = (0..8).map(|i| ('S', 0x4000 + 64 * i, 0)).collect();
    let r = run_with_jobs(&t, vec![(28, 55_000, writes)]);
    assert_eq!(r.len(), 20, "jobs are not reported");
    for x in &r[1..] {
        let want = if x.task == 6 { 8 } else { 0 };
        assert_eq!(x.misses, want, "task {}", x.task);
    }
    assert!(r[6].service_ps() > quiet[6].service_ps());
}

/// A job is not a batch: on a batching engine (here 4 tasks, 3 µs fixed)
/// it still runs alone and pays no fixed cost, so its stores land at
/// 55 µs and task 6 (at 60 µs) is the one that misses; with the fixed cost
/// they would land after it.
#[test]
fn a_background_job_on_a_batching_engine_pays_no_batch_cost() {
    let arrivals: Vec<u64> = (0..20).map(|k| k * 10_000).collect();
    let t = resident_tasks(&arrivals);
    let writes: Vec<(char, u64, u64)> = (0..8).map(|i| ('S', 0x4000 + 64 * i, 0)).collect();
    let r = run_batched_with_jobs(&t, (4, 3_000_000), vec![(28, 55_000, writes)]);
    for x in &r[1..] {
        let want = if x.task == 6 { 8 } else { 0 };
        assert_eq!(x.misses, want, "task {}", x.task);
    }
}

/// A batch's misses are counted against the task that made them: two
/// tasks queued behind a first, one reading eight cold lines and one the
/// first's (now cached) lines, run as one batch; the first misses 8, the
/// second 0 (the cold lines sit in other L1 sets than the warm ones).
#[test]
fn a_batch_counts_each_tasks_misses_as_its_own() {
    let warm: Vec<(char, u64, u64)> = (0..8).map(|i| ('L', 0x4000 + 64 * i, 100)).collect();
    let cold: Vec<(char, u64, u64)> = (8..16).map(|i| ('L', 0x8_0000 + 64 * i, 100)).collect();
    let t = trace(&[(0, 0, warm.clone()), (1, 0, cold), (2, 0, warm)]);
    let r = run_batched_with_jobs(&t, (2, 0), vec![]);
    assert_eq!(r[1].start_ps, r[2].start_ps, "tasks 1 and 2 are one batch");
    assert_eq!(r[1].end_ps, r[2].end_ps);
    assert_eq!((r[1].misses, r[2].misses), (8, 0));
}

/// A job on a worker's core, or on no core, is refused.
#[test]
fn a_job_needs_a_core_of_its_own() {
    let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let s = policies::sched::SCHEDULERS
        .build("round-robin", &ctx)
        .unwrap();
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &ctx)
        .unwrap();
    let e = sim::Engine::new(&m, sim::Config::default(), p).unwrap();
    let mut te = TaskEngine::new(e, &m, &[0, 1], s).unwrap();
    let job = trace(&[(0, 0, vec![('L', 0, 0)])]).tasks.remove(0);
    let e = te.set_jobs(&m, vec![(1, job.clone())]).unwrap_err();
    assert_eq!(e.to_string(), "background job 0: core 1 is a worker's");
    let e = te.set_jobs(&m, vec![(56, job)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "background job 0: core 56 does not exist (56 cores)"
    );
}

/// A background job's reads load the memory channels: a task that reads
/// memory while jobs on the socket's other 27 cores stream 1 MiB each
/// through its channels takes longer than alone; the same task before
/// the jobs does not.
#[test]
fn a_background_jobs_reads_load_the_channels() {
    // Two tasks, each 64 loads of distinct lines (cold: from memory).
    let task = |base: u64| -> Vec<(char, u64, u64)> {
        (0..64).map(|i| ('L', base + 4096 * i, 0)).collect()
    };
    let t = trace(&[(0, 0, task(0x10_0000)), (100_000, 0, task(0x90_0000))]);
    let quiet = run_with_jobs(&t, vec![]);
    // One job per other core of the socket, 1 MiB each: more than its
    // channels' bandwidth while they run.
    let stream = |c: u64| -> Vec<(char, u64, u64)> {
        (0..16_384)
            .map(|i| ('L', 0x1_0000_0000 + (c << 24) + 64 * i, 0))
            .collect()
    };
    let jobs = (1..28).map(|c| (c, 90_000, stream(c as u64))).collect();
    let busy = run_with_jobs(&t, jobs);
    assert_eq!(
        busy[0].service_ps(),
        quiet[0].service_ps(),
        "before the job"
    );
    assert!(
        busy[1].service_ps() > quiet[1].service_ps(),
        "beside the job: {} vs {} ps",
        busy[1].service_ps(),
        quiet[1].service_ps()
    );
}

#[test]
fn mean_wait_through_the_memory_model_is_md1_within_3_percent() {
    // Service D measured on one run; arrivals then scaled to rho.
    let probe = resident_tasks(&[0, 1_000_000]);
    let (r, _) = run("xeon-2s", &probe, &[0], "round-robin", "first-touch", None);
    let d_ns = r[1].service_ps() as f64 / 1000.0;
    for rho in [0.3, 0.6, 0.9] {
        let arrivals = poisson(200_000, d_ns / rho, 11);
        let (r, _) = run(
            "xeon-2s",
            &resident_tasks(&arrivals),
            &[0],
            "round-robin",
            "first-touch",
            None,
        );
        let mean = r.iter().map(|x| x.queue_ps() as f64 / 1000.0).sum::<f64>() / r.len() as f64;
        let want = rho * d_ns / (2.0 * (1.0 - rho));
        assert!(
            (mean - want).abs() / want < 0.03,
            "rho {rho}: mean wait {mean:.2} ns, M/D/1 {want:.2} ns"
        );
    }
}

#[test]
fn static_keeps_a_keys_working_set_warm_round_robin_does_not() {
    // 4 keys, each rereading its own 64 lines (4 KiB: fits one core's L2),
    // low load (tasks far apart), 5 workers on one node (so round-robin
    // does not happen to follow the keys).
    let mut tasks = Vec::new();
    for i in 0..400u64 {
        let key = (i % 4) as u32;
        let base = 0x100_0000 * (key as u64 + 1);
        let acc = (0..64).map(|j| ('L', base + 64 * j, 0)).collect();
        tasks.push((i * 100_000, key, acc));
    }
    let t = trace(&tasks);
    let mean_service = |sched: &str| {
        // Misses blocking, no compute: service is the accesses' latency.
        let (r, _) = run(
            "xeon-2s",
            &t,
            &[0, 1, 2, 3, 4],
            sched,
            "first-touch",
            Some(1),
        );
        r.iter().map(|x| x.service_ps() as f64).sum::<f64>() / r.len() as f64
    };
    let (st, rr) = (mean_service("static"), mean_service("round-robin"));
    assert!(st < 0.8 * rr, "static {st:.0} ps vs round-robin {rr:.0} ps");
}

#[test]
fn tasks_away_from_their_data_pay_the_remote_penalty_and_locality_avoids_it() {
    // Data bound to node 1; each task reads 200 fresh lines (all from
    // memory), misses blocking (--mlp 1), no compute.
    let mk = |n: u64| -> TaskTrace {
        let tasks: Vec<Spec> = (0..n)
            .map(|i| {
                let acc = (0..200)
                    .map(|j| ('L', 0x1000_0000 + (i * 200 + j) * 4096, 0))
                    .collect();
                (i * 1_000_000, 0u32, acc)
            })
            .collect();
        trace(&tasks)
    };
    let t = mk(20);
    let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let node1 = m.core_node.iter().position(|&n| n == 1).unwrap();
    let per_access = |core: usize| {
        let (r, _) = run("xeon-2s", &t, &[core], "round-robin", "bind:1", Some(1));
        r.iter().map(|x| x.service_ps() as f64).sum::<f64>() / (r.len() * 200) as f64
    };
    let (far, near) = (per_access(0), per_access(node1));
    let penalty = m.route_ps[0][1] as f64;
    assert!(penalty > 0.0);
    assert!(
        ((far - near) - penalty).abs() / penalty < 0.10,
        "node-0 worker {far:.0} ps/access, node-1 {near:.0}, the route's penalty {penalty} ps"
    );
    // `locality` learns where key 0's data lives from its first task and
    // sends the rest to the node-1 worker.
    let (r, _) = run(
        "xeon-2s",
        &mk(40),
        &[0, node1],
        "locality",
        "bind:1",
        Some(1),
    );
    let on_node1 = r.iter().filter(|x| x.node == 1).count();
    assert!(on_node1 >= 39, "{on_node1} of 40 on node 1");
}

#[test]
fn writers_of_one_line_on_two_workers_invalidate_each_other_on_one_they_do_not() {
    let tasks: Vec<Spec> = (0..100u64)
        .map(|i| {
            (
                i * 10_000,
                (i % 2) as u32,
                vec![('L', 0x8000, 5), ('S', 0x8000, 5)],
            )
        })
        .collect();
    let t = trace(&tasks);
    let (_, two) = run("xeon-2s", &t, &[0, 1], "static", "first-touch", None);
    assert!(two.coherence.invalidations > 50, "{:?}", two.coherence);
    assert!(two.coherence.cache_to_cache > 50, "{:?}", two.coherence);
    let (_, one) = run("xeon-2s", &t, &[0], "static", "first-touch", None);
    assert_eq!(
        (one.coherence.invalidations, one.coherence.cache_to_cache),
        (0, 0)
    );
}

#[test]
fn replay_workers_writes_tasks_csv_and_a_tasks_summary_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let arrivals = poisson(500, 2000.0, 3);
    let tasks: Vec<Spec> = arrivals
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let key = (i % 7) as u32;
            let acc = (0..16)
                .map(|j| ('L', 0x10_0000 * (key as u64 + 1) + 64 * j, 20))
                .collect();
            (a, key, acc)
        })
        .collect();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, csv(&tasks)).unwrap();
    let out = |tag: &str, sched: &str| {
        let o = dir.path().join(tag);
        common::stdout(&[
            "replay",
            path.to_str().unwrap(),
            "--machine",
            "xeon-2s",
            "--workers",
            "4",
            "--scheduler",
            sched,
            "--out",
            o.to_str().unwrap(),
        ]);
        o
    };
    for sched in policies::sched::SCHEDULERS.entries {
        let a = out(&format!("{}-a", sched.name), sched.name);
        let b = out(&format!("{}-b", sched.name), sched.name);
        let csv_a = std::fs::read_to_string(a.join("tasks.csv")).unwrap();
        assert_eq!(
            csv_a,
            std::fs::read_to_string(b.join("tasks.csv")).unwrap(),
            "{}",
            sched.name
        );
        assert!(csv_a.starts_with(
            "task,key,worker,core,node,arrival_ns,start_ns,end_ns,queue_ns,service_ns,accesses,misses\n"
        ));
        assert_eq!(csv_a.lines().count(), 501, "{}", sched.name);
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(a.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(s["tasks"]["count"], 500);
        for k in ["mean", "p50", "p90", "p99", "p999", "max"] {
            assert!(s["tasks"]["latency_ms"][k].as_f64().unwrap() > 0.0, "{k}");
        }
        assert!(s["tasks"]["queue_ms"]["mean"].is_number());
        assert!(s["tasks"]["service_ms"]["mean"].as_f64().unwrap() > 0.0);
        assert_eq!(s["accesses"], 500 * 16);
    }
}

#[test]
fn bad_task_traces_and_worker_specs_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "task,op,addr,size,gap_ns,arrival_ns,key\n0,L,64,8,,,\n",
    )
    .unwrap();
    let good = dir.path().join("good.csv");
    std::fs::write(&good, csv(&[(0, 0, vec![('L', 64, 0)])])).unwrap();
    for (file, extra, want) in [
        (
            &bad,
            vec!["--workers", "2"],
            "line 2, record 0: access of task 0 outside the task",
        ),
        (
            &good,
            vec!["--workers", "0"],
            "--workers 0: the machine has 56 cores",
        ),
        (
            &good,
            vec!["--workers", "0,0"],
            "core 0 is given to two workers",
        ),
        (&good, vec!["--workers", "0,999"], "core 999 does not exist"),
        (
            &good,
            vec!["--workers", "2", "--scheduler", "fastest"],
            "unknown scheduler \"fastest\"",
        ),
    ] {
        let mut args = vec!["replay", file.to_str().unwrap(), "--machine", "xeon-2s"];
        args.extend(extra);
        let o = common::numasim(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn trace_info_reports_tasks_keys_and_the_arrival_span() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.csv");
    std::fs::write(
        &p,
        csv(&[
            (1000, 3, vec![('L', 64, 5), ('S', 128, 0)]),
            (2500, 1, vec![('L', 64, 0)]),
        ]),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&common::stdout(&[
        "trace",
        "info",
        p.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(v["format"], "csv-tasks");
    assert_eq!(
        (
            v["tasks"].as_u64(),
            v["keys"].as_u64(),
            v["accesses"].as_u64()
        ),
        (Some(2), Some(2), Some(3))
    );
    assert_eq!(
        (
            v["arrival_ns"]["first"].as_u64(),
            v["arrival_ns"]["last"].as_u64()
        ),
        (Some(1000), Some(2500))
    );
}

fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_recorded_request_loop_becomes_one_task_per_request() {
    if !(have("gcc") && have("valgrind") && have("nm")) {
        if std::env::var("NUMASIM_REQUIRE_VALGRIND").is_ok_and(|v| v == "1") {
            panic!("gcc, valgrind and nm are required (NUMASIM_REQUIRE_VALGRIND=1)");
        }
        eprintln!(
            "\n*** SKIPPED recorded request loop: gcc, valgrind or nm not installed (apt-get install valgrind gcc binutils) ***\n"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    std::fs::write(
        p("loop.c"),
        "#include <stdlib.h>\nstatic long table[4096];\n\
         __attribute__((noinline)) long handle(int req) { long s = 0;\n\
         for (int i = 0; i < 64; i++) s += table[(req * 64 + i) & 4095];\n\
         table[req & 4095] = s; return s; }\n\
         int main(int argc, char **argv) { int n = atoi(argv[1]); long t = 0;\n\
         for (int r = 0; r < n; r++) t += handle(r); return (int)(t & 1); }\n",
    )
    .unwrap();
    let run = |c: &mut std::process::Command| {
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "{c:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    // -no-pie: the handler runs at the address nm gives.
    run(std::process::Command::new("gcc").args(["-O1", "-no-pie", "-o", &p("loop"), &p("loop.c")]));
    let nm = run(std::process::Command::new("nm").arg(p("loop")));
    let pc = nm
        .lines()
        .find_map(|l| l.strip_suffix(" T handle"))
        .expect("nm shows handle");
    run(std::process::Command::new("valgrind").args([
        "--tool=lackey",
        "--trace-mem=yes",
        &format!("--log-file={}", p("loop.lackey")),
        &p("loop"),
        "23",
    ]));
    let pc = format!("0x{pc}");
    let convert = [
        "trace",
        "convert",
        &p("loop.lackey"),
        &p("loop.nst"),
        "--task-pc",
        &pc,
    ];
    // Lackey has no times: arrivals must be given.
    let o = common::numasim(&convert);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("give --arrivals poisson:QPS[:SEED]"), "{err}");
    assert!(
        !dir.path().join("loop.nst").exists(),
        "nothing half-written"
    );
    let mut with = convert.to_vec();
    with.extend(["--arrivals", "poisson:10000:1", "--keys", "4"]);
    common::stdout(&with);
    let v: serde_json::Value = serde_json::from_str(&common::stdout(&[
        "trace",
        "info",
        &p("loop.nst"),
        "--json",
    ]))
    .unwrap();
    assert_eq!(v["tasks"], 23, "one task per request the loop ran");
    assert_eq!(v["format"], "native-tasks");
    for sched in policies::sched::SCHEDULERS.entries {
        common::stdout(&[
            "replay",
            &p("loop.nst"),
            "--machine",
            "xeon-2s",
            "--workers",
            "4",
            "--scheduler",
            sched.name,
        ]);
    }
}

/// Records before the first task warm the caches: a task reading lines
/// the program's start-up touched hits them; the same trace without its
/// warm-up misses them. The warm-up itself is untimed: the task starts at
/// its arrival, with no queue left behind.
#[test]
fn records_before_the_first_task_warm_the_caches() {
    let mut warm = trace(&[(1000, 0, vec![('L', 0x1000_0000, 0), ('L', 0x1000_0040, 0)])]);
    let cold = warm.clone();
    for line in 0..4096u64 {
        // 256 KiB written: more than the L1D, within the L2 (xeon-2s).
        let mut a = traces::Access::new(
            traces::tasks::WARMUP_TASK,
            traces::Kind::Store,
            0x2000_0000 + line * 64,
            8,
        );
        a.flags = 0;
        warm.warmup.push(a);
    }
    for addr in [0x1000_0000u64, 0x1000_0040] {
        warm.warmup.push(traces::Access::new(
            traces::tasks::WARMUP_TASK,
            traces::Kind::Load,
            addr,
            8,
        ));
    }
    let (w, ws) = run("xeon-2s", &warm, &[0], "round-robin", "first-touch", None);
    let (c, _) = run("xeon-2s", &cold, &[0], "round-robin", "first-touch", None);
    assert_eq!((w[0].misses, c[0].misses), (0, 2), "warmed lines hit");
    assert_eq!(w[0].start_ps, 1_000_000, "no wait behind the warm-up");
    assert!(w[0].latency_ps() < c[0].latency_ps());
    // The warm-up's accesses are not counted as the run's.
    assert_eq!(ws.accesses, 2, "{ws:?}");
    // Nor do they leave queues behind: 20 000 memory reads at start-up
    // (all at time 0 to the model), then a task reading a line they did
    // not touch pays exactly what it pays on a cold machine.
    let mut busy = trace(&[(1000, 0, vec![('L', 0x4000_0000, 0)])]);
    let fresh = busy.clone();
    for line in 0..20_000u64 {
        busy.warmup.push(traces::Access::new(
            traces::tasks::WARMUP_TASK,
            traces::Kind::Load,
            0x8000_0000 + line * 64,
            8,
        ));
    }
    for pf in [None, Some("stream")] {
        let (b, _) = run_pf("xeon-2s", &busy, pf);
        let (f, _) = run_pf("xeon-2s", &fresh, pf);
        assert_eq!(b[0].latency_ps(), f[0].latency_ps(), "prefetcher {pf:?}");
    }
}

/// [`run`] on one worker (core 0), round-robin, first-touch, with a
/// prefetcher at the L2 if given.
fn run_pf(
    machine: &str,
    t: &TaskTrace,
    pf: Option<&str>,
) -> (Vec<TaskRecord>, sim::results::Summary) {
    let Some(pf) = pf else {
        return run(machine, t, &[0], "round-robin", "first-touch", None);
    };
    let m = sim::Machine::from_toml(sim::presets::preset(machine).unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let s = policies::sched::SCHEDULERS
        .build("round-robin", &ctx)
        .unwrap();
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &ctx)
        .unwrap();
    let mut e = sim::Engine::new(&m, sim::Config::default(), p).unwrap();
    let prefetcher = policies::prefetch::PREFETCHERS.build(pf, &ctx).unwrap();
    e.add_prefetcher(prefetcher, 1).unwrap();
    let mut te = TaskEngine::new(e, &m, &[0], s).unwrap();
    let mut recs = Vec::new();
    te.run(t, |r| recs.push(*r)).unwrap();
    let summary = te.engine.summary();
    (recs, summary)
}

/// `trace convert --task-pc` keeps what ran before the first task as the
/// warm-up (`--drop-warmup` drops it), in both forms.
#[test]
fn convert_keeps_the_start_up_as_warm_up_unless_told_to_drop_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    // Lackey text: three records of start-up, then two requests.
    std::fs::write(
        p("prog.lackey"),
        "I  00400000,4\n S 10000000,8\n L 10000040,8\n\
         I  00500000,4\n L 10000000,8\nI  00500000,4\n L 10000040,8\n",
    )
    .unwrap();
    for (out, extra, want) in [
        ("kept.nst", None, 3),
        ("kept.csv", None, 3),
        ("dropped.nst", Some("--drop-warmup"), 0),
    ] {
        let mut args = vec![
            "trace",
            "convert",
            &*p("prog.lackey").leak(),
            &*p(out).leak(),
            "--task-pc",
            "0x500000",
            "--arrivals",
            "poisson:1000:1",
        ];
        args.extend(extra);
        common::ok(&args);
        let v: serde_json::Value =
            serde_json::from_str(&common::stdout(&["trace", "info", &p(out), "--json"])).unwrap();
        assert_eq!(
            (v["tasks"].as_u64(), v["warmup_records"].as_u64()),
            (Some(2), Some(want)),
            "{out}"
        );
    }
    let csv = std::fs::read_to_string(p("kept.csv")).unwrap();
    assert!(csv.contains("\nw,S,0x10000000,8,,,\n"), "{csv}");
    // Replayed, the warmed trace misses less (both requests' lines were
    // touched at start-up).
    let misses = |f: &str| -> u64 {
        let o = dir.path().join(format!("o-{f}"));
        common::ok(&[
            "replay",
            &p(f),
            "--machine",
            "xeon-2s",
            "--workers",
            "1",
            "--out",
            o.to_str().unwrap(),
        ]);
        let text = std::fs::read_to_string(o.join("tasks.csv")).unwrap();
        let mut lines = text.lines();
        let h: Vec<&str> = lines.next().unwrap().split(',').collect();
        let c = h
            .iter()
            .position(|x| *x == "misses")
            .expect("a misses column");
        lines
            .map(|l| l.split(',').nth(c).unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(misses("dropped.nst") - misses("kept.nst"), 2);
}

#[test]
fn compare_on_a_task_trace_pairs_rows_task_by_task() {
    let dir = tempfile::tempdir().unwrap();
    // Keys rewriting private working sets at low load: on the key's own
    // worker the lines stay in its caches; moved between cores, each task
    // takes them from the last one (cache-to-cache).
    let mut tasks = Vec::new();
    for i in 0..2000u64 {
        let key = (i % 4) as u32;
        let base = 0x100_0000 * (key as u64 + 1);
        tasks.push((
            i * 100_000,
            key,
            (0..64).map(|j| ('S', base + 64 * j, 0)).collect(),
        ));
    }
    std::fs::write(dir.path().join("t.csv"), csv(&tasks)).unwrap();
    let exp = dir.path().join("e.toml");
    std::fs::write(
        &exp,
        "[experiment]\nname = \"affinity\"\nseeds = [1, 2]\n\n\
         [workload]\ntrace = \"t.csv\"\nmachine = \"xeon-2s\"\nworkers = \"0,1,2,3,4\"\nmlp = 1\n\n\
         [[row]]\nname = \"static\"\nscheduler = \"static\"\n\n\
         [[row]]\nname = \"round_robin\"\nscheduler = \"round-robin\"\n",
    )
    .unwrap();
    let run = |tag: &str, threads: &str| {
        let out = dir.path().join(tag);
        let text = common::stdout(&[
            "compare",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
        ]);
        assert!(text.contains("paired by task"), "{text}");
        std::fs::read_to_string(out.join("compare.csv")).unwrap()
    };
    let (a, b) = (run("a", "1"), run("b", "2"));
    assert_eq!(a, b, "the same bytes at any --threads");
    let mut lines = a.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(header.contains(&"tp99_us") && header.contains(&"tp99_ci_low_us"));
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0][col("requests")], "4000", "2000 tasks × 2 seeds");
    // Round-robin moves keys between cores: slower, its whole CI above zero.
    let lo: f64 = rows[1][col("tp99_ci_low_us")].parse().unwrap();
    assert!(lo > 0.0, "{a}");
}

#[test]
fn trace_gen_tasks_makes_a_service_whose_storm_invalidates() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("svc.csv");
    let p = p.to_str().unwrap();
    let invalidations = |bg: &str| {
        common::stdout(&[
            "trace",
            "gen",
            "tasks",
            "-n",
            "2000",
            "--keys",
            "8",
            "--qps",
            "1000000",
            "--background-every",
            bg,
            "--sweep-lines",
            "256",
            "--dirty-lines",
            "16",
            "-o",
            p,
        ]);
        let t = traces::tasks::read_task_csv(std::fs::File::open(p).unwrap()).unwrap();
        let cores: Vec<usize> = (0..4).collect();
        run("xeon-2s", &t, &cores, "static", "first-touch", None)
            .1
            .coherence
            .invalidations
    };
    // The background tasks' writes of hot lines other cores hold invalidate them.
    let (quiet, storm) = (invalidations("0"), invalidations("200"));
    assert!(storm > quiet + 10 * 8 * 16 / 2, "{quiet} → {storm}");
}

#[test]
fn the_timeline_is_trace_event_json_with_one_slice_per_task() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("svc.csv");
    let tl = dir.path().join("tl.json");
    common::stdout(&[
        "trace",
        "gen",
        "tasks",
        "-n",
        "3000",
        "--keys",
        "8",
        "--qps",
        "2000000",
        "--background-every",
        "500",
        "--sweep-lines",
        "256",
        "-o",
        p.to_str().unwrap(),
    ]);
    let out = dir.path().join("out");
    common::stdout(&[
        "replay",
        p.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--workers",
        "4",
        "--scheduler",
        "least-loaded",
        "--timeline",
        tl.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let ev = v["traceEvents"].as_array().unwrap();
    let slices: Vec<&serde_json::Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
    // The default window (2 s) covers this 1.5 ms run: every task is a slice.
    let tasks = std::fs::read_to_string(out.join("tasks.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(slices.len(), tasks);
    let mut by_track: std::collections::BTreeMap<u64, Vec<(f64, f64)>> = Default::default();
    for s in &slices {
        for k in ["ts", "dur", "pid", "tid"] {
            assert!(s[k].is_number(), "{k} in {s}");
        }
        by_track
            .entry(s["tid"].as_u64().unwrap())
            .or_default()
            .push((s["ts"].as_f64().unwrap(), s["dur"].as_f64().unwrap()));
    }
    assert_eq!(by_track.len(), 4, "a track per worker");
    for (tid, mut v) in by_track {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in v.windows(2) {
            assert!(
                w[0].0 + w[0].1 <= w[1].0 + 1e-6,
                "track {tid}: {w:?} overlap"
            );
        }
    }
    // The queued-task counter ends at zero.
    let last = ev.iter().rfind(|e| e["ph"] == "C").unwrap();
    assert_eq!(last["args"]["queued"], 0);
    // A window outside the run holds no slice.
    common::stdout(&[
        "replay",
        p.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--workers",
        "4",
        "--timeline",
        tl.to_str().unwrap(),
        "--timeline-window",
        "1s..2s",
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    assert!(
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["ph"] != "X")
    );
}

/// ⚑ No scheduler sees the future: the same trace, with every task that
/// arrives after T made ten times heavier (and reading other memory) —
/// every task arriving before T goes to the same worker. (It catches a
/// dispatcher reading the trace ahead; that a task's memory time is
/// published only at its end is by construction: the end is its own event.)
#[test]
fn no_task_dispatch_before_t_depends_on_tasks_after_t() {
    let arrivals = poisson(3000, 400.0, 5);
    let t_ns = arrivals[1500];
    let mk = |heavy_after: Option<u64>| -> TaskTrace {
        let tasks: Vec<Spec> = arrivals
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let key = (i % 6) as u32;
                let base = 0x100_0000 * (key as u64 + 1);
                let n = if heavy_after.is_some_and(|t| a > t) {
                    160
                } else {
                    16
                };
                let far = if heavy_after.is_some_and(|t| a > t) {
                    0x4000_0000
                } else {
                    0
                };
                (
                    a,
                    key,
                    (0..n)
                        .map(|j| ('L', far + base + 64 * (j % 64), 30))
                        .collect(),
                )
            })
            .collect();
        trace(&tasks)
    };
    let (light, heavy) = (mk(None), mk(Some(t_ns)));
    let cores: Vec<usize> = (0..4).chain(28..32).collect();
    for s in policies::sched::SCHEDULERS.entries {
        let (a, _) = run("xeon-2s", &light, &cores, s.name, "first-touch", None);
        let (b, _) = run("xeon-2s", &heavy, &cores, s.name, "first-touch", None);
        let before = |r: &[TaskRecord]| -> Vec<(u32, u32)> {
            r.iter()
                .filter(|x| x.arrival_ps <= t_ns * 1000)
                .map(|x| (x.task, x.worker))
                .collect()
        };
        assert!(before(&a).len() > 1000);
        assert_eq!(
            before(&a),
            before(&b),
            "{}: a dispatch before T changed",
            s.name
        );
        // The change is real: the heavy run is slower after T.
        let service = |r: &[TaskRecord]| r.iter().map(|x| x.service_ps()).sum::<u64>();
        assert!(service(&b) > service(&a), "{}", s.name);
    }
}

/// ⚑ No scheduler sees the future, the machine's this time: the same
/// trace on a machine whose memory channels serve 40× slower from time T
/// on (`Engine::slow_memory_after`) — every task arriving before T goes to
/// the same worker, for every registered scheduler. The memory is the
/// bottleneck (every page on node 0's two channels, eight workers on four
/// nodes reading it), so its queues hold misses for a long while: a value
/// published before it is known (a task's memory time before its accesses
/// have completed, the completion of accesses still queued) differs
/// between the two machines and fails it.
#[test]
fn no_task_dispatch_before_t_depends_on_the_machine_after_t() {
    // Tasks of 8 keys, each 32 random lines of its key's 64 MiB: most
    // accesses go to memory, every 8th a store.
    let arrivals = poisson(4000, 40.0, 11);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let tasks: Vec<Spec> = arrivals
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let key = (i % 8) as u32;
            let base = (key as u64 + 1) << 32;
            let acc = (0..32)
                .map(|j| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let line = (x >> 33) % (1 << 20);
                    (if j % 8 == 7 { 'S' } else { 'L' }, base + 64 * line, 1)
                })
                .collect();
            (a, key, acc)
        })
        .collect();
    let t = trace(&tasks);
    let cores = [0, 1, 16, 17, 32, 33, 48, 49];
    let m = sim::Machine::from_toml(sim::presets::preset("epyc-4numa").unwrap()).unwrap();
    let run = |sched: &str, slow_at_ps: Option<u64>| -> Vec<TaskRecord> {
        let ctx = policies::registry::Ctx::for_machine(&m);
        let s = policies::sched::SCHEDULERS.build(sched, &ctx).unwrap();
        let p = policies::placement::PLACEMENTS
            .build("bind:0", &ctx)
            .unwrap();
        let mut e = sim::Engine::new(&m, sim::Config::default(), p).unwrap();
        if let Some(at) = slow_at_ps {
            e.slow_memory_after(at, 40);
        }
        let mut te = TaskEngine::new(e, &m, &cores, s).unwrap();
        let mut recs = Vec::new();
        te.run(&t, |r| recs.push(*r)).unwrap();
        recs.sort_by_key(|r| r.task);
        recs
    };
    let mut moved_after_t = 0;
    for s in policies::sched::SCHEDULERS.entries {
        let a = run(s.name, None);
        for k in (1..8).map(|i| i * 500) {
            let t_ps = arrivals[k] * 1000 + 500;
            let b = run(s.name, Some(t_ps));
            let before = |r: &[TaskRecord]| -> Vec<(u32, u32)> {
                r.iter()
                    .filter(|x| x.arrival_ps < t_ps)
                    .map(|x| (x.task, x.worker))
                    .collect()
            };
            let (a0, b0) = (before(&a), before(&b));
            assert_eq!((a0.len(), b0.len()), (k + 1, k + 1));
            if let Some(i) = (0..a0.len()).find(|&i| a0[i] != b0[i]) {
                panic!(
                    "{}: task {} (arriving before T = {t_ps} ps) went to worker {} on one machine, {} on the one slower after T",
                    s.name, a0[i].0, a0[i].1, b0[i].1
                );
            }
            // The change is real: tasks starting after T take longer.
            let after = |r: &[TaskRecord]| {
                r.iter()
                    .filter(|x| x.start_ps >= t_ps)
                    .map(|x| x.service_ps())
                    .sum::<u64>()
            };
            assert!(
                after(&b) > after(&a) * 3 / 2,
                "{}: {} vs {} ps",
                s.name,
                after(&b),
                after(&a)
            );
            moved_after_t += (a.iter().zip(&b).any(|(x, y)| x.worker != y.worker)) as usize;
        }
    }
    // And dispatch does follow the machine: after T, some scheduler
    // dispatches differently on the slower one.
    assert!(moved_after_t > 0);
}

/// A batch's tasks issue through one MLP window: with one miss in flight
/// allowed, the second task's miss waits for the first's to complete (the
/// batch takes two memory reads back to back); with two, they overlap
/// (about one). A window per task would overlap them at once.
#[test]
fn a_batchs_tasks_share_one_mlp_window() {
    let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    // Both arrive while task 0 runs, so they form one batch of two.
    let t = trace(&[
        (0, 0, vec![('L', 0x1000, 1_000_000)]),
        (10, 0, vec![('L', 0x50_0000, 0)]),
        (20, 0, vec![('L', 0x60_0000, 0)]),
    ]);
    let service = |mlp: u32| {
        let cfg = sim::Config {
            mlp: Some(mlp),
            ..sim::Config::default()
        };
        let mut te = common::task_engine(&m, &[0], "round-robin", cfg);
        te.set_batching(4, 0);
        let mut r = Vec::new();
        te.run(&t, |x| r.push(*x)).unwrap();
        r.sort_by_key(|x| x.task);
        assert_eq!(r[1].start_ps, r[2].start_ps, "one batch");
        assert_eq!((r[1].memory_lines, r[2].memory_lines), (1, 1));
        r[1].service_ps()
    };
    let (one, two) = (service(1), service(2));
    // A memory read is tens of ns, a cycle a fraction of one.
    assert!(
        one > 2 * two - 2_000 && one < 2 * two + 2_000,
        "{one} vs {two} ps"
    );
    assert!(two > 20_000, "{two} ps");
}
