#!/usr/bin/env bash
# Steady-state training throughput (target tokens/s) and peak memory of each preset on
# Multi30k de->en, 2 threads. Prints a Markdown table.
# Usage: bench/train_throughput.sh [STEPS]   (needs ../shared/data/multi30k and a build)
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-40}
source bench/common.sh
echo "| preset | parameters | target tokens/s (steps 11-$STEPS) | peak RSS (MiB) |"
echo "|---|---:|---:|---:|"
for preset in gru attention transformer; do
  /usr/bin/time -v -o "$WORK/time.txt" build/bin/nmt-train --config "configs/$preset.json" \
    --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" \
    --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --model-dir "$WORK/$preset" --threads 2 \
    --max-steps "$STEPS" --set train.log_every=10 --set train.valid_every=1000000 --set train.valid_max_sentences=1 \
    >"$WORK/$preset.out" 2>"$WORK/$preset.err"
  params=$(grep -m1 '^parameters:' "$WORK/$preset.err" | awk '{print $2}')
  rate=$(mean_tokens_per_second "$WORK/$preset/train.jsonl")
  rss=$(awk -F: '/Maximum resident/ {printf "%.0f", $2/1024}' "$WORK/time.txt")
  echo "| $preset | $params | $rate | $rss |"
done
