//! `numasim._numasim`: the Rust side of the Python package — glue over
//! the `lab` library, as the binary is (the package never calls the
//! binary). Everything crosses as plain values (text, JSON, bytes); the
//! Python side (`numasim/__init__.py`) builds the objects users see.
//! Simulations run with the interpreter detached, so two Python threads
//! run two comparisons on two cores. Errors are `NumasimError` (a
//! `ValueError`) with the CLI's one-line message; a panic is caught and
//! raised as one, never an abort.

mod py_policies;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use lab::custom::CustomPolicies;
use lab::kinds::AnyExperiment;
use py_policies::PyPolicies;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use traces::RecordSource;

create_exception!(
    _numasim,
    NumasimError,
    PyValueError,
    "Bad input or a failed run: the message is the command line's one line."
);

/// A one-line error for Python.
fn fail(message: impl std::fmt::Display) -> PyErr {
    NumasimError::new_err(message.to_string())
}

/// Runs `f` with the interpreter detached; a panic becomes an error.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, String> + Send) -> PyResult<T> {
    py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!(
                "numasim panicked (a bug; please report it): {what}"
            ))
        })
    })
    .map_err(fail)
}

/// numasim's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Every registered policy as JSON: `[{kind, name, parameters, help}]`.
#[pyfunction]
fn policies_json() -> PyResult<String> {
    serde_json::to_string(&policies::entries()).map_err(fail)
}

/// A TOML document as JSON (its tables as objects).
#[pyfunction]
fn toml_to_json(py: Python<'_>, text: &str) -> PyResult<String> {
    detached(py, || {
        let t: toml::Table = toml::from_str(text)
            .map_err(|e| format!("not TOML: {}", e.message().replace('\n', " ")))?;
        serde_json::to_string(&t).map_err(|e| e.to_string())
    })
}

/// `v` without its nulls (TOML has none: an absent key takes its default).
fn drop_nulls(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k, drop_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(drop_nulls).collect()),
        x => x,
    }
}

/// A JSON object as a TOML document.
#[pyfunction]
fn json_to_toml(py: Python<'_>, json: &str) -> PyResult<String> {
    detached(py, || {
        let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let t: toml::Table = toml::Table::try_from(drop_nulls(v)).map_err(|e| e.to_string())?;
        toml::to_string(&t).map_err(|e| e.to_string())
    })
}

/// Checks an experiment's TOML `text` as if read from `path` (relative
/// paths in it resolve against `path`'s folder); returns its kind,
/// `requests` or `tasks`. A `py:NAME` scheduler passes (the objects come
/// with the call that runs it).
#[pyfunction]
fn check_experiment(py: Python<'_>, text: &str, path: &str) -> PyResult<&'static str> {
    detached(py, || {
        let any: Arc<dyn CustomPolicies> = Arc::new(PyPolicies {
            objects: HashMap::new(),
            raised: Arc::default(),
            any: true,
        });
        match AnyExperiment::parse_file_text_with(Path::new(path), text, Some(any))
            .map_err(|e| e.to_string())?
        {
            AnyExperiment::Requests(_) => Ok("requests"),
            AnyExperiment::Tasks(_) => Ok("tasks"),
        }
    })
}

/// The experiment `text` (as if read from `path`) as JSON with every
/// field the file may leave out at its default — what Python reads for a
/// key the file does not set. A `py:NAME` policy passes.
#[pyfunction]
fn full_json(py: Python<'_>, text: &str, path: &str) -> PyResult<String> {
    detached(py, || {
        let any: Arc<dyn CustomPolicies> = Arc::new(PyPolicies {
            objects: HashMap::new(),
            raised: Arc::default(),
            any: true,
        });
        let parsed = AnyExperiment::parse_file_text_with(Path::new(path), text, Some(any))
            .map_err(|e| e.to_string())?;
        match parsed {
            AnyExperiment::Requests(e) => serde_json::to_string(&e),
            AnyExperiment::Tasks(t) => serde_json::to_string(&t),
        }
        .map_err(|e| e.to_string())
    })
}

/// What a comparison gives Python: the printed text, the result folder's
/// files (manifest included), notes (rows not run, ...) and each learned
/// or Python preload row's real prediction times (row, p50 ns, p99 ns,
/// predictions; wall clock, reported, not simulated).
type Compared = (
    String,
    Vec<(String, Vec<u8>)>,
    Vec<String>,
    Vec<(String, u64, u64, usize)>,
    Option<Rest>,
);

/// The rest of a request-model comparison's folder — the latency plots,
/// the monitoring chart, each row's requests — rendered when Python first
/// asks for it, so that a comparison whose table is all that is read
/// costs what the command line's `compare` without `--out` costs.
#[pyclass(frozen, module = "numasim")]
pub struct Rest {
    exp: Box<lab::experiment::Experiment>,
    c: lab::compare::Comparison,
}

#[pymethods]
impl Rest {
    /// The files (name, bytes), as `compare --out` writes them.
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
        let files = detached(py, || {
            let mut out = lab::outputs::Outputs::default();
            lab::compare::files::flow_rest(&self.exp, &self.c, &mut out)
                .map_err(|e| e.to_string())?;
            Ok(out.files)
        })?;
        Ok(files
            .into_iter()
            .map(|(n, b)| (n, PyBytes::new(py, &b)))
            .collect())
    }

    /// `requests-<row>.csv`'s columns (name, int64 little-endian bytes),
    /// or None if no row has that name.
    #[allow(clippy::type_complexity)]
    fn requests_columns<'py>(
        &self,
        py: Python<'py>,
        row: &str,
    ) -> PyResult<Option<Vec<(&'static str, Bound<'py, PyBytes>)>>> {
        let Some(r) = self.c.rows.iter().find(|r| r.name == row) else {
            return Ok(None);
        };
        let cols = detached(py, || {
            Ok(lab::outputs::requests_columns(&r.first_records)
                .into_iter()
                .map(|(n, v)| {
                    (
                        n,
                        v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>(),
                    )
                })
                .collect::<Vec<_>>())
        })?;
        Ok(Some(
            cols.into_iter()
                .map(|(n, b)| (n, PyBytes::new(py, &b)))
                .collect(),
        ))
    }

    /// `requests-<row>.csv` alone, or None if no row has that name.
    fn requests<'py>(&self, py: Python<'py>, row: &str) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Some(r) = self.c.rows.iter().find(|r| r.name == row) else {
            return Ok(None);
        };
        let csv = detached(py, || {
            lab::outputs::requests_csv(&r.first_records).map_err(|e| e.to_string())
        })?;
        Ok(Some(PyBytes::new(py, csv.as_bytes())))
    }
}

