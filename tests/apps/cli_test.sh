#!/usr/bin/env bash
# End-to-end check of the tools as a user runs them: tokenizer, training, translation,
# scoring, attention export and the HTML page (in headless Chromium when installed),
# plus the error paths. Usage: cli_test.sh BIN_DIR SOURCE_DIR
BIN=$1
SRC=$2
source "$SRC/tests/apps/test_harness.sh"  # strict mode; every failure names its line
WORK=$(mktemp -d)
cleanup() { rm -rf "$WORK"; }

source "$SRC/tests/apps/tiny_task.sh"
tiny_task "$WORK" 400 20

# nmt-spm-train makes the prefix's folder before it trains, refuses at once one it cannot
# make, and takes away what it made when the training fails.
"$BIN/nmt-spm-train" --input "$WORK/train.en" "$WORK/train.de" --model-prefix "$WORK/new/folder/spm" --vocab-size 60 \
  >/dev/null 2>&1 || fail "nmt-spm-train into a folder that does not exist yet failed"
[ -s "$WORK/new/folder/spm.model" ] && [ -s "$WORK/new/folder/spm.vocab" ] || fail "no tokenizer in the new folder"
expect_error "cannot create the folder $WORK/train.en/sub of $WORK/train.en/sub/spm: Not a directory" \
  "$BIN/nmt-spm-train" --input "$WORK/train.en" --model-prefix "$WORK/train.en/sub/spm" --vocab-size 60
grep -q "trainer_interface\|LOG(" "$WORK/err" && fail "nmt-spm-train trained before refusing the folder"
expect_error "nmt-spm-train: error: " \
  "$BIN/nmt-spm-train" --input "$WORK/train.en" --model-prefix "$WORK/gone/spm" --vocab-size 5000
[ ! -e "$WORK/gone" ] || fail "a failed nmt-spm-train left the folder it made"
cat >"$WORK/tiny.json" <<'JSON'
{"model": {"arch": "transformer", "d_model": 32, "heads": 2, "ffn_dim": 64, "encoder_layers": 2, "decoder_layers": 2},
 "train": {"batch_tokens": 400, "schedule": "constant", "learning_rate": 0.003, "valid_every": 10, "log_every": 5,
           "valid_max_sentences": 5}}
