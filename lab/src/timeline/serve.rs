//! The request model's timeline: Chrome trace-event / Perfetto JSON of one run, in a window of simulated
//! time. Process 1, "workers": a track per worker with each batch as a
//! slice (its request ids, queue, stall, transfer and compute in `args`),
//! a track per worker for its stalls — the accelerator waiting for data,
//! the "c/a parity" bubbles — and a counter of each worker's queued
//! requests. Process 2, "memory": a counter of each node's memory
//! bandwidth (GB/s per 1 ms), the background sweeps as slices on a track
//! per node, and the shard moves as instants.

use serde_json::json;
use sim::serve::{RequestRecord, ServeTotals};

use super::Event;

/// Track ids: worker w's batches on `w`, its stalls on `STALL_TID + w`.
pub const STALL_TID: u32 = 10_000;
const MOVES_TID: u32 = 20_000;

fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

fn meta(kind: &'static str, pid: u32, tid: u32, name: String) -> Event {
    Event {
        name: kind.into(),
        ph: "M",
        ts: 0.0,
        dur: None,
        pid,
        tid,
        args: json!({ "name": name }),
    }
}

/// The events of a run whose records are `recs` (any order) and totals
/// `totals`, within `(from, to)` ps.
pub fn events(recs: &[RequestRecord], totals: &ServeTotals, (from, to): (u64, u64)) -> Vec<Event> {
    let mut recs: Vec<&RequestRecord> = recs.iter().collect();
    recs.sort_by_key(|r| (r.worker, r.start_ps, r.id));
    let workers = recs.iter().map(|r| r.worker + 1).max().unwrap_or(0);
    let mut node_of = vec![0u32; workers as usize];
    for r in &recs {
        node_of[r.worker as usize] = r.node;
    }
    let mut ev = vec![
        meta("process_name", 1, 0, "workers".into()),
        meta("process_name", 2, 0, "memory".into()),
    ];
    for w in 0..workers {
        let n = node_of[w as usize];
        ev.push(meta("thread_name", 1, w, format!("worker {w} (node {n})")));
        ev.push(meta(
            "thread_name",
            1,
            STALL_TID + w,
            format!("worker {w} stalls"),
        ));
    }
    // Batches: the requests a worker started together.
    let mut i = 0;
    while i < recs.len() {
        let (w, start) = (recs[i].worker, recs[i].start_ps);
        let mut j = i;
        while j < recs.len() && recs[j].worker == w && recs[j].start_ps == start {
            j += 1;
        }
        let batch = &recs[i..j];
        let end = batch.iter().map(|r| r.end_ps).max().unwrap_or(start);
        if end >= from && start < to {
            let first = batch[0];
            let ids: Vec<u64> = batch.iter().map(|r| r.id).collect();
            // The mean queueing in whole ns (the model's resolution).
            let queue_ns =
                batch.iter().map(|r| r.queue_ps / 1000).sum::<u64>() / batch.len() as u64;
            ev.push(Event {
                name: format!("batch of {}", batch.len()),
                ph: "X",
                ts: us(start),
                dur: Some(us(end - start)),
                pid: 1,
                tid: w,
                args: json!({
                    "requests": ids, "mean_queue_us": us(queue_ns * 1000), "stall_us": us(first.stall_ps),
                    "transfer_us": us(first.transfer_ps), "compute_us": us(first.compute_ps),
                    "cold": batch.iter().any(|r| r.cold),
                }),
            });
            let bubble = (first.stall_ps + first.transfer_ps).min(end - start);
            if bubble > 0 {
                ev.push(Event {
                    name: "stall (c/a parity bubble)".into(),
                    ph: "X",
                    ts: us(start),
                    dur: Some(us(bubble)),
                    pid: 1,
                    tid: STALL_TID + w,
                    args: json!({ "stall_us": us(first.stall_ps), "transfer_us": us(first.transfer_ps) }),
                });
            }
        }
        i = j;
    }
    // Queued requests per worker: +1 at arrival, −1 at start.
    let mut steps: Vec<(u32, u64, i64)> = recs
        .iter()
        .flat_map(|r| [(r.worker, r.arrival_ps, 1), (r.worker, r.start_ps, -1)])
        .collect();
    steps.sort_unstable();
    let mut queued = vec![0i64; workers as usize];
    for (w, t, d) in steps {
        queued[w as usize] += d;
        if (from..to).contains(&t) {
            ev.push(Event {
                name: format!("queued, worker {w}"),
                ph: "C",
                ts: us(t),
                dur: None,
                pid: 1,
                tid: w,
                args: json!({ "requests": queued[w as usize] }),
            });
        }
    }
    // Memory: bandwidth per node, sweeps, moves.
    for (n, bins) in totals.node_bins.iter().enumerate() {
        ev.push(meta(
            "thread_name",
            2,
            n as u32,
            format!("node {n} background"),
        ));
        for (b, &bytes) in bins.iter().enumerate() {
            let t = b as u64 * totals.bin_ps;
            if (from..to).contains(&t) {
                ev.push(Event {
                    name: format!("memory GB/s, node {n}"),
                    ph: "C",
                    ts: us(t),
                    dur: None,
                    pid: 2,
                    tid: n as u32,
                    args: json!({ "GB/s": bytes as f64 / (totals.bin_ps / 1000) as f64 }),
                });
            }
        }
    }
    for &(n, s, e) in &totals.background {
        if e >= from && s < to {
            ev.push(Event {
                name: format!("background sweep, node {n}"),
                ph: "X",
                ts: us(s),
                dur: Some(us(e - s)),
                pid: 2,
                tid: n,
                args: json!({ "node": n }),
            });
        }
    }
    ev.push(meta("thread_name", 2, MOVES_TID, "shard moves".into()));
    for &(shard, t, first) in &totals.first_after_move {
        if (from..to).contains(&t) {
            ev.push(Event {
                name: format!("shard {shard} moves"),
                ph: "i",
                ts: us(t),
                dur: None,
                pid: 2,
                tid: MOVES_TID,
                args: json!({ "shard": shard, "first_request_after_ms": first as f64 / 1e9 }),
            });
        }
    }
    ev
}
