"""numasim in Python: experiments as objects, comparisons as DataFrames.

The simulation is numasim's Rust library (``lab``), called in-process
through ``numasim._numasim`` — never the command-line binary. An
experiment is its TOML document held as plain data: every table is an
object whose keys are attributes (``exp.workload.qps = 3000.0``), every
assignment is checked by the same code the command line runs, and a bad
value raises :class:`NumasimError` with the command line's one-line
message (the experiment is left as it was).

    import numasim
    exp = numasim.Experiment.load("scenarios/seed-inference.toml")
    exp.seeds = [1]
    c = numasim.compare(exp, duration=1.0)
    c.to_pandas()[["row", "tp99_ms"]]
"""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _numasim, trace
from ._errors import _missing
from ._numasim import NumasimError, Request, Worker

__all__ = [
    "__version__",
    "NumasimError",
    "Request",
    "Worker",
    "Experiment",
    "Comparison",
    "compare",
    "dataset",
    "dataset_columns",
    "policies",
    "Replay",
    "replay",
    "sweep",
    "trace",
]

__version__: str = _numasim.version()


def policies() -> List[Dict[str, str]]:
    """Every registered policy: ``{kind, name, parameters, help}`` each, in
    the order ``numasim policies`` lists them."""
    return json.loads(_numasim.policies_json())


_MISSING = object()


def _plain(value: Any, root: Any = None, seen: Optional[set] = None) -> Any:
    """`value` as plain data (tables and lists unwrapped, tuples as lists).
    A table of `root` (the experiment assigned to) keeps its own dict the
    first time it appears, so handles to it stay live; a repeat, or a
    table of another experiment, is copied."""
    seen = set() if seen is None else seen
    if isinstance(value, _Table):
        if value._root is root and id(value._data) not in seen:
            seen.add(id(value._data))
            return value._data
        return copy.deepcopy(value._data)
    if isinstance(value, dict):
        return {str(k): _plain(v, root, seen) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, root, seen) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars
        return _plain(value.tolist())
    return value


class _List(list):
    """A list an experiment holds (``exp.seeds``, ``exp.rows``, ...): read
    it as a list; a change in place (append, pop, ``[i] = ...``, sort, ...)
    is checked and kept as an assignment of the whole list is."""

    __slots__ = ("_root", "_table", "_key", "_path")

    def _bind(self, root: "Experiment", table: Dict[str, Any], key: str, path: tuple) -> "_List":
        self._root, self._table, self._key, self._path = root, table, key, path
        return self

    def _change(self, how, *args):
        new = list(self)
        out = how(new, *args)
        self._root._assign(self._table, self._key, new)
        list.clear(self)
        list.extend(self, self._root._wrap_list(self._table[self._key], self._path))
        return out

    def append(self, x):
        return self._change(list.append, x)

    def extend(self, xs):
        return self._change(list.extend, list(xs))

    def insert(self, i, x):
        return self._change(list.insert, i, x)

    def pop(self, i=-1):
        return self._change(list.pop, i)

    def remove(self, x):
        return self._change(list.remove, x)

    def clear(self):
        return self._change(list.clear)

    def sort(self, *, key=None, reverse=False):
        return self._change(lambda l: l.sort(key=key, reverse=reverse))

    def reverse(self):
        return self._change(list.reverse)

    def __setitem__(self, i, x):
        return self._change(list.__setitem__, i, x)

    def __delitem__(self, i):
        return self._change(list.__delitem__, i)

    def __iadd__(self, xs):
        self.extend(xs)
        return self

    def __imul__(self, n):
        self._change(lambda l: l.__imul__(n))
        return self


class _Table:
    """One table of an experiment: its keys as attributes, validated on
    assignment by the experiment that holds it."""

    __slots__ = ("_root", "_data", "_path")

    def __init__(self, root: "Experiment", data: Dict[str, Any], path: tuple = ()) -> None:
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._data:
            default = self._root._default(self._path + (name,))
            if default is _MISSING:
                raise AttributeError(
                    f"{name!r}: no such key in this table (keys: {', '.join(sorted(self._data))})"
                )
            if not isinstance(default, (list, dict)):
                return default  # a scalar default, or None: an optional key unset
            # A list or table default joins the document, so changes to it stay.
            self._data[name] = copy.deepcopy(default)
        return self._root._wrap(self._data[name], self._data, name, self._path + (name,))

    def __setattr__(self, name: str, value: Any) -> None:
        self._root._assign(self._data, name, value)

    def __delattr__(self, name: str) -> None:
        self._root._assign(self._data, name, _MISSING)

    def __dir__(self) -> Iterable[str]:
        return sorted(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Table):
            return self._data == other._data
        return self._data == other

    def __repr__(self) -> str:
        return f"Table({self._data!r})"

    def to_dict(self) -> Dict[str, Any]:
        """A copy of the table as plain data."""
        return copy.deepcopy(self._data)


