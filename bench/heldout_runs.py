#!/usr/bin/env python3
"""The held-out table judged against several live runs (issue 29).

`validate` judges its simulated mean against the median of its own live
runs. On a shared VM the host itself moves between runs of the same traces
(a stride over memory that the host's prefetcher follows in one run and
not in the next), so one run's table mixes the model's error with the
host's. Given the `validate.csv` of several runs of the same held-out
traces (`bench/heldout.py --validate`, same seed and `--caches`), this
prints, per trace, every run's live mean and their spread, and counts:

- own run: the judged run's simulated mean against its own live median
  (what `validate` reports);
- range: the same simulated mean against the range of the runs' live
  medians, [least, greatest] (0 inside it, else the error to the nearer
  end);
- how many traces the runs alone put out of reach: a fixed prediction
  is within 15 % of two live values only if they differ by less than
  1.15 / 0.85 (1.35x), and within 30 % only below 1.3 / 0.7 (1.86x).

    bench/heldout_runs.py RUN.csv [RUN.csv ...] [--judge K]

`--judge K` (default: the last) names the run whose `sim` column is
judged. Only `mean_ns` rows are read. Traces missing from any run are
left out, and said so.
"""
import argparse
import csv
import os
import sys

WITHIN = 0.15
BEYOND = 0.30
REACH_15 = (1 + WITHIN) / (1 - WITHIN)
REACH_30 = (1 + BEYOND) / (1 - BEYOND)


def read_run(path):
    """{trace: (sim, live)} of a validate.csv's mean_ns rows; a one-line
    error for a file that cannot be read, a trace twice, or a mean that is
    not a positive number."""
    rows = {}
    try:
        with open(path, newline="") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                if r.get("metric") != "mean_ns":
                    continue
                t = r.get("trace")
                try:
                    sim, live = float(r["sim"]), float(r["live"])
                except (KeyError, TypeError, ValueError):
                    sys.exit(f"heldout_runs.py: {path}: line {line}: no sim and live numbers")
                if t in rows:
                    sys.exit(f"heldout_runs.py: {path}: line {line}: trace {t} a second time")
                if not (live > 0 and sim >= 0):
                    sys.exit(f"heldout_runs.py: {path}: line {line}: trace {t}: live {live} and sim {sim}"
                             " (want live > 0, sim >= 0)")
                rows[t] = (sim, live)
    except OSError as e:
        sys.exit(f"heldout_runs.py: {path}: {e.strerror}")
    if not rows:
        sys.exit(f"heldout_runs.py: {path}: no mean_ns rows")
    return rows


def range_error(sim, lo, hi):
    """0 inside [lo, hi], else the relative error to the nearer end."""
    if sim < lo:
        return (sim - lo) / lo
    if sim > hi:
        return (sim - hi) / hi
    return 0.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="validate.csv of each live run")
    ap.add_argument("--judge", type=int, default=-1,
                    help="index of the run whose sim column is judged (default: the last)")
    a = ap.parse_args(argv)
    if not -len(a.runs) <= a.judge < len(a.runs):
        sys.exit(f"heldout_runs.py: --judge {a.judge}: there are {len(a.runs)} runs (0 to {len(a.runs) - 1})")
    runs = [read_run(p) for p in a.runs]
    labels = [os.path.splitext(os.path.basename(p))[0] for p in a.runs]
    if len(set(labels)) < len(labels):
        labels = [f"run {i + 1}" for i in range(len(a.runs))]
    judged = runs[a.judge]
    traces = [t for t in judged if all(t in r for r in runs)]
    missing = sorted(set().union(*runs) - set(traces))
    print("| trace | " + " | ".join(labels) + " | max / min | sim | own run | range |")
    print("|---" * (len(runs) + 5) + "|")
    own = [0, 0]
    rng = [0, 0]
    spread = [0, 0]
    for t in traces:
        live = [r[t][1] for r in runs]
        sim, mine = judged[t]
        lo, hi = min(live), max(live)
        ratio = hi / lo
        e_own = (sim - mine) / mine
        e_rng = range_error(sim, lo, hi)
        own[0] += abs(e_own) <= WITHIN
        own[1] += abs(e_own) > BEYOND
        rng[0] += abs(e_rng) <= WITHIN
        rng[1] += abs(e_rng) > BEYOND
        spread[0] += ratio > REACH_15
        spread[1] += ratio > REACH_30
        cells = " | ".join(f"{x:.2f}" for x in live)
        print(f"| {t} | {cells} | {ratio:.2f} | {sim:.2f} | {100 * e_own:+.1f}% | {100 * e_rng:+.1f}% |")
    n = len(traces)
    print()
    print(f"judged: the sim column of {labels[a.judge]}; {len(runs)} runs, {n} traces"
          + (f" ({len(missing)} not in every run, left out: {', '.join(missing)})" if missing else ""))
    print(f"own run: {own[0]} of {n} within 15%, {own[1]} beyond 30%")
    print(f"range of the runs: {rng[0]} of {n} within 15%, {rng[1]} beyond 30%")
    print(f"runs differ by more than {REACH_15:.2f}x: {spread[0]} of {n}; "
          f"by more than {REACH_30:.2f}x: {spread[1]} of {n}")
    print(f"a fixed prediction within 15% of every run: possible for at most {n - spread[0]} of {n}; "
          f"within 30% of every run: at most {n - spread[1]} of {n}")


if __name__ == "__main__":
    main()
