#!/usr/bin/env bash
# Marian reads our Marian export: models trained here, exported with nmt-export --format
# marian, translated by Marian itself (npm's bergamot-translator in Node, greedy, float32, one
# sentence per call) and by nmt-translate --beam 1: the same lines, and the same per-word
# scores to 1e-4 (tests/apps/marian_word_scores.py). nmt-import reads the
# export back: the same translations at beam 5. Three models cover what the
# export maps: one vocabulary with shared, tied embeddings and swish; a student with an SSRU
# decoder, as Firefox's; two vocabularies with separate embeddings, an untied output layer,
# relu and pre-norm as Marian computes it (model.transformer.norm pre_query). The first two
# also int8 as Firefox's models are (int8shiftAll); the first with a lexical shortlist too. Models Marian cannot compute are
# refused by name. Usage: marian_test.sh BIN_DIR SOURCE_DIR. Exits 77 (skipped) without Node
# or the reference package (scripts/fetch-marian-reference.sh fetches it).
BIN=$1
SRC=$2
REFERENCE=${NMT_MARIAN_REFERENCE:-${XDG_CACHE_HOME:-$HOME/.cache}/nmt/bergamot-translator-0.4.9}
if ! command -v node >/dev/null; then echo "SKIP: no node (Debian: apt-get install nodejs)"; exit 77; fi
if [ ! -f "$REFERENCE/package/worker/bergamot-translator-worker.wasm" ]; then
  echo "SKIP: no Marian reference in $REFERENCE (bash scripts/fetch-marian-reference.sh)"
  exit 77
