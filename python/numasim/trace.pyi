import os
from typing import Any, Dict, Optional, Sequence, Union

def info(path: Union[str, os.PathLike[str]]) -> Dict[str, Any]: ...
def convert(
    src: Union[str, os.PathLike[str]],
    dst: Union[str, os.PathLike[str]],
    *,
    format: Optional[str] = ...,
    to: Optional[str] = ...,
    task_pc: Optional[int] = ...,
    task_end_pc: Optional[int] = ...,
    keys: int = ...,
    arrivals: Optional[str] = ...,
) -> int: ...
def write(
    path: Union[str, os.PathLike[str]],
    *,
    thread: Sequence[int],
    op: Sequence[str],
    addr: Sequence[int],
    size: Sequence[int],
    pc: Optional[Sequence[int]] = ...,
    gap_ns: Optional[Sequence[int]] = ...,
    time_ns: Optional[Sequence[int]] = ...,
) -> int: ...
def gen(pattern: str, path: Union[str, os.PathLike[str]], **params: Any) -> int: ...