/// Runs an experiment's TOML `text` (as if read from `path`) at
/// `fidelity` (`flow` or `lines`; None: the experiment's own) on
/// `threads` threads.
fn run_compare(
    text: &str,
    path: &str,
    fidelity: Option<&str>,
    threads: Option<usize>,
    custom: Option<Arc<dyn CustomPolicies>>,
    lazy: bool,
) -> Result<Compared, String> {
    let p = Path::new(path);
    let origin = p.display().to_string();
    let any = AnyExperiment::parse_file_text_with(p, text, custom).map_err(|e| e.to_string())?;
    let opts = lab::compare::Options {
        threads,
        keep_records: true,
        timeline: None,
    };
    let none = |_: usize, _: usize| {};
    let notes: Vec<String> = Vec::new();
    let mut wall = Vec::new();
    let mut rest = None;
    let (rendered, log) = match (any, fidelity) {
        (AnyExperiment::Tasks(t), None | Some("lines")) => {
            let tc = lab::compare::tasks(&t, &origin, &opts, &none).map_err(|e| e.to_string())?;
            let r = lab::compare::files::tasks(&t, &tc, true).map_err(|e| e.to_string())?;
            (r, t.inputs.clone())
        }
        (AnyExperiment::Tasks(_), Some(f)) => {
            return Err(format!(
                "fidelity {f:?}: a task-trace experiment runs at line level only"
            ));
        }
        (AnyExperiment::Requests(e), None | Some("flow")) => {
            let m =
                lab::machines::load(&e.workload.machine, &e.inputs).map_err(|e| e.to_string())?;
            let c = lab::compare::flow(&e, &m, &opts, &none).map_err(|e| e.to_string())?;
            for row in &c.rows {
                let mut w = row.predict_wall_ns.clone();
                if !w.is_empty() {
                    w.sort_unstable();
                    let q = |p| analysis::stats::quantile_sorted(&w, p);
                    wall.push((row.name.clone(), q(0.5), q(0.99), w.len()));
                }
            }
            if lazy {
                let r = lab::compare::files::flow_table(&e, &c).map_err(|e| e.to_string())?;
                let log = e.inputs.clone();
                let mut exp = e;
                exp.custom = None;
                rest = Some(Rest { exp, c });
                (r, log)
            } else {
                let r = lab::compare::files::flow(&e, &c, true).map_err(|e| e.to_string())?;
                (r, e.inputs.clone())
            }
        }
        (AnyExperiment::Requests(e), Some("lines")) => {
            let lc = lab::compare::lines(&e, &origin, &opts, &none).map_err(|e| e.to_string())?;
            let r = lab::compare::files::lines(&e, &lc, true).map_err(|e| e.to_string())?;
            (r, e.inputs.clone())
        }
        (AnyExperiment::Requests(_), Some(f)) => {
            return Err(format!("fidelity {f:?}: expected flow or lines"));
        }
    };
    let args: Vec<String> = vec![
        "python:numasim.compare".into(),
        origin.clone(),
        format!("fidelity={}", fidelity.unwrap_or("default")),
    ];
    let by = lab::manifest::Producer {
        version: env!("CARGO_PKG_VERSION"),
        git_commit: "",
        args: &args,
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    };
    let manifest = lab::manifest::manifest(
        &by,
        vec![lab::manifest::experiment_input(&origin, text)],
        rendered.config,
        &log,
    );
    let mut files = rendered.files;
    files.json("manifest.json", &manifest);
    Ok((rendered.text, files.files, notes, wall, rest))
}

