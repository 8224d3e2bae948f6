#!/usr/bin/env bash
# Marian itself against our tools on a model trained with Marian's choices (docs/marian.md): MODEL
# is exported with nmt-export --format marian (float32, and --int8-weights as Firefox's models
# are), then Multi30k test_2016_flickr (de->en) is translated greedy, one sentence per call, by
# Marian (npm's bergamot-translator under Node: tests/apps/marian_reference.js) and by
# nmt-translate --beam 1:
#  1. float32: the lines that are identical; each differing line with the first piece where the
#     two part and the log-probabilities our model gives both there (a near-tie shows a gap
#     near 0); BLEU and chrF of both;
#  2. per-word scores where the lines are identical: Marian's (each word's pieces'
#     log-probabilities averaged, </s> not counted, as bergamot's quality scores) against ours
#     from nmt-translate --format jsonl, grouped the same way: the largest difference and how
#     many words differ by more than 1e-4;
#  3. int8: Marian multiplying in int8 (int8shiftAll) with the --int8-weights export, against
#     nmt-import of that export (dequantized, float32) and against our own --precision int8 of
#     MODEL: identical lines and BLEU of each.
# Usage: bench/marian_compare.sh MODEL.pt   Prints Markdown. Env: MULTI30K (data folder), LINES
# (the first N lines only; default all), NMT_MARIAN_REFERENCE (the npm package's folder).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$(realpath "$1")
DATA=${MULTI30K:-../shared/data/multi30k}
REFERENCE=${NMT_MARIAN_REFERENCE:-${XDG_CACHE_HOME:-$HOME/.cache}/nmt/bergamot-translator-0.4.9}
BIN=build/bin
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
head -n "${LINES:-1000000}" "$DATA/test_2016_flickr.de" >"$WORK/source"
head -n "${LINES:-1000000}" "$DATA/test_2016_flickr.en" >"$WORK/reference"
lines=$(wc -l <"$WORK/source")

"$BIN/nmt-export" --format marian -m "$MODEL" -o "$WORK/float32" >/dev/null
"$BIN/nmt-export" --format marian --int8-weights -m "$MODEL" -o "$WORK/int8" >/dev/null
vocabularies() {  # the export's vocabulary files, source first
  if [ -f "$1/vocab.spm" ]; then echo "$1/vocab.spm"; else echo "$1/source.spm $1/target.spm"; fi
}
marian() {  # marian EXPORT_DIR OUTPUT [ENV=VALUE ...]
  local export=$1 output=$2
  shift 2
  # shellcheck disable=SC2046  # the vocabulary paths are split on purpose
  env "$@" node tests/apps/marian_reference.js "$REFERENCE/package" "$export/model.bin" $(vocabularies "$export") \
    <"$WORK/source" >"$output"
}
seconds() { local start=$SECONDS; "$@"; echo $((SECONDS - start)); }

marian_float32_s=$(seconds marian "$WORK/float32" "$WORK/marian.float32")
marian "$WORK/float32" "$WORK/marian.scores" MARIAN_WORD_SCORES=1
marian_int8_s=$(seconds marian "$WORK/int8" "$WORK/marian.int8" MARIAN_GEMM_PRECISION=int8shiftAll)
"$BIN/nmt-translate" -m "$MODEL" --beam 1 --format jsonl -i "$WORK/source" -o "$WORK/ours.jsonl" 2>/dev/null
"$BIN/nmt-translate" -m "$MODEL" --beam 1 -i "$WORK/source" -o "$WORK/ours.float32" 2>/dev/null
"$BIN/nmt-translate" -m "$MODEL" --beam 1 --precision int8 -i "$WORK/source" -o "$WORK/ours.int8" 2>/dev/null
"$BIN/nmt-import" --format marian -m "$WORK/int8/model.bin" --vocab $(vocabularies "$WORK/int8") \
  -o "$WORK/imported-int8.pt" >/dev/null 2>&1