class Experiment:
    """A numasim experiment (request model or task trace), as its TOML
    document. Attributes: ``workload``, ``experiment`` (tables), ``rows``
    (a list of tables), and ``name``, ``seeds``, ``spike_k``, ``bootstrap``
    (the ``[experiment]`` table's keys)."""

    _META = ("name", "seeds", "spike_k", "bootstrap")

    def __init__(self, doc: Dict[str, Any], path: Optional[str] = None, kind: Optional[str] = None) -> None:
        self._doc = doc
        self._path = path
        self.kind = kind if kind is not None else self._check(doc)
        self._full: Optional[Dict[str, Any]] = None

    # ---- reading and writing ----

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Experiment":
        """Reads the experiment at `path` (relative paths in it resolve
        against its folder)."""
        p = os.fspath(path)
        try:
            text = Path(p).read_text()
        except FileNotFoundError:
            _missing(p, "cannot read experiment")
        return cls.from_toml(text, path=p)

    @classmethod
    def from_toml(cls, text: str, path: Optional[str] = None) -> "Experiment":
        """An experiment from TOML text (relative paths resolve against
        `path`'s folder, else the working folder). The text itself is
        checked, so an error names its line as the command line does."""
        origin = path if path is not None else "<experiment>"
        kind = _numasim.check_experiment(text, origin)
        return cls(json.loads(_numasim.toml_to_json(text)), path, kind=kind)

    def to_toml(self) -> str:
        """The experiment as TOML text (keys in sorted order)."""
        return _numasim.json_to_toml(json.dumps(self._doc))

    def to_dict(self) -> Dict[str, Any]:
        """A copy of the document as plain data."""
        return copy.deepcopy(self._doc)

    @property
    def path(self) -> Optional[str]:
        """The file it was read from (None if made from text)."""
        return self._path

    # ---- attributes ----

    def _origin(self) -> str:
        return self._path if self._path is not None else "<experiment>"

    def _check(self, doc: Dict[str, Any]) -> str:
        text = _numasim.json_to_toml(json.dumps(doc))
        return _numasim.check_experiment(text, self._origin())

    def _wrap(self, value: Any, table: Dict[str, Any], key: str, path: tuple) -> Any:
        if isinstance(value, dict):
            return _Table(self, value, path)
        if isinstance(value, list):
            return _List(self._wrap_list(value, path))._bind(self, table, key, path)
        return value

    def _wrap_list(self, value: list, path: tuple) -> list:
        # A table in a list is found by identity (its index moves when
        # the list changes).
        return [_Table(self, v, path + (v,)) if isinstance(v, dict) else copy.deepcopy(v) for v in value]

    def _default(self, path: tuple) -> Any:
        """The value at `path` as the experiment reads it: a key the file
        leaves out at its default, None for an optional key unset, or
        _MISSING for no such key."""
        if self._full is None:
            self._full = json.loads(_numasim.full_json(self.to_toml(), self._origin()))
        d: Any = self._doc
        f: Any = self._full
        for k in path:
            if isinstance(k, str):
                if not isinstance(f, dict) or k not in f:
                    return _MISSING
                f = f[k]
                d = d.get(k) if isinstance(d, dict) else None
            else:
                if not isinstance(d, list) or not isinstance(f, list):
                    return _MISSING
                i = next((i for i, x in enumerate(d) if x is k), None)
                if i is None or i >= len(f):
                    return _MISSING
                d, f = d[i], f[i]
        return f

    def _assign(self, table: Dict[str, Any], key: str, value: Any) -> None:
        """Sets `table[key]` (or removes it), keeping the change only if the
        whole experiment still checks."""
        old = table.get(key, _MISSING)
        if value is _MISSING:
            table.pop(key, None)
        else:
            table[key] = _plain(value, root=self)
        try:
            self.kind = self._check(self._doc)
            self._full = None
        except Exception:
            if old is _MISSING:
                table.pop(key, None)
            else:
                table[key] = old
            raise

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._META:
            meta = self._doc.setdefault("experiment", {})
            if name in meta:
                return self._wrap(meta[name], meta, name, ("experiment", name))
            default = self._default(("experiment", name))
            return None if default is _MISSING else copy.deepcopy(default)
        if name == "rows":
            return self._wrap(self._doc.setdefault("row", []), self._doc, "row", ("row",))
        if name in self._doc:
            return self._wrap(self._doc[name], self._doc, name, (name,))
        raise AttributeError(f"{name!r}: the experiment has no such table")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or name == "kind":
            object.__setattr__(self, name, value)
        elif name in self._META:
            self._assign(self._doc.setdefault("experiment", {}), name, value)
        elif name == "rows":
            self._assign(self._doc, "row", list(value))
        else:
            self._assign(self._doc, name, value)

    def __repr__(self) -> str:
        names = [r.get("name") for r in self._doc.get("row", [])]
        return f"Experiment({self._origin()!r}, kind={self.kind!r}, rows={names})"

    def copy(self) -> "Experiment":
        """An independent copy."""
        return Experiment(copy.deepcopy(self._doc), self._path, kind=self.kind)


