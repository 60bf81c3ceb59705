#!/usr/bin/env python3
"""Held-out validation patterns (issue 29, item 5), generated from families
and a seed: the same seed on the same host gives the same traces. The
calibration (`live calibrate`: pointer chases at each cache level, the
prefetcher fingerprint's walks) never runs them; `families.csv` says, per
trace, how its family relates to what the calibration fits.

    bench/heldout.py [--seed N] [--out DIR] [--count N] [--dry-run]
    bench/heldout.py --validate            # then: live calibrate, validate

Families, at footprints from this host's caches (sysfs; L1d, L2, LLC):

- random over a footprint between every pair of levels (geometric mean
  of L1 and L2, of L2 and the LLC, of the LLC and 4x the LLC);
- constant strides of 2-100 lines, two primes and two others drawn by the
  seed (never a stride the fingerprint walks, `live::fingerprint::STRIDES`),
  at a footprint inside each cache level (half of it) and in memory (4x
  the LLC), forward and backward;
- 3, 5, 6 and 7 interleaved streams (over 4x the LLC; the fingerprint
  walks powers of two);
- a stream with random gaps (skips of up to 4 or 16 lines after a
  quarter of the steps);
- Zipf hot sets (s = 0.6 and 1.0 over 4x the LLC);
- two real programs traced with lackey (`tests/programs/matmul.c`,
  `tests/programs/list.c`).

Nothing in the model is fitted to these traces. Where the calibration fits
a parameter to the same family (other sizes, strides or stream counts),
`families.csv` says so (`family_fitted` yes/no and `relation`): random,
stride and interleaved are fitted families; gapped, Zipf and the programs
are not. A stride's footprint is rounded down to a line count coprime to
it (a modular walk visits every line), and each trace has at least two
accesses per line of its footprint.
"""
import argparse
import csv
import math
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# |s| for every s of live/src/fingerprint.rs STRIDES (forward and backward):
# the walks the calibration fits to (tests/heldout.rs checks the two agree).
WALKED = {1, 2, 4, 6, 7, 8, 10, 11, 12, 14, 16, 19, 20, 23, 24, 28, 31, 32, 37, 40, 44, 48, 53, 56, 61, 63, 64, 65, 128, 256, 512, 1024, 2048, 4096}
PRIMES = [p for p in range(3, 101) if all(p % d for d in range(2, int(p ** 0.5) + 1))]


def cache_sizes(given=None):
    """(L1d, L2, LLC) bytes: `given` ("L1,L2,LLC" with K/M suffixes), else cpu0's, from sysfs."""
    if given:
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        v = [int(x.rstrip("KMG")) * mult.get(x[-1], 1) for x in given.split(",")]
        if len(v) != 3 or not v[0] < v[1] < v[2]:
            sys.exit(f"heldout.py: --caches {given}: three growing sizes L1,L2,LLC")
        return tuple(v)
    base = "/sys/devices/system/cpu/cpu0/cache"
    sizes = {}
    for idx in sorted(os.listdir(base)):
        if not idx.startswith("index"):
            continue
        d = os.path.join(base, idx)
        kind = open(os.path.join(d, "type")).read().strip()
        if kind == "Instruction":
            continue
        level = int(open(os.path.join(d, "level")).read())
        s = open(os.path.join(d, "size")).read().strip()
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1], 1)
        sizes[level] = int(s.rstrip("KMG")) * mult
    levels = sorted(sizes)
    if len(levels) < 2:
        sys.exit(f"heldout.py: {base}: fewer than two data cache levels")
    l1, l2, llc = sizes[levels[0]], sizes[levels[1]], sizes[levels[-1]]
    return l1, l2, llc


