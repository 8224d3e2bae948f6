#!/usr/bin/env bash
# Our decoder against CTranslate2 on the same model: nmt-export writes MODEL as a CTranslate2
# model, then on Multi30k test_2016_flickr (de->en):
#  1. correctness: greedy output line by line (the share of equal lines; each differing line
#     with the first piece where they part and the log-probabilities our model gives the two
#     pieces there, so an equal-score tie or a float difference shows as a gap near 0), and
#     BLEU of beam 5, both without length penalty (ours --alpha 0, CTranslate2's
#     length_penalty 0: the same objective, the sum of log-probabilities);
#  2. speed: sentences/s, text in and text out, model loading excluded (nmt-translate's own
#     summary; CTranslate2 timed by its own file loop in bench/ctranslate2/timing.cpp), 2
#     threads and one translator each, the whole test set, fp32 and int8, beam 5 and greedy.
#     Each tool first gets its best batching from a sweep (one run per setting), then both run
#     alternately, PAIRS pairs (default 5); the table shows medians, ranges and
#     ours / CTranslate2 per pair.
# CT2_PREFIX is a CTranslate2 4.x install (bench/ctranslate2/build.sh SRC PREFIX makes one).
# Usage: bench/ctranslate2_compare.sh CT2_PREFIX MODEL.pt   Prints Markdown.
# Env: MULTI30K (data folder), PAIRS, PRECISIONS (default "fp32 int8"), BEAMS (default "5 1").
set -euo pipefail
cd "$(dirname "$0")/.."
CT2=$(realpath "$1")
MODEL=$(realpath "$2")
DATA=${MULTI30K:-../shared/data/multi30k}
SRC=$DATA/test_2016_flickr.de
REF=$DATA/test_2016_flickr.en
PAIRS=${PAIRS:-5}
read -r -a precisions <<<"${PRECISIONS:-fp32 int8}"
read -r -a beams <<<"${BEAMS:-5 1}"
BIN=build/bin
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
source bench/stats.sh

"$BIN/nmt-export" --format ctranslate2 --model "$MODEL" --output "$WORK/ct2-model" 2>/dev/null
g++ -O2 -std=c++17 bench/ctranslate2/timing.cpp -I"$CT2/include" -L"$CT2/lib" -Wl,-rpath,"$CT2/lib" \
  -lctranslate2 -lsentencepiece -o "$WORK/timing"

# ours OUT PRECISION BEAM BATCHING...: one nmt-translate run; prints its sentences/s.
ours() {
  local out=$1 precision=$2 beam=$3
  shift 3
  "$BIN/nmt-translate" --model "$MODEL" --threads 2 --precision "$precision" --beam "$beam" --alpha 0 "$@" \
    <"$SRC" >"$out" 2>"$WORK/err.txt" || { cat "$WORK/err.txt" >&2; return 1; }
  sed -n 's/^translated.*: \([0-9.]*\) sentences\/s.*/\1/p' "$WORK/err.txt"
}
# theirs OUT PRECISION BEAM BATCH_SIZE BATCH_TYPE: one CTranslate2 run; prints its sentences/s.
theirs() {
  local out=$1 compute=float32
  [ "$2" = int8 ] && compute=int8
  "$WORK/timing" "$WORK/ct2-model" 2 "$compute" "$3" "$4" "$5" 0 <"$SRC" >"$out" 2>"$WORK/err.txt" ||
    { cat "$WORK/err.txt" >&2; return 1; }
  sed -n 's/.*: \([0-9.]*\) sentences\/s$/\1/p' "$WORK/err.txt"
}
bleu() { "$BIN/nmt-eval" --ref "$REF" -b --metrics bleu <"$1"; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
isa=$(grep -o 'avx512[a-z_0-9]*\|avx2\|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "Model $MODEL; CTranslate2 $(basename "$(readlink -f "$CT2/lib/libctranslate2.so")") from $CT2;"
echo "CPU $cpu ($isa); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $(date -u +%F)"
echo

echo "## Same output"
echo
ours "$WORK/ours-greedy.txt" fp32 1 >/dev/null
theirs "$WORK/ct2-greedy.txt" fp32 1 32 examples >/dev/null
python3 bench/ctranslate2/compare_lines.py "$WORK/ours-greedy.txt" "$WORK/ct2-greedy.txt" "$SRC" \
  "$BIN/nmt-align" "$MODEL" "$WORK"
ours "$WORK/ours-beam.txt" fp32 5 >/dev/null
theirs "$WORK/ct2-beam.txt" fp32 5 32 examples >/dev/null
echo
echo "Beam 5, no length penalty, fp32: BLEU ours $(bleu "$WORK/ours-beam.txt"), CTranslate2 $(bleu "$WORK/ct2-beam.txt");" \
  "equal lines $(paste -d '\t' "$WORK/ours-beam.txt" "$WORK/ct2-beam.txt" | awk -F'\t' '$1 == $2' | wc -l) of $(wc -l <"$SRC")"
echo

echo "## Speed (sentences/s, 2 threads, $PAIRS alternated pairs: median (range))"
echo
echo "| precision | beam | ours: batching | ours | CTranslate2: batching | CTranslate2 | ours / CTranslate2 (per pair: median, range) | BLEU ours / CTranslate2 |"
echo "|---|---:|---|---:|---|---:|---:|---|"
for precision in "${precisions[@]}"; do
  for beam in "${beams[@]}"; do
    # Each tool's best batching, one run per setting.
    best_ours="" best_ours_rate=0
    for setting in "default" "--batch-size 16" "--batch-size 32" "--batch-size 64"; do
      read -r -a flags <<<"${setting/default/}"
      rate=$(ours /dev/null "$precision" "$beam" "${flags[@]}")
      awk -v a="$rate" -v b="$best_ours_rate" 'BEGIN {exit !(a > b)}' && best_ours=$setting best_ours_rate=$rate
    done
    best_theirs="" best_theirs_rate=0
    for setting in "16 examples" "32 examples" "64 examples" "1024 tokens" "2048 tokens"; do
      read -r size type <<<"$setting"
      rate=$(theirs /dev/null "$precision" "$beam" "$size" "$type")
      awk -v a="$rate" -v b="$best_theirs_rate" 'BEGIN {exit !(a > b)}' && best_theirs=$setting best_theirs_rate=$rate
    done
    read -r -a ours_flags <<<"${best_ours/default/}"
    read -r size type <<<"$best_theirs"
    mine=() others=() ratios=()
    for _ in $(seq "$PAIRS"); do
      a=$(ours "$WORK/ours.txt" "$precision" "$beam" "${ours_flags[@]}")
      b=$(theirs "$WORK/ct2.txt" "$precision" "$beam" "$size" "$type")
      mine+=("$a") others+=("$b") ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')")
    done
    echo "| $precision | $beam | $best_ours | $(median_range "${mine[@]}") | $best_theirs | $(median_range "${others[@]}") |" \
      "$(median_range "${ratios[@]}") | $(bleu "$WORK/ours.txt") / $(bleu "$WORK/ct2.txt") |"
  done
done