/// `run_compare` for Python, detached from the interpreter (a Python
/// policy attaches for each decision). An exception a Python policy
/// raised is raised here, with its traceback.
#[pyfunction]
#[pyo3(signature = (text, path, fidelity=None, threads=None, policies=None))]
#[allow(clippy::type_complexity)]
fn compare<'py>(
    py: Python<'py>,
    text: &str,
    path: &str,
    fidelity: Option<&str>,
    threads: Option<usize>,
    policies: Option<HashMap<String, Py<PyAny>>>,
) -> PyResult<(
    String,
    Vec<(String, Bound<'py, PyBytes>)>,
    Vec<String>,
    Vec<(String, u64, u64, usize)>,
    Option<Rest>,
)> {
    let raised: py_policies::Raised = Arc::new(Mutex::new(None));
    let custom: Arc<dyn CustomPolicies> = Arc::new(PyPolicies {
        objects: policies.unwrap_or_default(),
        raised: raised.clone(),
        any: false,
    });
    let run = detached(py, || {
        run_compare(text, path, fidelity, threads, Some(custom), true)
    });
    if let Some(e) = raised.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    let (text, files, notes, wall, rest) = run?;
    let files = files
        .into_iter()
        .map(|(n, b)| (n, PyBytes::new(py, &b)))
        .collect();
    Ok((text, files, notes, wall, rest))
}

/// A request experiment's dataset: (feature names, the features as f64
/// little-endian bytes, rows × features, the labels as f64 bytes, rows).
type Rows = (Vec<String>, Vec<u8>, Vec<u8>, usize);

/// The dispatch decisions of `row` of the request experiment `text` (as
/// if read from `path`) on `seed`, with `history` batches of the
/// `features` groups, as the command line's `dataset` writes them.
fn run_dataset(
    text: &str,
    path: &str,
    row: &str,
    seed: u64,
    history: usize,
    features: &str,
) -> Result<Rows, String> {
    // Other rows may name Python policies (they do not run here).
    let any: Arc<dyn CustomPolicies> = Arc::new(PyPolicies {
        objects: HashMap::new(),
        raised: Arc::default(),
        any: true,
    });
    let exp = match AnyExperiment::parse_file_text_with(Path::new(path), text, Some(any))
        .map_err(|e| e.to_string())?
    {
        AnyExperiment::Requests(e) => e,
        AnyExperiment::Tasks(_) => {
            return Err(
                "a dataset comes from a request experiment (a task trace has no dispatch features)"
                    .into(),
            );
        }
    };
    let names: Vec<&str> = exp.row.iter().map(|r| r.name.as_str()).collect();
    let Some(spec) = exp.row.iter().find(|r| r.name == row) else {
        return Err(format!(
            "row {row:?}: no such row (rows: {})",
            names.join(", ")
        ));
    };
    if spec.scheduler.starts_with("py:") || spec.preload.starts_with("py:") {
        return Err(format!(
            "row {row:?}: a dataset is recorded under a built-in scheduler and preload; this row names a Python policy"
        ));
    }
    let fs =
        sim::policy::FeatureSet::parse(history, features).map_err(|e| format!("features: {e}"))?;
    exp.check_size().map_err(|e| e.to_string())?;
    let m = lab::machines::load(&exp.workload.machine, &exp.inputs).map_err(|e| e.to_string())?;
    let d = lab::dataset::requests(&m, &exp, spec, seed, &fs).map_err(|e| e.to_string())?;
    Ok(rows_of(d))
}

/// A dataset's features and labels as little-endian f64 bytes.
fn rows_of(d: lab::dataset::Dataset) -> Rows {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (_, _, f, label) in &d.rows {
        for v in f {
            x.extend_from_slice(&v.to_le_bytes());
        }
        y.extend_from_slice(&(*label as u8 as f64).to_le_bytes());
    }
    let n = d.rows.len();
    (d.features, x, y, n)
}

/// The candidate prefetches of the trace at `path`, as the command
/// line's `dataset TRACE` makes them.
fn run_trace_dataset(path: &str, spec: &lab::dataset::TraceSpec) -> Result<Rows, String> {
    let mut input =
        lab::input::open_trace(Path::new(path), None, false, 2, true).map_err(|e| e.to_string())?;
    let d = lab::dataset::trace_named(&mut input.source, spec, &lab::InputLog::default()).map_err(
        |e| match e {
            lab::dataset::TraceDatasetError::Machine(e) => e.to_string(),
            e => format!("{path}: {e}"),
        },
    )?;
    Ok(rows_of(d))
}

/// `run_trace_dataset` for Python, detached from the interpreter.
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn trace_dataset<'py>(
    py: Python<'py>,
    path: &str,
    prefetcher: &str,
    window: u64,
    level: Option<&str>,
    machine: Option<&str>,
    prefetch_level: usize,
    max_rows: usize,
    history: usize,
) -> PyResult<(Vec<String>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, usize)> {
    let spec = lab::dataset::TraceSpec {
        prefetcher,
        window,
        level,
        machine,
        prefetch_level,
        max_rows,
        history,
    };
    let (cols, x, y, n) = detached(py, || run_trace_dataset(path, &spec))?;
    Ok((cols, PyBytes::new(py, &x), PyBytes::new(py, &y), n))
}

/// The feature names of `history` batches of the `features` groups.
#[pyfunction]
fn feature_names(py: Python<'_>, history: usize, features: &str) -> PyResult<Vec<String>> {
    detached(py, || {
        let fs = sim::policy::FeatureSet::parse(history, features)
            .map_err(|e| format!("features: {e}"))?;
        Ok(fs.names())
    })
}

/// `run_dataset` for Python, detached from the interpreter.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn dataset<'py>(
    py: Python<'py>,
    text: &str,
    path: &str,
    row: &str,
    seed: u64,
    history: usize,
    features: &str,
) -> PyResult<(Vec<String>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, usize)> {
    let (cols, x, y, n) = detached(py, || run_dataset(text, path, row, seed, history, features))?;
    Ok((cols, PyBytes::new(py, &x), PyBytes::new(py, &y), n))
}

/// `trace info --json` of the trace at `path` (a task trace's as its
/// command does), as JSON.
fn run_trace_info(path: &str) -> Result<String, String> {
    let p = Path::new(path);
    let task_form = lab::task_files::form_of(p);
    let v = if task_form.is_some() {
        let f = std::fs::File::open(p).map_err(|e| format!("{path}: cannot open: {e}"))?;
        let (t, form) = traces::task_native::read_task_trace(Box::new(f))
            .map_err(|e| format!("{path}: {e}"))?;
        lab::task_files::info_json(path, &t, form)
    } else if lab::request_logs::sniff(p).is_some() {
        let log = lab::request_logs::read(p, 1.0, &lab::InputLog::default())
            .map_err(|e| e.to_string())?;
        lab::request_logs::info_json(p, &log.stats())
    } else {
        let mut input =
            lab::input::open_trace(p, None, true, 2, true).map_err(|e| e.to_string())?;
        let st = traces::stats::scan(&mut input.source, 64, 4096, || {})
            .map_err(|e| format!("{path}: {e}"))?;
        serde_json::json!({
            "file": path,
            "format": input.source.format_name(),
            "bytes": input.file_len,
            "checksum": input.tap.checksum(),
            "fields": input.source.fields(),
            "stats": st,
        })
    };
    serde_json::to_string(&v).map_err(|e| e.to_string())
}

