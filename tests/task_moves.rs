//! Shard moves in the task engine (`sim::tasks::Moves`, the request
//! model's moves at line level) against hand-computed cases: without a
//! warm-up traffic switches at once and the first batch of the moved key
//! waits for its state (the store's service plus its latency); with one,
//! the old worker serves until the state has landed; a moved key's tasks
//! read its new copy.

use sim::tasks::{Moves, ObjectStore, TaskEngine, TaskMove, TaskRecord};
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
/// (key 0's home is worker 0), with `MOVE`: the records by task.
fn run(tasks: Vec<Task>, warm: bool) -> Vec<TaskRecord> {
    let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let s = policies::sched::SCHEDULERS.build("static", &ctx).unwrap();
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &ctx)
        .unwrap();
    let e = sim::Engine::new(&m, sim::Config::default(), p).unwrap();
    let mut te = TaskEngine::new(e, &m, &[0, 1], s).unwrap();
    te.set_moves(Moves::new(vec![MOVE], STORE, warm)).unwrap();
    let t = TaskTrace {
        tasks,
        ..TaskTrace::default()
    };
    let mut r = Vec::new();
    te.run(&t, |x| r.push(*x)).unwrap();
    r.sort_by_key(|x| x.task);
    r
}

#[test]
fn a_cold_move_switches_at_once_and_its_first_batch_waits_for_the_state() {
    // Task 0 before the move, 1 and 2 after (2 once the state has landed).
    let r = run(vec![task(0, 0), task(1, 20_000), task(2, 5_000_000)], false);
    assert_eq!((r[0].worker, r[1].worker, r[2].worker), (0, 1, 1));
    // Task 1 started the fetch at its arrival and waited for it: its
    // latency is the fetch plus one read of the new copy from memory.
    assert_eq!(r[1].memory_lines, 1, "the new copy is cold");
    let read = r[1].latency_ps() - FETCH_PS;
    assert!(read > 0 && read < 1_000_000, "{read} ps");
    // Task 2 found the state landed: one fetch only, no wait.
    assert!(r[2].latency_ps() < 1_000_000, "{r:?}");
}

#[test]
fn a_warm_move_serves_from_the_old_worker_until_the_state_lands() {
    // The state lands at 10 µs + 2 ms: task 1 is before, task 2 after.
    let r = run(vec![task(0, 0), task(1, 20_000), task(2, 2_020_000)], true);
    assert_eq!((r[0].worker, r[1].worker, r[2].worker), (0, 0, 1));
    // Task 1 on the old copy, cached by task 0; task 2 on the new one.
    assert_eq!((r[1].memory_lines, r[2].memory_lines), (0, 1));
    assert!(r.iter().all(|x| x.latency_ps() < 1_000_000), "{r:?}");
}

#[test]
fn a_move_to_a_worker_that_does_not_exist_is_refused() {
    let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::for_machine(&m);
    let s = policies::sched::SCHEDULERS.build("static", &ctx).unwrap();
    let p = policies::placement::PLACEMENTS
        .build("first-touch", &ctx)
        .unwrap();
    let e = sim::Engine::new(&m, sim::Config::default(), p).unwrap();
    let mut te = TaskEngine::new(e, &m, &[0, 1], s).unwrap();
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
