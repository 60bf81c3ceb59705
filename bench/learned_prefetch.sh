#!/usr/bin/env bash
# A learned prefetch filter (issue 5), end to end: a trace with a planted
# pattern (half the loads walk a 3-line stride, half jump at random), a
# dataset of the delta prefetcher's proposals on one seed, a tree and a
# GBDT trained on it, and the other seed replayed through the timing model
# with no prefetcher, delta:2, and each filter over delta:2.
#
#   bench/learned_prefetch.sh        # results in bench/out/learned/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/out/learned"
mkdir -p "$out"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
gen() {
  python3 - "$1" 200000 <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
print("thread,op,addr,size,pc")
a, b = 0x10000000, 0x80000000
for _ in range(int(sys.argv[2])):
    if r.random() < 0.5:
        a += 192
        print(f"0,L,{a:#x},8,0x401000")
    else:
        print(f"0,L,{b + r.randrange(1 << 26) // 64 * 64:#x},8,0x402000")
PY
}
gen 1 > "$out/train.csv"
gen 2 > "$out/test.csv"
"$bin" dataset "$out/train.csv" --out "$out/data.csv"
for m in tree gbdt; do
  echo "== train $m"
  "$bin" train "$out/data.csv" --model $m --out "$out/$m.json"
done
for p in none delta:2 "learned:$out/tree.json:delta:2" "learned:$out/gbdt.json:delta:2"; do
  echo "== replay --prefetch $p"
  if [ "$p" = none ]; then args=(); else args=(--prefetch "$p"); fi
  "$bin" replay "$out/test.csv" --machine xeon-2s "${args[@]}" 2>/dev/null | grep -E '^latency|^prefetch'
done
