#!/usr/bin/env python3
"""Joins two `numasim validate` tables (calibrated prefetchers, the fixed
stand-in) into one Markdown table of mean and p50 errors per pattern, with
the mean absolute error over the patterns at the end."""
import csv
import sys


def read(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        rows.setdefault(r["trace"], {})[r["metric"]] = r
    return rows


def spread(r):
    """The live runs' least and greatest, where validate.csv has them."""
    if "live_min" not in r:
        return ""
    return f" ({float(r['live_min']):.2f}–{float(r['live_max']):.2f})"


cal, old = read(sys.argv[1]), read(sys.argv[2])
print("| pattern | live harness | host memory ns | live mean ns (min–max of runs) | sim mean ns | mean error | p50 error | stand-in mean error | stand-in p50 error |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
abs_cal, abs_old = [], []
for t, m in cal.items():
    o = old.get(t, {})
    e = float(m["mean_ns"]["error_pct"])
    oe = float(o["mean_ns"]["error_pct"]) if o else float("nan")
    abs_cal.append(abs(e))
    abs_old.append(abs(oe))
    print(
        f"| {t} | {m['mean_ns'].get('harness', '')} | {float(m['mean_ns'].get('memory_now_ns', 'nan')):.0f} | {float(m['mean_ns']['live']):.2f}{spread(m['mean_ns'])} | {float(m['mean_ns']['sim']):.2f} | {e:+.1f}% "
        f"| {float(m['p50_ns']['error_pct']):+.1f}% | {oe:+.1f}% "
        f"| {float(o['p50_ns']['error_pct']) if o else float('nan'):+.1f}% |"
    )
n = len(abs_cal)
first = next(iter(cal.values()))["mean_ns"]
if "memory_model_ns" in first:
    now = [float(m["mean_ns"]["memory_now_ns"]) for m in cal.values()]
    print(
        f"\nhost memory latency during the live runs: {min(now):.0f}–{max(now):.0f} ns; "
        f"in the machine file (calibration; memory and a page walk if it has a TLB): {float(first['memory_model_ns']):.0f} ns"
    )
within = sum(1 for e in abs_cal if e <= 15.0)
print(
    f"\nmean |error| of the means over {n} patterns: calibrated {sum(abs_cal) / n:.1f}%, "
    f"stand-in {sum(abs_old) / n:.1f}%; within 15%: {within} of {n}"
)
