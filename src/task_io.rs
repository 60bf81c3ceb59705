//! Task traces on disk for the binary: which form a file is in, reading
//! either form, and writing by the output name's extension (`.csv`, or the
//! native `.nst` / `.nst.zst` with task markers), atomically.

use std::path::Path;

use anyhow::{Context, Result};
use traces::task_native::{TaskForm, read_task_trace};
use traces::tasks::TaskTrace;

/// The task form of the file at `path`, or None (a plain trace, or
/// unreadable: the plain reader then words the error).
pub fn task_form_of(path: &Path) -> Option<TaskForm> {
    lab::task_files::form_of(path)
}

/// Reads a task trace in either form (a compression layer is unwrapped).
pub fn load_tasks(path: &Path) -> Result<(TaskTrace, TaskForm)> {
    let f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    read_task_trace(Box::new(f)).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Writes `t` to `path` in the form its extension names; nothing is left
/// at `path` unless the whole trace was written.
pub fn write_tasks(path: &Path, t: &TaskTrace, meta: &serde_json::Value) -> Result<()> {
    Ok(lab::task_files::write(path, t, meta)?)
}
