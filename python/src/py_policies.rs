//! Policies written in Python: a row's `py:NAME` scheduler is the object
//! `policies["NAME"]` (anything with `choose(request, workers) -> int`),
//! deep-copied for each run as the registries build a fresh policy per run.
//! It sees the built-in schedulers' views, field for field and unit for
//! unit (`Request`, `Worker`). An exception it raises is kept and raised
//! to the caller, traceback and all, once the engine has stopped; an index
//! that names no worker stops the run as the engine's own check does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use lab::custom::CustomPolicies;
use policies::PolicyError;
use policies::registry::Timer;
use pyo3::prelude::*;
use sim::policy::{FeatureSet, Preload, PreloadDecision, RequestView, Scheduler, WorkerView};

/// The request being dispatched, as a scheduler sees it.
#[pyclass(get_all, name = "Request", module = "numasim")]
pub struct PyRequest {
    pub id: u64,
    pub key: u32,
    pub data_node: u32,
    pub home_worker: usize,
    pub now_ns: u64,
}

/// One worker, as a scheduler sees it (`sim::signals` defines each field).
#[pyclass(get_all, name = "Worker", module = "numasim")]
pub struct PyWorker {
    pub id: usize,
    pub node: u32,
    pub queued: usize,
    pub busy: bool,
    pub outstanding: usize,
    pub idle_fraction: f64,
    pub utilization: f64,
    pub stall_ms: f64,
    pub stall_ewma_ms: f64,
}

impl From<&WorkerView> for PyWorker {
    fn from(w: &WorkerView) -> PyWorker {
        PyWorker {
            id: w.id,
            node: w.node,
            queued: w.queued,
            busy: w.busy,
            outstanding: w.outstanding,
            idle_fraction: w.idle_fraction,
            utilization: w.utilization,
            stall_ms: w.stall_ms,
            stall_ewma_ms: w.stall_ewma_ms,
        }
    }
}

/// The first exception a Python policy raised in a comparison.
pub type Raised = Arc<Mutex<Option<PyErr>>>;

/// The `policies={...}` of a call: `py:NAME` names one of them.
#[derive(Debug)]
pub struct PyPolicies {
    pub objects: HashMap<String, Py<PyAny>>,
    pub raised: Raised,
    /// Accept any `py:` name with a placeholder (checking an experiment
    /// before the policies are given).
    pub any: bool,
}

impl CustomPolicies for PyPolicies {
    fn scheduler(&self, spec: &str) -> Option<Result<Box<dyn Scheduler>, PolicyError>> {
        spec.strip_prefix("py:")?;
        if self.any {
            return Some(Ok(Box::new(sim_placeholder())));
        }
        Some(self.copy_of(spec, "scheduler")?.map(|obj| {
            Box::new(PyScheduler {
                name: spec.to_string(),
                obj,
                raised: self.raised.clone(),
                choose: None,
                request: None,
                workers: Vec::new(),
            }) as Box<dyn Scheduler>
        }))
    }

    fn preload(
        &self,
        spec: &str,
        timer: Option<&Timer>,
    ) -> Option<Result<Box<dyn Preload>, PolicyError>> {
        spec.strip_prefix("py:")?;
        if self.any {
            return Some(Ok(Box::new(policies::preload::always::Always {
                window_ns: 0,
            })));
        }
        Some(self.copy_of(spec, "preload")?.and_then(|obj| {
            Python::attach(|py| {
                let o = obj.bind(py);
                let fset = feature_set(o).map_err(|e| {
                    PolicyError::Load(Arc::new(std::io::Error::other(format!(
                        "preload {spec}: {e}"
                    ))))
                })?;
                let number = |attr: &str, default: f64| -> f64 {
                    o.getattr(attr)
                        .and_then(|v| v.extract::<f64>())
                        .unwrap_or(default)
                };
                let base = policies::preload::learned::Cost::default();
                let window_ms = number("window_ms", policies::preload::DEFAULT_WINDOW_MS);
                let cost_us = number("cost_us", base.fixed_ns as f64 / 1e3);
                let array = py
                    .import("numpy")
                    .and_then(|np| np.getattr("array"))
                    .map(Bound::unbind);
                Ok(Box::new(PyPreload {
                    name: spec.to_string(),
                    obj: obj.clone_ref(py),
                    raised: self.raised.clone(),
                    window_ns: (window_ms.max(0.0) * 1e6) as u64,
                    cost_ns: (cost_us.max(0.0) * 1e3) as u64,
                    budget_ns: base.budget_ns,
                    threshold: number("threshold", 0.5),
                    array: array.map_err(|e| self.keep(e)).ok(),
                    timer: timer.cloned(),
                    fset,
                }) as Box<dyn Preload>)
            })
        }))
    }
}

