//! A task replay's timeline: a named track per worker (its core and
//! node), a slice per task (queue and service time, accesses, misses in
//! `args`), and a counter of queued tasks.

use serde_json::json;

use super::Event;

/// The timeline's events: a named track per worker, a slice per task that
/// overlaps the window `(from_ps, to_ps)`, and the count of queued tasks.
pub fn events(
    recs: &[sim::tasks::TaskRecord],
    cores: &[usize],
    m: &sim::Machine,
    (from_ps, to_ps): (u64, u64),
) -> Vec<Event> {
    let us = |ps: u64| ps as f64 / 1e6;
    let mut ev: Vec<Event> = cores
        .iter()
        .enumerate()
        .map(|(w, &c)| Event {
            name: "thread_name".into(),
            ph: "M",
            ts: 0.0,
            dur: None,
            pid: 1,
            tid: w as u32,
            args: json!({ "name": format!("worker {w} (core {c}, node {})", m.core_node[c]) }),
        })
        .collect();
    for r in recs
        .iter()
        .filter(|r| r.end_ps >= from_ps && r.start_ps < to_ps)
    {
        ev.push(Event {
            name: format!("task {} (key {})", r.task, r.key),
            ph: "X",
            ts: us(r.start_ps),
            dur: Some(us(r.service_ps())),
            pid: 1,
            tid: r.worker,
            args: json!({
                "task": r.task, "key": r.key, "queue_us": us(r.queue_ps()),
                "service_us": us(r.service_ps()), "accesses": r.accesses, "misses": r.misses,
            }),
        });
    }
    // Queued tasks: +1 at arrival, −1 at start.
    let mut steps: Vec<(u64, i64)> = recs
        .iter()
        .flat_map(|r| [(r.arrival_ps, 1), (r.start_ps, -1)])
        .collect();
    steps.sort_unstable();
    let mut queued = 0i64;
    for (t, d) in steps {
        queued += d;
        if (from_ps..to_ps).contains(&t) {
            ev.push(Event {
                name: "queued tasks".into(),
                ph: "C",
                ts: us(t),
                dur: None,
                pid: 1,
                tid: 0,
                args: json!({ "queued": queued }),
            });
        }
    }
    ev
}
