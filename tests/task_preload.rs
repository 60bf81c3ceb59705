//! Preload in the task engine (`sim::tasks::TaskPreload`, the request
//! model's preload at line level) against hand-computed cases: a preload
//! brings a queued task's lines into its node's LLC, a batch waits for its
//! preload to land, the features a policy sees, and an oracle that is not
//! told the outcomes is refused.

mod common;

use std::sync::{Arc, Mutex};

use sim::policy::{Preload, PreloadDecision};
use sim::tasks::{TaskPreload, TaskRecord};
use traces::tasks::{Task, TaskTrace};
use traces::{Access, Kind};

/// A task: arrival (ns), key, line addresses read, compute gap before the
/// first (ns).
fn task(id: u32, at: u64, key: u32, lines: &[u64], gap: u64) -> Task {
    Task {
        id,
        key,
        arrival_ns: at,
        accesses: lines
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                (
                    Access::new(id, Kind::Load, a, 8),
                    if i == 0 { gap } else { 0 },
                )
            })
            .collect(),
    }
}

fn machine() -> sim::Machine {
    common::preset("xeon-2s")
}

/// Runs `tasks` on one worker (core 0, node 0) with `preload`: records by task.
fn run(m: &sim::Machine, tasks: Vec<Task>, preload: Option<Box<dyn Preload>>) -> Vec<TaskRecord> {
    run_counted(m, tasks, preload).0
}

/// [`run`], and the preloads fired.
fn run_counted(
    m: &sim::Machine,
    tasks: Vec<Task>,
    preload: Option<Box<dyn Preload>>,
) -> (Vec<TaskRecord>, u64) {
    let t = TaskTrace {
        tasks,
        ..TaskTrace::default()
    };
    let mut te = common::task_engine(m, &[0], "round-robin", sim::Config::default());
    if let Some(p) = preload {
        te.set_preload(TaskPreload::new(p, t.tasks.len(), 0, 1 << 30, None).unwrap());
    }
    let mut r = Vec::new();
    te.run(&t, |x| r.push(*x)).unwrap();
    r.sort_by_key(|x| x.task);
    (r, te.preload_stats().map_or(0, |p| p.preloads))
}

fn always(window_ms: u64) -> Box<dyn Preload> {
    Box::new(policies::preload::always::Always {
        window_ns: window_ms * 1_000_000,
    })
}

/// Eight lines of a task queued behind a 1 ms task: preloaded at its
/// arrival, they are LLC hits when it runs (none from memory), where
/// without preload all eight come from memory. The lines cross the
/// channels once either way.
#[test]
fn a_queued_tasks_preload_makes_its_reads_llc_hits() {
    let m = machine();
    let lines: Vec<u64> = (0..8).map(|i| 0x10_0000 + 64 * i).collect();
    let tasks = || {
        vec![
            task(0, 0, 0, &[0x1000], 1_000_000),
            task(1, 10_000, 0, &lines, 0),
        ]
    };
    let plain = run(&m, tasks(), None);
    let pre = run(&m, tasks(), Some(always(120)));
    assert_eq!((plain[1].memory_lines, plain[1].misses), (8, 8));
    assert_eq!((pre[1].memory_lines, pre[1].misses), (0, 8), "{pre:?}");
    // Queued: it started when task 0 ended, in both runs.
    assert_eq!(pre[1].start_ps, pre[0].end_ps);
    assert_eq!(plain[1].start_ps, plain[0].end_ps);
    assert!(pre[1].service_ps() < plain[1].service_ps());
    assert!(plain[1].missed(1.0) && !pre[1].missed(0.01));
}

/// On an idle worker the preload fires at the arrival and the task waits
/// for it to land: one line costs the memory read (the preload's) and
/// then an LLC hit, exactly the LLC latency more than reading it from
/// memory directly.
#[test]
fn a_batch_waits_for_its_preload_to_land() {
    let m = machine();
    let tasks = || vec![task(0, 5_000, 0, &[0x20_0000], 0)];
    let plain = run(&m, tasks(), None);
    let pre = run(&m, tasks(), Some(always(120)));
    let llc_ps = m.spec.nodes[0].llc.as_ref().unwrap().latency_ns as u64 * 1000;
    assert_eq!(pre[0].latency_ps(), plain[0].latency_ps() + llc_ps);
    assert_eq!(pre[0].memory_lines, 0);
}