impl PyPolicies {
    /// A copy of `policies[NAME]` for spec `py:NAME`, or the error to give.
    fn copy_of(&self, spec: &str, kind: &'static str) -> Option<Result<Py<PyAny>, PolicyError>> {
        let name = spec.strip_prefix("py:")?;
        let Some(obj) = self.objects.get(name) else {
            let mut known: Vec<&str> = self.objects.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Some(Err(PolicyError::Unknown {
                kind,
                name: spec.to_string(),
                known: format!("py: names given in policies: {}", known.join(", ")),
            }));
        };
        Python::attach(|py| {
            let copy = py
                .import("copy")
                .and_then(|m| m.call_method1("deepcopy", (obj.bind(py),)));
            match copy {
                Ok(c) => Some(Ok(c.unbind())),
                Err(e) => {
                    self.keep(e);
                    Some(Err(PolicyError::Unknown {
                        kind,
                        name: spec.to_string(),
                        known: "(its copy raised: see the exception)".into(),
                    }))
                }
            }
        })
    }

    fn keep(&self, e: PyErr) {
        let mut r = self.raised.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_none() {
            *r = Some(e);
        }
    }
}

/// A scheduler that stands in for a Python one (always worker 0).
fn sim_placeholder() -> impl Scheduler {
    struct First;
    impl Scheduler for First {
        fn name(&self) -> String {
            "py:placeholder".into()
        }
        fn pick(&mut self, _: &RequestView, _: &[WorkerView]) -> usize {
            0
        }
    }
    First
}

thread_local! {
    /// This thread's kept Python thread state: the Ensure's result and the
    /// state SaveThread returned.
    static KEPT: std::cell::Cell<Option<(pyo3::ffi::PyGILState_STATE, *mut pyo3::ffi::PyThreadState)>> =
        const { std::cell::Cell::new(None) };
}

/// Gives this thread (one of the simulator's, not Python's) a Python
/// thread state that outlives each decision. Without it every attach
/// creates a thread state and every release destroys it again — about
/// 10 µs a decision. The state is made at a run's first decision and
/// released when the run's Python policy is dropped
/// ([`release_thread_state`]): the simulator's threads come from a pool
/// made per comparison, so a state kept for a thread's life would be lost
/// with the thread. The GIL is released at once.
fn keep_thread_state() {
    KEPT.with(|k| {
        if k.get().is_none() {
            // SAFETY: the interpreter is initialised (this extension was
            // imported by it). Ensure makes this thread's state (or takes
            // the one it has) and the GIL; SaveThread releases the GIL and
            // keeps the state, whose Ensure count stays up, so later
            // attaches only restore it.
            let kept = unsafe {
                let state = pyo3::ffi::PyGILState_Ensure();
                (state, pyo3::ffi::PyEval_SaveThread())
            };
            k.set(Some(kept));
        }
    });
}

/// Gives back the thread state [`keep_thread_state`] kept on this thread,
/// if any: takes the GIL with it and undoes the Ensure (which deletes a
/// state the Ensure made, and releases the GIL). It must run while this
/// thread is detached — not attached to the interpreter — as every drop
/// of a Python policy does (the runs that own them run detached, on the
/// simulator's threads or inside `py.detach`): taking the GIL while
/// holding it would deadlock. (`PyGILState_Check`, which could assert
/// it, is outside the stable ABI this extension is built against.)
fn release_thread_state() {
    KEPT.with(|k| {
        if let Some((state, ts)) = k.take() {
            // SAFETY: `ts` is this thread's state (each decision's attach
            // restores it and detaches again), and the thread is detached
            // now (see above).
            unsafe {
                pyo3::ffi::PyEval_RestoreThread(ts);
                pyo3::ffi::PyGILState_Release(state);
            }
        }
    });
}

