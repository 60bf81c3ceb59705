//! Task traces made and written: `trace gen tasks`' inference-like service
//! (its parameters checked before anything is generated) and a task trace
//! written in the form its file name says (`.csv`, or the native `.nst` /
//! `.nst.zst` with task markers), through a temporary file renamed into
//! place so nothing half-written is left. The command line and Python
//! both call these.

use std::io::Write;
use std::path::{Path, PathBuf};

use traces::native::Codec;
use traces::tasks::{ServiceGen, TaskTrace};

/// Why a service trace is not generated or a task trace not written.
#[derive(Debug, thiserror::Error)]
pub enum TaskFileError {
    /// `qps` not positive, or a Zipf exponent negative or not finite.
    #[error("qps must be positive, key_zipf and item_zipf finite and not negative")]
    Rates,
    /// No keys, no items, or a region smaller than a line.
    #[error("keys and items must be at least 1, region at least 64 bytes")]
    Sizes,
    #[error(
        "{tasks} requests × {per} accesses is over {max} access records: task traces are held in memory"
    )]
    TooMany { tasks: u64, per: u64, max: usize },
    /// An arrival or gap past the time horizon.
    #[error("{0}")]
    Time(traces::Problem),
    #[error(
        "{path}: a task trace is written as .csv, .nst or .nst.zst (lackey and the other formats have no task markers)"
    )]
    Form { path: String },
    #[error("{path}: {what}: {error}")]
    Io {
        path: String,
        what: &'static str,
        error: std::io::Error,
    },
}

/// The task form of the file at `path`, or None (a plain trace, or
/// unreadable: the plain reader then words the error).
pub fn form_of(path: &Path) -> Option<traces::task_native::TaskForm> {
    let f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    traces::task_native::sniff(Box::new(f))
}

/// What `trace info --json` says of task trace `t` (read from `file` in
/// `form`).
pub fn info_json(
    file: &str,
    t: &TaskTrace,
    form: traces::task_native::TaskForm,
) -> serde_json::Value {
    let (first, last) = t.arrival_span().unwrap_or((0, 0));
    serde_json::json!({
        "file": file,
        "format": form.name(),
        "tasks": t.tasks.len(),
        "keys": t.keys(),
        "accesses": t.accesses(),
        "warmup_records": t.warmup.len(),
        "arrival_ns": { "first": first, "last": last },
    })
}

/// `trace info`'s text of a task trace: tasks, keys, accesses, arrival span.
pub fn info_text(file: &str, t: &TaskTrace, form: traces::task_native::TaskForm) -> String {
    let (first, last) = t.arrival_span().unwrap_or((0, 0));
    format!(
        "file:        {file}\nformat:      {}\ntasks:       {}\nkeys:        {}\naccesses:    {}\nwarm-up:     {} records before the first task\narrivals:    {first} .. {last} ns ({:.3} ms)\n",
        form.name(),
        t.tasks.len(),
        t.keys(),
        t.accesses(),
        t.warmup.len(),
        (last - first) as f64 / 1e6
    )
}

/// The service's task trace, its parameters checked first.
pub fn generate(g: &ServiceGen) -> Result<TaskTrace, TaskFileError> {
    let not_negative = |x: f64| x.is_finite() && x >= 0.0;
    if !(g.qps.is_finite() && g.qps > 0.0 && not_negative(g.key_zipf) && not_negative(g.item_zipf))
    {
        return Err(TaskFileError::Rates);
    }
    if g.keys == 0 || g.items_per_key == 0 || g.region < 64 {
        return Err(TaskFileError::Sizes);
    }
    let per = g.lookups as u64 + 1;
    if g.tasks.saturating_mul(per) > traces::tasks::MAX_TASK_RECORDS as u64 {
        return Err(TaskFileError::TooMany {
            tasks: g.tasks,
            per,
            max: traces::tasks::MAX_TASK_RECORDS,
        });
    }
    traces::tasks::generate_service(g).map_err(TaskFileError::Time)
}

/// Writes `t` to `path` in the form its name says; nothing is left at
/// `path` unless the whole trace was written.
pub fn write(path: &Path, t: &TaskTrace, meta: &serde_json::Value) -> Result<(), TaskFileError> {
    let shown = || path.display().to_string();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let codec = if name.ends_with(".nst.zst") {
        Some(Codec::Zstd)
    } else if name.ends_with(".nst") {
        Some(Codec::None)
    } else if name.ends_with(".csv") {
        None
    } else {
        return Err(TaskFileError::Form { path: shown() });
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let io = |what| {
        move |error| TaskFileError::Io {
            path: shown(),
            what,
            error,
        }
    };
    let written = (|| {
        let f = std::fs::File::create(&tmp).map_err(io("cannot create"))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        match codec {
            None => w.write_all(t.to_csv().as_bytes()),
            Some(codec) => {
                traces::task_native::write_task_native(t, &mut w, codec, meta).map(|_| ())
            }
        }
        .map_err(io("write failed"))?;
        let f = w
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io("write failed"))?;
        f.sync_all().ok();
        std::fs::rename(&tmp, path).map_err(io("cannot move into place"))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
