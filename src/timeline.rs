//! Chrome trace-event / Perfetto JSON timelines (`--timeline FILE.json`):
//! `{"traceEvents": [...]}` with µs timestamps — one track per worker with
//! each task as a complete ("X") slice, and a counter track of queued
//! tasks. Bounded: only what falls in a window of simulated time is kept.

use anyhow::{Result, bail};
use serde::Serialize;

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

/// A window of simulated time, in ns: `START..END` with units (`0..2s`,
/// `500ms..1.5s`, plain numbers are seconds).
pub fn parse_window(s: &str) -> Result<(u64, u64)> {
    let Some((a, b)) = s.split_once("..") else {
        bail!("--timeline-window {s:?}: expected START..END (e.g. 0..2s)");
    };
    let t = |x: &str| -> Result<u64> {
        let x = x.trim();
        if x == "0" {
            return Ok(0);
        }
        crate::experiment::parse_duration(x)
            .map(|secs| (secs * 1e9) as u64)
            .map_err(|e| anyhow::anyhow!("--timeline-window {s:?}: {e}"))
    };
    let (a, b) = (t(a)?, t(b)?);
    if b <= a {
        bail!("--timeline-window {s:?}: END must be after START");
    }
    Ok((a, b))
}

/// The file's JSON.
pub fn to_json(events: &[Event]) -> Result<String> {
    Ok(serde_json::to_string(&serde_json::json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
    }))?)
}
