#!/usr/bin/env bash
# Data-parallel training across two hosts over a shaped link (network namespaces on this
# machine, scripts/namespace-hosts.sh: 1 Gbit/s), against one process: the Transformer
# preset on Multi30k de->en, one thread per rank, BATCH target tokens per rank. Variants,
# alternated over ROUNDS rounds (their order reversed every other round):
#   one           1 process x 1 thread (in host 0, no network)
#   apart         2 processes x 1 thread at once, one per host, each training alone (no
#                 collective): what two ranks could reach on this machine with communication
#                 and waiting for each other free (the ceiling the cores, caches and memory set)
#   after         2 hosts, the gradients summed after backward (train.overlap_allreduce=false)
#   during-N      2 hosts, summed during backward in buckets of N MiB (N from BUCKETS)
#   fp16-N        the same, the buckets sent as fp16 (train.allreduce_precision; N from FP16_BUCKETS)
#   baseline-N    during-N with BASELINE/nmt-train (another build, e.g. the previous commit's),
#                 where BASELINE is set
# Per variant: target tokens/s over all ranks (rank 0's train.jsonl, steps after the first
# report) and the share of the time rank 0 waited for the gradients' sum
# (gradient_sum_wait_share); medians and ranges; scaling efficiency = tokens/s of 2 hosts /
# (2 x one). Prints Markdown. APART=0 leaves the apart variant out. Needs root (namespaces), ../shared/data/multi30k and a build.
# Usage: bench/distributed_hosts.sh [STEPS=30]   Environment: ROUNDS (3), BATCH (4096),
#   BUCKETS ("1 4 16"), FP16_BUCKETS ("" : none), LOG_EVERY (5), NAMESPACE_LINK_RATE (1gbit),
#   BASELINE (a folder with another build's nmt-train; unset: none)
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-30}
ROUNDS=${ROUNDS:-3}
BATCH=${BATCH:-4096}
BUCKETS=${BUCKETS:-1 4 16}
FP16_BUCKETS=${FP16_BUCKETS:-}
LOG_EVERY=${LOG_EVERY:-5}
[ "$(id -u)" -eq 0 ] || { echo "error: $0 needs root (network namespaces)" >&2; exit 1; }
source bench/common.sh
source bench/stats.sh
source scripts/namespace-hosts.sh
trap 'remove_namespace_hosts; rm -rf "$WORK"' EXIT
make_namespace_hosts 2 "nmtb$$" || { echo "error: cannot make network namespaces here" >&2; exit 1; }

TRAIN=(--config configs/transformer.json --threads 1
       --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en"
       --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --max-steps "$STEPS" --quiet
       --set train.batch_tokens="$BATCH" --set train.log_every="$LOG_EVERY" --set train.valid_every=1000000
       --set train.valid_max_sentences=1)

# mean_field TRAIN_JSONL FIELD: mean of FIELD over the progress reports after the first.
mean_field() {
  grep '"type":"progress"' "$1" | tail -n +2 |
    sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" | awk '{s+=$1; n++} END {if (n) printf "%.4f", s/n; else print "nan"}'
}