class Comparison:
    """A finished comparison: the table (``compare.csv``), its summary
    (``compare.json``), each row's first-seed requests, and the text the
    command line prints. A request-model comparison renders its plots and
    requests when first asked for (:attr:`files`, :meth:`requests`,
    :meth:`write`): reading the table costs no more than the command
    line's ``compare`` without ``--out``."""

    def __init__(
        self,
        text: str,
        files: Dict[str, bytes],
        notes: List[str],
        seeds: List[int],
        wall: Sequence[Tuple[str, int, int, int]] = (),
        rest: Any = None,
    ):
        self.text = text
        self._files = files
        self._rest = rest
        self.notes = notes
        self._seeds = seeds
        #: Each learned or ``py:`` preload row's real prediction time over
        #: all seeds, ``{row: {"p50_ns", "p99_ns", "predictions"}}`` — wall
        #: clock, reported as the command line reports it, never simulated
        #: (the simulated cost is ``predict_cost_us`` in the table).
        self.prediction_wall_ns: Dict[str, Dict[str, int]] = {
            row: {"p50_ns": p50, "p99_ns": p99, "predictions": n} for row, p50, p99, n in wall
        }

    @property
    def files(self) -> Dict[str, bytes]:
        """The result folder's files by name, as ``compare --out`` writes
        them (``manifest.json`` records the Python call)."""
        if self._rest is not None:
            self._files.update(dict(self._rest.files()))
            self._rest = None
        return self._files

    @property
    def summary(self) -> Dict[str, Any]:
        """``compare.json`` as a dict."""
        return json.loads(self._files["compare.json"])

    def columns(self) -> List[str]:
        """``compare.csv``'s columns, in order."""
        return self._files["compare.csv"].decode().split("\n", 1)[0].split(",")

    def _records(self) -> List[Dict[str, Any]]:
        """The table's rows at full precision (``compare.json``), keyed and
        ordered by ``compare.csv``'s columns."""
        cols = self.columns()
        return [{k: r[k] for k in cols} for r in self.summary["rows"]]

    def to_pandas(self):
        """The table as a pandas DataFrame: ``compare.csv``'s columns, at
        ``compare.json``'s full precision."""
        import pandas as pd

        return pd.DataFrame(self._records(), columns=self.columns())

    def to_arrow(self):
        """The table as a ``pyarrow.Table`` (``compare.csv``'s columns)."""
        import pyarrow as pa

        return pa.Table.from_pylist(self._records())

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow PyCapsule stream of :meth:`to_arrow`, so that
        ``pyarrow.table(c)`` and ``polars.DataFrame(c)`` take a comparison
        as it is."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def requests(self, row: str, seed: Optional[int] = None):
        """One line per request of `row` (as ``requests-<row>.csv``): the
        first seed's, the only one kept."""
        import pandas as pd

        if seed is not None and (not self._seeds or seed != self._seeds[0]):
            raise NumasimError(
                f"requests of seed {seed}: only the first seed's ({self._seeds[0] if self._seeds else '-'}) are kept"
            )
        name = f"requests-{row}.csv"
        if name not in self._files and self._rest is not None:
            # Straight from the records, no CSV text in between: the same
            # table as the file read back (test_api checks it).
            cols = self._rest.requests_columns(row)
            if cols is not None:
                import numpy as np

                return pd.DataFrame({n: np.frombuffer(b, dtype="<i8") for n, b in cols})
        if name not in self._files:
            rows = sorted(n[len("requests-") : -4] for n in self.files if n.startswith("requests-"))
            raise NumasimError(f"row {row!r}: no requests kept (rows: {', '.join(rows)})")
        return pd.read_csv(io.BytesIO(self._files[name]))

    def write(self, out: Union[str, os.PathLike]) -> None:
        """Writes the result folder as the command line's ``--out`` does;
        each file whole or not at all."""
        _write_folder(Path(out), self.files)

    def __repr__(self) -> str:
        return self.text


