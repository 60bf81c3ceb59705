#!/usr/bin/env python3
"""Validation of sampled replay (issue 30, item 1): does the full run's value
lie inside the sampled run's 99.7% interval?

For each trace x machine, the full timing replay runs once and the sampled
replay (`--sample UNIT:PERIOD`, every record between units warmed
functionally) runs with five seeds of the unit placement. For the mean
latency and the LLC miss rate it counts the cases whose interval holds the
full run's value, and prints the intervals' half-widths, the units' CV, the
units ±3% would need, and the wall-time ratio full / sampled.

Traces (generated into bench/out/sample_check/ on first use):
  zipf16    16 threads, Zipf(0.9) over 64 MiB, 20% stores
  shared16  16 threads, uniform over 1 MiB, 20% stores (heavy coherence)
  random1   1 thread, uniform over 32 MiB, 20% stores
  workload  bench/workload.c under lackey (a real program, 1 thread)
  list      tests/programs/list.c under lackey (a real program, 1 thread)
  stream8   8 threads, each streaming through its own 16 MiB
and, with prefetchers (their default warm-up is 8 x UNIT, not 2 x UNIT):
  stream8+pf   stream8 with stream:8:1@L2 (nearly every fill late)
  zipf16+pf    zipf16 with next-line@L1D (a stream never forms on it)
  workload+pf  workload with next-line@L1D and stream:8:1@L2
Machines: xeon-2s, epyc-4numa.

  bench/sample_check.py [--sample 1000:20000] [--seeds 5] [--n 2000000]
                        [--parts N [--part-warming R]]

With --parts, every sampled run is split into N parts (`replay --parts`,
each warmed over R records, default 4 x the machine's LLC lines), and the
same question is asked of the merged estimates.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "sample_check")
BIN = os.path.join(ROOT, "target", "release", "numasim")
MACHINES = ["xeon-2s", "epyc-4numa"]


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def lackey(name, build, argv):
    """A program's lackey trace converted to .nst (cached)."""
    nst = os.path.join(OUT, f"{name}.nst")
    if os.path.exists(nst):
        return nst
    exe = os.path.join(OUT, name)
    run(["gcc", "-O1", "-o", exe, build])
    log = os.path.join(OUT, f"{name}.lackey")
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}", exe, *argv],
        cwd=OUT, env=env)
    run([BIN, "trace", "convert", log, nst])
    os.remove(log)
    return nst


def traces(n):
    gens = {
        "zipf16": ["zipf", "--threads", "16", "--footprint", "64M", "--write-ratio", "0.2",
                   "--zipf-s", "0.9"],
        "shared16": ["random", "--threads", "16", "--footprint", "1M", "--write-ratio", "0.2"],
        "random1": ["random", "--footprint", "32M", "--write-ratio", "0.2"],
        "stream8": ["sequential", "--threads", "8", "--footprint", "16M"],
    }
    out = {}
    for name, g in gens.items():
        path = os.path.join(OUT, f"{name}-{n}.nst")
        if not os.path.exists(path):
            run([BIN, "trace", "gen", g[0], "-n", str(n), *g[1:], "-o", path])
        out[name] = path
    out["workload"] = lackey("workload", os.path.join(HERE, "workload.c"), ["600"])
    out["list"] = lackey("list", os.path.join(ROOT, "tests", "programs", "list.c"), [])
    return out


STREAM = ["--prefetch", "stream:8:1@L2"]
# (row name, trace, flags of both runs)
CASES = [
    ("zipf16", "zipf16", []),
    ("shared16", "shared16", []),
    ("random1", "random1", []),
    ("workload", "workload", []),
    ("list", "list", []),
    ("stream8", "stream8", []),
    ("stream8+pf", "stream8", STREAM),
    ("zipf16+pf", "zipf16", ["--prefetch", "next-line@L1D"]),
    ("workload+pf", "workload", ["--prefetch", "next-line@L1D", *STREAM]),
]


def replay(trace, machine, extra):
    t = time.perf_counter()
    r = run([BIN, "replay", trace, "--machine", machine, "--pin", "spread", "--json", *extra])
    return json.loads(r.stdout), time.perf_counter() - t


def llc_miss_rate(s):
    served = {x["level"]: x["accesses"] for x in s["served"]}
    mem = served["local memory"] + served["remote memory"]
    return mem / max(1, served["LLC"] + mem)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", default="1000:20000")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--parts", type=int)
    ap.add_argument("--part-warming", type=int)
    a = ap.parse_args()
    split = [] if a.parts is None else ["--parts", str(a.parts)]
    if a.part_warming is not None:
        split += ["--part-warming", str(a.part_warming)]
    os.makedirs(OUT, exist_ok=True)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    ts = traces(a.n)
    print(f"sampled replay --sample {a.sample} {' '.join(split)}, seeds 0..{a.seeds - 1}; 99.7% intervals "
          f"(date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n")
    print("| trace | machine | accesses | metric | full run | inside | mean ±% of interval "
          "| CV | units for ±3% | units | wall full / sampled |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    inside = total = unestimated = 0
    for name, trace, flags in CASES:
        path = ts[trace]
        for m in MACHINES:
            full, wall_full = replay(path, m, flags)
            truth = {"latency_mean_ns": full["latency_ns"]["mean"],
                     "llc_miss_rate": llc_miss_rate(full)}
            runs = [replay(path, m, [*flags, "--sample", a.sample, "--sample-seed", str(s), *split])
                    for s in range(a.seeds)]
            wall_s = sum(w for _, w in runs) / len(runs)
            for metric, v in truth.items():
                es = [r["sampled"]["metrics"].get(metric) for r, _ in runs]
                # Not estimated: no unit had the ratio's denominator (say,
                # no LLC lookup). A case without an interval is not inside.
                none = sum(e is None for e in es)
                total += len(es)
                unestimated += none
                es = [e for e in es if e is not None]
                if not es:
                    print(f"| {name} | {m} | {full['accesses']:,} | {metric} | {v:.4f} | "
                          f"0/{none} (not estimated: no unit had a denominator) | | | | | |")
                    continue
                ok = sum(e["ci_low"] <= v <= e["ci_high"] for e in es)
                inside += ok
                half = sum((e["ci_high"] - e["ci_low"]) / 2 / max(abs(e["estimate"]), 1e-12)
                           for e in es) / len(es)
                cv = sum(e["cv"] for e in es) / len(es)
                need = max(e["units_for_3pct"] for e in es)
                units = runs[0][0]["sampled"]["units"]
                print(f"| {name} | {m} | {full['accesses']:,} | {metric} | {v:.4f} | "
                      f"{ok}/{len(es) + none} | {100 * half:.2f} | {cv:.3f} | {need:,} | {units} | "
                      f"{wall_full:.2f} s / {wall_s:.2f} s = {wall_full / wall_s:.2f}× |")
            sys.stdout.flush()
    print(f"\ninside the 99.7% interval: {inside} of {total} cases "
          f"({100 * inside / total:.1f}%; {unestimated} of them not estimated)")


if __name__ == "__main__":
    main()
