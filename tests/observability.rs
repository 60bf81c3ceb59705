//! ⚑ A policy sees only what a real system could observe at that moment.
//! Proven for every registered scheduler, preload and warm-up policy: run
//! the seed workload, then the same workload on a machine whose every
//! bandwidth is a quarter from time T on; every decision taken before T
//! (the worker each request went to, the preload call and its firing time)
//! must be identical. A value published before it happens — a batch's data stall
//! at the batch's start, its duration before it ended — makes decisions
//! before T depend on the machine after T, and this test fails.
//! The one preload left out is `oracle`: an upper bound told the outcomes
//! by definition, flagged as such in every table.

mod common;

use policies::PolicyError;
use policies::model::Model;
use policies::registry::{Ctx, ModelLoader};
use sim::serve::{Decision, ServeEngine};
use traces::workload::WorkloadSpec;

struct Loader;

impl ModelLoader for Loader {
    fn load(&self, path: &str) -> Result<Model, PolicyError> {
        let text = std::fs::read_to_string(common::root_dir().join("scenarios").join(path))
            .map_err(|e| {
                let e = std::io::Error::new(e.kind(), format!("{path}: {e}"));
                PolicyError::Load(std::sync::Arc::new(e))
            })?;
        Model::from_json(&text)
    }
}

/// The seed experiment's workload, shortened.
fn workload() -> WorkloadSpec {
    let text =
        std::fs::read_to_string(common::root_dir().join("scenarios/seed-inference.toml")).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let mut w: WorkloadSpec = table["workload"].clone().try_into().unwrap();
    w.duration_s = 3.0;
    w
}

/// The decisions of a run, its total data stall + transfer time (ns), and
/// the start times of its batches that stalled over 5 ms; with `slow_at`,
/// every bandwidth is a quarter from then on.
fn decisions(sched: &str, preload: &str, slow_at: Option<u64>) -> (Vec<Decision>, u64, Vec<u64>) {
    let (d, bubble, stalled, _) = decisions_with(sched, preload, "none", None, slow_at);
    (d, bubble, stalled)
}

/// As [`decisions`], with warm-up `warmup` and the workload's shard move
/// at `move_at_s` (else after the run); also whether the move's first
/// request was served.
fn decisions_with(
    sched: &str,
    preload: &str,
    warmup: &str,
    move_at_s: Option<f64>,
    slow_at: Option<u64>,
) -> (Vec<Decision>, u64, Vec<u64>, bool) {
    let mut spec = workload();
    if let Some(at) = move_at_s {
        spec.moves[0].at_s = at;
    }
    let m = sim::Machine::from_toml(sim::presets::preset(&spec.machine).unwrap()).unwrap();
    let ctx = Ctx {
        seed: 7,
        loader: Some(&Loader),
        ..Ctx::default()
    };
    let s = policies::sched::SCHEDULERS.build(sched, &ctx).unwrap();
    let w = policies::warmup::WARMUPS.build(warmup, &ctx).unwrap();
    let mut e = ServeEngine::new(&m, &spec, s, w).unwrap();
    if preload != "none" {
        e.set_preload(policies::preload::PRELOADS.build(preload, &ctx).unwrap());
    }
    e.record_decisions(true);
    if let Some(at) = slow_at {
        e.slow_down_after(at * 1000, None, 4.0);
    }
    let mut stalled = Vec::new();
    let totals = e
        .run(1, |r| {
            if r.stall_ps > 5_000_000_000 {
                stalled.push(r.start_ps / 1000);
            }
        })
        .unwrap();
    stalled.sort_unstable();
    (
        std::mem::take(&mut e.decisions),
        totals.bubble_ps / 1000,
        stalled,
        !totals.first_after_move.is_empty(),
    )
}

/// The index of the first decision before `t_ns` that differs between
/// two runs (after checking both took as many before it).
fn first_change_before(a: &[Decision], b: &[Decision], t_ns: u64) -> Option<usize> {
    let before = |d: &[Decision]| -> Vec<Decision> {
        d.iter()
            .filter(|x| x.at_ps < t_ns * 1000)
            .copied()
            .collect()
    };
    let (a0, b0) = (before(a), before(b));
    assert!(a0.len() > 1000, "{} decisions", a0.len());
    assert_eq!(a0.len(), b0.len(), "arrivals before T");
    (0..a0.len()).find(|&i| a0[i] != b0[i])
}

