#!/usr/bin/env bash
# Instruction counts (valgrind callgrind) of nmt-translate on the first N lines of
# Multi30k test_2016_flickr.de, beam 5 and greedy, one thread: stable where wall-clock
# times on a shared machine are not, so A/B comparisons of a decoder change use these.
# Usage: bench/translate_callgrind.sh MODEL.pt [N=30]   Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${MULTI30K:-../shared/data/multi30k}
LINES=${2:-30}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
head -n "$LINES" "$DATA/test_2016_flickr.de" >"$WORK/in.de"
echo "| model | lines | beam | instructions |"
echo "|---|---:|---:|---:|"
for beam in 5 1; do
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" build/bin/nmt-translate \
    --model "$1" --threads 1 --beam "$beam" <"$WORK/in.de" >"$WORK/out.txt" 2>"$WORK/err.txt"
  refs=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$WORK/err.txt")
  echo "| $1 | $LINES | $beam | $refs |"
done