JSON
COMMON=(--valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model")
TRAIN=(--train-src "$WORK/train.en" --train-tgt "$WORK/train.de" "${COMMON[@]}")
"$BIN/nmt-train" --config "$WORK/tiny.json" "${TRAIN[@]}" --model-dir "$WORK/run" --max-steps 20 --threads 1 \
  --verbose 2>"$WORK/train.log" >/dev/null
grep -q "step     20" "$WORK/train.log" || fail "no progress line"
grep -qE "^nmt-train: linear path: (fp32_torch|fp32_onednn|bf16_mixed)$" "$WORK/train.log" || fail "nmt-train --verbose: no training path"
grep -q "^nmt-train: threads: 1 (LibTorch intra-op)$" "$WORK/train.log" || fail "nmt-train --verbose: no threads"
grep -q '"type":"validation"' "$WORK/run/train.jsonl" || fail "no validation in train.jsonl"
# A validation says how far it is (here after every batch of ~40 tokens) ...
"$BIN/nmt-train" --config "$WORK/tiny.json" "${TRAIN[@]}" --model-dir "$WORK/valid-progress" --max-steps 2 --threads 1 \
  --set train.valid_every=2 --set train.valid_max_sentences=20 --set train.batch_tokens=40 --progress-every 0 \
  2>"$WORK/valid-progress.log" >/dev/null || fail "nmt-train --progress-every 0 failed"
grep -qE "^validation @ step 2: [0-9]+ of 20 sentences translated in [0-9]+ s$" "$WORK/valid-progress.log" \
  || fail "no validation progress line: $(cat "$WORK/valid-progress.log")"
# ... and so does a run between its logged steps (log_every 5), on stderr only.
grep -qE "^step +1 \| .* \| ETA [0-9:]+ \+ validations$" "$WORK/valid-progress.log" \
  || fail "no progress line for step 1 between the logged steps: $(cat "$WORK/valid-progress.log")"
grep -q '"type":"progress","step":1,\|"step":1,.*"type":"progress"' "$WORK/valid-progress/train.jsonl" \
  && fail "the line between the logged steps went into train.jsonl"
MODEL=$WORK/run/best.pt

# nmt-info: what a model file is, from the file and the run's log beside it.
"$BIN/nmt-info" "$MODEL" "$WORK/run/last.pt" >"$WORK/info.txt" || fail "nmt-info failed"
grep -qE "^family +transformer, [0-9,]+ parameters$" "$WORK/info.txt" || fail "nmt-info: no family line"
grep -qE "^tokenizers +source [0-9]+ pieces, target [0-9]+ pieces \(one shared tokenizer\)$" "$WORK/info.txt" \
  || fail "nmt-info: no tokenizer line"
grep -qE "^trained +20 updates; precision " "$WORK/info.txt" || fail "nmt-info: last.pt's updates"
[ "$(grep -c "^state  *can resume training: epoch" "$WORK/info.txt")" -eq 1 ] || fail "nmt-info: training state of last.pt only"
best_step=$(grep '"best":true' "$WORK/run/train.jsonl" | tail -1 | grep -o '"step":[0-9]*' | cut -d: -f2)
grep -qE "^validation +at step $best_step: .*bleu" "$WORK/info.txt" || fail "nmt-info: best.pt's validation (step $best_step)"
"$BIN/nmt-info" --json "$WORK/run/last.pt" | grep '"step":20,' >/dev/null || fail "nmt-info --json: no step"
expect_error "not an nmt checkpoint" "$BIN/nmt-info" "$WORK/train.en"

# Translation: one output line per input line, empty and invalid lines keep their place.
printf 'seven hundred two\n\nbad \xff line\nforty-one\n' >"$WORK/input.txt"
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --threads 1 <"$WORK/input.txt" >"$WORK/out.txt" 2>"$WORK/err.txt"
[ "$(wc -l <"$WORK/out.txt")" -eq 4 ] || fail "translate did not write 4 lines"
[ -z "$(sed -n 2p "$WORK/out.txt")" ] || fail "empty input did not give an empty line"
[ -z "$(sed -n 3p "$WORK/out.txt")" ] || fail "invalid input did not give an empty line"
grep -q "line 3: invalid UTF-8" "$WORK/err.txt" || fail "no warning for line 3"
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --nbest 2 --format jsonl --threads 1 --quiet \
  <"$WORK/input.txt" >"$WORK/out.jsonl" 2>/dev/null
[ "$(wc -l <"$WORK/out.jsonl")" -eq 4 ] || fail "jsonl did not write 4 objects"
grep -q '"line":4' "$WORK/out.jsonl" || fail "jsonl lacks line numbers"
grep -q '"token_log_probs"' "$WORK/out.jsonl" || fail "jsonl lacks token scores"
# Input unlike the source side of the training data (German to the en->de model) is warned
# about once, with its share; the right language is not.
"$BIN/nmt-translate" --model "$MODEL" --threads 1 <"$WORK/valid.de" >/dev/null 2>"$WORK/err"
[ "$(grep -c "warning: the input reads unlike the source side .* is the input in the language the model translates from" \
  "$WORK/err")" -eq 1 ] || { cat "$WORK/err" >&2; fail "German input to the en->de model: not warned once"; }
"$BIN/nmt-translate" --model "$MODEL" --threads 1 <"$WORK/valid.en" >/dev/null 2>"$WORK/err"
grep -q "is the input in the language" "$WORK/err" && fail "English input to the en->de model was warned about"
# Streaming (--batch-size 1) gives the same text as batched translation.
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --batch-size 1 --threads 1 --quiet <"$WORK/input.txt" \
  2>/dev/null | cmp -s - "$WORK/out.txt" || fail "streaming output differs from batched output"
# Sampling: the same seed gives the same samples, streamed or batched; another seed other
# ones; --sampling-* without --search sample is a usage error (exit 2).
head -c 0 /dev/null >"$WORK/many.txt"
for _ in 1 2 3 4 5; do cat "$WORK/valid.en" >>"$WORK/many.txt"; done
sample() { "$BIN/nmt-translate" --model "$MODEL" --search sample --nbest 2 --sampling-temperature 1.5 --threads 1 --quiet "$@" <"$WORK/many.txt" 2>/dev/null; }
texts() { awk -F ' [|][|][|] ' '{print $1 " ||| " $2}'; }  # scores may differ in the last digit with the batch
sample --seed 5 | texts >"$WORK/sample5.txt" || fail "--search sample failed"
[ "$(wc -l <"$WORK/sample5.txt")" -eq $((2 * $(wc -l <"$WORK/many.txt"))) ] || fail "--nbest 2 did not give 2 samples per line"
sample --seed 5 --batch-size 1 | texts | cmp -s - "$WORK/sample5.txt" || fail "sampling streamed differs from batched with one seed"
sample --seed 6 | texts | cmp -s - "$WORK/sample5.txt" && fail "another seed gave the same samples"
status=0
"$BIN/nmt-translate" --model "$MODEL" --sampling-topk 5 </dev/null >/dev/null 2>"$WORK/err" || status=$?
[ "$status" -eq 2 ] && grep -q -- "--sampling-topk: applies to --search sample only" "$WORK/err" \
  || { cat "$WORK/err" >&2; fail "--sampling-topk without --search sample is not a usage error (exit $status)"; }
# Prefixes: each output starts with its line's prefix; too few prefix
# lines is an error naming the file.
printf 'sieben\n\nvierzig\neins\n' >"$WORK/prefix.txt"
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --prefix "$WORK/prefix.txt" --threads 1 --quiet <"$WORK/input.txt" \
  >"$WORK/prefixed.txt" 2>/dev/null || fail "--prefix failed"
[ "$(wc -l <"$WORK/prefixed.txt")" -eq 4 ] || fail "--prefix did not write 4 lines"
[[ "$(sed -n 1p "$WORK/prefixed.txt")" == sieben* && "$(sed -n 4p "$WORK/prefixed.txt")" == eins* ]] \
  || { cat "$WORK/prefixed.txt" >&2; fail "outputs do not start with their prefixes"; }
# Constraints: each output contains its line's phrases (tab-separated); greedy refuses them.
printf 'neun\tzwei\n\n\nhundert\n' >"$WORK/constraints.txt"
"$BIN/nmt-translate" --model "$MODEL" --beam 4 --constraints "$WORK/constraints.txt" --threads 1 --quiet \
  <"$WORK/input.txt" >"$WORK/constrained.txt" 2>"$WORK/constrained.err" || { cat "$WORK/constrained.err" >&2; fail "--constraints failed"; }
[ "$(wc -l <"$WORK/constrained.txt")" -eq 4 ] || fail "--constraints did not write 4 lines"
for word in neun zwei; do sed -n 1p "$WORK/constrained.txt" | grep -q "$word" || { cat "$WORK/constrained.txt" >&2; fail "line 1 lacks the constraint $word"; }; done
sed -n 4p "$WORK/constrained.txt" | grep -q hundert || { cat "$WORK/constrained.txt" >&2; fail "line 4 lacks the constraint hundert"; }
expect_error "constraints need beam search" "$BIN/nmt-translate" --model "$MODEL" --beam 1 --constraints "$WORK/constraints.txt" <"$WORK/input.txt"
# A vocabulary shortlist from the training corpus: a file of pieces anyone can read, that
# nmt-translate takes with its model; one line per input line as ever, the prefixes kept.
"$BIN/nmt-shortlist" -m "$MODEL" --src "$WORK/train.en" --tgt "$WORK/train.de" -o "$WORK/shortlist.tsv" --threads 1 \
  2>"$WORK/shortlist.err" || { cat "$WORK/shortlist.err" >&2; fail "nmt-shortlist failed"; }
grep -qE "^nmt-shortlist: wrote .*: [0-9]+ target pieces always, translations for [0-9]+ source pieces" "$WORK/shortlist.err" \
  || { cat "$WORK/shortlist.err" >&2; fail "nmt-shortlist: no summary line"; }
[ "$(head -1 "$WORK/shortlist.tsv")" = "nmt-shortlist 1" ] && grep -qx "\[translations\]" "$WORK/shortlist.tsv" \
  || fail "nmt-shortlist: not the documented format"
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --shortlist "$WORK/shortlist.tsv" --prefix "$WORK/prefix.txt" --threads 1 --quiet \
  --verbose <"$WORK/input.txt" >"$WORK/shortlisted.txt" 2>"$WORK/err" || { cat "$WORK/err" >&2; fail "--shortlist failed"; }
grep -qE "^nmt-translate: shortlist .*: [0-9]+ target pieces always, translations for [0-9]+ source pieces \([0-9]+ entries\), made from " \
  "$WORK/err" || { cat "$WORK/err" >&2; fail "--shortlist --verbose: no line on the shortlist"; }
[ "$(wc -l <"$WORK/shortlisted.txt")" -eq 4 ] && [[ "$(sed -n 1p "$WORK/shortlisted.txt")" == sieben* ]] \
  || { cat "$WORK/shortlisted.txt" >&2; fail "--shortlist: not one line per input line, or a prefix lost"; }
expect_error "give the model (-m) or both --src-spm and --tgt-spm" \
  "$BIN/nmt-shortlist" --src "$WORK/train.en" --tgt "$WORK/train.de" -o "$WORK/none.tsv"
status=0
"$BIN/nmt-shortlist" --src-spm "$WORK/spm.model" --src "$WORK/train.en" --tgt "$WORK/train.de" -o "$WORK/none.tsv" \
  >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "nmt-shortlist without a target tokenizer: not a usage error (exit $status)"
{ printf 'nmt-shortlist 1\n[about]\n'; grep "_vocabulary" "$WORK/shortlist.tsv"; printf '[translations]\nnot-a-piece\tsieben\t0.5\n'; } \
  >"$WORK/broken.tsv"
expect_error "$WORK/broken.tsv:6: \"not-a-piece\" is not a piece" \
  "$BIN/nmt-translate" --model "$MODEL" --shortlist "$WORK/broken.tsv" <"$WORK/input.txt"
# A line the model cannot take (a prefix beyond its 1,024 positions, 65 constraints) is a
# warning naming it and an empty output line; the other lines are translated as ever.
{ echo sieben; printf 'i %.0s' $(seq 1100); echo; echo; echo eins; } >"$WORK/guide-prefix.txt"
{ echo; echo; printf 'neun\t%.0s' $(seq 65); echo; echo; } >"$WORK/guide-constraints.txt"
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --prefix "$WORK/guide-prefix.txt" --constraints "$WORK/guide-constraints.txt" \
  --threads 1 --quiet <"$WORK/input.txt" >"$WORK/guided.txt" 2>"$WORK/guided.err" \
  || { cat "$WORK/guided.err" >&2; fail "a prefix or constraints over the limits ended the run"; }
[ "$(wc -l <"$WORK/guided.txt")" -eq 4 ] && [ -z "$(sed -n 2p "$WORK/guided.txt")" ] && [ -z "$(sed -n 3p "$WORK/guided.txt")" ] \
  && [[ "$(sed -n 1p "$WORK/guided.txt")" == sieben* && "$(sed -n 4p "$WORK/guided.txt")" == eins* ]] \
  || { cat "$WORK/guided.txt" >&2; fail "lines over the limits did not become empty lines alone"; }
grep -q "warning: line 2: prefix of [0-9]* tokens: the model's 1024 positions" "$WORK/guided.err" \
  && grep -q "warning: line 3: 65 constraints: at most 64" "$WORK/guided.err" \
  || { cat "$WORK/guided.err" >&2; fail "no warning naming the lines over the limits"; }
# A 20 MB line without spaces is read only as far as the model reads (a warning says so):
# memory stays within 50 MB of a run on short lines, and the lines around it are translated.
peak_kb() {  # peak_kb INPUT COMMAND...: the command's peak RSS in KB, its stdin INPUT
  python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "rb") as i:
    subprocess.run(sys.argv[2:], stdin=i, stdout=subprocess.DEVNULL, stderr=open(sys.argv[1] + ".err", "w"), check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
python3 -c "import sys; sys.stdout.write('sieben\n' + 'x' * 20000000 + '\nacht\n')" >"$WORK/long-line.txt"
printf 'sieben\nx\nacht\n' >"$WORK/short-lines.txt"
short_kb=$(peak_kb "$WORK/short-lines.txt" "$BIN/nmt-translate" --model "$MODEL" --threads 1 --quiet) || fail "translating short lines failed"
long_kb=$(peak_kb "$WORK/long-line.txt" "$BIN/nmt-translate" --model "$MODEL" --threads 1 --quiet) || fail "a 20 MB line ended the run"
[ $((long_kb - short_kb)) -le 51200 ] || fail "a 20 MB line took $((long_kb - short_kb)) KB more than short lines"
grep -q "warning: line 2: only the first [0-9]* of its 20000000 bytes read" "$WORK/long-line.txt.err" \
  || { cat "$WORK/long-line.txt.err" >&2; fail "no warning that the 20 MB line was cut"; }
head -2 "$WORK/prefix.txt" >"$WORK/short-prefix.txt"
expect_error "short-prefix.txt: no prefix for input line 3" \
  "$BIN/nmt-translate" --model "$MODEL" --prefix "$WORK/short-prefix.txt" <"$WORK/input.txt"
# A text in another encoding is refused once, with the conversion, not translated blank.
for _ in $(seq 25); do printf 'vierzig Gr\xfc\xdfe\n'; done >"$WORK/latin1.txt"
expect_error "stdin is not UTF-8: it looks like Latin-1 or another 8-bit encoding" \
  "$BIN/nmt-translate" --model "$MODEL" --threads 1 <"$WORK/latin1.txt"
grep -q "iconv -f latin1 -t utf-8" "$WORK/err" || fail "the Latin-1 error does not say how to convert"
[ ! -s "$WORK/out" ] || fail "nmt-translate wrote output for a Latin-1 input"
# Files as other toolkits take them: -i/-o give what stdin/stdout give; a file given bare is
# a usage error that says where input comes from; an output is written whole or not at all.
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --threads 1 --quiet -i "$WORK/input.txt" -o "$WORK/io.txt" 2>/dev/null \
  || fail "nmt-translate -i/-o failed"
cmp -s "$WORK/io.txt" "$WORK/out.txt" || fail "-i/-o output differs from stdin/stdout's"
# Progress lines in a log (stderr a file, not a terminal), here after every batch.
"$BIN/nmt-translate" -m "$MODEL" --beam 3 --threads 1 --progress-every 0 -i "$WORK/input.txt" \
  -o "$WORK/io.txt" 2>"$WORK/progress.err"
grep -qE '^nmt-translate: [0-9]+ lines translated, [0-9.]+ sentences/s \([0-9]+ s\)$' "$WORK/progress.err" ||
  fail "nmt-translate --progress-every 0 printed no progress line: $(cat "$WORK/progress.err")"
cmp -s "$WORK/io.txt" "$WORK/out.txt" || fail "-m/-i/-o with progress lines: output differs from stdin/stdout's"
expect_error "not expected: $WORK/input.txt (the input is read from stdin, or from -i/--input FILE)" \
  "$BIN/nmt-translate" --model "$MODEL" "$WORK/input.txt"
echo "made by the user" >"$WORK/kept.txt"
expect_error "short-prefix.txt: no prefix for input line 3" "$BIN/nmt-translate" --model "$MODEL" \
  --prefix "$WORK/short-prefix.txt" -i "$WORK/input.txt" -o "$WORK/kept.txt"
[ "$(cat "$WORK/kept.txt")" = "made by the user" ] || fail "a failed nmt-translate -o changed its output file"
[ -z "$(ls "$WORK" | grep 'kept.txt.tmp')" ] || fail "a failed nmt-translate -o left its temporary"
# Ensembles: two copies of one model translate as that model; another tokenizer is refused.
cp "$MODEL" "$WORK/copy.pt"
"$BIN/nmt-translate" --model "$MODEL" --model "$WORK/copy.pt" --beam 3 --threads 1 --quiet <"$WORK/input.txt" \
  2>/dev/null | cmp -s - "$WORK/out.txt" || fail "an ensemble of two copies differs from the model alone"
# check_precision NAME CPUINFO_FLAG REFUSAL: --precision NAME writes 4 lines on a CPU
# with the flag, and elsewhere is refused with a message containing REFUSAL.
check_precision() {
  local name=$1 flag=$2 refusal=$3
  if grep -qw "$flag" /proc/cpuinfo; then
    "$BIN/nmt-translate" --model "$MODEL" --beam 3 --precision "$name" --threads 1 --quiet <"$WORK/input.txt" \
      >"$WORK/$name.txt" 2>/dev/null || fail "translate --precision $name failed"
    [ "$(wc -l <"$WORK/$name.txt")" -eq 4 ] || fail "$name did not write 4 lines"
  else
    expect_error "$refusal" "$BIN/nmt-translate" --model "$MODEL" --precision "$name" <"$WORK/input.txt"
  fi
}
check_precision bf16 avx512_bf16 "AVX512-BF16"
check_precision int8 avx2 "AVX2"
expect_error "--precision" "$BIN/nmt-translate" --model "$MODEL" --precision fp16 </dev/null

# --verbose: what computes the model, as decided at load, on stderr; the output is unchanged.
# check_verbose LINE...: the last verbose.err has "nmt-translate: LINE" for each LINE.
check_verbose() {
  for line in "$@"; do
    grep -qF -- "nmt-translate: $line" "$WORK/verbose.err" || { cat "$WORK/verbose.err" >&2; fail "--verbose lacks '$line'"; }
  done
}
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --threads 1 --quiet --verbose <"$WORK/input.txt" \
  >"$WORK/verbose.txt" 2>"$WORK/verbose.err"
cmp -s "$WORK/verbose.txt" "$WORK/out.txt" || fail "--verbose changed the translations"
check_verbose "linear path: fp32_" "attention projections: fp32" "feed-forward: fp32" "output projection: fp32" \
  "instruction set: " "libraries: LibTorch " "threads: 1 (LibTorch intra-op)"
# --version names the stack that runs: LibTorch and its ABI, the loaded oneDNN and its headers, SentencePiece.
"$BIN/nmt-translate" --version >"$WORK/version.txt"
grep -qE '^nmt [0-9.]+ \(LibTorch [0-9.]+[^ ]* \(C\+\+ ABI (cxx11|pre-cxx11)(; headers of [^ ]+ [^ )]+)?\), oneDNN [0-9]+\.[0-9]+\.[0-9]+ \(headers [0-9.]+\), SentencePiece [0-9]' \
  "$WORK/version.txt" || { cat "$WORK/version.txt" >&2; fail "--version does not name the libraries' versions"; }
# Debian's LibTorch headers name another patch version than its package (1.13.0 in 1.13.1+dfsg):
# the package is named too.
if torch_owner=$(dpkg-query -S '/usr/lib/*/cmake/Torch/TorchConfig.cmake' 2>/dev/null); then
  torch_package=${torch_owner%%:*}
  grep -qF "; headers of $torch_package $(dpkg-query -W -f='${Version}' "$torch_package"))" "$WORK/version.txt" \
    || { cat "$WORK/version.txt" >&2; fail "--version does not name LibTorch's package $torch_package"; }
fi
if grep -qw avx2 /proc/cpuinfo; then
  NMT_CPU_ISA=avx2 "$BIN/nmt-translate" --model "$MODEL" --precision int8 --threads 1 --quiet --verbose \
    <"$WORK/input.txt" >/dev/null 2>"$WORK/verbose.err"
  check_verbose "linear path: int8" "attention projections: int8, weights quantized once (7-bit" \
    "instruction set: avx2 (capped by NMT_CPU_ISA=avx2)"
fi
# As on an x86-64 without AVX2: fp32 the same translations, int8 refused, the cap named.
NMT_CPU_ISA=baseline "$BIN/nmt-translate" --model "$MODEL" --beam 3 --threads 1 --quiet --verbose \
  <"$WORK/input.txt" >"$WORK/baseline.txt" 2>"$WORK/verbose.err"
cmp -s "$WORK/baseline.txt" "$WORK/out.txt" || fail "NMT_CPU_ISA=baseline changed the fp32 translations"
check_verbose "instruction set: no avx2 (capped by NMT_CPU_ISA=baseline)"
NMT_CPU_ISA=baseline expect_error "NMT_CPU_ISA=baseline" "$BIN/nmt-translate" --model "$MODEL" --precision int8 <"$WORK/input.txt"
NMT_CPU_ISA=avx3 expect_error "NMT_CPU_ISA must be avx2, baseline or default" "$BIN/nmt-translate" --model "$MODEL" </dev/null
head -1 "$WORK/valid.en" | "$BIN/nmt-align" --model "$MODEL" --threads 1 --verbose >/dev/null 2>"$WORK/align.err"
grep -q "^nmt-align: feed-forward: " "$WORK/align.err" || fail "nmt-align --verbose: no feed-forward line"

# Scoring.
cp "$WORK/valid.en" "$WORK/hyp.en"  # English: several words per line, so BLEU is defined
"$BIN/nmt-eval" --ref "$WORK/valid.en" <"$WORK/hyp.en" >"$WORK/scores.txt"
grep -q "^BLEU = 100.00" "$WORK/scores.txt" && grep -q "^chrF2 = 100.00" "$WORK/scores.txt" \
  || fail "identical files do not score 100"
expect_error "has 20" "$BIN/nmt-eval" --ref "$WORK/valid.de" <"$WORK/train.en"
expect_error "stdin:3: invalid UTF-8" "$BIN/nmt-eval" --ref "$WORK/valid.de" <"$WORK/input.txt"

# Attention export and the heatmap page.
head -3 "$WORK/valid.en" | "$BIN/nmt-align" --model "$MODEL" --html "$WORK/heat.html" --threads 1 >"$WORK/align.jsonl"
[ "$(wc -l <"$WORK/align.jsonl")" -eq 3 ] || fail "align did not write 3 objects"
head -3 "$WORK/valid.en" >"$WORK/three.en"
"$BIN/nmt-align" -m "$MODEL" -i "$WORK/three.en" -o "$WORK/align-io.jsonl" --progress-every 0 --threads 1 \
  2>"$WORK/progress.err"
cmp -s "$WORK/align-io.jsonl" "$WORK/align.jsonl" || fail "nmt-align -i/-o differs from stdin/stdout's"
grep -qE '^nmt-align: 3 lines translated, [0-9.]+ sentences/s \([0-9]+ s\)$' "$WORK/progress.err" ||
  fail "nmt-align --progress-every 0 did not say 3 lines translated: $(cat "$WORK/progress.err")"
head -3 "$WORK/valid.en" | "$BIN/nmt-align" --model "$MODEL" --tgt <(head -3 "$WORK/valid.de") --word-level \
  --self-attention --layers last --threads 1 >"$WORK/forced.jsonl"
# (grep reads a file, not a pipe: grep -q may exit early and SIGPIPE the writer under pipefail)
[ "$(grep -c '"mode":"force"' "$WORK/forced.jsonl")" -eq 3 ] || fail "forced alignment did not write 3 objects"
expect_error "must be line-aligned" "$BIN/nmt-align" --model "$MODEL" --tgt "$WORK/valid.de" <"$WORK/input.txt"
expect_error "--layers 7" "$BIN/nmt-align" --model "$MODEL" --layers 7 <"$WORK/input.txt"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
  # Cells the page must draw: one per entry of each sentence's first matrix.
  expected=$(python3 - "$WORK/align.jsonl" <<'PY' 2>/dev/null || true
import json, sys
print(sum(len(o["attention"]) * len(o["attention"][0]) for o in map(json.loads, open(sys.argv[1]))))
PY
)
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom "file://$WORK/heat.html" \
    2>/dev/null >"$WORK/dom.html"
  cells=$(grep -o 'class="cell"' "$WORK/dom.html" | wc -l)
  [ "$cells" -gt 0 ] || fail "the HTML heatmap drew no cells in Chromium"
  if [ -n "$expected" ]; then [ "$cells" -eq "$expected" ] || fail "heatmap has $cells cells, expected $expected"; fi
  echo "heatmap rendered in Chromium: $cells cells"
else
  echo "chromium not installed: HTML rendering check skipped (scripts/install-deps.sh installs it)"
fi

# Errors: a clear message and a non-zero exit, nothing overwritten.
cp "$WORK/run/last.pt" "$WORK/last.before"
echo '{"model": {"arch": "transformer", "colour": 3}}' >"$WORK/bad.json"
expect_error "colour" "$BIN/nmt-train" --config "$WORK/bad.json" "${TRAIN[@]}" --model-dir "$WORK/run2"
echo '{"train": {"batch_tokens": "many"}}' >"$WORK/bad.json"
expect_error "batch_tokens" "$BIN/nmt-train" --config "$WORK/bad.json" "${TRAIN[@]}" --model-dir "$WORK/run2"
expect_error "missing.en" "$BIN/nmt-train" --train-src "$WORK/missing.en" --train-tgt "$WORK/train.de" "${COMMON[@]}" --model-dir "$WORK/run"
head -10 "$WORK/train.de" >"$WORK/short.de"
expect_error "short.de" "$BIN/nmt-train" --train-src "$WORK/train.en" --train-tgt "$WORK/short.de" "${COMMON[@]}" --model-dir "$WORK/run"
cmp -s "$WORK/run/last.pt" "$WORK/last.before" || fail "a failed run changed last.pt"
expect_error "missing.pt" "$BIN/nmt-translate" --model "$WORK/missing.pt" </dev/null
expect_error "not an nmt checkpoint" "$BIN/nmt-translate" --model "$WORK/train.en" </dev/null
expect_error "--device cuda" "$BIN/nmt-translate" --model "$MODEL" --device cuda </dev/null

# SIGTERM during training saves last.pt and exits cleanly.
"$BIN/nmt-train" --config "$WORK/tiny.json" "${TRAIN[@]}" --model-dir "$WORK/sig" --max-steps 100000 \
  --threads 1 --quiet >/dev/null 2>"$WORK/sig.err" &
pid=$!
for _ in $(seq 600); do [ -f "$WORK/sig/last.pt" ] && break; sleep 0.2; done
[ -f "$WORK/sig/last.pt" ] || fail "the run to be stopped by SIGTERM saved no last.pt within 120 s"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { cat "$WORK/sig.err" >&2; fail "training did not exit cleanly on SIGTERM (exit $status)"; }
grep -q "signal" "$WORK/sig/train.jsonl" || fail "no stop message for the signal"
# Data-parallel: 2 local ranks through the launcher; rank 0 alone writes the model dir.
MASTER_PORT=$((20000 + RANDOM % 12000)) "$SRC/scripts/launch-local.sh" 2 "$BIN/nmt-train" --config "$WORK/tiny.json" \
  "${TRAIN[@]}" --model-dir "$WORK/dist" --max-steps 4 --threads 1 >"$WORK/dist.out" 2>"$WORK/dist.log" ||
  { cat "$WORK/dist.log" >&2; fail "2-rank training through scripts/launch-local.sh failed"; }
grep -q "distributed: 2 ranks" "$WORK/dist.log" || fail "no distributed message from rank 0"
[ "$(grep -c '^steps 4' "$WORK/dist.out")" -eq 1 ] || fail "expected one summary line (rank 0) on stdout"
[ -f "$WORK/dist/best.pt" ] || fail "no best.pt from the 2-rank run"
# A 2-rank resume: rank 1 loads rank 0's last.pt from memory, so an unusable TMPDIR
# (once a "damaged checkpoint" on rank 1) changes nothing.
TMPDIR="$WORK/no-such-dir" MASTER_PORT=$((20000 + RANDOM % 12000)) "$SRC/scripts/launch-local.sh" 2 "$BIN/nmt-train" \
  --config "$WORK/tiny.json" "${TRAIN[@]}" --model-dir "$WORK/dist" --max-steps 6 --threads 1 \
  >"$WORK/dist2.out" 2>"$WORK/dist2.log" || { cat "$WORK/dist2.log" >&2; fail "2-rank resume with TMPDIR missing failed"; }
grep -q '^steps 6' "$WORK/dist2.out" || { cat "$WORK/dist2.out" >&2; fail "the 2-rank resume did not reach step 6"; }
expect_error "rank must be in [0, world size 2)" "$BIN/nmt-train" --config "$WORK/tiny.json" "${TRAIN[@]}" \
  --model-dir "$WORK/dist" --world-size 2 --rank 2
echo "cli tests passed"
