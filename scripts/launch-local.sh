#!/usr/bin/env bash
# Starts N ranks of a data-parallel nmt-train on this machine, the way torchrun does:
# each process gets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT.
#
#   scripts/launch-local.sh 2 build/bin/nmt-train --threads 1 --config configs/transformer.json ...
#
# Rank 0 prints as usual; the other ranks' stderr lines start with "[rank R]". When one
# rank fails, the others are stopped and the launcher exits with that rank's status.
# MASTER_PORT (default 29500) must be free; set it to run two jobs at once.
set -uo pipefail
if [[ $# -lt 2 || ! $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N COMMAND [ARGS...]   (N = number of processes)" >&2
  exit 2
fi
world_size=$1
shift
export WORLD_SIZE=$world_size MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} MASTER_PORT=${MASTER_PORT:-29500}

pids=()
status=0
stop_all() { kill -TERM "${pids[@]}" 2>/dev/null; }
# A signal to the launcher goes to every rank (they stop together and rank 0 saves
# last.pt); the launcher then waits for them and exits 128 + signal.
on_signal() {
  ((status == 0)) && status=$1
  stop_all
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

for ((rank = 0; rank < world_size; rank++)); do
  if ((rank == 0)); then
    RANK=$rank LOCAL_RANK=$rank "$@" &
  else
    RANK=$rank LOCAL_RANK=$rank "$@" 2> >(sed -u "s/^/[rank $rank] /" >&2) &
  fi
  pids+=($!)
done

running=("${pids[@]}")
while ((${#running[@]} > 0)); do
  finished=
  wait -n -p finished "${running[@]}"
  code=$?
  [[ -z ${finished:-} ]] && continue  # a trapped signal interrupted the wait
  remaining=()
  for pid in "${running[@]}"; do [[ $pid != "$finished" ]] && remaining+=("$pid"); done
  running=("${remaining[@]}")
  if ((code != 0 && status == 0)); then
    status=$code
    echo "launch-local: a rank exited with status $code; stopping the others" >&2
    stop_all
  fi
done
wait  # lets the last stderr prefixer finish its lines
exit $status
