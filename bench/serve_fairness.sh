#!/usr/bin/env bash
# One polite client beside GREEDY connections that keep nmt-serve's queue full
# (bench/serve_fairness.py): the polite client's latency, median and p90, with the greedy
# connections' throughput. Environment: THREADS (2), BEAM (5), SERVE_FLAGS (more flags).
# Usage: bench/serve_fairness.sh MODEL.pt [GREEDY=64] [SECONDS=30] [LINES=64]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$1
GREEDY=${2:-64}
SECONDS_TO_RUN=${3:-30}
LINES=${4:-64}
SOURCE=${MULTI30K:-../shared/data/multi30k}/test_2016_flickr.de
WORK=$(mktemp -d)
SERVER_PID=
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
build/bin/nmt-serve --model "$MODEL" --port 0 --threads "${THREADS:-2}" --beam "${BEAM:-5}" ${SERVE_FLAGS:-} \
  2>"$WORK/serve.err" &
SERVER_PID=$!
READY='^nmt-serve: listening on http://[0-9.]+:[0-9]+ \(.*\)$'
for _ in $(seq 600); do grep -qE "$READY" "$WORK/serve.err" && break; sleep 0.1; done
PORT=$(grep -E "$READY" "$WORK/serve.err" | grep -oE ':[0-9]+ ' | tr -d ': ')
echo "nmt-serve $(git rev-parse --short HEAD), $GREEDY greedy connections of $LINES lines, beam ${BEAM:-5}, ${THREADS:-2} threads"
python3 bench/serve_fairness.py "$PORT" "$SOURCE" "$GREEDY" "$SECONDS_TO_RUN" "$LINES"
