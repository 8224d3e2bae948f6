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

g++ -O2 -std=c++17 bench/ctranslate2/timing.cpp -I"$CT2/include" -L"$CT2/lib" -Wl,-rpath,"$CT2/lib" \
  -lctranslate2 -lsentencepiece -o "$WORK/timing"

# ours OUT PRECISION BEAM BATCHING...: one nmt-translate run of $MODEL on $SRC; prints its sentences/s.
ours() {
  local out=$1 precision=$2 beam=$3
  shift 3
  "$BIN/nmt-translate" --model "$MODEL" --threads 2 --precision "$precision" --beam "$beam" --alpha 0 "$@" \
    <"$SRC" >"$out" 2>"$WORK/err.txt" || { cat "$WORK/err.txt" >&2; return 1; }
  sed -n 's/^translated.*: \([0-9.]*\) sentences\/s.*/\1/p' "$WORK/err.txt"
}
# theirs OUT PRECISION BEAM BATCH_SIZE BATCH_TYPE [ISA]: one CTranslate2 run of $CT2_MODEL on
# $SRC, with its own kernels' instruction set ISA (CT2_FORCE_CPU_ISA; by default its own choice,
# AVX2 on CPUs with AVX-512); prints its sentences/s.
theirs() {
  local out=$1 compute=float32
  [ "$2" = int8 ] && compute=int8
  env ${6:+CT2_FORCE_CPU_ISA=$6} "$WORK/timing" "$CT2_MODEL" 2 "$compute" "$3" "$4" "$5" 0 <"$SRC" >"$out" 2>"$WORK/err.txt" ||
    { cat "$WORK/err.txt" >&2; return 1; }
  sed -n 's/.*: \([0-9.]*\) sentences\/s$/\1/p' "$WORK/err.txt"
}
# bleu OUT: BLEU of OUT against $REF (or the metric $METRIC names).
bleu() { "$BIN/nmt-eval" --ref "$REF" -b --metrics "${METRIC:-bleu}" <"$1"; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
isa=$(grep -o 'avx512[a-z_0-9]*\|avx2\|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "Model $MODEL; CTranslate2 $(basename "$(readlink -f "$CT2/lib/libctranslate2.so")") from $CT2;"
echo "CPU $cpu ($isa); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $(date -u +%F)"
echo

# same_output NAME: exports $MODEL, then compares greedy and beam 5 (fp32) on $SRC against $REF.
same_output() {
  CT2_MODEL=$WORK/ct2-$1
  "$BIN/nmt-export" --format ctranslate2 --model "$MODEL" --output "$CT2_MODEL" 2>/dev/null
  ours "$WORK/ours-greedy.txt" fp32 1 >/dev/null
  theirs "$WORK/ct2-greedy.txt" fp32 1 32 examples >/dev/null
  python3 bench/ctranslate2/compare_lines.py "$WORK/ours-greedy.txt" "$WORK/ct2-greedy.txt" "$SRC" \
    "$BIN/nmt-align" "$MODEL" "$WORK"
  ours "$WORK/ours-beam.txt" fp32 5 >/dev/null
  theirs "$WORK/ct2-beam.txt" fp32 5 32 examples >/dev/null
  echo
  echo "Beam 5, no length penalty, fp32: ${METRIC:-bleu} ours $(bleu "$WORK/ours-beam.txt"), CTranslate2 $(bleu "$WORK/ct2-beam.txt");" \
    "equal lines $(paste -d '\t' "$WORK/ours-beam.txt" "$WORK/ct2-beam.txt" | awk -F'\t' '$1 == $2' | wc -l) of $(wc -l <"$SRC")"
  echo
}

echo "## Same output: $(basename "$MODEL") on test_2016_flickr"
echo
same_output shared

# A model with the options the shared one lacks: post-norm, separate source and target
# vocabularies and embeddings, an output layer of its own; trained here in a minute on the
# bundled number-words task (en->de).
tiny=$WORK/tiny
mkdir -p "$tiny"
"$BIN/nmt-spm-train" --input data/numbers/train.en --model-prefix "$tiny/en" --vocab-size 80 --model-type bpe 2>/dev/null
"$BIN/nmt-spm-train" --input data/numbers/train.de --model-prefix "$tiny/de" --vocab-size 100 --model-type bpe 2>/dev/null
"$BIN/nmt-train" --config configs/numbers-transformer.json --train-src data/numbers/train.en \
  --train-tgt data/numbers/train.de --valid-src data/numbers/valid.en --valid-tgt data/numbers/valid.de \
  --src-spm "$tiny/en.model" --tgt-spm "$tiny/de.model" --model-dir "$tiny/run" --max-steps 400 --threads 2 \
  --set model.transformer.norm=post --set model.transformer.share_embeddings=false \
  --set model.transformer.tie_output=false >/dev/null 2>&1
echo "## Same output: post-norm, separate vocabularies and embeddings, untied output layer (numbers en->de, 500 lines)"
echo
# One-word outputs: chrF (BLEU is 0 on references under 4 words).
(MODEL=$tiny/run/best.pt SRC=data/numbers/test.en REF=data/numbers/test.de METRIC=chrf same_output tiny)

echo "## Speed (sentences/s, 2 threads, $PAIRS alternated pairs: median (range))"
echo
echo "CTranslate2's CPU set-up: $(CT2_VERBOSE=1 "$WORK/timing" "$CT2_MODEL" 2 float32 1 32 examples 0 </dev/null 2>&1 |
  sed -n 's/.*\(Selected ISA\|SGEMM backend\|GEMM_S8 backend\)/\1/p' | paste -sd ';')"
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
    read -r size type <<<"$best_theirs"
    ct2_isa=""  # CTranslate2's kernels on AVX-512 too, where the CPU has it and that is faster
    if grep -qw avx512f /proc/cpuinfo; then
      rate=$(theirs /dev/null "$precision" "$beam" "$size" "$type" AVX512)
      awk -v a="$rate" -v b="$best_theirs_rate" 'BEGIN {exit !(a > b)}' && ct2_isa=AVX512 best_theirs="$best_theirs, AVX512"
    fi
    read -r -a ours_flags <<<"${best_ours/default/}"
    mine=() others=() ratios=()
    for _ in $(seq "$PAIRS"); do
      a=$(ours "$WORK/ours.txt" "$precision" "$beam" "${ours_flags[@]}")
      b=$(theirs "$WORK/ct2.txt" "$precision" "$beam" "$size" "$type" "$ct2_isa")
      mine+=("$a") others+=("$b") ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')")
    done
    echo "| $precision | $beam | $best_ours | $(median_range "${mine[@]}") | $best_theirs | $(median_range "${others[@]}") |" \
      "$(median_range "${ratios[@]}") | $(bleu "$WORK/ours.txt") / $(bleu "$WORK/ct2.txt") |"
  done
done
