#!/usr/bin/env python3
"""Speed of the Python package (issue 27), each against its baseline in the
same run, best of ROUNDS (default 3), the two sides run in turn:

1. a scheduler written in Python vs the same rule built in (round-robin),
   on the seed workload: wall time per dispatch decision above the
   built-in's (target: at most 2 µs);
2. `Comparison.requests()` of about 1 M requests into pandas (target 0.5 s);
3. `numasim.compare` from Python vs the command line (`NUMASIM_BIN`, a
   release build) on the seed experiment (target: within 5%);
4. two comparisons in two Python threads vs one (the interpreter is
   released while they run: about 1× on two cores, not 2×).

    target/py-venv/bin/python bench/python_speed.py
    NUMASIM_BIN=target/release/numasim ROUNDS=5 target/py-venv/bin/python bench/python_speed.py
"""

import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numasim

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "scenarios" / "seed-inference.toml"
ROUNDS = int(os.environ.get("ROUNDS", "3"))


class RoundRobin:
    def __init__(self):
        self.next = 0

    def choose(self, request, workers):
        i = self.next % len(workers)
        self.next += 1
        return i


def best(f):
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def paired(f, g):
    """Best of ROUNDS each of `f` and `g`, run in turn (f, g, f, g, ...) so
    that a drift in the host's speed reaches both alike."""
    tf, tg = [], []
    for _ in range(ROUNDS):
        for fn, ts in ((f, tf), (g, tg)):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
    return min(tf), min(tg)


def one_row(sched, policies=None, duration=20.0):
    exp = numasim.Experiment.load(SEED)
    exp.seeds = [1]
    exp.workload.duration_s = duration
    row = [r for r in exp.rows if r.name == "static"][0].to_dict()
    exp.rows = [dict(row, name="r", scheduler=sched)]
    return lambda: numasim.compare(exp, threads=1, policies=policies)


t_rust, t_py = paired(one_row("round-robin"), one_row("py:rr", {"rr": RoundRobin()}))
n = int(one_row("round-robin")().to_pandas()["requests"][0])
print(f"1. {n} dispatch decisions: built-in round-robin {t_rust:.3f} s, in Python {t_py:.3f} s: "
      f"{(t_py - t_rust) / n * 1e6:.2f} µs per decision above the built-in (target ≤ 2)")

big = one_row("round-robin", duration=200.0)()
def first_requests():
    # Each round renders the CSV afresh, as a user's first call does.
    big._files.pop("requests-r.csv", None)
    return big.requests("r")


t_req, df = best(first_requests)
print(f"2. requests() of {len(df)} requests into pandas: {t_req:.3f} s (target ≤ 0.5)")

binary = os.environ.get("NUMASIM_BIN")
if binary:
    t_cli, t_lib = paired(
        lambda: subprocess.run([binary, "compare", str(SEED)], check=True, capture_output=True),
        lambda: numasim.compare(SEED),
    )
    print(f"3. the seed experiment: command line {t_cli:.3f} s, numasim.compare {t_lib:.3f} s: "
          f"{t_lib / t_cli:.3f}× (target ≤ 1.05)")
    # Every file `compare --out` writes (the plots, each row's requests),
    # rendered on both sides (the command line also writes them to disk):
    with tempfile.TemporaryDirectory() as d:
        t_out, t_lib = paired(
            lambda: subprocess.run([binary, "compare", str(SEED), "--out", f"{d}/o"], check=True, capture_output=True),
            lambda: numasim.compare(SEED).files,
        )
    print(f"3b. with every file: command line --out {t_out:.3f} s, numasim.compare(...).files {t_lib:.3f} s: {t_lib / t_out:.3f}×")
else:
    print("3. SKIPPED: set NUMASIM_BIN to a release numasim to time the command line beside it")


def in_threads(k):
    """k comparisons of the seed's static row (30 s, one seed, one thread
    each) in k Python threads."""
    args = dict(duration=30.0, seeds=[1], rows=["static"], threads=1)
    ts = [threading.Thread(target=numasim.compare, args=(SEED,), kwargs=args) for _ in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


t_one, t_two = paired(lambda: in_threads(1), lambda: in_threads(2))
print(f"4. one comparison {t_one:.3f} s, two in two Python threads {t_two:.3f} s: "
      f"{t_two / t_one:.3f}× (2.0× if the interpreter were held; {os.cpu_count()} cores)")
