#!/usr/bin/env bash
# Live validation (issue 6): calibrate this host with pointer chases, then
# replay held-out traces (strided walks at four working-set sizes, a Zipf
# hot set, and a lackey trace of a real program) both simulated (--mlp 1)
# and live (dependent loads on a pinned thread), and print the errors.
#
#   bench/validate.sh            # results in bench/out/validate/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$here/out/validate"
mkdir -p "$out"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/numasim"
"$bin" live calibrate --out "$out/host-calibrated.toml" --max-size 256M --huge-pages
for fp in 32K 512K 4M 128M; do
  "$bin" trace gen stride --stride 64 --footprint "$fp" -n 400000 -o "$out/stride-$fp.nst" 2>/dev/null
done
"$bin" trace gen zipf --footprint 64M --zipf-s 0.8 -n 400000 -o "$out/zipf-64M.nst" 2>/dev/null
gcc -O1 -o "$out/matmul" "$root/tests/programs/matmul.c"
(cd "$out" && env -i PATH=/usr/bin:/bin LC_ALL=C valgrind --tool=lackey --trace-mem=yes --log-file=matmul.lackey ./matmul >/dev/null)
"$bin" validate "$out"/stride-*.nst "$out/zipf-64M.nst" "$out/matmul.lackey" --machine "$out/host-calibrated.toml" --out "$out"
echo "table: $out/validate.csv, plot: $out/validate.svg"