/// What a policy is shown, computed by hand: task 0 reads four lines (an
/// idle worker, so its history is empty), task 1 half of them and two new
/// ones after task 0 has ended.
#[test]
fn a_policy_sees_the_request_models_features_at_line_level() {
    struct Spy(Arc<Mutex<Vec<Vec<f64>>>>);
    impl Preload for Spy {
        fn name(&self) -> String {
            "spy".into()
        }
        fn window_ns(&self) -> u64 {
            0
        }
        fn decide(&mut self, f: &[f64], _t: Option<bool>) -> PreloadDecision {
            self.0.lock().unwrap().push(f.to_vec());
            PreloadDecision::default()
        }
    }
    let m = machine();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let a: Vec<u64> = (0..4).map(|i| 0x30_0000 + 64 * i).collect();
    let b = [a[0], a[1], 0x30_1000, 0x30_1040];
    let tasks = vec![task(0, 0, 0, &a, 0), task(1, 1_000_000, 0, &b, 0)];
    run(&m, tasks, Some(Box::new(Spy(seen.clone()))));
    let f = seen.lock().unwrap().clone();
    let hist = sim::policy::HISTORY;
    assert_eq!(f.len(), 2);
    assert_eq!(f[0].len(), 3 + 3 * hist);
    // remote_shard, outstanding, cached_share; an empty history.
    assert_eq!(&f[0][..3], &[0.0, 0.0, 0.0]);
    assert_eq!(&f[0][3..6], &[1.0, 0.0, 0.0]);
    assert_eq!(&f[1][..3], &[0.0, 0.0, 0.5]);
    // Task 0's batch: nothing served above memory, 256 B read, the first
    // batch (no delta).
    assert_eq!(&f[1][3..6], &[0.0, 256.0 / 1e6, 0.0]);
}

/// The window: a preload fires its window before the batch is expected to
/// start, from what is known then. Task 0 runs 1 ms; task 1 (at 1.5 ms,
/// an idle worker) 0.1 ms; task 2 arrives at 1.55 ms, while task 1 runs,
/// and is expected to start at 1.5 + 1 = 2.5 ms (the last batch's
/// duration). With a 0.2 ms window its preload is due at 2.3 ms, after it
/// has started (at 1.6 ms): it does not fire. With 1 ms it fires at once.
#[test]
fn a_preload_fires_its_window_before_the_expected_start() {
    let m = machine();
    let tasks = || {
        vec![
            task(0, 0, 0, &[0x1000], 1_000_000),
            task(1, 1_500_000, 0, &[0x2000], 100_000),
            task(2, 1_550_000, 0, &[0x3000], 0),
        ]
    };
    let window = |ns: u64| -> Box<dyn Preload> {
        Box::new(policies::preload::always::Always { window_ns: ns })
    };
    let (r, short) = run_counted(&m, tasks(), Some(window(200_000)));
    assert!(r[2].start_ps < 1_700_000_000, "{r:?}");
    assert_eq!(short, 2, "tasks 0 and 1 (idle worker), not 2");
    let (_, long) = run_counted(&m, tasks(), Some(window(1_000_000)));
    assert_eq!(long, 3);
}

/// An oracle must be told the outcomes, one per task.
#[test]
fn an_oracle_without_outcomes_is_refused() {
    let oracle = || -> Box<dyn Preload> {
        Box::new(policies::preload::oracle::Oracle {
            window_ns: 1_000_000,
        })
    };
    let e = TaskPreload::new(oracle(), 3, 0, 64, None).err().unwrap();
    assert!(
        e.to_string().contains("needs the paired run's outcomes"),
        "{e}"
    );
    let e = TaskPreload::new(oracle(), 3, 0, 64, Some(vec![true]))
        .err()
        .unwrap();
    assert_eq!(e.to_string(), "preload outcomes: 1 given for 3 tasks");
    assert!(TaskPreload::new(oracle(), 3, 0, 64, Some(vec![true; 3])).is_ok());
}
