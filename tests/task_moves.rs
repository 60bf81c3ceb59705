//! Shard moves in the task engine (`sim::tasks::Moves`, the request
//! model's moves at line level) against hand-computed cases: without a
//! warm-up traffic switches at once and the first batch of the moved key
//! waits for its state (the store's service plus its latency); with one,
//! the old worker serves until the state has landed; a moved key's tasks
//! read its new copy.

mod common;

use sim::tasks::{Moves, ObjectStore, TaskMove, TaskRecord};
use traces::tasks::{Task, TaskTrace};
use traces::{Access, Kind};

/// A one-line task of key 0 at `at` ns.
fn task(id: u32, at: u64) -> Task {
    Task {
        id,
        key: 0,
        arrival_ns: at,
        accesses: vec![(Access::new(id, Kind::Load, 0x40_0000, 8), 0)],
    }
}

/// The store: 1 ms to the first byte, 1 GB/s, a 1 MB state: a fetch
/// lands 1 ms + 1 ms after it starts.
const STORE: ObjectStore = ObjectStore {
    latency_ps: 1_000_000_000,
    bytes_per_ps: 1e-3,
    state_bytes: 1_000_000,
};
const FETCH_PS: u64 = 2_000_000_000;

/// Key 0 moves from worker 0 to worker 1 at 10 µs, its copy 1 GiB on.
const MOVE: TaskMove = TaskMove {
    at_ps: 10_000_000,
    key: 0,
    to_worker: 1,
    shift: 1 << 30,
};

/// Runs `tasks` on workers at cores 0 and 1 of xeon-2s, static dispatch
/// (key 0's home is worker 0), with `MOVE`: the records by task, and
/// the state fetches made.
fn run(tasks: Vec<Task>, warm: bool) -> (Vec<TaskRecord>, u64) {
    let m = common::preset("xeon-2s");
    let mut te = common::task_engine(&m, &[0, 1], "static", sim::Config::default());
    te.set_moves(Moves::new(vec![MOVE], STORE, warm)).unwrap();
    let t = TaskTrace {
        tasks,
        ..TaskTrace::default()
    };
    let mut r = Vec::new();
    te.run(&t, |x| r.push(*x)).unwrap();
    r.sort_by_key(|x| x.task);
    (r, te.move_fetches().unwrap())
}

#[test]
fn a_cold_move_switches_at_once_and_its_first_batch_waits_for_the_state() {
    // Task 0 before the move; 1 and 2 after, 2 while 1 waits for the
    // state; 3 once it has landed.
    let tasks = vec![
        task(0, 0),
        task(1, 20_000),
        task(2, 1_000_000),
        task(3, 5_000_000),
    ];
    let (r, fetches) = run(tasks, false);
    assert_eq!(fetches, 1, "one fetch for every batch that waits");
    let workers: Vec<u32> = r.iter().map(|x| x.worker).collect();
    assert_eq!(workers, [0, 1, 1, 1]);
    // Task 2 waited for the same fetch: it started once task 1 ended.
    assert_eq!(r[2].start_ps, r[1].end_ps);
    // Task 1 started the fetch at its arrival and waited for it: its
    // latency is the fetch plus one read of the new copy from memory.
    assert_eq!(r[1].memory_lines, 1, "the new copy is cold");
    let read = r[1].latency_ps() - FETCH_PS;
    assert!(read > 0 && read < 1_000_000, "{read} ps");
    // Task 3 found the state landed: no wait.
    assert!(r[3].latency_ps() < 1_000_000, "{r:?}");
}

#[test]
fn a_warm_move_serves_from_the_old_worker_until_the_state_lands() {
    // The state lands at 10 µs + 2 ms = 2010 µs: tasks 1 and 2 are before
    // (2 by 0.5 µs), task 3 after (by 0.5 µs).
    let tasks = vec![
        task(0, 0),
        task(1, 20_000),
        task(2, 2_009_500),
        task(3, 2_010_500),
    ];
    let (r, fetches) = run(tasks, true);
    assert_eq!(fetches, 1);
    let workers: Vec<u32> = r.iter().map(|x| x.worker).collect();
    assert_eq!(workers, [0, 0, 0, 1]);
    // Tasks 1 and 2 on the old copy, cached by task 0; task 3 on the new one.
    let from_memory: Vec<u64> = r.iter().map(|x| x.memory_lines).collect();
    assert_eq!(from_memory, [1, 0, 0, 1]);
    assert!(r.iter().all(|x| x.latency_ps() < 1_000_000), "{r:?}");
}

/// A batch of the key that started before the switch does not undo it:
/// a scheduler still sees the key's data on the new worker's node after
/// that batch ends.
#[test]
fn a_batch_running_across_the_switch_leaves_the_key_on_its_new_node() {
    use std::sync::{Arc, Mutex};
    struct Spy(Arc<Mutex<Vec<u32>>>);
    impl sim::policy::Scheduler for Spy {
        fn name(&self) -> String {
            "spy".into()
        }
        fn pick(&mut self, r: &sim::policy::RequestView, _: &[sim::policy::WorkerView]) -> usize {
            self.0.lock().unwrap().push(r.data_node);
            0
        }
    }
    let m = common::preset("xeon-2s");
    let seen = Arc::new(Mutex::new(Vec::new()));
    // Worker 1 on core 28, the other socket (node 1).
    let spy = Box::new(Spy(seen.clone()));
    let mut te = common::task_engine_with(&m, &[0, 28], spy, sim::Config::default());
    let mv = TaskMove {
        at_ps: 10_000_000,
        ..MOVE
    };
    te.set_moves(Moves::new(vec![mv], STORE, false)).unwrap();
    // Task 0 runs 1 ms on worker 0 (node 0) across the move at 10 µs;
    // task 1 arrives after it ended.
    let mut t0 = task(0, 0);
    t0.accesses[0].1 = 1_000_000;
    let t = TaskTrace {
        tasks: vec![t0, task(1, 2_000_000)],
        ..TaskTrace::default()
    };
    te.run(&t, |_| {}).unwrap();
    assert_eq!(*seen.lock().unwrap(), [0, 1], "the switch stands");
}

#[test]
fn a_move_to_a_worker_that_does_not_exist_is_refused() {
    let m = common::preset("xeon-2s");
    let mut te = common::task_engine(&m, &[0, 1], "static", sim::Config::default());
    let bad = TaskMove {
        to_worker: 2,
        ..MOVE
    };
    let err = te
        .set_moves(Moves::new(vec![bad], STORE, false))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "shard move 0: worker 2 does not exist (2 workers)"
    );
}
