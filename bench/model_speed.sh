#!/usr/bin/env bash
# Timing-model speed (issue 3): accesses simulated per second of wall time by
# `numasim replay --machine`, on generated traces:
#   1. one thread streaming sequentially over 256 MiB (8-byte loads),
#   2. 16 threads, Zipf(0.9) shared reads/writes (20% stores) over 64 MiB,
#   3. 16 threads, uniform shared reads/writes (20% stores) over 1 MiB (heavy coherence).
# Each is run 3 times; the best is printed. Work files go to bench/out/.
# Wall time on a shared VM moves by tens of percent from one hour to the
# next; CALLGRIND=1 also prints instructions per access under callgrind
# (deterministic) on 1 M / 300 K-access versions of the first two and on a
# real program's lackey trace, which is what to compare before and after a
# change.
#
#   bench/model_speed.sh [MACHINE]     # default xeon-2s
#   CALLGRIND=1 bench/model_speed.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/out"
mkdir -p "$out"
machine=${1:-xeon-2s}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
gen() { [ -s "$out/$1" ] || "$bin" trace gen "${@:2}" -o "$out/$1" 2>/dev/null; }
gen seq1.nst sequential -n 20000000 --footprint 256M
gen zipf16.nst zipf -n 5000000 --threads 16 --footprint 64M --write-ratio 0.2 --zipf-s 0.9
gen shared16.nst random -n 5000000 --threads 16 --footprint 1M --write-ratio 0.2
printf '%-40s %12s\n' "workload ($machine)" "M access/s"
for w in "seq1.nst:1 thread, sequential 256 MiB:compact" \
         "zipf16.nst:16 threads, Zipf 0.9 over 64 MiB:spread" \
         "shared16.nst:16 threads, uniform over 1 MiB:spread"; do
  IFS=: read -r file label pin <<<"$w"
  best=0
  for _ in 1 2 3; do
    r=$("$bin" replay "$out/$file" --machine "$machine" --pin "$pin" 2>&1 >/dev/null | sed -n 's/.*(\([0-9.]*\) M accesses\/s).*/\1/p')
    best=$(echo "if ($r > $best) $r else $best" | bc -l)
  done
  printf '%-40s %12.1f\n' "$label" "$best"
done

if [ "${CALLGRIND:-0}" = 1 ]; then
  gen seq1-1m.nst sequential -n 1000000 --footprint 256M
  gen shared16-300k.nst random -n 300000 --threads 16 --footprint 1M --write-ratio 0.2
  # A real program's trace: bench/workload.c under lackey (11.6 M accesses,
  # 57% instruction fetches).
  if [ ! -s "$out/wl3k.nst" ]; then
    gcc -O1 -o "$out/workload" "$here/workload.c"
    (cd "$out" && env -i PATH=/usr/bin:/bin LC_ALL=C valgrind --tool=lackey --trace-mem=yes \
        --log-file="$out/wl3k.lackey" ./workload 3000 >/dev/null)
    "$bin" trace convert "$out/wl3k.lackey" "$out/wl3k.nst" 2>/dev/null
    rm -f "$out/wl3k.lackey"
  fi
  wl=$("$bin" trace info "$out/wl3k.nst" --json | sed -n 's/.*"records": *\([0-9]*\).*/\1/p')
  printf '%-40s %12s\n' "workload (callgrind, $machine)" "instr/access"
  for w in "seq1-1m.nst:1000000:1 thread, sequential:compact" \
           "shared16-300k.nst:300000:16 threads, uniform over 1 MiB:spread" \
           "wl3k.nst:$wl:a program (lackey, bench/workload.c):compact"; do
    IFS=: read -r file n label pin <<<"$w"
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" replay "$out/$file" \
          --machine "$machine" --pin "$pin" --single-thread 2>&1 >/dev/null |
         sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
    printf '%-40s %12d\n' "$label" $((ir / n))
  done
fi
