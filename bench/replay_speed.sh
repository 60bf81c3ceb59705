#!/usr/bin/env bash
# Replay-speed benchmark (issue 2): numasim's cachegrind-mode replay of a
# lackey trace, as lackey text and as native .nst, against the plain C model
# in ../shared/baselines/cgsim_lackey.c (fgets/strtoull), all in one run on
# the same trace and geometry. Prints accesses/s, ratios and peak RSS.
#
#   bench/replay_speed.sh [SCALE]      # SCALE = ints sorted by the workload (default 40000)
#   REPS=5 (default): rounds; every run is timed once per round, best kept
#   AB=OLD_BINARY also times an older numasim's lackey and native replays in
#   the same rounds (a refactor that should not change speed)
#
# "streamed" rows read the file through read() (NUMASIM_NO_MMAP=1) instead
# of mapping it and decoding on both cores. "one CPU" rows run under
# `taskset -c 0`, where the default path decodes on one thread (the process
# may use one CPU only); the last lines print default / --single-thread
# time ratios (≤ 1: the default is not slower), on all CPUs and on one.
#
# Needs gcc and valgrind. Work files go to bench/out/ (git-ignored).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/out"
mkdir -p "$out"
scale=${1:-40000}
geom=(--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64)
baseline_src="${NUMASIM_BASELINE:-$root/../shared/baselines/cgsim_lackey.c}"

cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
gcc -O2 -o "$out/cgsim_lackey" "$baseline_src"
gcc -O1 -o "$out/workload" "$here/workload.c"

trace="$out/workload-$scale.lackey"
if [ ! -s "$trace" ]; then
  echo "tracing the workload with valgrind lackey (once)..." >&2
  (cd "$out" && env -i PATH=/usr/bin:/bin LC_ALL=C valgrind --tool=lackey --trace-mem=yes \
      --log-file="$trace" ./workload "$scale" >/dev/null)
fi
"$bin" trace convert "$trace" "$out/workload.nst" 2>/dev/null
"$bin" trace convert "$trace" "$out/workload.nst.zst" 2>/dev/null
accesses=$(grep -c -v '^==' "$trace")
# Every input is read once just before each timed run: some VMs page cold
# page cache out within seconds (DAMON `pageout`), and a run that finds
# its file gone from memory times the disk, not the replay.
warm() { cat "$trace" "$out/workload.nst" "$out/workload.nst.zst" > /dev/null; }

# The runs, timed round-robin (REPS rounds, best of each) so that a VM whose
# speed drifts during the benchmark treats the baseline and numasim alike.
reps=${REPS:-5}
names=(base lackey native zst lackey1 native1 lackeyS nativeS lackeyC nativeC lackey1C native1C oldlackey oldnative)
declare -A best rss
for n in "${names[@]}"; do best[$n]=999999; rss[$n]=0; done
run_once() { # NAME STDIN OUTFILE CMD...
  local name=$1 input=$2 keep=$3
  shift 3
  local t0 t1 dt
  warm
  t0=$(date +%s.%N)
  /usr/bin/time -f %M -o "$out/rss" "$@" < "$input" > "$out/last.out"
  t1=$(date +%s.%N)
  dt=$(echo "$t1 - $t0" | bc -l)
  if (( $(echo "$dt < ${best[$name]}" | bc -l) )); then best[$name]=$dt; fi
  rss[$name]=$(cat "$out/rss")
  [ -z "$keep" ] || cp "$out/last.out" "$keep"
}
for _ in $(seq "$reps"); do
  run_once base "$trace" "$out/baseline.txt" "$out/cgsim_lackey" 32768,8,64 32768,8,64 1048576,16,64
  run_once lackey /dev/null "$out/lackey.json" "$bin" replay "$trace" "${geom[@]}" --json
  run_once native /dev/null "$out/native.json" "$bin" replay "$out/workload.nst" "${geom[@]}" --json
  run_once zst /dev/null "" "$bin" replay "$out/workload.nst.zst" "${geom[@]}" --json
  run_once lackey1 /dev/null "" "$bin" replay "$trace" "${geom[@]}" --json --single-thread
  run_once native1 /dev/null "" "$bin" replay "$out/workload.nst" "${geom[@]}" --json --single-thread
  run_once lackeyS /dev/null "" env NUMASIM_NO_MMAP=1 "$bin" replay "$trace" "${geom[@]}" --json
  run_once nativeS /dev/null "" env NUMASIM_NO_MMAP=1 "$bin" replay "$out/workload.nst" "${geom[@]}" --json
  run_once lackeyC /dev/null "" taskset -c 0 "$bin" replay "$trace" "${geom[@]}" --json
  run_once nativeC /dev/null "" taskset -c 0 "$bin" replay "$out/workload.nst" "${geom[@]}" --json
  run_once lackey1C /dev/null "" taskset -c 0 "$bin" replay "$trace" "${geom[@]}" --json --single-thread
  run_once native1C /dev/null "" taskset -c 0 "$bin" replay "$out/workload.nst" "${geom[@]}" --json --single-thread
  if [ -n "${AB:-}" ]; then
    run_once oldlackey /dev/null "" "$AB" replay "$trace" "${geom[@]}" --json
    run_once oldnative /dev/null "" "$AB" replay "$out/workload.nst" "${geom[@]}" --json
  fi
