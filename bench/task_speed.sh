#!/usr/bin/env bash
# Task-replay speed (issue 14): the task engine (`replay --workers`) against a
# plain timing replay of the same records with the tasks statically pinned
# (each key's accesses as one trace thread on its worker's core: same
# machine, placement and cores), in one run. Prints accesses/s and the ratio.
#
#   bench/task_speed.sh [TASKS] [ACCESSES_PER_TASK]   (default 20000 × 50)
#   REPS=3 (default): rounds, best time kept
#
# Work files go to bench/out/ (git-ignored).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/out"
mkdir -p "$out"
tasks=${1:-20000}
per=${2:-50}
reps=${REPS:-3}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
workers=8
python3 - "$out" "$tasks" "$per" "$workers" <<'PY'
import sys
out, n, per, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
keys = 32
x = 12345
with open(f"{out}/tasks.csv", "w") as t, open(f"{out}/pinned.csv", "w") as p:
    t.write("task,op,addr,size,gap_ns,arrival_ns,key\n")
    p.write("thread,op,addr,size,gap_ns\n")
    for i in range(n):
        key = i % keys
        t.write(f"{i},B,,,,{i * 2000},{key}\n")
        for j in range(per):
            x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            # Each key's 64 KiB region, random lines; every fourth a store.
            addr = 0x1000_0000 + key * 0x10000 + ((x >> 20) % 1024) * 64
            op = "S" if (x >> 8) % 4 == 0 else "L"
            t.write(f"{i},{op},{addr:#x},8,10,,\n")
            p.write(f"{key % workers},{op},{addr:#x},8,10\n")
        t.write(f"{i},E,,,,,\n")
PY
cores=$("$bin" replay "$out/tasks.csv" --machine xeon-2s --workers $workers --scheduler static --out "$out/task-run" >/dev/null &&
  python3 -c "import json;print(','.join(f'{i}={c}' for i,c in enumerate(json.load(open('$out/task-run/summary.json'))['tasks']['workers'])))")
best() { # best wall seconds of $reps runs of "$@"
  local b=""
  for _ in $(seq "$reps"); do
    local s e
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    b=$(python3 -c "a='$b';t=$e-$s;print(t if a=='' else min(float(a),t))")
  done
  echo "$b"
}
n=$((tasks * per))
t_task=$(best "$bin" replay "$out/tasks.csv" --machine xeon-2s --workers $workers --scheduler static)
t_pin=$(best "$bin" replay "$out/pinned.csv" --machine xeon-2s --pin "$cores")
python3 - "$n" "$t_task" "$t_pin" <<PY
import sys
n, a, b = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"task replay   (--workers $workers --scheduler static): {n} accesses in {a:.3f} s = {n/a/1e6:.2f} M accesses/s")
print(f"timing replay (same records, threads pinned as static): {n} accesses in {b:.3f} s = {n/b/1e6:.2f} M accesses/s")
print(f"ratio task / pinned: {b/a:.2f} (target >= 0.7)")
PY