# run VARIANT ROUND: one training run; appends tokens/s and the wait share to WORK/VARIANT.*
run() {
  local variant=$1 dir=$WORK/$1-$2
  rm -rf "$dir"
  if [ "$variant" = one ]; then
    on_namespace_host 0 build/bin/nmt-train "${TRAIN[@]}" --model-dir "$dir" >"$dir.out" 2>"$dir.err"
  elif [ "$variant" = apart ]; then
    local i pids=()
    for i in 0 1; do
      on_namespace_host "$i" build/bin/nmt-train "${TRAIN[@]}" --model-dir "$dir-$i" >"$dir.out$i" 2>"$dir.err$i" &
      pids+=($!)
    done
    for i in 0 1; do wait "${pids[$i]}" || { cat "$dir.err$i" >&2; exit 1; }; done
    for i in 0 1; do mean_field "$dir-$i/train.jsonl" target_tokens_per_second; echo; done |
      awk 'NF {s += $1} END {printf "%.0f\n", s}' >>"$WORK/$variant.rate"
    return
  else
    local flags=(--set train.overlap_allreduce=false) binary=build/bin/nmt-train
    case $variant in
      during-*) flags=(--set train.overlap_allreduce=true --set "train.allreduce_bucket_mb=${variant#during-}") ;;
      baseline-*) flags=(--set train.overlap_allreduce=true --set "train.allreduce_bucket_mb=${variant#baseline-}")
                  binary=$BASELINE/nmt-train ;;
      fp16-*) flags=(--set train.overlap_allreduce=true --set "train.allreduce_bucket_mb=${variant#fp16-}"
                     --set train.allreduce_precision=fp16) ;;
    esac
    local i pids=()
    for i in 0 1; do
      on_namespace_host "$i" env RANK="$i" WORLD_SIZE=2 MASTER_ADDR="${ADDRESS[0]}" MASTER_PORT=29620 \
        GLOO_SOCKET_IFNAME=eth0 "$binary" "${TRAIN[@]}" "${flags[@]}" --model-dir "$dir" >"$dir.out$i" 2>"$dir.err$i" &
      pids+=($!)
    done
    for i in 0 1; do wait "${pids[$i]}" || { cat "$dir.err$i" >&2; exit 1; }; done
  fi
  { mean_field "$dir/train.jsonl" target_tokens_per_second | awk '{printf "%.0f", $1}'; echo; } >>"$WORK/$variant.rate"
  [ "$variant" = one ] || { mean_field "$dir/train.jsonl" gradient_sum_wait_share; echo; } >>"$WORK/$variant.wait"
}

variants=(one after)
[ "${APART:-1}" = 0 ] || variants+=(apart)
for size in $BUCKETS; do variants+=("during-$size"); done
for size in $FP16_BUCKETS; do variants+=("fp16-$size"); done
if [ -n "${BASELINE:-}" ]; then for size in $BUCKETS; do variants+=("baseline-$size"); done; fi
for ((round = 1; round <= ROUNDS; round++)); do
  order=("${variants[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((k = ${#variants[@]} - 1; k >= 0; k--)); do order+=("${variants[$k]}"); done
  fi
  for variant in "${order[@]}"; do
    echo "round $round: $variant" >&2
    run "$variant" "$round"
  done
done

echo "nmt-train $(git rev-parse --short HEAD), Transformer preset, $BATCH target tokens per rank and step, 1 thread per rank,"
echo "steps $((LOG_EVERY + 1))-$STEPS, $ROUNDS alternated rounds (median, range); hosts: network namespaces, links $SHAPING"
echo
values() { grep -v '^$' "$WORK/$1"; }  # values FILE: one figure per line
mapfile -t one_rates < <(values one.rate)
one_rate=$(median "${one_rates[@]}")
echo "| variant | target tokens/s (all ranks) | scaling efficiency | waiting for the gradient sum (rank 0) |"
echo "|---|---:|---:|---:|"
for variant in "${variants[@]}"; do
  mapfile -t rates < <(values "$variant.rate")
  rate=$(median "${rates[@]}")
  efficiency=$(awk -v r="$rate" -v o="$one_rate" 'BEGIN {printf "%.2f", r / (2 * o)}')
  if [ "$variant" = one ]; then efficiency="-"; wait_share="-"
  elif [ "$variant" = apart ]; then wait_share="- (no collective)"
  else
    mapfile -t waits < <(values "$variant.wait" | awk '{printf "%.1f\n", 100 * $1}')
    wait_share="$(median_range "${waits[@]}") %"
  fi
  echo "| $variant | $(median_range "${rates[@]}") | $efficiency | $wait_share |"
done
