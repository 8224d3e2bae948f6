#!/usr/bin/env bash
# Runs the README's test command (scripts/test.sh) several times in a row with a CPU load
# beside it, to show that no test passes only on an idle machine. The load is one busy
# process per core by default (a shell loop: no package needed), started before the first
# run and stopped on every exit. Each run's output goes to a log; a summary line per run
# (exit status, seconds, ctest's verdict) goes to stderr. Exits 1 if any run failed.
# Usage: scripts/test-under-load.sh [--runs N] [--load PROCESSES] [--logs DIR]
#   --runs N        how many runs of scripts/test.sh (default 3)
#   --load P        busy processes beside them (default: the number of cores; 0: none)
#   --logs DIR      where run-1.log ... go (default build/under-load)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
load=$(nproc)
logs=build/under-load
usage() { sed -n '/^# Usage:/,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
    --load) [ $# -ge 2 ] || usage; load=$2; shift 2 ;;
    --logs) [ $# -ge 2 ] || usage; logs=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "error: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "error: --runs must be a positive whole number, not '$runs'" >&2; exit 2; }
[[ "$load" =~ ^[0-9]+$ ]] || { echo "error: --load must be a whole number, not '$load'" >&2; exit 2; }
mkdir -p "$logs"

busy=()
stop_load() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true; }
trap stop_load EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < load; i++)); do
  (trap - EXIT; while :; do :; done) &
  busy+=($!)
done
echo "== $load busy processes beside $runs runs of scripts/test.sh on $(nproc) cores (logs in $logs)" >&2

failed=0
for ((run = 1; run <= runs; run++)); do
  started=$SECONDS
  status=0
  bash scripts/test.sh >"$logs/run-$run.log" 2>&1 || status=$?
  verdict=$(grep -E '[0-9]+% tests passed' "$logs/run-$run.log" | tail -1 || true)
  echo "== run $run of $runs: exit $status in $((SECONDS - started)) s: ${verdict:-no ctest summary}" >&2
  if [ "$status" -ne 0 ]; then
    failed=1
    grep -E -A3 'The following tests FAILED|^FAIL' "$logs/run-$run.log" | head -40 | sed 's/^/  | /' >&2 || true
  fi
done
exit $failed
