//! The request model against independent oracles: one worker, batches of
//! one, no feature data, deterministic compute — an M/D/1 queue. Each
//! request's queue wait must equal the Lindley recursion on the actual
//! arrivals, and the mean wait the M/D/1 formula ρD / (2(1 − ρ)); the
//! per-second windows must add up to the run's totals; the bytes through
//! each FCFS server must equal the sum of the transfers the workload
//! implies.

use sim::serve::{RequestRecord, ServeEngine};
use traces::workload::WorkloadSpec;

/// Service time (ns): batch_ms + per_request_ms, no noise.
const D_NS: u64 = 1_000_000;

fn spec(qps: f64, duration_s: f64) -> WorkloadSpec {
    let text = format!(
        r#"
name = "md1"
machine = "one-channel"
duration_s = {duration_s}
qps = {qps}
arrivals = {{ process = "poisson" }}
shards = {{ count = 1, popularity_zipf = 0.0, weights_gb = 0.0, state_mb = 0.0 }}
request = {{ tokens = 0, token_bytes = 0, batch = 1, compute = {{ batch_ms = 0.6, per_request_ms = 0.4, sigma = 0.0 }}, features = {{ lookups = 0, item_kb = 1.0, items = 1, resident = 1, zipf = 0.0 }} }}
cache = {{ items_per_node = 1 }}
far_tier = {{ latency_ms = 1.0, bandwidth_gbps = 1.0 }}
"#
    );
    traces::config::parse_toml(&text).unwrap()
}

fn run(qps: f64, duration_s: f64) -> (Vec<RequestRecord>, sim::serve::ServeTotals) {
    let spec = spec(qps, duration_s);
    let m = sim::Machine::from_toml(sim::presets::preset("one-channel").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::default();
    let s = policies::sched::SCHEDULERS
        .build("round-robin", &ctx)
        .unwrap();
    let w = policies::warmup::WARMUPS.build("none", &ctx).unwrap();
    let mut e = ServeEngine::new(&m, &spec, s, w).unwrap();
    assert_eq!(e.workers(), 1, "one worker");
    let mut recs = Vec::new();
    let totals = e.run(3, |r| recs.push(*r)).unwrap();
    recs.sort_by_key(|r| r.id);
    (recs, totals)
}

#[test]
fn queue_waits_follow_the_lindley_recursion_exactly() {
    let (recs, _) = run(700.0, 20.0);
    assert!(recs.len() > 10_000);
    // W(n+1) = max(0, W(n) + D − (a(n+1) − a(n))), on the actual arrivals.
    let mut w = 0i64;
    for k in 0..recs.len() {
        if k > 0 {
            let gap = (recs[k].arrival_ps - recs[k - 1].arrival_ps) as i64;
            w = (w + 1000 * D_NS as i64 - gap).max(0);
        }
        assert_eq!(recs[k].queue_ps as i64, w, "request {k}");
        assert_eq!(
            recs[k].end_ps - recs[k].start_ps,
            1000 * D_NS,
            "deterministic service"
        );
        assert_eq!(recs[k].stall_ps, 0, "no data to wait for");
    }
}

#[test]
fn mean_wait_is_md1_within_3_percent() {
    for rho in [0.3, 0.6, 0.9] {
        let qps = rho * 1e9 / D_NS as f64;
        // Enough requests for the sample mean to settle (long at ρ = 0.9).
        let duration = if rho < 0.8 { 300.0 } else { 2000.0 };
        let (recs, _) = run(qps, duration);
        let mean = recs.iter().map(|r| r.queue_ps as f64 / 1e3).sum::<f64>() / recs.len() as f64;
        let md1 = rho * D_NS as f64 / (2.0 * (1.0 - rho));
        let err = (mean - md1).abs() / md1;
        assert!(
            err < 0.03,
            "ρ = {rho}: mean wait {mean:.0} ns vs M/D/1 {md1:.0} ns ({:.1}%)",
            err * 100.0
        );
    }
}

/// Per-second counters sum to the run's totals, on the seed workload (feature
/// reads, background sweeps, preloads): every byte and every hit the run
/// counted is in some window.
#[test]
fn per_second_windows_add_up_to_the_totals() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/seed-inference.toml"),
    )
    .unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let mut spec: WorkloadSpec = table["workload"].clone().try_into().unwrap();
    spec.duration_s = 3.0;
    let m = sim::Machine::from_toml(sim::presets::preset(&spec.machine).unwrap()).unwrap();
    let ctx = policies::registry::Ctx::default();
    let s = policies::sched::SCHEDULERS
        .build("numa-weighted-ewma", &ctx)
        .unwrap();
    let w = policies::warmup::WARMUPS.build("none", &ctx).unwrap();
    let mut e = ServeEngine::new(&m, &spec, s, w).unwrap();
    e.set_preload(policies::preload::PRELOADS.build("always", &ctx).unwrap());
    let mut n = 0u64;
    let t = e.run(1, |_| n += 1).unwrap();
    let sum = |f: fn(&sim::serve::WindowTotals) -> u64| t.windows.iter().map(f).sum::<u64>();
    assert!(t.node_bytes.iter().sum::<u64>() > 0 && t.feature_hits > 0 && t.preload_items > 0);
    assert_eq!(sum(|w| w.memory_bytes), t.node_bytes.iter().sum::<u64>());
    assert_eq!(sum(|w| w.far_bytes), t.far_bytes);
    assert_eq!(sum(|w| w.feature_hits), t.feature_hits);
    assert_eq!(sum(|w| w.feature_misses), t.feature_misses);
    assert_eq!(sum(|w| w.preload_items), t.preload_items);
    assert_eq!(sum(|w| w.preload_item_hits), t.preload_item_hits);
    assert_eq!(t.requests, n);
}