/// Times to change the machine at: 15 ms into each of the first episodes of
/// long stalls (the background sweeps), when a stall published early would
/// be worth peeking at — and would differ between the two machines.
fn change_times(stalled: &[u64]) -> Vec<u64> {
    let mut starts = Vec::new();
    for (i, &s) in stalled.iter().enumerate() {
        if i == 0 || s > stalled[i - 1] + 100_000_000 {
            starts.push(s + 15_000_000);
        }
    }
    starts.truncate(3);
    starts
}

#[test]
fn no_decision_before_t_depends_on_the_machine_after_t() {
    let preloads = ["none", "always", "learned:models/seed-gbdt.json"];
    let mut checked = 0;
    for sched in policies::sched::SCHEDULERS.entries {
        for preload in preloads {
            // The learned preload under one scheduler: its features, not the dispatch, matter.
            if preload.starts_with("learned") && sched.name != "numa-weighted-ewma" {
                continue;
            }
            let (a, bubble_a, stalled) = decisions(sched.name, preload, None);
            let times = change_times(&stalled);
            assert!(
                times.len() >= 2,
                "{}/{preload}: no sweeps to test at",
                sched.name
            );
            for t_ns in times {
                let (b, bubble_b, _) = decisions(sched.name, preload, Some(t_ns));
                let before = |d: &[Decision]| -> Vec<Decision> {
                    d.iter()
                        .filter(|x| x.at_ps < t_ns * 1000)
                        .copied()
                        .collect()
                };
                let (a0, b0) = (before(&a), before(&b));
                assert!(
                    a0.len() > 1000,
                    "{}/{preload}: {} decisions",
                    sched.name,
                    a0.len()
                );
                assert_eq!(
                    a0.len(),
                    b0.len(),
                    "{}/{preload}: arrivals before T",
                    sched.name
                );
                if let Some(i) = (0..a0.len()).find(|&i| a0[i] != b0[i]) {
                    panic!(
                        "{}/{preload}: decision {i} at {} ns (before T = {t_ns}) changed with the machine after T: {:?} vs {:?}",
                        sched.name,
                        a0[i].at_ps / 1000,
                        a0[i],
                        b0[i]
                    );
                }
                // The change is real: the run after T is slower.
                assert!(
                    bubble_b > bubble_a,
                    "{}/{preload}: the machine change had no effect",
                    sched.name
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, policies::sched::SCHEDULERS.entries.len() * 2 + 1);
}

/// The same for every registered warm-up policy (under every scheduler):
/// the seed's shard move brought into the run (at 1.2 s), the machine
/// changed while the moved shard's state is fetched (15 and 150 ms after
/// the move: a warm-up's fetch or the first request's cold fetch takes
/// ~340 ms) and in the first sweeps. A switch of traffic decided from when
/// a warm-up's fetch will end — known only once it has — changes decisions
/// before T, and this test fails.
#[test]
fn no_decision_before_t_depends_on_the_machine_after_t_under_any_warm_up() {
    const MOVE_NS: u64 = 1_200_000_000;
    let mut checked = 0;
    for warm in policies::warmup::WARMUPS.entries {
        for sched in policies::sched::SCHEDULERS.entries {
            let what = format!("{}/{}", sched.name, warm.name);
            let (a, bubble_a, stalled, moved) =
                decisions_with(sched.name, "none", warm.name, Some(1.2), None);
            assert!(moved, "{what}: the move is in the run");
            let mut times = change_times(&stalled);
            times.truncate(2);
            times.extend([MOVE_NS + 15_000_000, MOVE_NS + 150_000_000]);
            for t_ns in times {
                let (b, bubble_b, _, _) =
                    decisions_with(sched.name, "none", warm.name, Some(1.2), Some(t_ns));
                if let Some(i) = first_change_before(&a, &b, t_ns) {
                    panic!(
                        "{what}: decision {i} at {} ns (before T = {t_ns}) changed with the machine after T: {:?} vs {:?}",
                        a[i].at_ps / 1000,
                        a[i],
                        b[i]
                    );
                }
                assert!(
                    bubble_b > bubble_a,
                    "{what}: the machine change had no effect"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        policies::warmup::WARMUPS.entries.len() * policies::sched::SCHEDULERS.entries.len()
    );
}
