#!/usr/bin/env python3
"""The predictor-kinds table of docs/prefetch.md (the seed article's second
suggested experiment): each learned preload of scenarios/predictor-kinds.toml
— the trees, the logistic model and the LSTM — at 1 000, 5 000 and
10 000 QPS (seeds 1, 2): TP99, the will-miss calls' AUC, and the decision
cost, simulated (what the model charges) and measured (the real p50
prediction time `compare` reports on stderr, on this host, in this run).

    cargo build --release
    python3 bench/predictor_kinds.py            # NUMASIM_BIN overrides the binary
"""

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = os.environ.get("NUMASIM_BIN", str(ROOT / "target" / "release" / "numasim"))
EXP = ROOT / "scenarios" / "predictor-kinds.toml"
LOADS = [1000, 5000, 10000]


def run(qps: int, out: Path) -> tuple[dict, dict]:
    """(rows by name from compare.json, measured p50 ns by row)."""
    p = subprocess.run(
        [BIN, "compare", str(EXP), "--qps", str(qps), "--seeds", "1,2", "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {r["row"]: r for r in json.loads((out / "compare.json").read_text())["rows"]}
    wall = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^(\S+): real prediction time p50 (\d+) ns", p.stderr, re.M)
    }
    return rows, wall


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        res = {q: run(q, Path(tmp) / str(q)) for q in LOADS}
    names = list(res[LOADS[0]][0])
    head = ["predictor", "cost µs (sim)"]
    head += [f"measured p50 µs @{q}" for q in LOADS]
    head += [f"TP99 @{q}" for q in LOADS]
    head += [f"AUC @{q}" for q in LOADS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n in names:
        r0 = res[LOADS[0]][0][n]
        cells = [n, f"{r0['predict_cost_us']:.1f}" if r0["predict_cost_us"] else "0"]
        for q in LOADS:
            w = res[q][1].get(n)
            cells.append(f"{w / 1000:.1f}" if w is not None else "—")
        for q in LOADS:
            cells.append(f"{res[q][0][n]['tp99_ms']:.1f}")
        for q in LOADS:
            auc = res[q][0][n]["predict_auc"]
            cells.append(f"{auc:.3f}" if auc is not None else "—")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
