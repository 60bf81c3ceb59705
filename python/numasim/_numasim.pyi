"""The Rust extension under `numasim` (plain values in, plain values out)."""

from typing import Any, Dict, List, Optional, Tuple

class NumasimError(ValueError): ...

class Rest:
    def files(self) -> List[Tuple[str, bytes]]: ...
    def requests(self, row: str) -> Optional[bytes]: ...
    def requests_columns(self, row: str) -> Optional[List[Tuple[str, bytes]]]: ...

def version() -> str: ...
def policies_json() -> str: ...
def toml_to_json(text: str) -> str: ...
def json_to_toml(json: str) -> str: ...
def check_experiment(text: str, path: str) -> str: ...
def full_json(text: str, path: str) -> str: ...
class Request:
    id: int
    key: int
    data_node: int
    home_worker: int
    now_ns: int

class Worker:
    id: int
    node: int
    queued: int
    busy: bool
    outstanding: int
    idle_fraction: float
    utilization: float
    stall_ms: float
    stall_ewma_ms: float

def compare(
    text: str,
    path: str,
    fidelity: Optional[str] = None,
    threads: Optional[int] = None,
    policies: Optional[Dict[str, Any]] = None,
) -> Tuple[str, List[Tuple[str, bytes]], List[str], List[Tuple[str, int, int, int]], Optional[Rest]]: ...
def dataset(
    text: str, path: str, row: str, seed: int, history: int, features: str
) -> Tuple[List[str], bytes, bytes, int]: ...
def feature_names(history: int, features: str) -> List[str]: ...
def trace_dataset(
    path: str,
    prefetcher: str,
    window: int,
    level: Optional[str],
    machine: Optional[str],
    prefetch_level: int,
    max_rows: int,
    history: int,
) -> Tuple[List[str], bytes, bytes, int]: ...
def trace_info(path: str) -> str: ...
def trace_convert(
    src: str,
    dst: str,
    format: Optional[str] = None,
    to: Optional[str] = None,
    task_pc: Optional[int] = None,
    task_end_pc: Optional[int] = None,
    keys: int = 1,
    arrivals: Optional[str] = None,
    drop_warmup: bool = False,
) -> int: ...
def trace_write(
    path: str,
    thread: List[int],
    op: List[str],
    addr: List[int],
    size: List[int],
    pc: Optional[List[int]] = None,
    gap_ns: Optional[List[int]] = None,
    time_ns: Optional[List[int]] = None,
) -> int: ...
def trace_gen(pattern: str, dst: str, params: str) -> int: ...
def sweep(path: str, out: str, threads: Optional[int] = None) -> bytes: ...
def replay(
    trace: str,
    machine: Optional[str] = None,
    i1: Optional[str] = None,
    d1: Optional[str] = None,
    ll: Optional[str] = None,
    replacement: Optional[str] = None,
    placement: Optional[str] = None,
    prefetch: Optional[List[str]] = None,
    seed: int = 0,
    sample: Optional[str] = None,
    sample_seed: int = 0,
    save: Optional[Tuple[str, int]] = None,
    resume: Optional[str] = None,
    parts: Optional[int] = None,
    part_warming: Optional[int] = None,
) -> Tuple[str, Optional[str]]: ...
def replay_tasks(
    trace: str,
    machine: str,
    workers: str,
    scheduler: str,
    placement: str,
    prefetch: List[str],
    arrivals: Optional[str],
    seed: int,
    policies: Optional[Dict[str, Any]] = None,
    sample: Optional[str] = None,
    sample_seed: int = 0,
) -> Tuple[str, str]: ...