/// The feature row a predictor is given: its `history` attribute (batches,
/// default 10) and `features` attribute (groups, default all four) — the
/// arguments `numasim.dataset` took when its model was trained.
fn feature_set(o: &Bound<'_, PyAny>) -> Result<FeatureSet, String> {
    let history = match o.getattr("history") {
        Ok(v) => Some(
            v.extract::<usize>()
                .map_err(|_| format!("history {v}: not a whole number"))?,
        ),
        Err(_) => None,
    };
    let groups = match o.getattr("features") {
        Ok(v) => Some(
            v.extract::<Vec<String>>()
                .map_err(|_| format!("features {v}: not a list of group names"))?
                .join(","),
        ),
        Err(_) => None,
    };
    if history.is_none() && groups.is_none() {
        return Ok(FeatureSet::default());
    }
    let all = std::iter::once(sim::policy::CACHED)
        .chain(sim::policy::GROUPS)
        .collect::<Vec<_>>()
        .join(",");
    FeatureSet::parse(
        history.unwrap_or(sim::policy::HISTORY),
        groups.as_deref().unwrap_or(&all),
    )
    .map_err(|e| format!("features: {e}"))
}

/// A Python predictor as a preload: `predict_proba(X)` (scikit-learn's
/// interface) on the request's feature row (`numasim.dataset`'s
/// columns); preload when the probability of a miss is above
/// `threshold` (default 0.5). Its simulated cost per call is `cost_us`
/// (default: the built-in learned preload's fixed cost), charged to the
/// worker; above the built-in's budget (5 ms) it falls back to no
/// preload, as the circuit breaker does.
struct PyPreload {
    name: String,
    obj: Py<PyAny>,
    raised: Raised,
    window_ns: u64,
    cost_ns: u64,
    budget_ns: u64,
    threshold: f64,
    /// `numpy.array`.
    array: Option<Py<PyAny>>,
    /// Measures each call's real time (reported, not simulated).
    timer: Option<Timer>,
    /// The columns `X` has (the object's `history` and `features`).
    fset: FeatureSet,
}

impl Drop for PyPreload {
    fn drop(&mut self) {
        release_thread_state();
    }
}

impl Preload for PyPreload {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn window_ns(&self) -> u64 {
        self.window_ns
    }

    fn features(&self) -> FeatureSet {
        self.fset.clone()
    }

    fn decide(&mut self, features: &[f64], _truth: Option<bool>) -> PreloadDecision {
        if self.cost_ns > self.budget_ns {
            return PreloadDecision {
                preload: false,
                cost_ns: self.budget_ns,
                fallback: true,
                probability: 0.0,
            };
        }
        let stopped = self.raised.lock().map_or(true, |r| r.is_some());
        if stopped {
            // A policy raised: the run ends with that exception; finish fast.
            return PreloadDecision {
                preload: false,
                cost_ns: 0,
                fallback: true,
                probability: 0.0,
            };
        }
        keep_thread_state();
        let t0 = self.timer.as_ref().map(|t| (t.clock)());
        let p = Python::attach(|py| -> PyResult<f64> {
            let array = self
                .array
                .as_ref()
                .ok_or_else(|| pyo3::exceptions::PyImportError::new_err("numpy"))?;
            let x = array.bind(py).call1((vec![features.to_vec()],))?;
            let proba = self.obj.bind(py).call_method1("predict_proba", (x,))?;
            proba.get_item(0)?.get_item(1)?.extract::<f64>()
        });
        if let (Some(t), Some(t0)) = (&self.timer, t0)
            && let Ok(mut w) = t.samples.lock()
        {
            w.push((t.clock)().saturating_sub(t0));
        }
        match p {
            Ok(p) => PreloadDecision {
                preload: p > self.threshold,
                cost_ns: self.cost_ns,
                fallback: false,
                probability: p,
            },
            Err(e) => {
                let mut r = self.raised.lock().unwrap_or_else(|p| p.into_inner());
                if r.is_none() {
                    *r = Some(e);
                }
                PreloadDecision {
                    preload: false,
                    cost_ns: self.cost_ns,
                    fallback: true,
                    probability: 0.0,
                }
            }
        }
    }
}

