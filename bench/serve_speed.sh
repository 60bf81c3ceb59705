#!/usr/bin/env bash
# Request-model speed against its yardstick (issue 30, item 5): SimPy's bare
# batching queue (../shared/baselines/simpy_serve.py, or $SIMPY_SERVE) on
# the same arrivals (5000 QPS, 8 shards, batches of 16) against `numasim
# bench --scenario static`, both pinned to one core, rounds alternating
# (wall time on a shared VM drifts by tens of percent from one minute to
# the next). Prints each round, both bests and the ratio of the bests.
# SimPy comes from PyPI into target/simpy-venv.
#
#   bench/serve_speed.sh [SIM_SECONDS]     # default 60
#   ROUNDS=5 AB=/tmp/numasim.old bench/serve_speed.sh   # also an older binary
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
secs=${1:-60}
rounds=${ROUNDS:-3}
simpy_serve=${SIMPY_SERVE:-$root/../shared/baselines/simpy_serve.py}
[ -f "$simpy_serve" ] || { echo "serve_speed.sh: no SimPy baseline at $simpy_serve (set SIMPY_SERVE)" >&2; exit 2; }
venv="$root/target/simpy-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import simpy' 2>/dev/null || "$venv/bin/pip" install --quiet simpy
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
pin=(); command -v taskset >/dev/null && pin=(taskset -c 0)
rate() { sed -n 's/.*(\([0-9]*\) requests\/s).*/\1/p; s/.* = \([0-9]*\) requests\/s.*/\1/p'; }
best_sim=0; best_num=0; best_ab=0
for r in $(seq "$rounds"); do
    s=$("${pin[@]}" "$venv/bin/python" "$simpy_serve" 5000 "$secs" | rate)
    n=$("${pin[@]}" "$bin" bench --scenario static --duration "${secs}s" | rate)
    : "${s:?no rate in the SimPy output}" "${n:?no rate in the numasim bench output}"
    line="round $r: simpy $s requests/s, numasim $n requests/s"
    if [ -n "${AB:-}" ]; then
        o=$("${pin[@]}" "$AB" bench --scenario static --duration "${secs}s" | rate)
        : "${o:?no rate in the $AB bench output}"
        line="$line, $AB $o requests/s"
        [ "$o" -gt "$best_ab" ] && best_ab=$o
    fi
    echo "$line"
    [ "$s" -gt "$best_sim" ] && best_sim=$s
    [ "$n" -gt "$best_num" ] && best_num=$n
done
echo "best: simpy $best_sim requests/s, numasim $best_num requests/s"
awk -v n="$best_num" -v s="$best_sim" 'BEGIN { printf "numasim / simpy = %.2f (target ≥ 5)\n", n / s }'
[ -n "${AB:-}" ] && awk -v n="$best_num" -v o="$best_ab" 'BEGIN { printf "numasim / %s = %.2f\n", "old", n / o }'
exit 0
