#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ (tests/fuzz/CMakeLists.txt) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each. Usage:
#   scripts/fuzz.sh [SECONDS]        run each harness for SECONDS (default 60)
#   scripts/fuzz.sh --runs N         run each harness for N executions
#   FUZZ_SEED=N scripts/fuzz.sh ...  the same inputs in the same order every run
# Prints, per harness, the executions done and whether it crashed; exits 1 on a crash
# (the crashing input is kept in build-fuzz/crashes/). Needs clang and its libFuzzer
# runtime: clang-19 and libclang-rt-19-dev on Debian 13, clang-14 and libclang-rt-14-dev on
# Debian 12 (scripts/install-deps.sh installs them); $CXX chooses another clang++.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time="${1:-60}")
if [ "${1:-}" = "--runs" ]; then limit=(-runs="$2"); fi
if [ -z "${CXX:-}" ]; then
  CXX=$(command -v clang++-19 || command -v clang++-14 || true)
  [ -n "$CXX" ] || { echo "error: neither clang++-19 nor clang++-14 found: run scripts/install-deps.sh" >&2; exit 1; }
fi
OUT=${FUZZ_OUT:-build-fuzz}
mkdir -p "$OUT/crashes"
# tests/fuzz/CMakeLists.txt: each library file the harnesses need compiled once, in parallel,
# and again only when it changes.
cmake -S tests/fuzz -B "$OUT" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=None >"$OUT/configure.log" 2>&1 \
  || { cat "$OUT/configure.log" >&2; exit 1; }
cmake --build "$OUT" -j"$(nproc)" >"$OUT/build.log" 2>&1 || { tail -n 60 "$OUT/build.log" >&2; exit 1; }
status=0
# A fixed FUZZ_SEED makes libFuzzer try the same inputs in the same order every run (the
# test suite's short run: whatever it finds, every run that gets as far finds again).
seed=()
if [ -n "${FUZZ_SEED:-}" ]; then seed=(-seed="$FUZZ_SEED"); fi
# Every tests/fuzz/fuzz_*.cpp is a harness (tests/fuzz/CMakeLists.txt builds the same list).
for source in tests/fuzz/fuzz_*.cpp; do
  harness=$(basename "$source" .cpp)
  mkdir -p "$OUT/corpus/$harness"
  seeds=()  # well-formed inputs to start from (read, not written)
  [ -d "tests/fuzz/seeds/$harness" ] && seeds=("tests/fuzz/seeds/$harness")
  log="$OUT/$harness.log"
  if "$OUT/$harness" "${limit[@]}" "${seed[@]}" -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$OUT/crashes/$harness-" \
      "$OUT/corpus/$harness" "${seeds[@]}" >"$log" 2>&1; then
    result="no crash"
  else
    result="CRASH (see $log)"
    status=1
    tail -n 40 "$log" | sed "s/^/  $harness | /" >&2  # what crashed, and on which input
  fi
  runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || echo "?")
  printf '%-22s %12s executions  %s\n' "$harness" "$runs" "$result"
done
exit $status