"$BIN/nmt-translate" -m "$WORK/imported-int8.pt" --beam 1 -i "$WORK/source" -o "$WORK/imported.int8" 2>/dev/null

# Marian's line as a forced prefix where it differs from ours (empty elsewhere): our model's
# log-probabilities of Marian's pieces, to show where the two part.
paste -d '\t' "$WORK/ours.float32" "$WORK/marian.float32" | awk -F '\t' '{print ($1 == $2 ? "" : $2)}' >"$WORK/prefixes"
"$BIN/nmt-translate" -m "$MODEL" --beam 1 --format jsonl --prefix "$WORK/prefixes" -i "$WORK/source" \
  -o "$WORK/forced.jsonl" 2>/dev/null

same() { paste -d '\t' "$1" "$2" | awk -F '\t' '$1 == $2' | wc -l; }
scores() { "$BIN/nmt-eval" --ref "$WORK/reference" --score-only <"$1" | paste -sd ' ' | awk '{printf "%.2f / %.2f", $1, $2}'; }

echo "Model: $MODEL; $lines lines of test_2016_flickr; greedy, one sentence per call"
echo
echo "| what | identical lines | BLEU / chrF |"
echo "|---|---:|---:|"
echo "| ours, fp32 (nmt-translate --beam 1) | - | $(scores "$WORK/ours.float32") |"
echo "| Marian, float32 (${marian_float32_s} s) | $(same "$WORK/ours.float32" "$WORK/marian.float32") of $lines with ours | $(scores "$WORK/marian.float32") |"
echo "| Marian, int8shiftAll of the --int8-weights export (${marian_int8_s} s) | $(same "$WORK/ours.float32" "$WORK/marian.int8") with ours fp32 | $(scores "$WORK/marian.int8") |"
echo "| ours, import of the --int8-weights export (dequantized, float32) | $(same "$WORK/imported.int8" "$WORK/marian.int8") with Marian int8 | $(scores "$WORK/imported.int8") |"
echo "| ours, --precision int8 | $(same "$WORK/ours.int8" "$WORK/marian.int8") with Marian int8 | $(scores "$WORK/ours.int8") |"
echo
# Per-word scores where the lines are identical (tests/apps/marian_word_scores.py), then the
# differing lines with where they part, from our jsonl and the forced run.
python3 tests/apps/marian_word_scores.py "$WORK/ours.jsonl" "$WORK/marian.float32" "$WORK/marian.scores" || true
echo
python3 - "$WORK/ours.jsonl" "$WORK/marian.float32" "$WORK/forced.jsonl" <<'EOF'
import json, sys
ours = [json.loads(line)["hypotheses"][0] for line in open(sys.argv[1], encoding="utf-8")]
marian_text = open(sys.argv[2], encoding="utf-8").read().split("\n")
forced = [json.loads(line)["hypotheses"][0] for line in open(sys.argv[3], encoding="utf-8")]
shown = 0
for i, hypothesis in enumerate(ours):
    if hypothesis["text"] == marian_text[i] or shown == 20:
        continue
    shown += 1
    pieces, log_probs, theirs = hypothesis["tokens"], hypothesis["token_log_probs"], forced[i]
    k = 0
    while k < min(len(pieces), len(theirs["tokens"])) and pieces[k] == theirs["tokens"][k]:
        k += 1
    if k < min(len(pieces), len(theirs["tokens"])):
        where = (f'piece {k + 1}: ours "{pieces[k]}" {log_probs[k]:.5f}, Marian\'s "{theirs["tokens"][k]}" '
                 f'{theirs["token_log_probs"][k]:.5f} (gap {log_probs[k] - theirs["token_log_probs"][k]:.2e})')
    else:
        where = "one is a prefix of the other"
    print(f'- line {i + 1}: ours "{hypothesis["text"]}"; Marian "{marian_text[i]}"; {where}')
EOF