def _write_folder(out: Path, files: Dict[str, bytes]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, out / name)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def _experiment(experiment_or_path: Union["Experiment", str, os.PathLike]) -> "Experiment":
    """A copy of the experiment given, or the one read from the path given."""
    if isinstance(experiment_or_path, Experiment):
        return experiment_or_path.copy()
    return Experiment.load(experiment_or_path)


DEFAULT_FEATURES = ("cached_share", "hit_rate", "read_mb", "addr_delta_mb")


def dataset_columns(history: int = 10, features: Optional[Sequence[str]] = None) -> List[str]:
    """The feature columns of :func:`dataset` (and of the row a Python
    preload predictor is given) for `history` batches of `features`."""
    groups = ",".join(features) if features is not None else ",".join(DEFAULT_FEATURES)
    return list(_numasim.feature_names(int(history), groups))


def dataset(
    experiment_or_path: Union["Experiment", str, os.PathLike],
    *,
    row: Optional[str] = None,
    seed: int = 101,
    history: Optional[int] = None,
    features: Optional[Sequence[str]] = None,
    duration: Optional[float] = None,
    prefetcher: str = "delta:2",
    window: int = 2000,
    level: Optional[str] = None,
    machine: Optional[str] = None,
    prefetch_level: int = 1,
    max_rows: int = 2_000_000,
):
    """Training data as the command line's ``dataset`` makes it: ``(X, y,
    columns)`` — the features (float64, one row per decision point in time
    order), the labels (0.0 / 1.0) and the feature names.

    From an experiment (an :class:`Experiment` or a ``.toml`` path): the
    dispatch decisions of `row` on `seed` (default 101), label "the
    request's lookups then missed"; `history` batches (default 10) of the
    `features` groups (default all four: cached_share, hit_rate, read_mb,
    addr_delta_mb); `duration` (s) overrides the workload's.

    From a trace (any other path): one row per line the base `prefetcher`
    proposes at each data access, label "the line was accessed within
    `window` accesses"; the misses the features see are those of `level`
    (``SIZE,ASSOC``, 64-byte lines, default ``1M,16``) or of `machine`'s
    private level `prefetch_level`; `history` past accesses (default 10);
    at most `max_rows` rows."""
    import numpy as np

    hist = 10 if history is None else int(history)
    is_trace = not isinstance(experiment_or_path, Experiment) and not os.fspath(experiment_or_path).lower().endswith(".toml")
    if is_trace:
        p = os.fspath(experiment_or_path)
        if not os.path.exists(p):
            _missing(p, "cannot open trace")
        for name, given in (("row", row), ("features", features), ("duration", duration)):
            if given is not None:
                raise NumasimError(f"{name} applies to an experiment's dataset, not a trace's")
        cols, x, y, n = _numasim.trace_dataset(p, prefetcher, int(window), level, machine, int(prefetch_level), int(max_rows), hist)
    else:
        exp = _experiment(experiment_or_path)
        if row is None:
            raise NumasimError(f"row is needed with an experiment (rows: {', '.join(r.name for r in exp.rows)})")
        if duration is not None:
            exp.workload.duration_s = float(duration)
        groups = ",".join(features) if features is not None else ",".join(DEFAULT_FEATURES)
        cols, x, y, n = _numasim.dataset(exp.to_toml(), exp._origin(), row, int(seed), hist, groups)
    X = np.frombuffer(x, dtype="<f8").reshape(n, len(cols)).copy()
    return X, np.frombuffer(y, dtype="<f8").copy(), list(cols)