/// `run_trace_info` for Python.
#[pyfunction]
fn trace_info(py: Python<'_>, path: &str) -> PyResult<String> {
    detached(py, || run_trace_info(path))
}

/// Writes `records` from `src` to `dst` in the format its extension names,
/// whole or not at all (a temporary file renamed into place).
/// The trace writer for `dst`: `to` (a writer's name) or the one its
/// extension names, with the command line's message when neither does.
fn writer_of(dst: &str, to: Option<&str>) -> Result<&'static traces::sink::Writer, String> {
    let name = Path::new(dst)
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match to {
        Some(t) => traces::registry::writer_named(t).ok_or_else(|| {
            format!(
                "unknown output format {t:?}; expected {}",
                traces::registry::writer_names()
            )
        }),
        None => traces::registry::writer_for(&name).ok_or_else(|| {
            format!(
                "{dst}: cannot tell the output format from the extension ({}); pass to=",
                traces::registry::writer_extensions()
            )
        }),
    }
}

fn write_records(
    src: &mut dyn traces::RecordSource,
    dst: &str,
    w: &'static traces::sink::Writer,
    meta: &serde_json::Value,
) -> Result<u64, String> {
    let d = Path::new(dst);
    let name = d
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let dir = d
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut run = || -> Result<u64, String> {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&tmp).map_err(|e| format!("{dst}: cannot create: {e}"))?,
        );
        let n = traces::sink::copy(src, w, &mut f, meta, || {}).map_err(|e| match e {
            traces::sink::CopyError::Read(e) => format!("{e}"),
            traces::sink::CopyError::Write(e) => format!("{dst}: write failed: {e}"),
        })?;
        std::io::Write::flush(&mut f).map_err(|e| format!("{dst}: write failed: {e}"))?;
        std::fs::rename(&tmp, d).map_err(|e| format!("{dst}: cannot rename into place: {e}"))?;
        Ok(n)
    };
    let r = run();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// What `trace.convert` asks for (the command's flags as keywords).
struct ConvertAsk<'a> {
    src: &'a str,
    dst: &'a str,
    format: Option<&'a str>,
    to: Option<&'a str>,
    task_pc: Option<u64>,
    task_end_pc: Option<u64>,
    keys: u32,
    arrivals: Option<&'a str>,
    drop_warmup: bool,
}

/// Re-times `trace` by `arrivals=` (`poisson:QPS[:SEED]` or `log:FILE`),
/// in the command line's words.
fn retime(
    trace: &mut traces::tasks::TaskTrace,
    spec: &str,
    log: &lab::InputLog,
) -> Result<(), String> {
    lab::request_logs::Retime::parse(spec, Path::new(""), log)
        .and_then(|r| r.apply(trace, None))
        .map_err(|e| format!("arrivals {e}"))
}

/// `trace convert SRC DST` as the command runs it: a plain trace (format
/// detected or `format`; the output's from DST's extension or `to`), a
/// task trace into its other form, or with `task_pc` a plain trace cut
/// into tasks; `arrivals` re-times tasks. Returns the records (a plain
/// trace) or tasks written.
fn run_trace_convert(a: &ConvertAsk) -> Result<u64, String> {
    let p = Path::new(a.src);
    let format = match a.format {
        None => None,
        Some(f) => Some(traces::Format::from_name(f).ok_or_else(|| {
            format!(
                "unknown format {f:?}; expected one of {}",
                traces::Format::names().join(", ")
            )
        })?),
    };
    let retime = |t: &mut traces::tasks::TaskTrace| -> Result<(), String> {
        if let Some(spec) = a.arrivals {
            retime(t, spec, &lab::InputLog::default())?;
        }
        Ok(())
    };
    let write = |t: &traces::tasks::TaskTrace, meta: &serde_json::Value| {
        lab::task_files::write(Path::new(a.dst), t, meta).map_err(|e| e.to_string())
    };
    let from_file = p.file_name().map(|n| n.to_string_lossy().into_owned());
    if a.drop_warmup && a.task_pc.is_none() {
        return Err("drop_warmup applies with task_pc".into());
    }
    if let Some(task_pc) = a.task_pc {
        let mut input =
            lab::input::open_trace(p, format, false, 2, true).map_err(|e| e.to_string())?;
        let mut splitter = traces::tasks::TaskSplitter::new(task_pc, a.task_end_pc, a.keys);
        if a.drop_warmup {
            splitter = splitter.drop_warmup();
        }
        let (mut t, timed, _) = splitter
            .split(&mut input.source)
            .map_err(|e| format!("{}: {e}", a.src))?;
        if t.tasks.is_empty() {
            return Err(format!(
                "{}: no instruction fetch of {task_pc:#x}: no task begins (is the address the handler's, as the trace runs it?)",
                a.src
            ));
        }
        if a.arrivals.is_none() && !timed {
            return Err(format!(
                "{}: the trace has no arrival times; give arrivals=\"poisson:QPS[:SEED]\" or \"log:FILE\"",
                a.src
            ));
        }
        retime(&mut t)?;
        let meta = serde_json::json!({
            "source": "numasim trace convert --task-pc",
            "from_format": input.source.format_name(),
            "from_file": from_file,
            "task_pc": format!("{task_pc:#x}"),
        });
        write(&t, &meta)?;
        return Ok(t.tasks.len() as u64);
    }
    let task_form = lab::task_files::form_of(p);
    if let (None, Some(form)) = (format, task_form) {
        if a.to.is_some() {
            return Err("to does not apply to a task trace: the output's extension (.csv, .nst, .nst.zst) picks its form".into());
        }
        let mut t = lab::tasks::read(p, &lab::InputLog::default()).map_err(|e| e.to_string())?;
        retime(&mut t)?;
        let meta = serde_json::json!({
            "source": "numasim trace convert",
            "from_format": form.name(),
            "from_file": from_file,
        });
        write(&t, &meta)?;
        return Ok(t.tasks.len() as u64);
    }
    if a.arrivals.is_some() || a.task_end_pc.is_some() {
        return Err(
            "arrivals and task_end_pc apply to task traces (give task_pc, or a task trace)".into(),
        );
    }
    let w = writer_of(a.dst, a.to)?;
    let mut input = lab::input::open_trace(p, format, false, 2, true).map_err(|e| e.to_string())?;
    let meta = serde_json::json!({
        "source": "numasim trace convert",
        "from_format": input.source.format_name(),
        "from_file": from_file,
    });
    write_records(&mut input.source, a.dst, w, &meta).map_err(|e| format!("{}: {e}", a.src))
}

