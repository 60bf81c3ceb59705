#!/usr/bin/env bash
# Live validation on held-out patterns (issue 17). Calibrate this host with
# pointer chases and the prefetcher fingerprint's walks only (`live
# calibrate` with no flags: huge pages wherever the host offers them, the
# path a user gets), then replay patterns the calibration never ran,
# both simulated (--mlp 1, the calibrated prefetchers) and live (dependent
# loads on a pinned thread, in huge pages), and print the errors:
#
# - random accesses at working sets between the calibration's sizes;
# - strides of 3, 5, 17 and 97 lines (the fingerprint walks other strides),
#   over 64 MiB, wrapping modulo the footprint so every line is visited;
# - a Zipf hot set, two interleaved streams, a stream with random gaps;
# - lackey traces of two programs: matmul and a linked-list walk.
#
# Each pattern is also simulated with the fixed stand-in the model used
# before calibrated prefetchers (`--prefetch stream:16:16`).
#
#   bench/validate.sh            # results in bench/out/validate/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/out/validate"
mkdir -p "$out"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
"$bin" live calibrate --out "$out/host-calibrated.toml" >"$out/calibrate.log" 2>&1
n=1000000
gen() { "$bin" trace gen "$@" -n "$n" 2>/dev/null; }
traces=()
for fp in 48K 768K 12M 96M; do
  gen random --footprint "$fp" -o "$out/random-$fp.nst"
  traces+=("$out/random-$fp.nst")
done
for s in 3 5 17 97; do
  gen stride --modular --stride $((s * 64)) --footprint 64M -o "$out/stride-${s}-lines.nst"
  traces+=("$out/stride-${s}-lines.nst")
done
gen zipf --footprint 64M --zipf-s 0.8 -o "$out/zipf-64M.nst"
gen interleaved --streams 2 --footprint 64M -o "$out/two-streams.nst"
gen gapped --footprint 64M --skip-lines 16 --skip-prob 0.25 -o "$out/gapped-stream.nst"
traces+=("$out/zipf-64M.nst" "$out/two-streams.nst" "$out/gapped-stream.nst")
for p in matmul list; do
  gcc -O1 -o "$out/$p" "$root/tests/programs/$p.c"
  (cd "$out" && env -i PATH=/usr/bin:/bin LC_ALL=C valgrind --tool=lackey --trace-mem=yes --log-file="$p.lackey" "./$p" >/dev/null)
  traces+=("$out/$p.lackey")
done
grep -A20 '^\[core.prefetch\]' "$out/host-calibrated.toml" | sed '/^$/q'
"$bin" validate "${traces[@]}" --machine "$out/host-calibrated.toml" --out "$out/calibrated" >"$out/calibrated.log"
"$bin" validate "${traces[@]}" --machine "$out/host-calibrated.toml" --out "$out/stand-in" --prefetch stream:16:16 >"$out/stand-in.log"
python3 "$here/validate_table.py" "$out/calibrated/validate.csv" "$out/stand-in/validate.csv" | tee "$out/table.md"