class Replay:
    """A finished replay: ``summary`` (``summary.json`` as a dict); for a
    cache replay ``events`` (cachegrind's nine counts), for a timing
    replay ``timeseries`` (``timeseries.csv`` as a DataFrame), for a task
    replay ``tasks`` (``tasks.csv``: one line per task, times in ns)."""

    def __init__(
        self,
        summary: Dict[str, Any],
        timeseries_csv: Optional[str] = None,
        tasks_csv: Optional[str] = None,
    ):
        self.summary = summary
        self._series = timeseries_csv
        self._tasks = tasks_csv

    @property
    def events(self) -> Optional[Dict[str, int]]:
        """Cachegrind's nine counts (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw)
        of a cache replay; None for a timing replay."""
        return self.summary.get("events")

    @property
    def timeseries(self):
        """The timing replay's per-window series (``timeseries.csv``); None
        for a cache or task replay."""
        return _frame(self._series)

    @property
    def tasks(self):
        """The task replay's tasks (``tasks.csv``: task, key, worker, core,
        node, arrival/start/end/queue/service in ns, accesses, misses), in
        arrival order; None for a cache or timing replay."""
        return _frame(self._tasks)

    def __repr__(self) -> str:
        return f"Replay({json.dumps(self.summary)[:200]}...)"


def _frame(csv: Optional[str]):
    if csv is None:
        return None
    import pandas as pd

    return pd.read_csv(io.StringIO(csv))


def replay(
    trace: Union[str, os.PathLike],
    *,
    machine: Optional[str] = None,
    I1: Optional[str] = None,
    D1: Optional[str] = None,
    LL: Optional[str] = None,
    replacement: Optional[str] = None,
    workers: Optional[str] = None,
    scheduler: Optional[str] = None,
    placement: Optional[str] = None,
    prefetch: Optional[Union[str, Sequence[str]]] = None,
    arrivals: Optional[str] = None,
    policies: Optional[Dict[str, Any]] = None,
    seed: int = 0,
    sample: Optional[str] = None,
    sample_seed: int = 0,
    save_checkpoint: Optional[Union[str, os.PathLike]] = None,
    checkpoint_at: Optional[int] = None,
    from_checkpoint: Optional[Union[str, os.PathLike]] = None,
    parts: Optional[int] = None,
    part_warming: Optional[int] = None,
) -> Replay:
    """``numasim replay TRACE``: through the cachegrind model (`I1`, `D1`,
    `LL` as ``SIZE,ASSOC,LINE``; `replacement`), or with `machine` through
    the NUMA timing model (`placement`, `prefetch`; `sample`
    ``UNIT:PERIOD[:WARM[:FUNCTIONAL]]`` and `sample_seed` for a sampled
    replay, its estimates in ``summary["sampled"]``; `save_checkpoint` FILE
    with `checkpoint_at` N saves the whole state after N records,
    `from_checkpoint` FILE resumes from one: the uninterrupted run's
    results; `parts` N splits the sample into N parts run at once, each
    warmed over `part_warming` records (default 4 x the machine's LLC
    lines), as ``replay --parts`` does: ``summary`` is then the merged
    one, with ``"sampled"`` and ``"parts"``). With `machine` and
    `workers` (a count or a core list), `trace` is a task trace dispatched
    by `scheduler` (default ``round-robin``; ``py:NAME`` names a
    ``choose(request, workers)`` object in `policies`), its arrivals
    re-timed by `arrivals` (``poisson:QPS[:SEED]`` or ``log:FILE``); there
    `sample` is ``UNIT:PERIOD[:WARM]`` tasks in arrival order (the measured
    tasks in ``tasks``, the estimates in ``summary["sampled"]``)."""
    p = os.fspath(trace)
    if not os.path.exists(p):
        _missing(p, "cannot open" if workers is not None else "cannot open trace")
    pf = [prefetch] if isinstance(prefetch, str) else (list(prefetch) if prefetch else [])
    if workers is not None:
        if machine is None:
            raise NumasimError("workers needs machine (tasks run on the timing model)")
        if any(x is not None for x in (I1, D1, LL, replacement)):
            raise NumasimError("I1, D1, LL and replacement apply to the cache model (without machine)")
        if save_checkpoint is not None or from_checkpoint is not None:
            raise NumasimError("checkpoints apply to a trace replay (not with workers)")
        summary, tasks = _numasim.replay_tasks(
            p,
            machine,
            str(workers),
            scheduler or "round-robin",
            placement or "first-touch",
            pf,
            arrivals,
            int(seed),
            policies,
            sample,
            int(sample_seed),
        )
        return Replay(json.loads(summary), tasks_csv=tasks)
    for name, given in (("scheduler", scheduler), ("arrivals", arrivals), ("policies", policies)):
        if given is not None:
            raise NumasimError(f"{name} applies to a task replay (give machine and workers)")
    if part_warming is not None and parts is None:
        raise NumasimError("part_warming goes with parts")
    if parts is not None and (sample is None or machine is None):
        raise NumasimError("parts split a sampled replay (give machine and sample)")
    if parts is not None and workers is not None:
        raise NumasimError("parts apply to a trace replay (not with workers)")
    if (save_checkpoint is None) != (checkpoint_at is None):
        raise NumasimError("save_checkpoint and checkpoint_at go together")
    if checkpoint_at is not None and int(checkpoint_at) < 0:
        raise NumasimError(f"checkpoint_at {checkpoint_at}: a record count, at least 0")
    save = (os.fspath(save_checkpoint), int(checkpoint_at)) if save_checkpoint is not None else None
    resume = os.fspath(from_checkpoint) if from_checkpoint is not None else None
    summary, series = _numasim.replay(
        p, machine, I1, D1, LL, replacement, placement, pf or None, int(seed), sample, int(sample_seed), save, resume,
        None if parts is None else int(parts), None if part_warming is None else int(part_warming),
    )
    return Replay(json.loads(summary), timeseries_csv=series)


