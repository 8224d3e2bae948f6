#!/usr/bin/env bash
# Data-parallel training throughput on this machine: the Transformer preset on Multi30k
# de->en as 1 process x 2 threads and as 2 processes x 1 thread (Gloo on localhost,
# started by scripts/launch-local.sh). Target tokens/s are over all ranks, from rank 0's
# train.jsonl. Prints a Markdown table.
# Usage: bench/distributed_throughput.sh [STEPS]   (needs ../shared/data/multi30k and a build)
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-40}
source bench/common.sh

# run NAME PROCESSES THREADS BATCH_TOKENS
run() {
  local name=$1 processes=$2 threads=$3 batch=$4
  MASTER_PORT=${MASTER_PORT:-29517} scripts/launch-local.sh "$processes" build/bin/nmt-train \
    --config configs/transformer.json --threads "$threads" \
    --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" \
    --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --model-dir "$WORK/$name" --max-steps "$STEPS" \
    --set train.batch_tokens="$batch" --set train.log_every=10 --set train.valid_every=1000000 \
    --set train.valid_max_sentences=1 >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rate
  rate=$(mean_tokens_per_second "$WORK/$name/train.jsonl")
  echo "| $processes x $threads | $batch | $((processes * batch)) | $rate |"
}

echo "| processes x threads | batch tokens per rank | global batch | target tokens/s (steps 11-$STEPS) |"
echo "|---|---:|---:|---:|"
run single 1 2 4096
run two 2 1 4096
run two-same-global 2 1 2048
