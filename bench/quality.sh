#!/usr/bin/env bash
# What a preset reaches in a fixed time: trains configs/ARCH.json from scratch on Multi30k
# de->en with its own joint 8k BPE tokenizer, 2 threads, for MINUTES of wall time; then
# translates test_2016_flickr.de with beam 5 (alpha 0.6) from best.pt and, when the preset
# averages checkpoints (train.average_last), from averaged.pt; prints cased and lowercased
# BLEU and chrF2 for each. The run is kept in OUT (default work/quality/ARCH-MINUTES).
# Usage: bench/quality.sh ARCH [MINUTES] [-- extra nmt-train flags]   (default 60 minutes)
# EVAL_ONLY=1 skips training and scores the run already in OUT.
# Lowercasing is GNU sed's \L in a UTF-8 locale, close to sacreBLEU's -lc.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/quality.sh ARCH [MINUTES] [-- nmt-train flags]" >&2; exit 2; }
ARCH=$1
MINUTES=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
DATA=${MULTI30K:-../shared/data/multi30k}
OUT=${OUT:-work/quality/$ARCH-$MINUTES}
if [ "${EVAL_ONLY:-0}" != 1 ]; then
  [ -e "$OUT/run" ] && { echo "bench/quality.sh: $OUT/run exists; move it away or set OUT" >&2; exit 1; }
  mkdir -p "$OUT"
  echo "preset configs/$ARCH.json${*:+ with $*}, $MINUTES minutes, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, $(date -u +%F)" | tee "$OUT/summary.txt"
  build/bin/nmt-spm-train --input "$DATA/train.de" "$DATA/train.en" --model-prefix "$OUT/spm" \
    --vocab-size 8000 --model-type bpe >/dev/null 2>&1
  build/bin/nmt-train --config "configs/$ARCH.json" --arch "$ARCH" \
    --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" \
    --src-spm "$OUT/spm.model" --tgt-spm "$OUT/spm.model" --model-dir "$OUT/run" --max-time "$MINUTES" \
    --threads 2 "$@" 2>"$OUT/train.log" >/dev/null
fi
tail -1 "$OUT/train.log" | tee -a "$OUT/summary.txt"
grep '"type":"progress"' "$OUT/run/train.jsonl" | tail -1 |
  sed 's/.*"elapsed_seconds":\([0-9.]*\).*"step":\([0-9]*\).*/last progress report: step \2 after \1 s/' | tee -a "$OUT/summary.txt"
grep -E '"type":"validation"' "$OUT/run/train.jsonl" |
  sed 's/.*"step":\([0-9]*\).*/\1/' | tr '\n' ' ' | sed 's/^/validated at steps: /' | tee -a "$OUT/summary.txt"
echo | tee -a "$OUT/summary.txt"
grep -o '"bleu":[0-9.]*' "$OUT/run/train.jsonl" | cut -d: -f2 | tr '\n' ' ' | sed 's/^/valid BLEU: /' |
  tee -a "$OUT/summary.txt"
echo | tee -a "$OUT/summary.txt"
lower() { LC_ALL=C.UTF-8 sed 's/.*/\L&/' "$@"; }
lower "$DATA/test_2016_flickr.en" >"$OUT/ref.lc"
echo "| checkpoint | BLEU | BLEU lowercased | chrF2 | chrF2 lowercased |" | tee -a "$OUT/summary.txt"
echo "|---|---:|---:|---:|---:|" | tee -a "$OUT/summary.txt"
for name in best averaged; do
  model=$OUT/run/$name.pt
  [ -f "$model" ] || continue
  build/bin/nmt-translate --model "$model" --beam 5 --alpha 0.6 --threads 2 --quiet \
    <"$DATA/test_2016_flickr.de" >"$OUT/$name.en"
  cased=($(build/bin/nmt-eval --ref "$DATA/test_2016_flickr.en" -b <"$OUT/$name.en"))
  lowercased=($(lower "$OUT/$name.en" | build/bin/nmt-eval --ref "$OUT/ref.lc" -b))
  echo "| $name.pt | ${cased[0]} | ${lowercased[0]} | ${cased[1]} | ${lowercased[1]} |" | tee -a "$OUT/summary.txt"
done
