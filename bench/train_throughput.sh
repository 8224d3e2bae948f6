#!/usr/bin/env bash
# Steady-state training throughput (target tokens/s) and peak memory of each preset on
# Multi30k de->en, 2 threads. Prints a Markdown table.
# Usage: bench/train_throughput.sh [STEPS]   (needs ../shared/data/multi30k and a build)
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-40}
DATA=${MULTI30K:-../shared/data/multi30k}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
build/bin/nmt-spm-train --input "$DATA/train.de" "$DATA/train.en" --model-prefix "$WORK/spm" \
  --vocab-size 8000 --model-type bpe >/dev/null 2>&1
echo "| preset | parameters | target tokens/s (steps 11-$STEPS) | peak RSS (MiB) |"
echo "|---|---:|---:|---:|"
for preset in gru attention transformer; do
  /usr/bin/time -v -o "$WORK/time.txt" build/bin/nmt-train --config "configs/$preset.json" \
    --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" \
    --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --model-dir "$WORK/$preset" --threads 2 \
    --max-steps "$STEPS" --set train.log_every=10 --set train.valid_every=1000000 --set train.valid_max_sentences=1 \
    >"$WORK/$preset.out" 2>"$WORK/$preset.err"
  params=$(grep -m1 '^parameters:' "$WORK/$preset.err" | awk '{print $2}')
  # Mean over the progress reports after the first (which includes start-up).
  rate=$(grep '"type":"progress"' "$WORK/$preset/train.jsonl" | tail -n +2 |
    sed 's/.*"target_tokens_per_second":\([0-9.e+]*\).*/\1/' | awk '{s+=$1; n++} END {printf "%.0f", s/n}')
  rss=$(awk -F: '/Maximum resident/ {printf "%.0f", $2/1024}' "$WORK/time.txt")
  echo "| $preset | $params | $rate | $rss |"
done
