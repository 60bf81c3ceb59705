#!/usr/bin/env bash
# Writes the outputs of representative runs into DIR, so that a refactor can be
# checked byte for byte: run it before and after, then `diff -r BEFORE AFTER`.
# Covers the nine timing-model configurations (machines, pinnings, placements,
# migration, prefetchers, false sharing, a lackey trace), the cachegrind
# replay, trace info, the loaded-latency sweep and the seed experiment.
# Wall-clock lines (real prediction time, requests/s) are filtered out.
#
#   bench/outputs.sh DIR [BINARY]     (BINARY defaults to target/release/numasim)
set -euo pipefail
out=${1:?usage: bench/outputs.sh DIR [BINARY]}
bin=${2:-target/release/numasim}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/traces"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
cd "$here"
t=$out/traces
"$bin" trace gen zipf -n 200000 --threads 8 --footprint 32M --write-ratio 0.2 -o "$t/z8.nst" >/dev/null
"$bin" trace gen sequential -n 200000 --footprint 64M -o "$t/seq.nst" >/dev/null
"$bin" trace gen false-sharing -n 100000 --threads 4 -o "$t/fs.nst" >/dev/null
"$bin" trace gen stride -n 100000 --stride 256 --gap-ns 2 -o "$t/stride.nst" >/dev/null
"$bin" trace gen random -n 100000 --threads 2 --rate 5 --footprint 8M -o "$t/open.csv" >/dev/null
strip_wall() { grep -v -e 'wall' -e 'requests/s' -e 'real prediction time' -e 'M accesses/s' || true; }
run() { # name, args...
  local name=$1; shift
  mkdir -p "$out/$name"
  "$bin" "$@" --out "$out/$name/dir" 2>&1 | strip_wall >"$out/$name/stdout"
  rm -f "$out/$name/dir/manifest.json.tmp"
}
run t1 replay "$t/z8.nst" --machine xeon-2s --pin spread --placement first-touch
run t2 replay "$t/z8.nst" --machine xeon-2s --pin compact --placement interleave --mlp 1
run t3 replay "$t/z8.nst" --machine epyc-4numa --pin spread --placement migrate:8
run t4 replay "$t/seq.nst" --machine xeon-2s --placement bind:1 --prefetch stream:4:2
run t5 replay "$t/seq.nst" --machine xeon-2s --prefetch next-line@L1D --prefetch stream:16:16@L2 --prefetch-queue 8
run t6 replay "$t/fs.nst" --machine xeon-2s --pin spread
run t7 replay tests/data/hello.lackey --machine xeon-2s --prefetch ip-stride:2:1 --window-ns 50
run t8 replay "$t/stride.nst" --machine dgx-a100-2numa --prefetch delta:2
run t9 replay "$t/open.csv" --machine xeon-2s --pin spread --placement interleave
run cg1 replay tests/data/hello.lackey --json
run cg2 replay "$t/z8.nst" --D1=32K,8,64 --LL=1M,16,64 --replacement srrip
"$bin" trace info "$t/z8.nst" >"$out/info-z8" 2>&1
"$bin" trace info tests/data/hello.lackey >"$out/info-hello" 2>&1
"$bin" loaded-latency --machine xeon-2s >"$out/loaded-latency" 2>&1
run seed compare scenarios/seed-inference.toml
run bench bench --scenario static --duration 2s
# Per-request CSVs are large; keep their checksums.
for f in "$out"/seed/dir/requests-*.csv; do [ -e "$f" ] && sha256sum "$f" >>"$out/seed/requests.sha256" && rm "$f"; done
rm -rf "$t"
echo "outputs in $out"
