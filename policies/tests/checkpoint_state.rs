//! Every policy's checkpoint state: a policy that ran half a stream, saved
//! and loaded into a fresh instance, answers the second half exactly as the
//! original does — and, for each policy with state, unlike a fresh one that
//! missed the first half (so the state is what carried the answers).

use policies::placement::PLACEMENTS;
use policies::prefetch::PREFETCHERS;
use policies::registry::Ctx;
use sim::policy::{AccessView, PageView, Placement, Prefetcher};
use sim::{Machine, presets};

fn machine() -> Machine {
    Machine::from_toml(presets::preset("epyc-4numa").unwrap()).unwrap()
}

/// A stream of accesses over 4 cores: per core a few PCs with strides of
/// 1, 3 and 17 lines forward and backward, a near-sequential walk and
/// random lines (xorshift), with misses now and then.
fn accesses(n: usize) -> Vec<(AccessView, u64)> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut pos = [0u64; 12];
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let core = i % 4;
            let stream = core * 3 + (x >> 20) as usize % 3;
            let step: i64 = [1, 3, -17][stream % 3];
            let line = if x.is_multiple_of(7) {
                x >> 30
            } else {
                pos[stream] = pos[stream].wrapping_add(step as u64);
                ((1u64 << 30) * (stream as u64 + 1)).wrapping_add(pos[stream])
            };
            let view = AccessView {
                core,
                pc: Some(0x400000 + stream as u64 * 16),
                addr: line << 6,
                miss: !x.is_multiple_of(3),
                from_memory: x.is_multiple_of(5),
                prefetch_hit: x.is_multiple_of(11),
                write: x.is_multiple_of(4),
            };
            (view, line)
        })
        .collect()
}

fn answers(p: &mut dyn Prefetcher, xs: &[(AccessView, u64)]) -> Vec<Vec<u64>> {
    xs.iter()
        .map(|&(v, line)| {
            let mut out = Vec::new();
            p.on_access(v, line, &mut out);
            out
        })
        .collect()
}

#[test]
fn every_prefetcher_resumes_from_its_state() {
    let m = machine();
    let ctx = Ctx::for_machine(&m);
    let xs = accesses(20_000);
    let (first, second) = xs.split_at(10_000);
    // (spec, has state)
    for (spec, stateful) in [
        ("stream:4:2", true),
        ("stream:2:1:4:2", true),
        ("ip-stride:2:1", true),
        ("ip-stride-table:c=2:1=4:16=1", true),
        ("delta:3", true),
        ("next-line:2", false),
        ("adjacent", false),
    ] {
        let mut a = PREFETCHERS.build(spec, &ctx).unwrap();
        answers(a.as_mut(), first);
        let state = a.save_state();
        assert_eq!(state.is_empty(), !stateful, "{spec}");
        let mut b = PREFETCHERS.build(spec, &ctx).unwrap();
        b.load_state(&state).unwrap();
        let want = answers(a.as_mut(), second);
        assert_eq!(answers(b.as_mut(), second), want, "{spec}");
        if stateful {
            let mut fresh = PREFETCHERS.build(spec, &ctx).unwrap();
            assert!(answers(fresh.as_mut(), second) != want, "{spec}: vacuous");
        }
        // Garbage is refused.
        let mut c = PREFETCHERS.build(spec, &ctx).unwrap();
        assert!(c.load_state(&[7, 7, 7]).is_err(), "{spec}");
    }
}

/// The learned filter (a logistic model over its history's features,
/// keeping candidates whose line delta and recent deltas weigh in) over
/// `delta:2`: its state is its histories and its base's tables.
#[test]
fn the_learned_prefetcher_resumes_from_its_state() {
    use policies::model::{Body, Model};
    use policies::prefetch::learned::{Cost, HISTORY, Learned, feature_names};
    let m = machine();
    let ctx = Ctx::for_machine(&m);
    let names = feature_names(HISTORY);
    let n = names.len();
    let mut weights = vec![0.0; n];
    weights[0] = -0.4; // the candidate's distance
    weights[2] = 0.3; // the newest delta
    weights[3] = -0.2;
    let model = Model {
        format: "numasim-model".into(),
        version: 1,
        trainer: "logistic".into(),
        features: names,
        body: Body::Logistic {
            mean: vec![0.0; n],
            scale: vec![1.0; n],
            weights,
            bias: 0.5,
        },
    };
    let build = || {
        let base = PREFETCHERS.build("delta:2", &ctx).unwrap();
        Learned::new(model.clone(), "m.json", base, ctx.cores, Cost::default())
    };
    let xs = accesses(20_000);
    let (first, second) = xs.split_at(10_000);
    let mut a = build();
    let seen = answers(&mut a, first);
    assert!(
        seen.iter().any(|o| !o.is_empty()) && seen.iter().any(Vec::is_empty),
        "the filter filters"
    );
    let state = a.save_state();
    let mut b = build();
    b.load_state(&state).unwrap();
    let want = answers(&mut a, second);
    assert_eq!(answers(&mut b, second), want);
    assert!(answers(&mut build(), second) != want, "vacuous");
    assert!(
        build()
            .load_state(&PREFETCHERS.build("delta:2", &ctx).unwrap().save_state())
            .is_err()
    );
}

fn placements(p: &mut dyn Placement, m: &Machine, pages: std::ops::Range<u64>) -> Vec<String> {
    pages
        .map(|page| {
            let from = (page % 4) as u32;
            let home = p.place(page, from, m);
            let moved = p.on_memory_access(
                // Node 1 reads 50 pages of node 0's remotely in turn.
                PageView {
                    page: page % 50,
                    from: 1,
                    home: 0,
                    now_ps: page,
                },
                m,
            );
            format!("{home} {moved:?}")
        })
        .collect()
}

#[test]
fn every_placement_resumes_from_its_state() {
    let m = machine();
    let ctx = Ctx::for_machine(&m);
    for (spec, stateful) in [
        ("interleave", true),
        ("migrate:3", true),
        ("first-touch", false),
        ("bind:1", false),
    ] {
        let mut a = PLACEMENTS.build(spec, &ctx).unwrap();
        placements(a.as_mut(), &m, 0..1001);
        let state = a.save_state();
        assert_eq!(state.is_empty(), !stateful, "{spec}");
        let mut b = PLACEMENTS.build(spec, &ctx).unwrap();
        b.load_state(&state).unwrap();
        let want = placements(a.as_mut(), &m, 1001..3000);
        assert_eq!(placements(b.as_mut(), &m, 1001..3000), want, "{spec}");
        if stateful {
            let mut fresh = PLACEMENTS.build(spec, &ctx).unwrap();
            let fresh = placements(fresh.as_mut(), &m, 1001..3000);
            assert!(fresh != want, "{spec}: vacuous");
        }
    }
}
