//! Recorded request logs as inputs: under a request experiment,
//! `[workload] arrivals = { log = "FILE" }` names a log (relative to the
//! experiment file) that is read here, once, when the experiment is parsed
//! — so every run of every row and seed replays the same requests; on the
//! task-trace path, `--arrivals log:FILE` (or `workload.arrivals =
//! "log:FILE"`) re-times a trace's tasks by a log ([`Retime`]). Either way
//! the log is noted among the run's inputs with its checksum.

use std::path::Path;
use std::sync::Arc;

use traces::request_log::RequestLog;
use traces::tasks::TaskTrace;
use traces::workload::{Arrivals, WorkloadSpec};

use crate::errors::{LogReadError, RetimeError};
use crate::workers::SpecError;
use crate::{InputLog, LabError};

/// Reads the log at `path` (times scaled by `time_scale`), noted in `log`.
pub fn read(path: &Path, time_scale: f64, log: &InputLog) -> Result<RequestLog, LogReadError> {
    let read = read_unnoted(path, time_scale)?;
    log.note(input(path)?);
    Ok(read)
}

fn read_unnoted(path: &Path, time_scale: f64) -> Result<RequestLog, LogReadError> {
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|error| LogReadError::Io {
        path: shown.clone(),
        error,
    })?;
    traces::request_log::read(std::io::BufReader::new(f), time_scale)
        .map_err(|error| LogReadError::Log { path: shown, error })
}

/// The log at `path` as a run's input: its path and checksum.
pub fn input(path: &Path) -> Result<crate::Input, LogReadError> {
    let shown = path.display().to_string();
    let checksum = crate::inputs::checksum_file(path).map_err(|error| LogReadError::Io {
        path: shown.clone(),
        error,
    })?;
    Ok(crate::Input {
        role: "request log".into(),
        path: Some(shown),
        preset: None,
        checksum,
    })
}

/// Reads the log `w.arrivals` names, if it names one, into `w`.
pub fn attach(w: &mut WorkloadSpec, base: &Path, log: &InputLog) -> Result<(), LabError> {
    let Arrivals::Log {
        log: file,
        time_scale,
        requests,
    } = &mut w.arrivals
    else {
        return Ok(());
    };
    *requests = Some(Arc::new(read(&base.join(&*file), *time_scale, log)?));
    Ok(())
}

/// How a task trace's arrivals are re-timed: `poisson:QPS[:SEED]` (a
/// Poisson process, the trace's order kept) or `log:FILE` (task k arrives
/// at the log's request k's time, relative to the first; a key column
/// sets the task's key; tasks past the log are an error).
#[derive(Clone, Debug)]
pub enum Retime {
    Poisson {
        spec: String,
        qps: f64,
        seed: u64,
    },
    Log {
        path: String,
        log: Arc<RequestLog>,
        /// As noted among the inputs (a run reusing the parse notes it).
        input: crate::Input,
    },
}

impl Retime {
    /// Parses `spec`, reading a log (relative to `base`) now.
    pub fn parse(spec: &str, base: &Path, log: &InputLog) -> Result<Retime, RetimeError> {
        if let Some(file) = spec.strip_prefix("log:") {
            if file.is_empty() {
                return Err(RetimeError::Spec(SpecError::NotPoisson {
                    spec: spec.to_string(),
                }));
            }
            let path = base.join(file);
            let read = read_unnoted(&path, 1.0).map_err(RetimeError::Read)?;
            let input = input(&path).map_err(RetimeError::Read)?;
            log.note(input.clone());
            return Ok(Retime::Log {
                path: path.display().to_string(),
                log: Arc::new(read),
                input,
            });
        }
        let (qps, seed) = crate::workers::arrivals(spec).map_err(RetimeError::Spec)?;
        Ok(Retime::Poisson {
            spec: spec.to_string(),
            qps,
            seed,
        })
    }

    /// Re-times `trace`; `seed`, if given, replaces the spec's seed.
    pub fn apply(&self, trace: &mut TaskTrace, seed: Option<u64>) -> Result<(), RetimeError> {
        match self {
            Retime::Poisson { spec, qps, seed: s } => trace
                .retime_poisson(*qps, seed.unwrap_or(*s))
                .map_err(|problem| RetimeError::Horizon {
                    spec: spec.clone(),
                    problem,
                }),
            Retime::Log { path, log, .. } => {
                if log.requests.len() < trace.tasks.len() {
                    return Err(RetimeError::Short {
                        path: path.clone(),
                        requests: log.requests.len(),
                        tasks: trace.tasks.len(),
                    });
                }
                for (index, (task, r)) in trace.tasks.iter_mut().zip(&log.requests).enumerate() {
                    task.arrival_ns = r.arrival_ns;
                    if let Some(key) = r.key {
                        task.key = u32::try_from(key).map_err(|_| RetimeError::Key {
                            path: path.clone(),
                            index,
                            key,
                        })?;
                    }
                }
                trace
                    .check_horizon()
                    .map_err(|problem| RetimeError::Horizon {
                        spec: format!("log:{path}"),
                        problem,
                    })
            }
        }
    }
}

/// The layout of the request log at `path`, if it is one (its first line,
/// read up to 64 KiB, tells).
pub fn sniff(path: &Path) -> Option<traces::request_log::LogFormat> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut first = Vec::new();
    std::io::BufReader::new(f.take(64 << 10))
        .read_until(b'\n', &mut first)
        .ok()?;
    traces::request_log::sniff(std::str::from_utf8(&first).ok()?)
}

/// What `trace info --json` says of the request log at `path`: its
/// stats and the file.
pub fn info_json(path: &Path, st: &traces::request_log::LogStats) -> serde_json::Value {
    let mut v = serde_json::to_value(st).expect("stats serialize");
    v["file"] = serde_json::json!(path.display().to_string());
    v
}

/// `trace info`'s text of a request log: requests, span, mean and peak QPS.
pub fn info_text(path: &Path, st: &traces::request_log::LogStats) -> String {
    use std::fmt::Write;
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.1}"));
    let mut s = format!(
        "file:        {}\nformat:      {} (request log)\nrequests:    {}\nspan:        {:.3} s\nmean QPS:    {:.3}\n",
        path.display(),
        st.format.name(),
        st.requests,
        st.span_s,
        st.mean_qps
    );
    let _ = writeln!(
        s,
        "peak QPS:    {} (busiest second from the first arrival)",
        st.peak_qps
    );
    let _ = writeln!(
        s,
        "tokens:      {} in, {} out (mean of the requests that log them)",
        opt(st.mean_input_tokens),
        opt(st.mean_output_tokens)
    );
    if st.with_blocks > 0 {
        let _ = writeln!(
            s,
            "blocks:      {} requests give hash_ids; {} distinct blocks",
            st.with_blocks, st.distinct_blocks
        );
    }
    s
}
