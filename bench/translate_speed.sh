#!/usr/bin/env bash
# Translation speed of trained checkpoints on Multi30k test_2016_flickr.de (1,000 lines),
# beam 1 and beam 5, 2 threads: sentences/s, target tokens/s, peak memory, and BLEU.
# Usage: bench/translate_speed.sh MODEL.pt [MODEL.pt ...]   Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${MULTI30K:-../shared/data/multi30k}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "| model | beam | sentences/s | target tokens/s | peak RSS (MiB) | BLEU | chrF2 |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for model in "$@"; do
  for beam in 1 5; do
    /usr/bin/time -v -o "$WORK/time.txt" build/bin/nmt-translate --model "$model" --beam "$beam" --threads 2 \
      --ref "$DATA/test_2016_flickr.en" <"$DATA/test_2016_flickr.de" >"$WORK/out.txt" 2>"$WORK/err.txt"
    summary=$(grep '^translated' "$WORK/err.txt")
    sps=$(echo "$summary" | sed 's/.*: \([0-9.]*\) sentences.*/\1/')
    tps=$(echo "$summary" | sed 's/.*, \([0-9]*\) target tokens.*/\1/')
    bleu=$(grep '^BLEU' "$WORK/err.txt" | awk '{print $3}')
    chrf=$(grep '^chrF2' "$WORK/err.txt" | awk '{print $3}')
    rss=$(awk -F: '/Maximum resident/ {printf "%.0f", $2/1024}' "$WORK/time.txt")
    echo "| $model | $beam | $sps | $tps | $rss | $bleu | $chrf |"
  done
done
