#!/usr/bin/env python3
"""The worked example of docs/python.md: build a dataset from the seed
experiment's NUMA-aware row (seed 101, not an evaluation seed), train a
logistic regression on it in plain Python (deterministic on any machine:
no BLAS), plug it in as a preload predictor, and compare it against
`always` (preload everything) and `oracle*` (told the outcomes: an upper
bound) on evaluation seeds 1–3. With matplotlib, also plot the latency CDFs.

    python python/examples/preload.py [OUT_DIR]
"""

import math
import sys
from pathlib import Path

import numasim

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "scenarios" / "seed-inference.toml"

# 1. Training data: the decisions of the numa_aware row on seed 101.
X, y, columns = numasim.dataset(SEED, row="numa_aware", seed=101, duration=2.0)
print(f"dataset: {X.shape[0]} requests × {X.shape[1]} features, {y.mean():.3f} missed")

# 2. A logistic regression, standardised features, full-batch gradient
#    descent, in Python floats (the same bits on every machine).
rows = X.tolist()
labels = y.tolist()
n, d = len(rows), len(columns)
mean = [sum(r[j] for r in rows) / n for j in range(d)]
std = [math.sqrt(sum((r[j] - mean[j]) ** 2 for r in rows) / n) or 1.0 for j in range(d)]
Z = [[(r[j] - mean[j]) / std[j] for j in range(d)] for r in rows]
w, b = [0.0] * d, 0.0
for _ in range(60):
    gw, gb = [0.0] * d, 0.0
    for z, t in zip(Z, labels):
        s = b + sum(wj * zj for wj, zj in zip(w, z))
        e = 1.0 / (1.0 + math.exp(-s)) - t
        gb += e
        for j in range(d):
            gw[j] += e * z[j]
    w = [wj - 0.5 * g / n for wj, g in zip(w, gw)]
    b -= 0.5 * gb / n


class Logistic:
    """scikit-learn's predict_proba interface over the model above."""

    cost_us = 2.0  # simulated cost of one prediction (the GBDT's is about 2)

    def predict_proba(self, X):
        z = [(x - m) / s for x, m, s in zip(X[0].tolist(), mean, std)]
        p = 1.0 / (1.0 + math.exp(-(b + sum(wj * zj for wj, zj in zip(w, z)))))
        return [[1.0 - p, p]]


hits = sum((1.0 / (1.0 + math.exp(-(b + sum(a * c for a, c in zip(w, z))))) > 0.5) == (t == 1.0) for z, t in zip(Z, labels))
print(f"training accuracy {hits / n:.3f}")

# 3. The model as a preload row, beside the baselines and the upper bound.
exp = numasim.Experiment.load(SEED)
exp.workload.duration_s = 3.0
keep = {"numa_aware", "always", "oracle"}
rows = [r.to_dict() for r in exp.rows if r.name in keep]
mine = dict(next(r for r in rows if r["name"] == "always"), name="logistic", preload="py:logistic")
exp.rows = rows + [mine]
out = Path(sys.argv[1]) if len(sys.argv) > 1 else None
c = numasim.compare(exp, policies={"logistic": Logistic()}, out=out)
t = c.to_pandas()
cols = ["row", "tp50_ms", "tp99_ms", "tp99_diff_ms", "preload_gb", "predict_auc", "upper_bound"]
print(t[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))

# 4. The latency CDFs (matplotlib optional).
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("(matplotlib is not installed: no plot)")
else:
    for row in t["row"]:
        lat = c.requests(row)
        ms = sorted((lat["end"] - lat["arrival"]) / 1e6)
        plt.plot(ms, [i / len(ms) for i in range(len(ms))], label=row)
    plt.xscale("log")
    plt.xlabel("latency (ms)")
    plt.ylabel("share of requests")
    plt.legend()
    plt.savefig((out or Path(".")) / "preload-cdf.png", dpi=100)
    print("wrote preload-cdf.png")
