#!/usr/bin/env bash
# An older numasim against this build, alternating run by run (best of 5
# wall times each): the cache replay of the program trace that
# bench/model_speed.sh makes (bench/out/wl3k.nst; run that first) and one
# request-model bench. For a refactor that should not change speed.
#
#   bench/ab_speed.sh OLD_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
old=${1:?usage: bench/ab_speed.sh OLD_BINARY}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
new="$root/target/release/numasim" out="$here/out"
[ -s "$out/wl3k.nst" ] || { echo "bench/out/wl3k.nst missing: run bench/model_speed.sh first" >&2; exit 1; }
geom=(--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64)
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
min() { echo "if ($1 < $2) $1 else $2" | bc -l; }
declare -A best
for k in cache_old cache_new bench_old bench_new; do best[$k]=99999; done
for _ in 1 2 3 4 5; do
  best[cache_old]=$(min "$(t $old replay $out/wl3k.nst "${geom[@]}" --json)" "${best[cache_old]}")
  best[cache_new]=$(min "$(t $new replay $out/wl3k.nst "${geom[@]}" --json)" "${best[cache_new]}")
  best[bench_old]=$(min "$(t $old bench --scenario static --duration 20s)" "${best[bench_old]}")
  best[bench_new]=$(min "$(t $new bench --scenario static --duration 20s)" "${best[bench_new]}")
done
printf '%-52s %8s %8s %6s\n' "run (best of 5, s)" old new new/old
printf '%-52s %8.3f %8.3f %6.3f\n' "cache replay, wl3k.nst (11.6 M accesses, --D1 etc.)" "${best[cache_old]}" "${best[cache_new]}" "$(echo "${best[cache_new]} / ${best[cache_old]}" | bc -l)"
printf '%-52s %8.3f %8.3f %6.3f\n' "bench --scenario static --duration 20s" "${best[bench_old]}" "${best[bench_new]}" "$(echo "${best[bench_new]} / ${best[bench_old]}" | bc -l)"
