#!/usr/bin/env bash
# nmt-serve under load on loopback (wrk), bounded in time: requests/s and p50/p99 latency
# at 1, 8 and 64 concurrent clients, each request one sentence of test_2016_flickr.de
# (cycled), beam 5; sentences/s of nmt-translate on the same lines for comparison; the
# server's peak RSS over all the requests, and the ratio of the 64-client rate to
# nmt-translate's. Environment: BEAM (5), PRECISION (fp32; bf16 for both tools), THREADS (2),
# SERVE_FLAGS (more nmt-serve flags), SOAK_REQUESTS (0; N: afterwards, 64 clients in 30 s rounds until the server has answered N
# requests, with its RSS after each round: does memory stay flat?).
# Usage: bench/serve_load.sh MODEL.pt [SECONDS_PER_RUN=10] [LINES=200]   Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$1
SECONDS_PER_RUN=${2:-10}
LINES=${3:-200}
THREADS=${THREADS:-2}
BEAM=${BEAM:-5}
PRECISION=${PRECISION:-fp32}
SOAK_REQUESTS=${SOAK_REQUESTS:-0}
source bench/serve_requests.sh

echo "beam $BEAM, precision $PRECISION, $THREADS threads, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
echo
build/bin/nmt-serve --model "$MODEL" --port 0 --threads "$THREADS" --beam "$BEAM" --precision "$PRECISION" ${SERVE_FLAGS:-} \
  2>"$WORK/serve.err" &
SERVER_PID=$!
URL=$(server_url "$WORK/serve.err")
rss_start=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$SERVER_PID/status")

echo "| clients | requests | requests/s (= sentences/s) | p50 latency | p99 latency | server batches |"
echo "|---:|---:|---:|---:|---:|---:|"
for clients in 1 8 64; do
  before=$(curl -s "$URL/health" | sed 's/.*"batches":\([0-9]*\).*/\1/')
  wrk -t "$(( clients < 2 ? clients : 2 ))" -c "$clients" -d "${SECONDS_PER_RUN}s" --timeout 60s --latency \
    -s "$WORK/post.lua" "$URL" >"$WORK/wrk.txt"
  after=$(curl -s "$URL/health" | sed 's/.*"batches":\([0-9]*\).*/\1/')
  requests=$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$WORK/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/wrk.txt")
  errors=$(grep -E "Non-2xx|Socket errors" "$WORK/wrk.txt" | tr '\n' ' ' || true)
  echo "| $clients | $requests | $rps | $p50 | $p99 | $((after - before)) ${errors:+($errors)} |"
  rate64=$rps
done
if [ "$SOAK_REQUESTS" -gt 0 ]; then
  echo
  echo "| soak round (30 s, 64 clients) | requests answered so far | server RSS (MiB) |"
  echo "|---:|---:|---:|"
  round=0
  while :; do
    total=$(curl -s "$URL/health" | sed 's/.*"requests":\([0-9]*\).*/\1/')
    [ "$total" -ge "$SOAK_REQUESTS" ] && break
    round=$((round + 1))
    wrk -t 2 -c 64 -d 30s --timeout 60s -s "$WORK/post.lua" "$URL" >"$WORK/wrk.txt"
    total=$(curl -s "$URL/health" | sed 's/.*"requests":\([0-9]*\).*/\1/')
    echo "| $round | $total | $(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$SERVER_PID/status") |"
  done
fi
peak=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$SERVER_PID/status")
total=$(curl -s "$URL/health" | sed 's/.*"requests":\([0-9]*\).*/\1/')
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
SERVER_PID=
echo
echo "server RSS: $rss_start MiB after loading, peak $peak MiB over $total requests"
build/bin/nmt-translate --model "$MODEL" --beam "$BEAM" --precision "$PRECISION" --threads "$THREADS" \
  <"$WORK/lines.de" >/dev/null 2>"$WORK/translate.err"
summary=$(grep '^translated' "$WORK/translate.err")
echo "nmt-translate, same $LINES lines, beam $BEAM, $THREADS threads: $summary"
translate_rate=$(echo "$summary" | sed 's/.*: \([0-9.]*\) sentences.*/\1/')
echo "64 clients / nmt-translate: $(awk -v a="$rate64" -v b="$translate_rate" 'BEGIN {printf "%.2f", a / b}')"