/// A one-node run with feature lookups and background sweeps; `resident`
/// of the 1000 items live in memory, the rest on the far tier.
fn bytes_run(resident: u32) -> (sim::serve::ServeTotals, (Vec<u64>, Vec<u64>, u64)) {
    let text = format!(
        r#"
name = "bytes"
machine = "one-channel"
duration_s = 2.0
qps = 2000.0
arrivals = {{ process = "poisson" }}
shards = {{ count = 2, popularity_zipf = 0.0, weights_gb = 0.0, state_mb = 0.0 }}
request = {{ tokens = 0, token_bytes = 0, batch = 4, compute = {{ batch_ms = 0.1, per_request_ms = 0.1, sigma = 0.1 }}, features = {{ lookups = 8, item_kb = 4.0, items = 1000, resident = {resident}, zipf = 0.5 }} }}
cache = {{ items_per_node = 256 }}
far_tier = {{ latency_ms = 1.0, bandwidth_gbps = 10.0 }}
background = {{ every_requests = 500, sweep_gb = 0.01, flushes_cache = true }}
"#
    );
    let spec: WorkloadSpec = traces::config::parse_toml(&text).unwrap();
    let m = sim::Machine::from_toml(sim::presets::preset("one-channel").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::default();
    let s = policies::sched::SCHEDULERS
        .build("round-robin", &ctx)
        .unwrap();
    let w = policies::warmup::WARMUPS.build("none", &ctx).unwrap();
    let mut e = ServeEngine::new(&m, &spec, s, w).unwrap();
    let t = e.run(5, |_| {}).unwrap();
    (t, e.server_bytes())
}

#[test]
fn bytes_through_each_fcfs_server_are_the_sum_of_its_transfers() {
    const ITEM: u64 = 4096;
    const SWEEP: u64 = 10_000_000;
    // All items in memory: every lookup reads one item from the node's
    // memory (a hit locally, a miss from the shard's home: the same node),
    // plus one sweep per 500 arrivals; the far tier serves nothing.
    let (t, (mem, links, far)) = bytes_run(1000);
    assert!(t.requests > 3000 && t.background_jobs >= 6, "{t:?}");
    assert!(t.feature_hits > 0 && t.feature_misses > 0);
    assert_eq!(t.requests, t.background_jobs * 500 + t.requests % 500);
    assert_eq!(mem, vec![t.requests * 8 * ITEM + t.background_jobs * SWEEP]);
    assert!(links.is_empty());
    assert_eq!(far, 0);
    // No item in memory: hits still read the node's memory, every miss
    // comes from the far tier.
    let (t, (mem, _, far)) = bytes_run(0);
    assert_eq!(t.feature_hits + t.feature_misses, t.requests * 8);
    assert_eq!(mem, vec![t.feature_hits * ITEM + t.background_jobs * SWEEP]);
    assert_eq!(far, t.feature_misses * ITEM);
    assert_eq!((t.node_bytes[0], t.far_bytes), (mem[0], far));
}

/// The preload's lead window moves its firing time by the window. On the
/// one-worker queue above, overloaded (1050 requests/s on a 1 ms server:
/// waits grow to hundreds of ms), the dispatcher's estimate of a request's
/// start is exact once the first batch has ended — the running batch ends
/// a known D after it started, then one D per request queued ahead — so
/// `always:W` must fire each preload at max(start − W, arrival), with
/// `start` the request's actual start. Preloads bring no data here (no
/// lookups), so runs with different windows serve every request alike and
/// the firing times of two windows differ by exactly their difference
/// where both fire ahead of dispatch. A window that is ignored, or an
/// estimate that is always "now" (as once, when integer division made every
/// estimate "now" below a full batch queued), fails it.
#[test]
fn the_preload_lead_window_moves_each_firing_time_by_the_window() {
    let spec = spec(1050.0, 5.0);
    let m = sim::Machine::from_toml(sim::presets::preset("one-channel").unwrap()).unwrap();
    let ctx = policies::registry::Ctx::default();
    let windows_ms = [5u64, 60];
    let runs: Vec<(Vec<sim::serve::Decision>, Vec<RequestRecord>)> = windows_ms
        .iter()
        .map(|w| {
            let s = policies::sched::SCHEDULERS
                .build("round-robin", &ctx)
                .unwrap();
            let warm = policies::warmup::WARMUPS.build("none", &ctx).unwrap();
            let mut e = ServeEngine::new(&m, &spec, s, warm).unwrap();
            e.set_preload(
                policies::preload::PRELOADS
                    .build(&format!("always:{w}"), &ctx)
                    .unwrap(),
            );
            e.record_decisions(true);
            let mut recs = Vec::new();
            e.run(3, |r| recs.push(*r)).unwrap();
            recs.sort_by_key(|r| r.id);
            let mut d = std::mem::take(&mut e.decisions);
            d.sort_by_key(|d| d.request);
            (d, recs)
        })
        .collect();
    let (recs, other) = (&runs[0].1, &runs[1].1);
    assert_eq!(recs, other, "preloads of no data change no request");
    assert!(recs.len() > 5000);
    let first_end = recs[0].end_ps;
    for ((decisions, _), w_ms) in runs.iter().zip(windows_ms) {
        assert_eq!(decisions.len(), recs.len());
        for (d, r) in decisions.iter().zip(recs) {
            assert_eq!(d.request, r.id);
            if r.arrival_ps < first_end {
                continue; // no batch duration known yet
            }
            let want = r
                .start_ps
                .saturating_sub(w_ms * 1_000_000_000)
                .max(r.arrival_ps);
            assert_eq!(d.fire_at_ps, Some(want), "always:{w_ms}, request {}", r.id);
        }
    }
    // Where both fire ahead of dispatch, 55 ms apart.
    let ahead: Vec<(u64, u64)> = runs[0]
        .0
        .iter()
        .zip(&runs[1].0)
        .zip(recs)
        .filter(|(_, r)| r.arrival_ps >= first_end && r.start_ps > r.arrival_ps + 60_000_000_000)
        .map(|((a, b), _)| (a.fire_at_ps.unwrap(), b.fire_at_ps.unwrap()))
        .collect();
    assert!(
        ahead.len() > 2000,
        "{} requests queued over 60 ms",
        ahead.len()
    );
    assert!(ahead.iter().all(|&(a, b)| a - b == 55_000_000_000));
}
