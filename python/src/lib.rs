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
fn toml_to_json(text: &str) -> PyResult<String> {
    let t: toml::Table = toml::from_str(text)
        .map_err(|e| fail(format!("not TOML: {}", e.message().replace('\n', " "))))?;
    serde_json::to_string(&t).map_err(fail)
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
fn json_to_toml(json: &str) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(fail)?;
    let t: toml::Table = toml::Table::try_from(drop_nulls(v)).map_err(fail)?;
    toml::to_string(&t).map_err(fail)
}

/// Checks an experiment's TOML `text` as if read from `path` (relative
/// paths in it resolve against `path`'s folder); returns its kind,
/// `requests` or `tasks`. A `py:NAME` scheduler passes (the objects come
/// with the call that runs it).
#[pyfunction]
fn check_experiment(text: &str, path: &str) -> PyResult<&'static str> {
    let any: Arc<dyn CustomPolicies> = Arc::new(PyPolicies {
        objects: HashMap::new(),
        raised: Arc::default(),
        any: true,
    });
    match AnyExperiment::parse_file_text_with(Path::new(path), text, Some(any)).map_err(fail)? {
        AnyExperiment::Requests(_) => Ok("requests"),
        AnyExperiment::Tasks(_) => Ok("tasks"),
    }
}

/// What a comparison gives Python: the printed text, the result folder's
/// files (manifest included) and notes (rows not run, ...).
type Compared = (String, Vec<(String, Vec<u8>)>, Vec<String>);

/// Runs an experiment's TOML `text` (as if read from `path`) at
/// `fidelity` (`flow` or `lines`; None: the experiment's own) on
/// `threads` threads.
fn run_compare(
    text: &str,
    path: &str,
    fidelity: Option<&str>,
    threads: Option<usize>,
    custom: Arc<dyn CustomPolicies>,
) -> Result<Compared, String> {
    let p = Path::new(path);
    let origin = p.display().to_string();
    let any =
        AnyExperiment::parse_file_text_with(p, text, Some(custom)).map_err(|e| e.to_string())?;
    let opts = lab::compare::Options {
        threads,
        keep_records: true,
        timeline: None,
    };
    let none = |_: usize, _: usize| {};
    let mut notes = Vec::new();
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
            let r = lab::compare::files::flow(&e, &c, true).map_err(|e| e.to_string())?;
            (r, e.inputs.clone())
        }
        (AnyExperiment::Requests(e), Some("lines")) => {
            for r in e.row.iter().filter(|r| !lab::lines::mappable(r)) {
                notes.push(format!(
                    "row {}: shard moves and preload have no line-level mapping; not run at fidelity lines",
                    r.name
                ));
            }
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
    Ok((rendered.text, files.files, notes))
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
) -> PyResult<(String, Vec<(String, Bound<'py, PyBytes>)>, Vec<String>)> {
    let raised: py_policies::Raised = Arc::new(Mutex::new(None));
    let custom: Arc<dyn CustomPolicies> = Arc::new(PyPolicies {
        objects: policies.unwrap_or_default(),
        raised: raised.clone(),
        any: false,
    });
    let run = detached(py, || run_compare(text, path, fidelity, threads, custom));
    if let Some(e) = raised.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    let (text, files, notes) = run?;
    let files = files
        .into_iter()
        .map(|(n, b)| (n, PyBytes::new(py, &b)))
        .collect();
    Ok((text, files, notes))
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
    let exp =
        match AnyExperiment::parse_file_text(Path::new(path), text).map_err(|e| e.to_string())? {
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
    let fs =
        sim::policy::FeatureSet::parse(history, features).map_err(|e| format!("features: {e}"))?;
    exp.check_size().map_err(|e| e.to_string())?;
    let m = lab::machines::load(&exp.workload.machine, &exp.inputs).map_err(|e| e.to_string())?;
    let d = lab::dataset::requests(&m, &exp, spec, seed, &fs).map_err(|e| e.to_string())?;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (_, _, f, label) in &d.rows {
        for v in f {
            x.extend_from_slice(&v.to_le_bytes());
        }
        y.extend_from_slice(&(*label as u8 as f64).to_le_bytes());
    }
    Ok((d.features, x, y, d.rows.len()))
}

/// The feature names of `history` batches of the `features` groups.
#[pyfunction]
fn feature_names(history: usize, features: &str) -> PyResult<Vec<String>> {
    let fs = sim::policy::FeatureSet::parse(history, features)
        .map_err(|e| fail(format!("features: {e}")))?;
    Ok(fs.names())
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

#[pymodule]
fn _numasim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NumasimError", m.py().get_type::<NumasimError>())?;
    m.add_class::<py_policies::PyRequest>()?;
    m.add_class::<py_policies::PyWorker>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(check_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(dataset, m)?)?;
    m.add_function(wrap_pyfunction!(feature_names, m)?)?;
    Ok(())
}
