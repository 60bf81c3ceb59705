"""The command line's one-line messages for errors raised in Python."""

import errno
import os


def _missing(path: str, what: str) -> None:
    """Raises FileNotFoundError with the command line's message for a
    missing file: ``PATH: WHAT: No such file or directory (os error 2)``."""
    raise FileNotFoundError(f"{path}: {what}: {os.strerror(errno.ENOENT)} (os error {errno.ENOENT})") from None
