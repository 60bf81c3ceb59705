#!/usr/bin/env bash
# A fuzzing campaign over every target: coverage-guided (libFuzzer through
# cargo fuzz), on the stable toolchain (RUSTC_BOOTSTRAP lets cargo fuzz pass
# its flags; no sanitizer: safe Rust, and panics are what we look for),
# built with debug assertions and overflow checks (`-a`), so an arithmetic
# wrap is a crash here as in a debug build: debug and release agree.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, all targets)
#   FUZZ_JOBS=2 fuzz/run.sh 3600                     (two processes per target)
#   fuzz/run.sh --cmin [TARGET...]                    (merge a campaign's finds)
#
# The seed corpora under fuzz/corpus/ are read, never written; what a
# campaign finds goes to target/fuzz-corpus/<target>/, and a crashing input
# to fuzz/artifacts/<target>/ (the run then fails, naming it; a "slow
# unit" that reruns fast was the host stalling: warned, moved to
# target/fuzz-stalls/, not a failure). A failure of
# cargo fuzz itself (a build error, a crash, a timeout, memory over the
# limit) fails the run too. `--cmin` minimises each target's seed corpus
# together with its campaign corpus into fuzz/corpus/<target>/ (`cargo
# fuzz cmin`): the inputs that keep the coverage, to commit, plus every
# hand-written (named) seed.
# Each target's executions go to target/fuzz-stats/<target>.txt.
# Needs cargo-fuzz: `cargo install cargo-fuzz --locked`.
set -euo pipefail
cd "$(dirname "$0")"
all=(lackey csv din champsim mldpc native detect whole config model engine workload tasks task_engine)
export RUSTC_BOOTSTRAP=1

if [ "${1:-}" = "--cmin" ]; then
  shift
  targets=("$@")
  [ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
  cargo fuzz build -a --sanitizer none
  for t in "${targets[@]}"; do
    found=../target/fuzz-corpus/$t
    mkdir -p "$found"
    before=$(find "corpus/$t" -type f | wc -l)
    # The hand-written seeds (named, not a libFuzzer hash) are kept whatever
    # cmin decides: they document the edges they start from.
    keep=$(mktemp -d)
    find "corpus/$t" -type f ! -regex '.*/[0-9a-f]\{40\}' -exec cp {} "$keep/" \;
    # Seeds and finds into the seed folder, then minimised in place.
    # (find, not a glob: a campaign's folder can hold more files than an
    # argument list.)
    find "$found" -type f -exec cp -n -t "corpus/$t/" {} +
    mkdir -p ../target/fuzz-stats
    if ! cargo fuzz cmin -a --sanitizer none "$t" "corpus/$t" -- -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
      >"../target/fuzz-stats/cmin-$t.log" 2>&1; then
      echo "cmin $t: cargo fuzz cmin failed; log in target/fuzz-stats/cmin-$t.log" >&2
      exit 1
    fi
    cp -n "$keep"/* "corpus/$t/" 2>/dev/null || true
    rm -rf "$keep"
    echo "cmin $t: $before seeds + $(find "$found" -type f | wc -l) found -> $(find "corpus/$t" -type f | wc -l) kept"
  done
  exit 0
fi

secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
jobs=${FUZZ_JOBS:-1}
cargo fuzz build -a --sanitizer none
mkdir -p ../target/fuzz-stats
for t in "${targets[@]}"; do
  work=../target/fuzz-corpus/$t
  log=../target/fuzz-stats/$t.log
  mkdir -p "$work"
  echo "== fuzz $t: ${secs} s × $jobs"
  rm -f fuzz-*.log # a stopped run's worker logs are not this run's
  status=0
  cargo fuzz run -a --sanitizer none "$t" "$work" "corpus/$t" -- \
    -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -jobs="$jobs" -workers="$jobs" >"$log" 2>&1 || status=$?
  # With -jobs, each process writes fuzz-N.log beside us, and libFuzzer
  # copies each into its own output when the job exits (so into $log
  # already: appending them again counted every execution twice).
  rm -f fuzz-*.log
  execs=$({ grep -h '^stat::number_of_executed_units' "$log" || true; } | awk '{s += $2} END {print s + 0}')
  echo "$t executions $execs seconds $secs jobs $jobs status $status" | tee "../target/fuzz-stats/$t.txt"
  grep -E '(panicked|deadly signal|ERROR: libFuzzer|SUMMARY)' "$log" | head -5 || true
  # A slow unit (libFuzzer's slow-unit-*: one input over 10 s of wall
  # time, no crash) that reruns alone in under 5 s, three times, was the
  # host stalling mid-unit (a CI VM once took 35 s over an input that runs
  # in 0.03-0.25 s), not the input: said loudly, kept aside, not a failure.
  # Any other artifact, or a slow unit that is slow again, fails the run.
  for f in artifacts/"$t"/slow-unit-*; do
    [ -e "$f" ] || continue
    exe=$(find target -path "*/release/$t" -type f | head -1)
    fast=1
    for _ in 1 2 3; do
      if [ -z "$exe" ] || ! timeout 5 "$exe" "$f" >/dev/null 2>&1; then fast=0; break; fi
    done
    if [ "$fast" = 1 ]; then
      mkdir -p ../target/fuzz-stalls
      mv "$f" ../target/fuzz-stalls/
      echo "fuzz $t: WARNING: $f took over 10 s once but reruns in under 5 s (three times): a host stall, moved to target/fuzz-stalls/" >&2
    fi
  done
  if compgen -G "artifacts/$t/*" >/dev/null; then
    echo "fuzz $t: crash inputs in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  if [ "$status" -ne 0 ]; then
    echo "fuzz $t: cargo fuzz failed (exit $status); log in target/fuzz-stats/$t.log" >&2
    exit 1
  fi
done
echo "fuzzing: no crash in ${#targets[@]} targets × ${secs} s × $jobs"
