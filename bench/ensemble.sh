#!/usr/bin/env bash
# An ensemble against its members alone, on Multi30k test_2016_flickr.de (1,000 lines):
# cased BLEU (nmt-eval, sacreBLEU's 13a) and sentences/s (nmt-translate's own summary,
# model loading excluded) for each model alone and for all of them as one ensemble
# (--model A --model B ...), beam 1 and 5, 2 threads, fp32, default batching.
# REPEATS (default 3) runs each measurement that many times, alternating the systems, and
# reports the median (and the range). The output of a system is the same on every run.
# Usage: bench/ensemble.sh A.pt B.pt [...]   Prints Markdown. Records OPENBLAS_CORETYPE.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/ensemble.sh A.pt B.pt [...]" >&2; exit 2; }
DATA=${MULTI30K:-../shared/data/multi30k}
REPEATS=${REPEATS:-3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

systems=()
for model in "$@"; do systems+=("--model $model"); done
ensemble=""
for model in "$@"; do ensemble+="--model $model "; done
systems+=("$ensemble")

source bench/stats.sh

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(grep -o 'avx512[a-z_0-9]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, NMT_CPU_ISA=${NMT_CPU_ISA:-unset}; median of $REPEATS runs (range)"
echo
echo "| system | beam | sentences/s | BLEU |"
echo "|---|---:|---:|---:|"
for beam in 1 5; do
  declare -A speeds=()
  for _ in $(seq "$REPEATS"); do
    for index in "${!systems[@]}"; do
      # shellcheck disable=SC2086  # the system's --model flags split on purpose
      build/bin/nmt-translate ${systems[$index]} --beam "$beam" --threads 2 --precision fp32 \
        <"$DATA/test_2016_flickr.de" >"$WORK/out.$index" 2>"$WORK/err.txt"
      speed=$(grep '^translated' "$WORK/err.txt" | sed 's/.*: \([0-9.]*\) sentences.*/\1/')
      speeds[$index]="${speeds[$index]:-} $speed"
      if [ -f "$WORK/first.$index.$beam" ]; then
        cmp -s "$WORK/first.$index.$beam" "$WORK/out.$index" || { echo "output of ${systems[$index]} changed between runs" >&2; exit 1; }
      else
        cp "$WORK/out.$index" "$WORK/first.$index.$beam"
      fi
    done
  done
  for index in "${!systems[@]}"; do
    bleu=$(build/bin/nmt-eval --ref "$DATA/test_2016_flickr.en" -b --metrics bleu <"$WORK/out.$index")
    # shellcheck disable=SC2086
    echo "| ${systems[$index]//--model /} | $beam | $(median_range ${speeds[$index]}) | $bleu |"
  done
  unset speeds
done
