#!/usr/bin/env bash
# nmt-serve builds or settings against each other, alternated in one run (wrk on loopback):
# per variant, requests/s and p99 latency with 1 and with 64 clients (each request one
# sentence of test_2016_flickr.de, cycled, beam BEAM), and the server's peak RSS; medians
# and ranges over ROUNDS rounds, the variants' order reversed every other round, and each
# variant's medians as ratios to the first variant's.
# Usage: bench/serve_ab.sh MODEL.pt VARIANT VARIANT...   Prints Markdown.
#   VARIANT: LABEL=BIN_DIR[,NAME=VALUE...]  nmt-serve from BIN_DIR, with those environment
#   variables (e.g. "passive=build/bin" "spinning=build/bin,OMP_WAIT_POLICY=").
# Environment: ROUNDS (5), SECONDS_PER_RUN (10), LINES (200), BEAM (5), THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/stats.sh
MODEL=$1
shift
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
LINES=${LINES:-200}
BEAM=${BEAM:-5}
THREADS=${THREADS:-2}
source bench/serve_requests.sh

# wrk's latency ("850.12us", "12.3ms", "1.02s") in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n *= 1; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }'; }

# measure LABEL BIN_DIR ENV...: one server, 1 then 64 clients; appends to WORK/LABEL.*
measure() {
  local label=$1 bin=$2
  shift 2
  env "$@" "$bin/nmt-serve" --model "$MODEL" --port 0 --threads "$THREADS" --beam "$BEAM" 2>"$WORK/serve.err" &
  SERVER_PID=$!
  local url
  url=$(server_url "$WORK/serve.err")
  wrk -t 2 -c 8 -d 2s --timeout 60s -s "$WORK/post.lua" "$url" >/dev/null  # warm-up
  for clients in 1 64; do
    wrk -t "$(( clients < 2 ? clients : 2 ))" -c "$clients" -d "${SECONDS_PER_RUN}s" --timeout 60s --latency \
      -s "$WORK/post.lua" "$url" >"$WORK/wrk.txt"
    if grep -qE "Non-2xx|Socket errors" "$WORK/wrk.txt"; then grep -E "Non-2xx|Socket errors" "$WORK/wrk.txt" >&2; exit 1; fi
    awk '/Requests\/sec/ {print $2}' "$WORK/wrk.txt" >>"$WORK/$label.rps$clients"
    to_ms "$(awk '$1 == "99%" {print $2}' "$WORK/wrk.txt")" >>"$WORK/$label.p99_$clients"
    echo >>"$WORK/$label.p99_$clients"
  done
  awk '/VmHWM/ {printf "%.0f\n", $2/1024}' "/proc/$SERVER_PID/status" >>"$WORK/$label.rss"
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID"
  SERVER_PID=
}

labels=()
declare -A bins envs
for variant in "$@"; do
  label=${variant%%=*}
  spec=${variant#*=}
  labels+=("$label")
  bins[$label]=${spec%%,*}
  envs[$label]=$([ "$spec" = "${spec#*,}" ] && echo "" || echo "${spec#*,}")
  [ -x "${bins[$label]}/nmt-serve" ] || { echo "no nmt-serve in ${bins[$label]}" >&2; exit 1; }
done
echo "beam $BEAM, $THREADS threads, $ROUNDS rounds of ${SECONDS_PER_RUN} s per client count, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
echo
for round in $(seq "$ROUNDS"); do
  order=("${labels[@]}")
  if [ $((round % 2)) -eq 0 ]; then order=(); for ((i = ${#labels[@]} - 1; i >= 0; i--)); do order+=("${labels[i]}"); done; fi
  for label in "${order[@]}"; do
    IFS=',' read -r -a environment <<<"${envs[$label]}"
    measure "$label" "${bins[$label]}" "${environment[@]}"
  done
done
values() { grep -v '^$' "$WORK/$1"; }
echo "| variant | 1 client: requests/s | p99 ms | 64 clients: requests/s | p99 ms | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|"
for label in "${labels[@]}"; do
  echo "| $label | $(median_range $(values "$label.rps1")) | $(median_range $(values "$label.p99_1")) |" \
       "$(median_range $(values "$label.rps64")) | $(median_range $(values "$label.p99_64")) | $(median_range $(values "$label.rss")) |"
done
echo
first=${labels[0]}
ratio() { awk -v a="$(median $(values "$1"))" -v b="$(median $(values "$2"))" 'BEGIN {printf "%.3f", a / b}'; }
# Per round (the variants ran next to each other): the ratio, then its median and range.
round_ratios() { paste <(values "$1") <(values "$2") | awk '{print $1 / $2}'; }
for label in "${labels[@]:1}"; do
  echo "$label / $first (medians): requests/s $(ratio "$label.rps1" "$first.rps1") at 1 client," \
       "$(ratio "$label.rps64" "$first.rps64") at 64; p99 $(ratio "$label.p99_1" "$first.p99_1") at 1 client," \
       "$(ratio "$label.p99_64" "$first.p99_64") at 64"
  echo "$label / $first per round (median, range): requests/s $(median_range $(round_ratios "$label.rps1" "$first.rps1"))" \
       "at 1 client, $(median_range $(round_ratios "$label.rps64" "$first.rps64")) at 64;" \
       "p99 $(median_range $(round_ratios "$label.p99_1" "$first.p99_1")) at 1 client," \
       "$(median_range $(round_ratios "$label.p99_64" "$first.p99_64")) at 64"
done
