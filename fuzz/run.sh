#!/usr/bin/env bash
# A fuzzing campaign over every target: coverage-guided (libFuzzer through
# cargo fuzz), on the stable toolchain (RUSTC_BOOTSTRAP lets cargo fuzz pass
# its flags; no sanitizer: safe Rust, and panics are what we look for).
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, all targets)
#
# The seed corpora under fuzz/corpus/ are read, never written; what a
# campaign finds goes to target/fuzz-corpus/<target>/, and a crashing input
# to fuzz/artifacts/<target>/ (the run then fails, naming it).
# Needs cargo-fuzz: `cargo install cargo-fuzz --locked`.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(lackey csv din champsim mldpc native detect whole config model engine workload tasks)
fi
export RUSTC_BOOTSTRAP=1
cargo fuzz build --sanitizer none
for t in "${targets[@]}"; do
  work=../target/fuzz-corpus/$t
  mkdir -p "$work"
  echo "== fuzz $t: ${secs} s"
  cargo fuzz run --sanitizer none "$t" "$work" "corpus/$t" -- \
    -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 2>&1 |
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done|==|SUMMARY|.*(panicked|crash|deadly|ERROR))' || true
  if compgen -G "artifacts/$t/*" >/dev/null; then
    echo "fuzz $t: crash inputs in fuzz/artifacts/$t/" >&2
    exit 1
  fi
done
echo "fuzzing: no crash in ${#targets[@]} targets × ${secs} s"