fi
source "$SRC/tests/apps/test_harness.sh"  # strict mode; every failure names its line
WORK=$(mktemp -d)
cleanup() { [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }

source "$SRC/tests/apps/tiny_task.sh"
tiny_task "$WORK" 2000 100
"$BIN/nmt-spm-train" --input "$WORK/train.de" --model-prefix "$WORK/spm-de" --vocab-size 50 --model-type bpe 2>/dev/null
# 64 pieces: Marian's int8 products need vocabularies that are multiples of 8 (below).
"$BIN/nmt-spm-train" --input "$WORK/train.en" "$WORK/train.de" --model-prefix "$WORK/spm64" --vocab-size 64 \
  --model-type bpe 2>/dev/null
MARIAN_LIKE=(--set model.transformer.norm=post --set model.transformer.positions=concatenated
             --set model.transformer.decoder_start=zeros --set model.transformer.layer_norm_epsilon=1e-6)
train() {  # train RUN_DIR TARGET_SPM settings...
  local run=$1 target_spm=$2; shift 2
  "$BIN/nmt-train" --config "$SRC/configs/numbers-transformer.json" --train-src "$WORK/train.en" \
    --train-tgt "$WORK/train.de" --valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" --src-spm "${SOURCE_SPM:-$WORK/spm.model}" \
    --tgt-spm "$target_spm" --model-dir "$run" --max-steps "${STEPS:-120}" --set train.valid_every=120 --threads 1 "$@" \
    >/dev/null 2>"$WORK/train.log" || { cat "$WORK/train.log" >&2; fail "training $run failed"; }
}

# Same greedy output from Marian and from us, line by line; the differing lines shown.
compare_with_marian() {  # compare_with_marian RUN_DIR EXPORT_DIR SOURCE_VOCAB [TARGET_VOCAB]
  local run=$1 export=$2
  "$BIN/nmt-export" --format marian -m "$run/best.pt" -o "$export" >/dev/null 2>"$WORK/export.log" ||
    { cat "$WORK/export.log" >&2; fail "nmt-export --format marian of $run failed"; }
  "$BIN/nmt-translate" -m "$run/best.pt" --beam 1 --threads 2 <"$WORK/valid.en" >"$export.ours" 2>/dev/null
  node "$SRC/tests/apps/marian_reference.js" "$REFERENCE/package" "$export/model.bin" "${@:3}" \
    <"$WORK/valid.en" >"$export.marian" 2>"$WORK/marian.log" || { cat "$WORK/marian.log" >&2; fail "Marian refused $export"; }
  [ "$(wc -l <"$export.marian")" -eq 100 ] || fail "Marian translated $(wc -l <"$export.marian") of 100 lines"
  if ! cmp -s "$export.ours" "$export.marian"; then
    diff "$export.ours" "$export.marian" >"$WORK/diff" || true
    head -20 "$WORK/diff" >&2
    fail "Marian and nmt-translate --beam 1 differ on $(diff "$export.ours" "$export.marian" | grep -c '^<') of 100 lines ($run)"
  fi
  grep -q "chtausend\|hundert" "$export.ours" || fail "the model of $run translates nothing like numbers"
  # Read back with nmt-import: greedy, the same translations as the model it came from. At beam 5
  # nearly so: the import computes Marian's softmax, which has no <pad> or <s> (the export's bias
  # of -1e9), where ours gives them the little mass a model leaves them, so near-ties may turn.
  "$BIN/nmt-import" --format marian -m "$export/model.bin" --vocab "${@:3}" -o "$export.pt" >/dev/null 2>"$WORK/import.log" ||
    { cat "$WORK/import.log" >&2; fail "nmt-import of $export failed"; }
  "$BIN/nmt-translate" -m "$export.pt" --beam 1 --threads 1 <"$WORK/valid.en" >"$export.imported" 2>/dev/null
  cmp -s "$export.ours" "$export.imported" || fail "nmt-import of $export translates otherwise than $run/best.pt (greedy)"
  # Marian's per-word scores (its pieces' log-probabilities averaged per word) are the
  # import's: both without <pad> and <s> (the original gives them the little mass it learned
  # to, which shifts every log-probability by as much).
  MARIAN_WORD_SCORES=1 node "$SRC/tests/apps/marian_reference.js" "$REFERENCE/package" "$export/model.bin" "${@:3}" \
    <"$WORK/valid.en" >"$export.marian-scores" 2>"$WORK/marian.log" || { cat "$WORK/marian.log" >&2; fail "Marian's scores of $export"; }
  "$BIN/nmt-translate" -m "$export.pt" --beam 1 --threads 2 --format jsonl <"$WORK/valid.en" >"$export.ours.jsonl" 2>/dev/null
  python3 "$SRC/tests/apps/marian_word_scores.py" "$export.ours.jsonl" "$export.marian" "$export.marian-scores" \
    >"$WORK/scores.log" || { cat "$WORK/scores.log" >&2; fail "Marian's per-word scores differ from ours ($run)"; }
  echo "marian_test: $run: $(tail -1 "$WORK/scores.log")"
  "$BIN/nmt-import" --format marian -m "$export/model.npz" --vocab "${@:3}" -o "$export-npz.pt" >/dev/null 2>&1 ||
    fail "nmt-import of $export/model.npz failed"
  "$BIN/nmt-translate" -m "$export-npz.pt" --beam 1 --threads 1 <"$WORK/valid.en" >"$export.imported-npz" 2>/dev/null
  cmp -s "$export.ours" "$export.imported-npz" || fail "nmt-import of $export/model.npz translates otherwise (greedy)"
  "$BIN/nmt-translate" -m "$run/best.pt" --beam 5 --threads 1 <"$WORK/valid.en" >"$export.ours5" 2>/dev/null
  "$BIN/nmt-translate" -m "$export.pt" --beam 5 --threads 1 <"$WORK/valid.en" >"$export.imported5" 2>/dev/null
  local differ
  differ=$( (diff "$export.ours5" "$export.imported5" || true) | grep -c '^<' || true)
  echo "marian_test: $run: beam 5 after import: $((100 - differ)) of 100 lines as before"
  [ "$differ" -le 5 ] || fail "nmt-import of $export: $differ of 100 lines differ at beam 5"
}

STEPS=300 SOURCE_SPM="$WORK/spm64.model" train "$WORK/shared" "$WORK/spm64.model" "${MARIAN_LIKE[@]}" \
  --set model.transformer.ffn_activation=swish
compare_with_marian "$WORK/shared" "$WORK/shared-marian" "$WORK/shared-marian/vocab.spm"
# grep without -q reads to the end: with -q it may leave at the first match, tr then dies of
# SIGPIPE, and under pipefail the pipeline fails although the line is there.
tr -d '\0' <"$WORK/shared-marian/model.bin" | grep -a "^tied-embeddings-all: true" >/dev/null ||
  fail "the shared model's special:model.yml does not say tied-embeddings-all: true"

# A lexical shortlist out and in: nmt-shortlist's, exported as Marian's binary lex.s2t.bin,
# decoded over by Marian and, read back by nmt-import --shortlist (each source piece also its
# own candidate, as Marian does with one vocabulary), by ours. Marian also pads a sentence's
# candidates to a multiple of 8 with the lowest ids left (for intgemm), which ours does not, so
# a line may turn on that. The shortlist is kept small enough to change many lines.
"$BIN/nmt-shortlist" -m "$WORK/shared/best.pt" --src "$WORK/train.en" --tgt "$WORK/train.de" --best 3 --frequent 4 \
  -o "$WORK/shared.shortlist.tsv" >/dev/null 2>&1 || fail "nmt-shortlist for the shared model failed"
"$BIN/nmt-export" --format marian -m "$WORK/shared/best.pt" --shortlist "$WORK/shared.shortlist.tsv" \
  -o "$WORK/shared-lex" >/dev/null 2>"$WORK/export.log" || { cat "$WORK/export.log" >&2; fail "nmt-export --shortlist failed"; }
grep -q "lex.s2t.bin" "$WORK/shared-lex/decoder.yml" || fail "decoder.yml does not name the shortlist"
MARIAN_SHORTLIST="$WORK/shared-lex/lex.s2t.bin" node "$SRC/tests/apps/marian_reference.js" "$REFERENCE/package" \
  "$WORK/shared-lex/model.bin" "$WORK/shared-lex/vocab.spm" <"$WORK/valid.en" >"$WORK/shared-lex.marian" 2>"$WORK/marian.log" ||
  { cat "$WORK/marian.log" >&2; fail "Marian refused the exported shortlist"; }
"$BIN/nmt-import" --format marian -m "$WORK/shared-lex/model.bin" --vocab "$WORK/shared-lex/vocab.spm" \
  --shortlist "$WORK/shared-lex/lex.s2t.bin" -o "$WORK/shared-lex.pt" >/dev/null 2>"$WORK/import.log" ||
  { cat "$WORK/import.log" >&2; fail "nmt-import --shortlist failed"; }
"$BIN/nmt-translate" -m "$WORK/shared-lex.pt" --shortlist "$WORK/shared-lex.shortlist.tsv" --beam 1 --threads 2 \
  <"$WORK/valid.en" >"$WORK/shared-lex.ours" 2>/dev/null
same=$(paste -d '\t' "$WORK/shared-lex.marian" "$WORK/shared-lex.ours" | awk -F '\t' '$1 == $2' | wc -l)
changed=$(paste -d '\t' "$WORK/shared-lex.marian" "$WORK/shared-marian.marian" | awk -F '\t' '$1 != $2' | wc -l)
echo "marian_test: a shortlist: Marian and ours agree on $same of 100 lines; it changed $changed of Marian's 100"
[ "$same" -ge 95 ] || fail "Marian and ours with the same shortlist agree on only $same of 100 lines"
[ "$changed" -ge 10 ] || fail "the shortlist changed only $changed of Marian's lines: too weak a test"
# Not Marian's binary form, so read as its text form, whose lines ours are not.
expect_error 'shared.shortlist.tsv:1: not "target source probability"' "$BIN/nmt-import" --format marian \
  -m "$WORK/shared-lex/model.bin" --vocab "$WORK/shared-lex/vocab.spm" --shortlist "$WORK/shared.shortlist.tsv" \
  -o "$WORK/refused.pt"
[ ! -e "$WORK/refused.pt" ] || fail "a refused shortlist left the import's checkpoint"
# Marian's text form (lex.s2t: "target source probability" lines, as extract_lex writes them;
# gzipped, as often shipped): the same lists as text, </s> listing the frequent pieces as the
# export does, cut as Marian would with --shortlist FILE 4 4 (every list whole), read back as
# the binary file is.
awk -F '\t' '/^\[/ {section = $0; next} section == "[always]" {print $1, "</s>", 1}
  section == "[translations]" {print $2, $1, $3}' "$WORK/shared.shortlist.tsv" | gzip >"$WORK/lex.s2t.gz"
"$BIN/nmt-import" --format marian -m "$WORK/shared-lex/model.bin" --vocab "$WORK/shared-lex/vocab.spm" \
  --shortlist "$WORK/lex.s2t.gz" --shortlist-cut 4 4 -o "$WORK/text-lex.pt" >/dev/null 2>"$WORK/import.log" ||
  { cat "$WORK/import.log" >&2; fail "nmt-import of a text shortlist failed"; }
cmp -s <(sed -n '/^\[always\]/,$p' "$WORK/shared-lex.shortlist.tsv") <(sed -n '/^\[always\]/,$p' "$WORK/text-lex.shortlist.tsv") ||
  fail "the text shortlist read back other lists than the binary one"
[ "$(sed -n '/^\[translations\]/,$p' "$WORK/text-lex.shortlist.tsv" | wc -l)" -gt 100 ] ||
  fail "the text shortlist read back almost nothing"
expect_error "binary shortlist: its header says" "$BIN/nmt-import" --format marian -m "$WORK/shared-lex/model.bin" \
  --vocab "$WORK/shared-lex/vocab.spm" --shortlist "$WORK/shared-lex/lex.s2t.bin" --shortlist-cut 4 4 \
  -o "$WORK/refused.pt"
# A shortlist that cannot be written leaves no checkpoint, and a checkpoint that cannot be
# written leaves no shortlist (nor its temporary).
expect_error "cannot write" "$BIN/nmt-import" --format marian -m "$WORK/shared-lex/model.bin" \
  --vocab "$WORK/shared-lex/vocab.spm" --shortlist "$WORK/shared-lex/lex.s2t.bin" \
  -o "$WORK/unwritten.pt" --shortlist-output "$WORK/no-such-folder/unwritten.shortlist.tsv"
expect_error "cannot write" "$BIN/nmt-import" --format marian -m "$WORK/shared-lex/model.bin" \
  --vocab "$WORK/shared-lex/vocab.spm" --shortlist "$WORK/shared-lex/lex.s2t.bin" \
  -o "$WORK/no-such-folder/unwritten.pt" --shortlist-output "$WORK/unwritten.shortlist.tsv"
left=$(find "$WORK" -maxdepth 1 -name '*unwritten*')
[ -z "$left" ] || fail "a checkpoint that failed left its shortlist: $left"

# A student as Firefox's are: an SSRU decoder (Marian's transformer-decoder-autoreg rnn, dec-cell ssru).
STEPS=300 SOURCE_SPM="$WORK/spm64.model" train "$WORK/student" "$WORK/spm64.model" "${MARIAN_LIKE[@]}" \
  --set model.transformer.decoder_autoreg=ssru
compare_with_marian "$WORK/student" "$WORK/student-marian" "$WORK/student-marian/vocab.spm"
tr -d '\0' <"$WORK/student-marian/model.bin" | grep -a "^dec-cell: ssru" >/dev/null ||
  fail "the student's special:model.yml does not say dec-cell: ssru"

# Pre-norm as Marian computes it: queries normalized, keys and values not (transformer-preprocess n).
train "$WORK/separate" "$WORK/spm-de.model" "${MARIAN_LIKE[@]}" --set model.transformer.share_embeddings=false \
  --set model.transformer.tie_output=false --set model.transformer.norm=pre_query
compare_with_marian "$WORK/separate" "$WORK/separate-marian" "$WORK/separate-marian/source.spm" "$WORK/separate-marian/target.spm"
[ ! -e "$WORK/separate-marian/vocab.spm" ] || fail "two vocabularies exported as one"
tr -d '\0' <"$WORK/separate-marian/model.bin" | grep -a "^transformer-preprocess: n" >/dev/null ||
  fail "the pre-norm model's special:model.yml does not say transformer-preprocess: n"

# int8 as Firefox's models are: Marian multiplies in int8 (int8shiftAll) with the export's
# intgemm8 matrices; its import (dequantized) translates greedy in float32. Not the same
# arithmetic (Marian quantizes activations per tensor, shifted), so lines may differ; a
# wrong layout would leave few alike.
compare_int8_with_marian() {  # compare_int8_with_marian RUN_NAME (shared or student, exported above)
  local name=$1
  "$BIN/nmt-export" --format marian --int8-weights -m "$WORK/$name/best.pt" -o "$WORK/$name-int8" >/dev/null 2>&1 ||
    fail "nmt-export --int8-weights of $name failed"
  MARIAN_GEMM_PRECISION=int8shiftAll node "$SRC/tests/apps/marian_reference.js" "$REFERENCE/package" \
    "$WORK/$name-int8/model.bin" "$WORK/$name-int8/vocab.spm" <"$WORK/valid.en" >"$WORK/$name-int8.marian" 2>"$WORK/marian.log" ||
    { cat "$WORK/marian.log" >&2; fail "Marian refused the int8 export of $name"; }
  "$BIN/nmt-import" --format marian -m "$WORK/$name-int8/model.bin" --vocab "$WORK/$name-int8/vocab.spm" \
    -o "$WORK/$name-int8.pt" >/dev/null 2>&1 || fail "nmt-import of the int8 export of $name failed"
  "$BIN/nmt-translate" -m "$WORK/$name-int8.pt" --beam 1 --threads 1 <"$WORK/valid.en" >"$WORK/$name-int8.ours" 2>/dev/null
  local same alike
  same=$(paste -d '\t' "$WORK/$name-int8.marian" "$WORK/$name-int8.ours" | awk -F '\t' '$1 == $2' | wc -l)
  alike=$(paste -d '\t' "$WORK/$name-marian.ours" "$WORK/$name-int8.ours" | awk -F '\t' '$1 == $2' | wc -l)
  echo "marian_test: int8 $name: Marian (int8shiftAll) and the dequantized import agree on $same of 100 lines; the import and the float32 model on $alike"
  [ "$same" -ge 90 ] || fail "Marian's int8 and the dequantized import of $name agree on only $same of 100 lines"
}
compare_int8_with_marian shared
compare_int8_with_marian student
expect_error "the source vocabulary is 60; Marian multiplies int8 matrices whose sides are multiples of 8" \
  "$BIN/nmt-export" --format marian --int8-weights -m "$WORK/separate/best.pt" -o "$WORK/int8-refused"

# An imported model is an ordinary checkpoint: it fine-tunes (--init-from, its own model section),
# shows its attention, and exports to CTranslate2 with its output bias.
"$BIN/nmt-train" --init-from "$WORK/shared-marian.pt" --train-src "$WORK/train.en" --train-tgt "$WORK/train.de" \
  --valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" --model-dir "$WORK/fine-tuned" --max-steps 4 \
  --set train.valid_every=4 --threads 1 >/dev/null 2>"$WORK/fine-tune.log" ||
  { cat "$WORK/fine-tune.log" >&2; fail "nmt-train --init-from an imported model failed"; }
grep -q "^validation @ step 4 " "$WORK/fine-tune.log" || fail "the fine-tuned imported model was not validated"
head -3 "$WORK/valid.en" | "$BIN/nmt-align" -m "$WORK/shared-marian.pt" >"$WORK/align.jsonl" 2>/dev/null
[ "$(grep -c '"attention"' "$WORK/align.jsonl")" -eq 3 ] || fail "nmt-align of an imported model gave no attention"
"$BIN/nmt-export" --format ctranslate2 -m "$WORK/shared-marian.pt" -o "$WORK/imported-ct2" >/dev/null 2>&1 ||
  fail "nmt-export --format ctranslate2 of an imported model failed"
grep -aq "decoder/projection/bias" "$WORK/imported-ct2/model.bin" || fail "the CTranslate2 export lost the output bias"
grep -q "target.spm" "$WORK/separate-marian/decoder.yml" || fail "decoder.yml does not name target.spm"

# What Marian cannot compute is refused by name, and nothing is written.
STEPS=2 train "$WORK/ours" "$WORK/spm.model"
expect_error 'norm "pre"' "$BIN/nmt-export" --format marian -m "$WORK/ours/best.pt" -o "$WORK/refused"
STEPS=2 train "$WORK/interleaved" "$WORK/spm.model" "${MARIAN_LIKE[@]}" --set model.transformer.positions=interleaved
expect_error 'positions "interleaved"' "$BIN/nmt-export" --format marian -m "$WORK/interleaved/best.pt" -o "$WORK/refused"
[ ! -e "$WORK/refused" ] || fail "a refused export left $WORK/refused"
echo "marian_test: Marian's greedy output equals ours on 3 x 100 lines, imports translate as their originals; refusals named"