/// `run_trace_convert` for Python.
#[pyfunction]
#[pyo3(signature = (src, dst, format=None, to=None, task_pc=None, task_end_pc=None, keys=1, arrivals=None, drop_warmup=false))]
#[allow(clippy::too_many_arguments)]
fn trace_convert(
    py: Python<'_>,
    src: &str,
    dst: &str,
    format: Option<&str>,
    to: Option<&str>,
    task_pc: Option<u64>,
    task_end_pc: Option<u64>,
    keys: u32,
    arrivals: Option<&str>,
    drop_warmup: bool,
) -> PyResult<u64> {
    let ask = ConvertAsk {
        src,
        dst,
        format,
        to,
        task_pc,
        task_end_pc,
        keys,
        arrivals,
        drop_warmup,
    };
    detached(py, || run_trace_convert(&ask))
}

/// `trace gen PATTERN DST` with `params` (JSON: `GenConfig`'s fields,
/// `rate` for `rate_per_us`), the command's defaults for the rest.
fn run_trace_gen(pattern: &str, dst: &str, params: &str) -> Result<u64, String> {
    use traces::synth::{GenConfig, Generator, Pattern};
    if pattern == "tasks" {
        return run_gen_tasks(dst, params);
    }
    let Some(p) = Pattern::from_name(pattern) else {
        let names: Vec<&str> = Pattern::NAMES.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "unknown pattern {pattern:?}; expected one of {}",
            names.join(", ")
        ));
    };
    let mut cfg = serde_json::to_value(GenConfig {
        pattern: p,
        ..GenConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let given: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(params).map_err(|e| e.to_string())?;
    let obj = cfg.as_object_mut().ok_or("a generator is a table")?;
    for (k, v) in given {
        let key = if k == "rate" {
            "rate_per_us".to_string()
        } else {
            k
        };
        if key == "pattern" || !obj.contains_key(&key) {
            let mut known: Vec<&str> = obj
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "pattern")
                .collect();
            known.sort_unstable();
            return Err(format!(
                "unknown parameter {key:?}; expected some of {}",
                known.join(", ")
            ));
        }
        obj.insert(key, v);
    }
    let cfg: GenConfig = serde_json::from_value(cfg).map_err(|e| format!("trace gen: {e}"))?;
    let mut g = Generator::new(cfg.clone()).map_err(|e| format!("trace gen: {}", e.problem))?;
    let meta = serde_json::json!({ "source": "numasim trace gen", "generator": cfg });
    write_records(&mut g, dst, writer_of(dst, None)?, &meta)
}

/// `trace gen tasks DST` with `params` (JSON: the command's flags as
/// keywords — count, keys, key_zipf, items, item_zipf, lookups, qps,
/// gap_ns, background_every, sweep_lines, dirty_lines, base, region,
/// seed), its defaults for the rest; returns the tasks written.
fn run_gen_tasks(dst: &str, params: &str) -> Result<u64, String> {
    use traces::tasks::ServiceGen;
    let mut cfg = serde_json::to_value(ServiceGen::default()).map_err(|e| e.to_string())?;
    let given: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(params).map_err(|e| e.to_string())?;
    let obj = cfg.as_object_mut().ok_or("a generator is a table")?;
    for (k, v) in given {
        // The command's flag names; the struct's own two names are not flags.
        let key = match k.as_str() {
            "count" => "tasks",
            "items" => "items_per_key",
            "tasks" | "items_per_key" => "",
            other => other,
        };
        if !obj.contains_key(key) {
            let mut known: Vec<&str> = obj
                .keys()
                .map(|k| match k.as_str() {
                    "tasks" => "count",
                    "items_per_key" => "items",
                    k => k,
                })
                .collect();
            known.sort_unstable();
            return Err(format!(
                "unknown parameter {k:?}; expected some of {}",
                known.join(", ")
            ));
        }
        obj.insert(key.to_string(), v);
    }
    let g: ServiceGen = serde_json::from_value(cfg).map_err(|e| format!("trace gen tasks: {e}"))?;
    let t = lab::task_files::generate(&g).map_err(|e| format!("trace gen tasks: {e}"))?;
    let meta =
        serde_json::json!({ "source": "numasim trace gen tasks", "config": format!("{g:?}") });
    lab::task_files::write(Path::new(dst), &t, &meta).map_err(|e| e.to_string())?;
    Ok(t.tasks.len() as u64)
}

/// `run_trace_gen` for Python.
#[pyfunction]
fn trace_gen(py: Python<'_>, pattern: &str, dst: &str, params: &str) -> PyResult<u64> {
    detached(py, || run_trace_gen(pattern, dst, params))
}