/// A Python object as a scheduler.
///
/// The `Request` and `Worker` objects it is given are made once per run
/// and refreshed before each call (the list holding the workers is new
/// each call): allocating nine objects a decision cost about 1 µs. They
/// are read-only in Python and hold the views of the call they are given
/// to; a scheduler that keeps state keeps values, not these objects.
struct PyScheduler {
    name: String,
    obj: Py<PyAny>,
    raised: Raised,
    /// `obj.choose`, looked up at the first decision.
    choose: Option<Py<PyAny>>,
    request: Option<Py<PyRequest>>,
    workers: Vec<Py<PyWorker>>,
}

impl PyScheduler {
    /// The arguments of one `choose` call: the request and a fresh list of
    /// the workers, each refreshed with this decision's views.
    fn arguments<'py>(
        &mut self,
        py: Python<'py>,
        req: &RequestView,
        workers: &[WorkerView],
    ) -> PyResult<(Bound<'py, PyRequest>, Bound<'py, pyo3::types::PyList>)> {
        let r = PyRequest {
            id: req.id,
            key: req.key,
            data_node: req.data_node,
            home_worker: req.home_worker,
            now_ns: req.now_ns,
        };
        let request = match &self.request {
            Some(o) => {
                let o = o.bind(py).clone();
                *o.try_borrow_mut()? = r;
                o
            }
            None => {
                let o = Bound::new(py, r)?;
                self.request = Some(o.clone().unbind());
                o
            }
        };
        if self.workers.len() == workers.len() {
            for (o, w) in self.workers.iter().zip(workers) {
                *o.bind(py).try_borrow_mut()? = PyWorker::from(w);
            }
        } else {
            self.workers = workers
                .iter()
                .map(|w| Py::new(py, PyWorker::from(w)))
                .collect::<PyResult<_>>()?;
        }
        let list = pyo3::types::PyList::new(py, self.workers.iter().map(|o| o.bind(py)))?;
        Ok((request, list))
    }
}

impl Drop for PyScheduler {
    fn drop(&mut self) {
        release_thread_state();
    }
}

impl Scheduler for PyScheduler {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn pick(&mut self, req: &RequestView, workers: &[WorkerView]) -> usize {
        keep_thread_state();
        Python::attach(|py| {
            let mut choose = || -> PyResult<usize> {
                let method = match &self.choose {
                    Some(m) => m.bind(py).clone(),
                    None => {
                        let m = self.obj.bind(py).getattr(pyo3::intern!(py, "choose"))?;
                        self.choose = Some(m.clone().unbind());
                        m
                    }
                };
                let args = self.arguments(py, req, workers)?;
                let i = method.call1(args)?;
                match i.extract::<i64>() {
                    Ok(i) if i >= 0 && (i as usize) < workers.len() => Ok(i as usize),
                    Ok(i) => Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "scheduler {}: request {} was sent to worker {i}, but the workers are 0..{}",
                        self.name,
                        req.id,
                        workers.len()
                    ))),
                    Err(_) => Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "scheduler {}: request {}: choose returned {}, not a worker index",
                        self.name,
                        req.id,
                        i.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))),
                }
            };
            choose().unwrap_or_else(|e| {
                let mut r = self.raised.lock().unwrap_or_else(|p| p.into_inner());
                if r.is_none() {
                    *r = Some(e);
                }
                // Out of range: the engine stops the run at once.
                usize::MAX
            })
        })
    }
}
