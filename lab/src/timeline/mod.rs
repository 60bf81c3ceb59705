//! Chrome trace-event / Perfetto JSON timelines, rendered from a run's
//! records in memory: `{"traceEvents": [...]}` with µs timestamps. Bounded:
//! only what falls in a window of simulated time is kept.
//!
//! - [`serve`]: the request model's batches, stalls, queues, memory
//!   bandwidth, sweeps and moves;
//! - [`tasks`]: a task replay's tasks on their workers and the queue.

use serde::Serialize;

pub mod serve;
pub mod tasks;

/// One trace event (the fields Perfetto's JSON importer reads).
#[derive(Serialize)]
pub struct Event {
    pub name: String,
    pub ph: &'static str,
    /// Microseconds.
    pub ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    pub pid: u32,
    pub tid: u32,
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub args: serde_json::Value,
}

/// The file's JSON.
pub fn to_json(events: &[Event]) -> Result<String, serde_json::Error> {
    serde_json::to_string(&serde_json::json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
    }))
}
