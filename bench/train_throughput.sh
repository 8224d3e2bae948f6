#!/usr/bin/env bash
# Steady-state training throughput (target tokens/s), peak memory and the validation loss
# after STEPS updates, for each preset on Multi30k de->en, 2 threads, in fp32 and in bf16
# mixed precision. Prints a Markdown table; the ratio column compares
# each bf16 row with the fp32 row of the same preset in this run.
# Usage: bench/train_throughput.sh [STEPS] [PRESET ...]   (default 40; gru attention transformer)
# Needs ../shared/data/multi30k (or MULTI30K) and a build. Records OPENBLAS_CORETYPE.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-40}
shift || true
PRESETS=("$@")
[ ${#PRESETS[@]} -gt 0 ] || PRESETS=(gru attention transformer)
source bench/common.sh
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, $STEPS steps, validation loss (nll per token) at step $STEPS"
echo
echo "| preset | precision | parameters | target tokens/s (reports after the first) | ratio to fp32 | valid loss | peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|---:|---:|"
for preset in "${PRESETS[@]}"; do
  fp32_rate=
  for precision in fp32 bf16; do
    dir=$WORK/$preset-$precision
    /usr/bin/time -v -o "$WORK/time.txt" build/bin/nmt-train --config "configs/$preset.json" \
      --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" \
      --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --model-dir "$dir" --threads 2 \
      --max-steps "$STEPS" --set train.log_every=10 --set train.valid_every="$STEPS" --set train.valid_max_sentences=1 \
      --set train.precision="\"$precision\"" >"$dir.out" 2>"$dir.err"
    params=$(grep -m1 '^parameters:' "$dir.err" | awk '{print $2}')
    rate=$(mean_tokens_per_second "$dir/train.jsonl")
    [ -n "$fp32_rate" ] || fp32_rate=$rate
    ratio=$(awk -v a="$rate" -v b="$fp32_rate" 'BEGIN {printf "%.2f", a / b}')
    loss=$(grep '"type":"validation"' "$dir/train.jsonl" | tail -1 | sed 's/.*"loss":\([0-9.e+-]*\).*/\1/' |
      awk '{printf "%.4f", $1}')
    rss=$(awk -F: '/Maximum resident/ {printf "%.0f", $2/1024}' "$WORK/time.txt")
    echo "| $preset | $precision | $params | $rate | $ratio | $loss | $rss |"
  done
done
