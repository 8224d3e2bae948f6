# Sourced first by every script test (tests/apps/*_test.sh): strict mode, and a failure
# that always says what failed, however it happens.
#  - fail MESSAGE: "FAIL: MESSAGE", exit 1.
#  - expect_error NEEDLE COMMAND...: COMMAND must fail and say NEEDLE on stderr (kept in $WORK/err).
#  - Any other failing command (set -e) is named by the ERR trap: file, line, command, status.
#  - On every failing exit, the files listed in FAIL_LOGS (a server's stderr, ...) are printed,
#    then the script's own `cleanup` function runs (if it defines one) on every exit.
# Usage: source "$SRC/tests/apps/test_harness.sh"; WORK=$(make_work_dir)
set -eEuo pipefail

FAIL_LOGS=()
harness_failure_said=

fail() {
  echo "FAIL: $*" >&2
  harness_failure_said=1
  exit 1
}

expect_error() {
  local needle=$1; shift
  if "$@" >"$WORK/out" 2>"$WORK/err"; then fail "expected failure: $*"; fi
  grep -qF -- "$needle" "$WORK/err" || { cat "$WORK/err" >&2; fail "error of '$*' does not mention '$needle'"; }
}

# The ERR trap: runs where the command failed (errtrace carries it into functions and
# subshells), so BASH_SOURCE[1] and the line are the failing command's.
harness_on_error() {
  local status=$1 line=$2 command=$3
  [[ $- == *e* ]] || return 0  # between `set +e` and `set -e` a failure is the script's to check
  [ -n "$harness_failure_said" ] && return 0
  harness_failure_said=1
  echo "FAIL: ${BASH_SOURCE[1]##*/}:$line: '$command' exited $status" >&2
}
trap 'harness_on_error $? $LINENO "$BASH_COMMAND"' ERR

harness_on_exit() {
  local status=$?
  trap - ERR
  set +e
  if [ "$status" -ne 0 ]; then
    [ -n "$harness_failure_said" ] || echo "FAIL: exit status $status" >&2
    local log
    for log in "${FAIL_LOGS[@]}"; do
      [ -s "$log" ] || continue
      echo "--- $log:" >&2
      sed 's/^/  | /' "$log" >&2
    done
  fi
  if declare -F cleanup >/dev/null; then cleanup; fi
  exit "$status"
}
trap harness_on_exit EXIT
