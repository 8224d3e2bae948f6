#!/usr/bin/env bash
# A crowd of slow connections from many addresses against nmt-serve's connection limits,
# and how long real clients wait beside it (bench/serve_crowd.py says what each side does).
# Environment: BIN (build/bin: where nmt-serve is), THREADS (2), BEAM (5), SERVE_FLAGS (more flags).
# Usage: bench/serve_crowd.sh MODEL.pt [ADDRESSES=199] [PER_ADDRESS=6] [SECONDS=40]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$1
ADDRESSES=${2:-199}
PER_ADDRESS=${3:-6}
SECONDS_TO_RUN=${4:-40}
LINES=1
BEAM=${BEAM:-5}
source bench/serve_requests.sh
ulimit -n "$(ulimit -Hn)"  # the crowd's sockets, and the server's
"${BIN:-build/bin}"/nmt-serve --model "$MODEL" --port 0 --threads "${THREADS:-2}" --beam "$BEAM" ${SERVE_FLAGS:-} \
  2>"$WORK/serve.err" &
SERVER_PID=$!
URL=$(server_url "$WORK/serve.err")
echo "nmt-serve from ${BIN:-build/bin} (this script at $(git rev-parse --short HEAD)) ${SERVE_FLAGS:-(default limits)}, $ADDRESSES addresses x $PER_ADDRESS slow connections"
python3 bench/serve_crowd.py "${URL##*:}" "$DATA/test_2016_flickr.de" "$ADDRESSES" "$PER_ADDRESS" "$SECONDS_TO_RUN"
