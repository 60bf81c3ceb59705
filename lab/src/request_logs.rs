//! Recorded request logs under a request experiment: `[workload] arrivals
//! = { log = "FILE" }` names a log (relative to the experiment file) that
//! is read here, once, when the experiment is parsed — so every run of
//! every row and seed replays the same requests — and noted among the
//! run's inputs with its checksum.

use std::path::Path;
use std::sync::Arc;

use traces::workload::{Arrivals, WorkloadSpec};

use crate::{InputLog, LabError};

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
    let path = base.join(&*file);
    let shown = path.display().to_string();
    let io = |error| LabError::Read {
        path: shown.clone(),
        what: "request log",
        error,
    };
    let f = std::fs::File::open(&path).map_err(io)?;
    let read =
        traces::request_log::read(std::io::BufReader::new(f), *time_scale).map_err(|error| {
            LabError::RequestLog {
                path: shown.clone(),
                error,
            }
        })?;
    let checksum = crate::inputs::checksum_file(&path).map_err(io)?;
    log.note(crate::Input {
        role: "request log".into(),
        path: Some(shown),
        preset: None,
        checksum,
    });
    *requests = Some(Arc::new(read));
    Ok(())
}