/// Writes a trace made in Python: columns of equal length (`op` as the
/// letters L, S, M, I; `pc`, `gap_ns`, `time_ns` optional).
#[pyfunction]
#[pyo3(signature = (path, thread, op, addr, size, pc=None, gap_ns=None, time_ns=None))]
#[allow(clippy::too_many_arguments)]
fn trace_write(
    py: Python<'_>,
    path: &str,
    thread: Vec<u32>,
    op: Vec<String>,
    addr: Vec<u64>,
    size: Vec<u64>,
    pc: Option<Vec<u64>>,
    gap_ns: Option<Vec<u64>>,
    time_ns: Option<Vec<u64>>,
) -> PyResult<u64> {
    detached(py, || {
        let n = thread.len();
        for (name, len) in [
            ("op", Some(op.len())),
            ("addr", Some(addr.len())),
            ("size", Some(size.len())),
            ("pc", pc.as_ref().map(Vec::len)),
            ("gap_ns", gap_ns.as_ref().map(Vec::len)),
            ("time_ns", time_ns.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len.filter(|&l| l != n) {
                return Err(format!("{path}: {name} has {len} values, thread has {n}"));
            }
        }
        if gap_ns.is_some() && time_ns.is_some() {
            return Err(format!("{path}: give gap_ns or time_ns, not both"));
        }
        let mut records = Vec::with_capacity(n);
        for i in 0..n {
            let kind = match op[i].as_str() {
                "L" | "l" => traces::Kind::Load,
                "S" | "s" => traces::Kind::Store,
                "M" | "m" => traces::Kind::Modify,
                "I" | "i" => traces::Kind::IFetch,
                other => {
                    return Err(format!(
                        "{path}: record {i}: op {other:?} is not one of L, S, M, I"
                    ));
                }
            };
            let sz = u16::try_from(size[i])
                .ok()
                .filter(|&s| s > 0)
                .ok_or_else(|| format!("{path}: record {i}: size {} is not 1..=65535", size[i]))?;
            let mut r = traces::Record::access(thread[i], kind, addr[i], sz);
            if let Some(pc) = &pc {
                r = r.with_pc(pc[i]);
            }
            let horizon = |field: &str, ns: u64| {
                traces::horizon::check(field, ns).map_err(|e| format!("{path}: record {i}: {e}"))
            };
            if let Some(g) = &gap_ns {
                r = r.with_gap(horizon("gap_ns", g[i])?);
            }
            if let Some(t) = &time_ns {
                r = r.with_time(horizon("time_ns", t[i])?);
            }
            records.push(r);
        }
        let fields = traces::Fields {
            pc: pc.is_some(),
            time: gap_ns.is_some() || time_ns.is_some(),
        };
        let mut src = traces::VecSource::new(records, fields);
        let meta = serde_json::json!({ "source": "numasim (Python) trace.write" });
        write_records(&mut src, path, writer_of(path, None)?, &meta)
    })
}

/// Writes `files` into the folder `dir` (created), each file whole.
fn write_folder(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    for (name, bytes) in files {
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, bytes)
            .and_then(|()| std::fs::rename(&tmp, dir.join(name)))
            .map_err(|e| format!("{}: cannot write: {e}", dir.join(name).display()))?;
    }
    Ok(())
}

