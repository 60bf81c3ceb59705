//! Request-model experiments as the command line uses them: the schema and
//! runs live in `lab::experiment`; here, reading the file and `--duration`.

use anyhow::Result;
pub use lab::experiment::Experiment;

/// Parses "10s", "30m", "1h", "500ms" or plain seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * mult),
        _ => Err(format!("bad duration {s:?} (e.g. 10s, 30m, 1h)")),
    }
}

/// Reads a request-model experiment file (model paths resolve against
/// its directory), with an optional duration override.
pub fn load_experiment(path: &std::path::Path, duration: Option<f64>) -> Result<Experiment> {
    let mut exp = Experiment::load(path)?;
    if let Some(d) = duration {
        exp.workload.duration_s = d;
    }
    Ok(exp)
}
