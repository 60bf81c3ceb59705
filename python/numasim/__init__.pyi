import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import pandas

from . import trace as trace
from ._numasim import NumasimError as NumasimError
from ._numasim import Request as Request
from ._numasim import Worker as Worker

__version__: str

def policies() -> List[Dict[str, str]]: ...

class _Table:
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Experiment:
    kind: str
    workload: _Table
    experiment: _Table
    rows: List[_Table]
    name: str
    seeds: List[int]
    spike_k: float
    bootstrap: int
    def __init__(self, doc: Dict[str, Any], path: Optional[str] = ...) -> None: ...
    @classmethod
    def load(cls, path: Union[str, os.PathLike[str]]) -> Experiment: ...
    @classmethod
    def from_toml(cls, text: str, path: Optional[str] = ...) -> Experiment: ...
    def to_toml(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @property
    def path(self) -> Optional[str]: ...
    def copy(self) -> Experiment: ...

class Comparison:
    text: str
    @property
    def files(self) -> Dict[str, bytes]: ...
    notes: List[str]
    prediction_wall_ns: Dict[str, Dict[str, int]]
    @property
    def summary(self) -> Dict[str, Any]: ...
    def columns(self) -> List[str]: ...
    def to_pandas(self) -> pandas.DataFrame: ...
    def to_arrow(self) -> Any: ...
    def __arrow_c_stream__(self, requested_schema: Any = ...) -> Any: ...
    def requests(self, row: str, seed: Optional[int] = ...) -> pandas.DataFrame: ...
    def write(self, out: Union[str, os.PathLike[str]]) -> None: ...

def compare(
    experiment_or_path: Union[Experiment, str, os.PathLike[str]],
    *,
    duration: Optional[float] = ...,
    seeds: Optional[Sequence[int]] = ...,
    rows: Optional[Sequence[str]] = ...,
    fidelity: Optional[str] = ...,
    threads: Optional[int] = ...,
    policies: Optional[Dict[str, Any]] = ...,
    out: Optional[Union[str, os.PathLike[str]]] = ...,
) -> Comparison: ...

DEFAULT_FEATURES: Tuple[str, ...]

def dataset(
    experiment_or_path: Union[Experiment, str, os.PathLike[str]],
    *,
    row: Optional[str] = ...,
    seed: int = ...,
    history: Optional[int] = ...,
    features: Optional[Sequence[str]] = ...,
    duration: Optional[float] = ...,
    prefetcher: str = ...,
    window: int = ...,
    level: Optional[str] = ...,
    machine: Optional[str] = ...,
    prefetch_level: int = ...,
    max_rows: int = ...,
) -> Tuple[numpy.ndarray, numpy.ndarray, List[str]]: ...

def dataset_columns(history: int = ..., features: Optional[Sequence[str]] = ...) -> List[str]: ...

def sweep(
    path: Union[str, os.PathLike[str]],
    *,
    threads: Optional[int] = ...,
    out: Optional[Union[str, os.PathLike[str]]] = ...,
) -> pandas.DataFrame: ...

class Replay:
    summary: Dict[str, Any]
    @property
    def events(self) -> Optional[Dict[str, int]]: ...
    @property
    def timeseries(self) -> Optional[pandas.DataFrame]: ...
    @property
    def tasks(self) -> Optional[pandas.DataFrame]: ...

def replay(
    trace: Union[str, os.PathLike[str]],
    *,
    machine: Optional[str] = ...,
    I1: Optional[str] = ...,
    D1: Optional[str] = ...,
    LL: Optional[str] = ...,
    replacement: Optional[str] = ...,
    workers: Optional[str] = ...,
    scheduler: Optional[str] = ...,
    placement: Optional[str] = ...,
    prefetch: Optional[Union[str, Sequence[str]]] = ...,
    arrivals: Optional[str] = ...,
    policies: Optional[Dict[str, Any]] = ...,
    seed: int = ...,
    sample: Optional[str] = ...,
    sample_seed: int = ...,
    save_checkpoint: Optional[Union[str, os.PathLike[str]]] = ...,
    checkpoint_at: Optional[int] = ...,
    from_checkpoint: Optional[Union[str, os.PathLike[str]]] = ...,
    parts: Optional[int] = ...,
    part_warming: Optional[int] = ...,
) -> Replay: ...
