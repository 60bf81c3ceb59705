"""docs/python.md's worked example is what python/examples/preload.py
prints now: the script is rerun and its output compared line for line
with the block in the doc (the plot's line aside: matplotlib is optional)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def documented():
    doc = (ROOT / "docs" / "python.md").read_text()
    start = doc.index("python/examples/preload.py\n\n```\n") + len("python/examples/preload.py\n\n```\n")
    return doc[start : doc.index("```", start)].splitlines()


def test_the_worked_example_prints_what_the_doc_shows(tmp_path):
    run = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "preload.py"), str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    printed = [
        line
        for line in run.stdout.splitlines()
        if not line.startswith("(matplotlib") and not line.startswith("wrote preload-cdf")
    ]
    assert printed == documented()
    assert (tmp_path / "compare.csv").exists() and (tmp_path / "requests-logistic.csv").exists()