def lines(n):
    """Bytes rounded down to whole lines, at least one."""
    return max(64, n // 64 * 64)


def coprime_lines(n, s):
    """The largest footprint of at most `n` bytes whose line count shares no
    factor with the stride `s` (lines): a modular walk then visits every
    line once per pass."""
    k = max(1, n // 64)
    while math.gcd(k, s) != 1:
        k -= 1
    return k * 64


# Families, each with whether the calibration fits a model parameter to
# the same family (on other parameters: sizes, strides, stream counts);
# these traces themselves are never run by the calibration.
FITTED = {
    "random": ("yes", "random chases at each cache level's size fit the latencies; these footprints lie between levels"),
    "stride": ("yes", "the fingerprint's walks of other strides fit the stride curve; these strides are not walked"),
    "interleaved": ("yes", "the fingerprint walks 1-64 streams (powers of two) in random regions to fit streams tracked; these counts are not walked and the regions are contiguous"),
    "gapped": ("no", "the fingerprint's ramps (runs at random places) fit the confirmation count; skips within one stream are not walked"),
    "zipf": ("no", "not walked"),
    "program": ("no", "not walked"),
}


def families(seed, l1, l2, llc):
    """(name, family, footprint bytes or None, trace gen arguments or program) per trace."""
    rng = random.Random(seed)
    mem = 4 * llc
    out = []
    for lo, hi, where in [(l1, l2, "L1-L2"), (l2, llc, "L2-LLC"), (llc, mem, "LLC-memory")]:
        fp = lines(int((lo * hi) ** 0.5))
        out.append((f"random-{where}", "random", fp, ["random", "--footprint", str(fp)]))
    primes = [p for p in PRIMES if p not in WALKED]
    others = [s for s in range(2, 101) if s not in WALKED and s not in PRIMES]
    strides = sorted(rng.sample(primes, 2) + rng.sample(others, 2))
    for s in strides:
        for want, where in [(l1 // 2, "L1"), (l2 // 2, "L2"), (llc // 2, "LLC"), (mem, "memory")]:
            fp = coprime_lines(want, s)
            for back in (False, True):
                d = "backward" if back else "forward"
                out.append((f"stride-{s}-{where}-{d}", "stride", fp,
                            ["stride", "--modular", "--stride", str(s * 64), "--footprint", str(fp)]
                            + (["--backward"] if back else [])))
    for n in (3, 5, 6, 7):
        out.append((f"streams-{n}", "interleaved", mem, ["interleaved", "--streams", str(n), "--footprint", str(mem)]))
    for skip in (4, 16):
        out.append((f"gapped-{skip}", "gapped", mem,
                    ["gapped", "--skip-lines", str(skip), "--skip-prob", "0.25", "--footprint", str(mem)]))
    for z in ("0.6", "1.0"):
        out.append((f"zipf-{z}", "zipf", None, ["zipf", "--zipf-s", z, "--footprint", str(mem)]))
    for p in ("matmul", "list"):
        out.append((f"{p}.lackey", "program", None, p))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "heldout"))
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--dry-run", action="store_true", help="print families.csv only")
    ap.add_argument("--validate", action="store_true", help="then calibrate (no flags) and validate (no flags)")
    ap.add_argument("--caches", help="L1,L2,LLC sizes (K/M suffixes) instead of this host's")
    a = ap.parse_args()
    l1, l2, llc = cache_sizes(a.caches)
    fams = families(a.seed, l1, l2, llc)
    os.makedirs(a.out, exist_ok=True)
    bin_ = os.path.join(ROOT, "target", "release", "numasim")
    rows, traces = [], []
    for name, fam, fp, args in fams:
        if isinstance(args, str):
            path = os.path.join(a.out, name)
            cmd = f"lackey trace of tests/programs/{args}.c"
            if not a.dry_run and not os.path.exists(path):
                exe = os.path.join(a.out, args)
                subprocess.run(["gcc", "-O1", "-o", exe, os.path.join(ROOT, "tests", "programs", f"{args}.c")], check=True)
                subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={name}", f"./{args}"],
                               cwd=a.out, check=True, stdout=subprocess.DEVNULL,
                               env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        else:
            path = os.path.join(a.out, f"{name}.nst")
            seed = str(a.seed * 1000 + len(rows))
            # Every line of the footprint twice: validate warms on the whole
            # trace, then times it, so a footprint only fully touched in the
            # timed pass would not leave the caches it is meant to exceed.
            count = max(a.count, 2 * fp // 64) if fp else a.count
            gen = ["trace", "gen", *args, "-n", str(count), "--seed", seed, "-o", path]
            cmd = "numasim " + " ".join(gen)
            if not a.dry_run:
                subprocess.run([bin_, *gen], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        fitted, rel = FITTED[fam]
        rows.append({"trace": os.path.basename(path), "family": fam, "family_fitted": fitted, "relation": rel, "command": cmd})
        traces.append(path)
    with open(os.path.join(a.out, "families.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["trace", "family", "family_fitted", "relation", "command"])
        w.writeheader()
        w.writerows(rows)
    print(f"host caches: L1d {l1} B, L2 {l2} B, LLC {llc} B; seed {a.seed}: {len(rows)} traces in {a.out} (families.csv)")
    if a.validate and not a.dry_run:
        host = os.path.join(a.out, "host.toml")
        subprocess.run([bin_, "live", "calibrate", "--out", host], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([bin_, "validate", *traces, "--machine", host, "--out", os.path.join(a.out, "validate")], check=True)


if __name__ == "__main__":
    main()