done
tb=${best[base]} rb=${rss[base]}
tl=${best[lackey]} rl=${rss[lackey]}
tn=${best[native]} rn=${rss[native]}
tz=${best[zst]} rz=${rss[zst]}
tla=${best[lackey1]} rla=${rss[lackey1]}
tna=${best[native1]} rna=${rss[native1]}
tls=${best[lackeyS]} rls=${rss[lackeyS]}
tns=${best[nativeS]} rns=${rss[nativeS]}

# The counts must agree before speed means anything.
b_ir=$(sed -n 's/^Ir=\([0-9]*\).*/\1/p' "$out/baseline.txt")
for f in lackey native; do
  ir=$(python3 -c "import json,sys; print(json.load(open('$out/$f.json'))['events']['Ir'])")
  [ "$ir" = "$b_ir" ] || { echo "MISMATCH: $f Ir=$ir baseline Ir=$b_ir" >&2; exit 1; }
done

rate() { echo "$accesses / $1 / 1000000" | bc -l; }
printf '\ntrace: %s accesses (%s bytes lackey, %s bytes .nst, %s bytes .nst.zst)\n' "$accesses" \
  "$(stat -c %s "$trace")" "$(stat -c %s "$out/workload.nst")" "$(stat -c %s "$out/workload.nst.zst")"
printf '%-36s %9s %12s %9s %10s\n' "run" "seconds" "M access/s" "× C" "peak RSS"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "C baseline (lackey text)" "$tb" "$(rate "$tb")" 1 "$rb"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "numasim lackey text" "$tl" "$(rate "$tl")" "$(echo "$tb / $tl" | bc -l)" "$rl"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "numasim native .nst" "$tn" "$(rate "$tn")" "$(echo "$tb / $tn" | bc -l)" "$rn"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "numasim native .nst.zst" "$tz" "$(rate "$tz")" "$(echo "$tb / $tz" | bc -l)" "$rz"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  lackey --single-thread" "$tla" "$(rate "$tla")" "$(echo "$tb / $tla" | bc -l)" "$rla"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  native --single-thread" "$tna" "$(rate "$tna")" "$(echo "$tb / $tna" | bc -l)" "$rna"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  lackey streamed" "$tls" "$(rate "$tls")" "$(echo "$tb / $tls" | bc -l)" "$rls"
printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  native streamed" "$tns" "$(rate "$tns")" "$(echo "$tb / $tns" | bc -l)" "$rns"
declare -A label=([lackeyC]="lackey, one CPU" [nativeC]="native, one CPU"
  [lackey1C]="lackey --single-thread, one CPU" [native1C]="native --single-thread, one CPU")
for r in lackeyC nativeC lackey1C native1C; do
  printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  ${label[$r]}" "${best[$r]}" "$(rate "${best[$r]}")" "$(echo "$tb / ${best[$r]}" | bc -l)" "${rss[$r]}"
done
printf 'default / --single-thread time: lackey %.3f, native %.3f; on one CPU: lackey %.3f, native %.3f\n' \
  "$(echo "$tl / $tla" | bc -l)" "$(echo "$tn / $tna" | bc -l)" \
  "$(echo "${best[lackeyC]} / ${best[lackey1C]}" | bc -l)" "$(echo "${best[nativeC]} / ${best[native1C]}" | bc -l)"
if [ -n "${AB:-}" ]; then
  tol=${best[oldlackey]} ton=${best[oldnative]}
  printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  $AB lackey" "$tol" "$(rate "$tol")" "$(echo "$tb / $tol" | bc -l)" "${rss[oldlackey]}"
  printf '%-36s %9.3f %12.1f %9.2f %8s KiB\n' "  $AB native" "$ton" "$(rate "$ton")" "$(echo "$tb / $ton" | bc -l)" "${rss[oldnative]}"
  printf 'new/old time: lackey %.3f, native %.3f\n' "$(echo "$tl / $tol" | bc -l)" "$(echo "$tn / $ton" | bc -l)"
fi
