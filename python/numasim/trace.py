"""Traces from Python: what a trace holds (``info``), converting between
formats (``convert``), and writing a trace made in Python from numpy
arrays (``write``) — each as the command line's ``numasim trace`` does,
through numasim's library."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Sequence, Union

from . import _numasim
from ._errors import _missing

Path_ = Union[str, "os.PathLike[str]"]


def _path(p: Path_) -> str:
    s = os.fspath(p)
    return s


def info(path: Path_) -> Dict[str, Any]:
    """``numasim trace info --json PATH`` as a dict: format, bytes,
    checksum, fields and statistics (records by kind, threads, footprint,
    ...); a task trace's tasks, keys, accesses and arrival span."""
    p = _path(path)
    if not os.path.exists(p):
        _missing(p, "cannot open trace")
    return json.loads(_numasim.trace_info(p))


def convert(
    src: Path_,
    dst: Path_,
    *,
    format: Optional[str] = None,
    to: Optional[str] = None,
    task_pc: Optional[int] = None,
    task_end_pc: Optional[int] = None,
    keys: int = 1,
    arrivals: Optional[str] = None,
    drop_warmup: bool = False,
) -> int:
    """``numasim trace convert SRC DST``: the trace `src` (format detected,
    or `format`) written to `dst` (format from its extension, or `to`);
    returns the records written. A task trace is written in its other form
    (``.csv``, ``.nst``, ``.nst.zst``), re-timed by `arrivals`
    (``poisson:QPS[:SEED]`` or ``log:FILE``); with `task_pc`, a plain trace is cut into
    tasks, one beginning at each instruction fetch of `task_pc` (ending
    after `task_end_pc`, keys ``i mod keys``; the records before the first
    task kept as its warm-up unless `drop_warmup`), and the tasks written
    are returned. `dst` appears whole or not at all."""
    s = _path(src)
    if not os.path.exists(s):
        _missing(s, "cannot open trace")
    return _numasim.trace_convert(s, _path(dst), format, to, task_pc, task_end_pc, int(keys), arrivals, bool(drop_warmup))


def gen(pattern: str, path: Path_, **params: Any) -> int:
    """``numasim trace gen PATTERN PATH``: a synthetic trace (sequential,
    stride, random, chase, zipf, ...), its format from `path`'s extension.
    `params` are the generator's (count, footprint, size, stride, threads,
    write_ratio, zipf_s, base, gap_ns, rate, modular, streams, skip_lines,
    skip_prob, seed), the command line's defaults for the rest; returns
    the records written. Pattern ``tasks`` writes the inference-like
    service as a task trace (``.csv``, ``.nst`` or ``.nst.zst``; params
    count, keys, key_zipf, items, item_zipf, lookups, qps, gap_ns,
    background_every, sweep_lines, dirty_lines, base, region, seed) and
    returns the tasks written."""
    return _numasim.trace_gen(pattern, _path(path), json.dumps(params))


def _column(values: Any, name: str) -> list:
    if values is None:
        return None
    if hasattr(values, "tolist"):
        values = values.tolist()
    out = list(values)
    if name == "op":
        return [v.decode() if isinstance(v, bytes) else str(v) for v in out]
    return [int(v) for v in out]


def write(
    path: Path_,
    *,
    thread: Sequence[int],
    op: Sequence[str],
    addr: Sequence[int],
    size: Sequence[int],
    pc: Optional[Sequence[int]] = None,
    gap_ns: Optional[Sequence[int]] = None,
    time_ns: Optional[Sequence[int]] = None,
) -> int:
    """Writes a trace made in Python: one record per index of the equally
    long columns (numpy arrays or sequences); `op` is L, S, M or I; `pc`,
    and one of `gap_ns` (closed loop) or `time_ns` (issue times), are
    optional. The format comes from the extension; returns the records
    written."""
    return _numasim.trace_write(
        _path(path),
        _column(thread, "thread"),
        _column(op, "op"),
        _column(addr, "addr"),
        _column(size, "size"),
        _column(pc, "pc"),
        _column(gap_ns, "gap_ns"),
        _column(time_ns, "time_ns"),
    )
