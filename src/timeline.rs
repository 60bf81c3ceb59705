//! `--timeline-window START..END`: the window of simulated time a
//! timeline (`lab::timeline`) keeps.

use anyhow::{Result, bail};

/// A window of simulated time, in ps (whole ns): `START..END` with units
/// (`0..2s`, `500ms..1.5s`, plain numbers are seconds).
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
            .map(|secs| ((secs * 1e9) as u64).saturating_mul(1000))
            .map_err(|e| anyhow::anyhow!("--timeline-window {s:?}: {e}"))
    };
    let (a, b) = (t(a)?, t(b)?);
    if b <= a {
        bail!("--timeline-window {s:?}: END must be after START");
    }
    Ok((a, b))
}