/// `sweep FILE --out OUT` run here: every point of the sweep at `path`
/// (its compare as the command line runs it, one thread per point, points
/// in parallel on `threads`), each point's folder built whole and renamed
/// into place, then merged; returns `sweep.csv`.
fn run_sweep(path: &str, out: &str, threads: Option<usize>) -> Result<Vec<u8>, String> {
    use lab::sweep::merge::{SweepRecord, point_dir, values_json};
    use rayon::prelude::*;
    let file = Path::new(path);
    let out = Path::new(out);
    let s = lab::sweep::Sweep::load(file).map_err(|e| e.to_string())?;
    let n = s.points.len();
    std::fs::create_dir_all(out.join("points"))
        .map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
    let record = serde_json::to_value(SweepRecord::of(&s, file)).map_err(|e| e.to_string())?;
    let mut rec = lab::outputs::Outputs::default();
    rec.json("sweep-points.json", &record);
    write_folder(out, &rec.files)?;
    let origin = s.experiment.display().to_string();
    let run_point = |i: usize| -> Result<(), String> {
        let dest = point_dir(out, i);
        if dest.exists() {
            return Ok(());
        }
        let text = s.point_text(i).map_err(|e| e.to_string())?;
        let (_, mut files, _, _, _) =
            run_compare(&text, &origin, s.fidelity.as_deref(), Some(1), None, false)
                .map_err(|e| format!("sweep point {i}: {e}"))?;
        let mut extra = lab::outputs::Outputs::default();
        extra.add("experiment.toml", text.clone());
        extra.json(
            "point.json",
            &serde_json::json!({ "point": i, "values": values_json(&s.keys, &s.cells(i)) }),
        );
        files.extend(extra.files);
        let tmp = out
            .join("points")
            .join(format!(".{i}.partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        write_folder(&tmp, &files)?;
        std::fs::rename(&tmp, &dest)
            .map_err(|e| format!("{}: cannot rename into place: {e}", dest.display()))
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| e.to_string())?;
    let results: Vec<Result<(), String>> =
        pool.install(|| (0..n).into_par_iter().map(run_point).collect());
    for r in results {
        r?;
    }
    let m = lab::sweep::merge::merge(out).map_err(|e| e.to_string())?;
    let mut merged = lab::outputs::Outputs::default();
    merged.add("sweep.csv", m.csv.clone());
    merged.json("sweep.json", &m.json);
    write_folder(out, &merged.files)?;
    Ok(m.csv)
}

/// `run_sweep` for Python.
#[pyfunction]
#[pyo3(signature = (path, out, threads=None))]
fn sweep<'py>(
    py: Python<'py>,
    path: &str,
    out: &str,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let csv = detached(py, || run_sweep(path, out, threads))?;
    Ok(PyBytes::new(py, &csv))
}

/// What `replay` asks for (Python's keyword arguments).
struct ReplayAsk<'a> {
    trace: &'a str,
    machine: Option<&'a str>,
    caches: [Option<&'a str>; 3],
    replacement: Option<&'a str>,
    placement: Option<&'a str>,
    prefetch: Vec<String>,
    seed: u64,
    /// `UNIT:PERIOD[:WARM[:FUNCTIONAL]]` and its placement seed.
    sample: Option<(&'a str, u64)>,
    /// Where to save and resume the timing model's state.
    checkpoints: lab::checkpoints::Plan,
    /// The sample split into this many parts, each warmed over this many
    /// records (None: the default) (`--parts`, `--part-warming`).
    parts: Option<(u64, Option<u64>)>,
}

/// `replay TRACE` (the cache model; with `machine`, the timing model):
/// (`summary.json` as the command line writes it, `timeseries.csv` of a
/// timing replay).
fn run_replay(a: &ReplayAsk) -> Result<(String, Option<String>), String> {
    let p = Path::new(a.trace);
    let input = lab::input::open_trace(p, None, false, 2, true).map_err(|e| e.to_string())?;
    let format = input.source.format_name();
    let Some(name) = a.machine else {
        let plan = &a.checkpoints;
        if a.placement.is_some() || !a.prefetch.is_empty() || a.sample.is_some() {
            return Err(
                "placement, prefetch and sample apply to the timing model (give machine)".into(),
            );
        }
        if plan.save.is_some() || plan.from.is_some() {
            return Err("checkpoints apply to the timing model (give machine)".into());
        }
        let d = sim::cachegrind::CgConfig::default();
        let geometry = |text: Option<&str>, what: &str, default| -> Result<_, String> {
            match text {
                None => Ok(default),
                Some(t) => t
                    .parse::<sim::geometry::Geometry>()
                    .map_err(|e| format!("{what} {t:?}: {e}")),
            }
        };
        let cfg = sim::cachegrind::CgConfig {
            i1: geometry(a.caches[0], "I1", d.i1)?,
            d1: geometry(a.caches[1], "D1", d.d1)?,
            ll: geometry(a.caches[2], "LL", d.ll)?,
        };
        let (mode, policy) = match a.replacement {
            None => ("cachegrind", None),
            Some(r) => match sim::cache::Replacement::from_name(r) {
                Some(policy) => (r, Some(policy)),
                None => {
                    return Err(format!(
                        "unknown replacement policy {r:?}; expected lru, plru, srrip or random"
                    ));
                }
            },
        };
        let counts = lab::replay::cache(input.source, &cfg, policy, a.seed, true, &mut || {})
            .map_err(|e| format!("{}: {e}", a.trace))?;
        let summary = counts.summary(mode, a.trace, format, &cfg, a.seed);
        return Ok((summary.to_string(), None));
    };
    if a.caches.iter().any(Option::is_some) || a.replacement.is_some() {
        return Err("I1, D1, LL and replacement apply to the cache model (without machine)".into());
    }
    let log = lab::InputLog::default();
    let machine = lab::machines::load(name, &log).map_err(|e| e.to_string())?;
    let sample = placed_sample(a.sample, !a.prefetch.is_empty())?;
    let cfg = sim::Config {
        timeseries: true,
        sample,
        ..sim::Config::default()
    };
    let placement = a.placement.unwrap_or("first-touch");
    if let Some((n, warming)) = a.parts {
        return split_replay(
            a,
            input.source,
            (&machine, cfg, placement, &log),
            n,
            warming,
        );
    }
    let mut engine =
        lab::replay::timing_engine(&machine, cfg, placement, &a.prefetch, a.seed, &log)
            .map_err(|e| e.to_string())?;
    lab::replay::timing_with(&mut engine, input.source, &a.checkpoints, &mut || {})
        .map_err(|e| format!("{}: {e}", a.trace))?;
    let summary = serde_json::to_string(&engine.summary()).map_err(|e| e.to_string())?;
    let series =
        analysis::timing::timeseries_csv(&engine.timeseries()).map_err(|e| e.to_string())?;
    Ok((summary, Some(series)))
}

/// A sampled replay split into `n` parts run at once (`replay --parts`):
/// the merged summary, as the command line's `--json` prints it; no time
/// series.
fn split_replay(
    a: &ReplayAsk,
    source: lab::input::Source,
    (machine, cfg, placement, log): (&sim::Machine, sim::Config, &str, &lab::InputLog),
    n: u64,
    warming: Option<u64>,
) -> Result<(String, Option<String>), String> {
    let plan = &a.checkpoints;
    if plan.save.is_some() || plan.from.is_some() {
        return Err("parts and checkpoints do not go together".into());
    }
    let Some(shape) = cfg.sample else {
        return Err("parts split a sampled replay (give sample)".into());
    };
    if n == 0 || n > sim::timing::MAX_UNITS {
        return Err(format!("parts {n}: 1 to {}", sim::timing::MAX_UNITS));
    }
    let p = Path::new(a.trace);
    let open = || lab::input::open_trace(p, None, false, 2, true).map(|i| i.source);
    let job = lab::parts::Job {
        machine,
        cfg,
        placement,
        prefetch: &a.prefetch,
        seed: a.seed,
        log,
        open: &open,
    };
    let err = |e: lab::parts::PartsError| format!("{}: {e}", a.trace);
    let split = job.split(source, &shape, n, warming).map_err(err)?;
    let results = job.all(&split).map_err(err)?;
    let (_, summary) = lab::parts::merge(machine, &shape, &split, &results).map_err(err)?;
    Ok((summary.to_string(), None))
}

/// `run_replay` for Python, detached from the interpreter.
#[pyfunction]
#[pyo3(signature = (trace, machine=None, i1=None, d1=None, ll=None, replacement=None, placement=None, prefetch=None, seed=0, sample=None, sample_seed=0, save=None, resume=None, parts=None, part_warming=None))]
#[allow(clippy::too_many_arguments)]
fn replay(
    py: Python<'_>,
    trace: &str,
    machine: Option<&str>,
    i1: Option<&str>,
    d1: Option<&str>,
    ll: Option<&str>,
    replacement: Option<&str>,
    placement: Option<&str>,
    prefetch: Option<Vec<String>>,
    seed: u64,
    sample: Option<&str>,
    sample_seed: u64,
    save: Option<(String, u64)>,
    resume: Option<String>,
    parts: Option<u64>,
    part_warming: Option<u64>,
) -> PyResult<(String, Option<String>)> {
    let ask = ReplayAsk {
        trace,
        machine,
        caches: [i1, d1, ll],
        replacement,
        placement,
        prefetch: prefetch.unwrap_or_default(),
        seed,
        sample: sample.map(|s| (s, sample_seed)),
        checkpoints: lab::checkpoints::Plan {
            save: save.map(|(p, at)| (p.into(), at)),
            from: resume.map(Into::into),
        },
        parts: parts.map(|n| (n, part_warming)),
    };
    detached(py, || run_replay(&ask))
}

/// `sample` (`UNIT:PERIOD[:WARM[:FUNCTIONAL]]` and its seed) placed as
/// `--sample` places it (`prefetchers`: the run has some).
fn placed_sample(
    sample: Option<(&str, u64)>,
    prefetchers: bool,
) -> Result<Option<sim::timing::Sample>, String> {
    sample
        .map(|(spec, seed)| {
            spec.parse::<sim::timing::SampleSpec>()
                .map(|s| s.place(seed, prefetchers))
                .map_err(|e| format!("sample {e}"))
        })
        .transpose()
}

/// What a task replay asks for (Python's keyword arguments).
struct TaskAsk<'a> {
    trace: &'a str,
    machine: &'a str,
    workers: &'a str,
    scheduler: &'a str,
    placement: &'a str,
    prefetch: Vec<String>,
    arrivals: Option<&'a str>,
    seed: u64,
    /// `UNIT:PERIOD[:WARM]` over the tasks and its seed (a sampled replay).
    sample: Option<(&'a str, u64)>,
}

/// `replay TASKTRACE --machine M --workers W --scheduler S`: (`summary.json`
/// with its `tasks` section, `tasks.csv`), as the command line writes
/// them; `custom` supplies `py:NAME` schedulers.
fn run_task_replay(a: &TaskAsk, custom: &dyn CustomPolicies) -> Result<(String, String), String> {
    let log = lab::InputLog::default();
    let machine = lab::machines::load(a.machine, &log).map_err(|e| e.to_string())?;
    let mut trace = lab::tasks::read(Path::new(a.trace), &log).map_err(|e| e.to_string())?;
    if let Some(spec) = a.arrivals {
        retime(&mut trace, spec, &log)?;
    }
    let cores = lab::workers::cores(a.workers, &machine).map_err(|e| format!("workers {e}"))?;
    let ctx = policies::registry::Ctx {
        seed: a.seed,
        ..policies::registry::Ctx::for_machine(&machine)
    };
    let placement = policies::placement::PLACEMENTS
        .build(a.placement, &ctx)
        .map_err(|e| format!("placement: {e}"))?;
    let build = lab::tasks::Build {
        scheduler: a.scheduler,
        placement,
        prefetch: &a.prefetch,
        cfg: sim::Config::default(),
        seed: a.seed,
        log: &log,
        custom: Some(custom),
    };
    let mut te = lab::tasks::engine(&machine, &cores, build).map_err(|e| e.to_string())?;
    let sample = placed_sample(a.sample, !a.prefetch.is_empty())?;
    let (recs, summary) = lab::tasks::replay_summary(&mut te, &trace, sample)
        .map_err(|e| format!("{}: {e}", a.trace))?;
    let summary = lab::tasks::summary_json(&summary, &recs, &cores, a.scheduler)
        .map_err(|e| e.to_string())?;
    let csv = lab::tasks::tasks_csv(&recs).map_err(|e| e.to_string())?;
    Ok((summary.to_string(), csv))
}

/// `run_task_replay` for Python, detached from the interpreter; an
/// exception a Python scheduler raised is raised here.
#[pyfunction]
#[pyo3(signature = (trace, machine, workers, scheduler, placement, prefetch, arrivals, seed, policies=None, sample=None, sample_seed=0))]
#[allow(clippy::too_many_arguments)]
fn replay_tasks(
    py: Python<'_>,
    trace: &str,
    machine: &str,
    workers: &str,
    scheduler: &str,
    placement: &str,
    prefetch: Vec<String>,
    arrivals: Option<&str>,
    seed: u64,
    policies: Option<HashMap<String, Py<PyAny>>>,
    sample: Option<&str>,
    sample_seed: u64,
) -> PyResult<(String, String)> {
    let raised: py_policies::Raised = Arc::new(Mutex::new(None));
    let custom = PyPolicies {
        objects: policies.unwrap_or_default(),
        raised: raised.clone(),
        any: false,
    };
    let ask = TaskAsk {
        trace,
        machine,
        workers,
        scheduler,
        placement,
        prefetch,
        arrivals,
        seed,
        sample: sample.map(|s| (s, sample_seed)),
    };
    let run = detached(py, || run_task_replay(&ask, &custom));
    if let Some(e) = raised.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    run
}

#[pymodule]
fn _numasim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NumasimError", m.py().get_type::<NumasimError>())?;
    m.add_class::<py_policies::PyRequest>()?;
    m.add_class::<py_policies::PyWorker>()?;
    m.add_class::<Rest>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(check_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(full_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(dataset, m)?)?;
    m.add_function(wrap_pyfunction!(feature_names, m)?)?;
    m.add_function(wrap_pyfunction!(trace_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(trace_write, m)?)?;
    m.add_function(wrap_pyfunction!(trace_gen, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(replay_tasks, m)?)?;
    Ok(())
}
