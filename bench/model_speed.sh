#!/usr/bin/env bash
# Timing-model speed (issue 3): accesses simulated per second of wall time by
# `numasim replay --machine`, on generated traces:
#   1. one thread streaming sequentially over 256 MiB (8-byte loads),
#   2. 16 threads, Zipf(0.9) shared reads/writes (20% stores) over 64 MiB,
#   3. 16 threads, uniform shared reads/writes (20% stores) over 1 MiB (heavy coherence),
#   4. 16 threads each streaming its own 16 MiB (20% stores): no sharing,
#      mostly L1 hits, every record through the event loop (threads
#      interleave record by record),
#   5. a real program's lackey trace (bench/workload.c, 11.6 M accesses).
# Each is run ROUNDS times (default 3); the best is printed. Work files go to
# bench/out/. Wall time on a shared VM moves by tens of percent from one
# minute to the next, so:
#   AB=OLD_BINARY   alternates OLD_BINARY and the fresh build, round by
#                   round, and prints both bests (how changes are judged);
#   CALLGRIND=1     also prints instructions per access under callgrind
#                   (deterministic) on 1 M / 300 K-access versions of 1 and 3
#                   and on the program trace;
#   CACHESIM=1      also prints host-cache misses per access on a 1 M-access
#                   version of 3, under cachegrind's simulation of this
#                   host's L1D and L2 (sizes from sysfs).
#
#   bench/model_speed.sh [MACHINE]     # default xeon-2s
#   ROUNDS=5 AB=/tmp/numasim.old bench/model_speed.sh
#   CALLGRIND=1 CACHESIM=1 bench/model_speed.sh
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
gen private16.nst sequential -n 5000000 --threads 16 --footprint 16M --write-ratio 0.2
# A real program's trace: bench/workload.c under lackey (11.6 M accesses,
# 57% instruction fetches).
if [ ! -s "$out/wl3k.nst" ]; then
  gcc -O1 -o "$out/workload" "$here/workload.c"
  (cd "$out" && env -i PATH=/usr/bin:/bin LC_ALL=C valgrind --tool=lackey --trace-mem=yes \
      --log-file="$out/wl3k.lackey" ./workload 3000 >/dev/null)
  "$bin" trace convert "$out/wl3k.lackey" "$out/wl3k.nst" 2>/dev/null
  rm -f "$out/wl3k.lackey"
fi
rate() { "$1" replay "$out/$2" --machine "$machine" --pin "$3" 2>&1 >/dev/null |
         sed -n 's/.*(\([0-9.]*\) M accesses\/s).*/\1/p'; }
max() { echo "if ($1 > $2) $1 else $2" | bc -l; }
rounds=${ROUNDS:-3}
if [ -n "${AB:-}" ]; then
  printf '%-40s %12s %12s\n' "workload ($machine)" "old M/s" "new M/s"
else
  printf '%-40s %12s\n' "workload ($machine)" "M access/s"
fi
for w in "seq1.nst:1 thread, sequential 256 MiB:compact" \
         "zipf16.nst:16 threads, Zipf 0.9 over 64 MiB:spread" \
         "shared16.nst:16 threads, uniform over 1 MiB:spread" \
         "private16.nst:16 threads, private streams:spread" \
         "wl3k.nst:a program (lackey, bench/workload.c):compact"; do
  IFS=: read -r file label pin <<<"$w"
  best=0 old=0
  for _ in $(seq "$rounds"); do
    [ -n "${AB:-}" ] && old=$(max "$(rate "$AB" "$file" "$pin")" "$old")
    best=$(max "$(rate "$bin" "$file" "$pin")" "$best")
  done
  if [ -n "${AB:-}" ]; then
    printf '%-40s %12.1f %12.1f\n' "$label" "$old" "$best"
  else
    printf '%-40s %12.1f\n' "$label" "$best"
  fi
done

if [ "${CALLGRIND:-0}" = 1 ]; then
  gen seq1-1m.nst sequential -n 1000000 --footprint 256M
  gen shared16-300k.nst random -n 300000 --threads 16 --footprint 1M --write-ratio 0.2
  gen private16-1m.nst sequential -n 1000000 --threads 16 --footprint 16M --write-ratio 0.2
  wl=$("$bin" trace info "$out/wl3k.nst" --json | sed -n 's/.*"records": *\([0-9]*\).*/\1/p')
  printf '%-40s %12s\n' "workload (callgrind, $machine)" "instr/access"
  for w in "seq1-1m.nst:1000000:1 thread, sequential:compact" \
           "shared16-300k.nst:300000:16 threads, uniform over 1 MiB:spread" \
           "private16-1m.nst:1000000:16 threads, private streams:spread" \
           "wl3k.nst:$wl:a program (lackey, bench/workload.c):compact"; do
    IFS=: read -r file n label pin <<<"$w"
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" replay "$out/$file" \
          --machine "$machine" --pin "$pin" --single-thread 2>&1 >/dev/null |
         sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
    printf '%-40s %12d\n' "$label" $((ir / n))
  done
fi

if [ "${CACHESIM:-0}" = 1 ]; then
  gen shared16-1m.nst random -n 1000000 --threads 16 --footprint 1M --write-ratio 0.2
  c=/sys/devices/system/cpu/cpu0/cache
  geom() {
    for i in 0 1 2 3; do
      if [ "$(cat $c/index$i/level)" = "$1" ] && [ "$(cat $c/index$i/type)" != Instruction ]; then
        echo "$(numfmt --from=iec "$(cat $c/index$i/size)"),$(cat $c/index$i/ways_of_associativity),$(cat $c/index$i/coherency_line_size)"
        return
      fi
    done
  }
  d1=$(geom 1) l2=$(geom 2)
  printf '%-40s %12s %12s\n' "host caches D1 $d1, L2 $l2" "D1 miss/acc" "L2 miss/acc"
  r=$(valgrind --tool=cachegrind --cache-sim=yes --D1="$d1" --LL="$l2" --cachegrind-out-file=/dev/null \
        "$bin" replay "$out/shared16-1m.nst" --machine "$machine" --pin spread 2>&1 >/dev/null)
  d1m=$(echo "$r" | sed -n 's/.*D1  misses: *\([0-9,]*\).*/\1/p' | tr -d ,)
  llm=$(echo "$r" | sed -n 's/.*LLd misses: *\([0-9,]*\).*/\1/p' | tr -d ,)
  printf '%-40s %12.1f %12.1f\n' "16 threads, uniform over 1 MiB (1 M)" \
    "$(echo "$d1m / 1000000" | bc -l)" "$(echo "$llm / 1000000" | bc -l)"
fi
