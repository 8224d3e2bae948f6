#!/usr/bin/env bash
# Decoding with and without a vocabulary shortlist, alternated in one run: for each
# precision and beam, nmt-translate on Multi30k test_2016_flickr.de (1,000 lines), 2 threads,
# --batch-size 64 at beam 5 and the default batching at beam 1 (the best of each in
# bench/ctranslate2_compare.sh's sweeps), ROUNDS alternated pairs (default 3): sentences/s
# median (range), their ratio per pair, BLEU of each, and the lines whose text differs.
# Usage: bench/shortlist_speed.sh MODEL.pt SHORTLIST [TRAIN_SRC TRAIN_TGT]
#   Without SHORTLIST's file it is made first by nmt-shortlist from TRAIN_SRC / TRAIN_TGT
#   (default: Multi30k's train.de / train.en), its time printed.
# PRECISIONS (default "fp32 int8", bf16 where the CPU has AVX512-BF16), BEAMS (default "5 1").
# Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$1
SHORTLIST=$2
DATA=${MULTI30K:-../shared/data/multi30k}
TRAIN_SRC=${3:-$DATA/train.de}
TRAIN_TGT=${4:-$DATA/train.en}
ROUNDS=${ROUNDS:-3}
read -r -a beams <<<"${BEAMS:-5 1}"
if [ -n "${PRECISIONS:-}" ]; then
  read -r -a precisions <<<"$PRECISIONS"
else
  precisions=(fp32)
  grep -qw avx512_bf16 /proc/cpuinfo && precisions+=(bf16)
  precisions+=(int8)
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source bench/stats.sh

if [ ! -e "$SHORTLIST" ]; then
  start=$(date +%s.%N)
  build/bin/nmt-shortlist -m "$MODEL" --src "$TRAIN_SRC" --tgt "$TRAIN_TGT" -o "$SHORTLIST" 2>"$WORK/shortlist.err"
  echo "nmt-shortlist: $(tail -1 "$WORK/shortlist.err" | sed 's/^nmt-shortlist: //'), in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}') s"
  echo
fi

# run OUT ARGS...: one nmt-translate run; prints its sentences/s
run() {
  local out=$1
  shift
  build/bin/nmt-translate --model "$MODEL" --threads 2 "$@" <"$DATA/test_2016_flickr.de" >"$out" 2>"$WORK/err.txt"
  grep '^translated' "$WORK/err.txt" | sed 's/.*: \([0-9.]*\) sentences.*/\1/'
}
bleu() { build/bin/nmt-eval --ref "$DATA/test_2016_flickr.en" -b --metrics bleu <"$1"; }

echo "Model $MODEL, shortlist $SHORTLIST, $ROUNDS alternated rounds, median (range)"
echo
echo "| precision | beam | batching | full vocabulary | shortlist | shortlist / full (per round) | BLEU full / shortlist | lines that differ |"
echo "|---|---:|---|---:|---:|---:|---|---:|"
for precision in "${precisions[@]}"; do
  for beam in "${beams[@]}"; do
    batching=()
    [ "$beam" -gt 1 ] && batching=(--batch-size 64)
    args=(--beam "$beam" --precision "$precision" "${batching[@]}")
    full=() short=() ratio=()
    for _ in $(seq "$ROUNDS"); do
      f=$(run "$WORK/full.txt" "${args[@]}")
      s=$(run "$WORK/short.txt" "${args[@]}" --shortlist "$SHORTLIST")
      full+=("$f") short+=("$s")
      ratio+=("$(awk -v a="$s" -v b="$f" 'BEGIN {printf "%.3f", a / b}')")
    done
    differ=$(diff "$WORK/full.txt" "$WORK/short.txt" | grep -c '^<' || true)
    echo "| $precision | $beam | ${batching[*]:-default} | $(median_range "${full[@]}") | $(median_range "${short[@]}") | $(median_range "${ratio[@]}") | $(bleu "$WORK/full.txt") / $(bleu "$WORK/short.txt") | $differ |"
  done
done