def sweep(
    path: Union[str, os.PathLike],
    *,
    threads: Optional[int] = None,
    out: Optional[Union[str, os.PathLike]] = None,
):
    """Runs every point of the sweep file at `path` (as ``numasim sweep
    PATH --out OUT`` runs them locally: each point's comparison, points in
    parallel on `threads`) and returns ``sweep.csv`` as a pandas DataFrame:
    the grid's columns, then each point's ``compare.csv`` line. With `out`,
    the sweep folder stays there (points, ``sweep.csv``, ``sweep.json``);
    a finished point is not run again."""
    import pandas as pd

    p = os.fspath(path)
    if not os.path.exists(p):
        _missing(p, "cannot read the sweep file")
    if out is not None:
        csv = _numasim.sweep(p, os.fspath(out), threads)
    else:
        with tempfile.TemporaryDirectory(prefix="numasim-sweep-") as d:
            csv = _numasim.sweep(p, d, threads)
    return pd.read_csv(io.BytesIO(csv))


def compare(
    experiment_or_path: Union["Experiment", str, os.PathLike],
    *,
    duration: Optional[float] = None,
    seeds: Optional[Sequence[int]] = None,
    rows: Optional[Sequence[str]] = None,
    fidelity: Optional[str] = None,
    threads: Optional[int] = None,
    policies: Optional[Dict[str, Any]] = None,
    out: Optional[Union[str, os.PathLike]] = None,
) -> Comparison:
    """Runs every row × seed of an experiment, as ``numasim compare``.

    `duration` (seconds) and `seeds` override the experiment's; `rows`
    keeps the named rows, in the experiment's order; `fidelity` is
    ``"flow"`` or ``"lines"`` for a request experiment (default: flow; a
    task-trace experiment runs at line level). With `out`, the result
    folder is written as the command line writes it. The interpreter is
    released while it runs.

    `policies` maps names to Python objects: a row whose scheduler is
    ``py:NAME`` dispatches with ``policies["NAME"].choose(request,
    workers) -> int`` (a copy per run), seeing :class:`Request` and
    :class:`Worker` views with the built-in schedulers' fields and units.
    An exception it raises reaches the caller; nothing is written."""
    exp = _experiment(experiment_or_path)
    if duration is not None:
        if exp.kind != "requests":
            raise NumasimError(
                "duration applies to the request model; a task trace's load is its workload.arrivals"
            )
        exp.workload.duration_s = float(duration)
    if seeds is not None:
        exp.seeds = [int(s) for s in seeds]
    if rows is not None:
        names = [r.name for r in exp.rows]
        unknown = [r for r in rows if r not in names]
        if unknown:
            raise NumasimError(f"{exp._origin()}: rows: the experiment has no row {json.dumps(unknown[0])}")
        exp.rows = [r for r in exp.rows if r.name in rows]
    text = exp.to_toml()
    printed, files, notes, wall, rest = _numasim.compare(text, exp._origin(), fidelity, threads, policies)
    c = Comparison(printed, dict(files), list(notes), list(exp.seeds or []), wall, rest)
    if out is not None:
        c.write(out)
    return c
