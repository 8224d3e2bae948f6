#!/usr/bin/env bash
# Faults at the tools' edges, as a user meets them: a full disk or a closed stdout for
# every tool that writes output, usage errors, outputs that are symlinks or FIFOs,
# damaged and foreign checkpoints, lines with no tokens, an impossible beam, two runs on
# one model directory. Each must give a clear message and the documented exit code
# (0 ok, 1 failure, 2 usage), and leave what existed before unchanged.
# Usage: fault_test.sh BIN_DIR SOURCE_DIR
BIN=$1
SRC=$2
source "$SRC/tests/apps/test_harness.sh"  # strict mode; every failure names its line
WORK=$(mktemp -d)
cleanup() { rm -rf "$WORK"; }
# expect CODE "what stderr must say" command... (stdout and stderr captured)
expect() {
  local code=$1 needle=$2; shift 2
  local got=0
  "$@" >"$WORK/out" 2>"$WORK/err" || got=$?
  [ "$got" -eq "$code" ] || { cat "$WORK/err" >&2; fail "exit $got, expected $code: $*"; }
  grep -qF -- "$needle" "$WORK/err" || { cat "$WORK/err" >&2; fail "stderr of '$*' does not say '$needle'"; }
}
# run_to_full CODE "needle" command...: stdout is /dev/full
run_to_full() {
  local code=$1 needle=$2; shift 2
  local got=0
  "$@" >/dev/full 2>"$WORK/err" || got=$?
  [ "$got" -eq "$code" ] || { cat "$WORK/err" >&2; fail "exit $got with stdout on /dev/full, expected $code: $*"; }
  grep -qF -- "$needle" "$WORK/err" || { cat "$WORK/err" >&2; fail "'$*' to /dev/full does not say '$needle'"; }
}

source "$SRC/tests/apps/tiny_task.sh"
tiny_task "$WORK" 300 20
cat >"$WORK/tiny.json" <<'JSON'
{"model": {"arch": "transformer", "transformer": {"d_model": 32, "heads": 2, "ffn_dim": 64, "encoder_layers": 1,
           "decoder_layers": 1}},
 "train": {"batch_tokens": 400, "schedule": "constant", "learning_rate": 0.003, "valid_every": 5,
           "valid_max_sentences": 5, "max_steps": 5}}
JSON
TRAIN=(--config "$WORK/tiny.json" --train-src "$WORK/train.en" --train-tgt "$WORK/train.de"
       --valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model")
"$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/run" --threads 1 --quiet >/dev/null
MODEL=$WORK/run/best.pt
head -3 "$WORK/valid.en" >"$WORK/in.txt"

# A full disk or a closed stdout: exit 1 and a message, for every tool that writes output.
run_to_full 1 "cannot write stdout: No space left on device" "$BIN/nmt-translate" --model "$MODEL" --quiet <"$WORK/in.txt"
run_to_full 1 "cannot write stdout: No space left on device" "$BIN/nmt-translate" --model "$MODEL" --batch-size 1 <"$WORK/in.txt"
run_to_full 1 "cannot write stdout: No space left on device" "$BIN/nmt-eval" --ref "$WORK/valid.en" <"$WORK/valid.en"
run_to_full 1 "cannot write stdout: No space left on device" "$BIN/nmt-align" --model "$MODEL" <"$WORK/in.txt"
run_to_full 1 "cannot write stdout" "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/full-run" --threads 1 --quiet
expect 1 "cannot write /dev/full: No space left on device" "$BIN/nmt-align" --model "$MODEL" --output /dev/full <"$WORK/in.txt"
expect 1 "cannot write /dev/full: No space left on device" "$BIN/nmt-align" --model "$MODEL" --html /dev/full <"$WORK/in.txt"
got=0; "$BIN/nmt-translate" --model "$MODEL" --quiet <"$WORK/in.txt" >&- 2>"$WORK/err" || got=$?
[ "$got" -eq 1 ] && grep -qF "cannot write stdout" "$WORK/err" || fail "closed stdout: exit $got"

# Usage errors exit 2, for every tool.
for tool in nmt-translate nmt-eval nmt-align nmt-train nmt-spm-train nmt-make-numbers nmt-info; do
  expect 2 "$tool: error: " "$BIN/$tool" --no-such-flag
  grep -qF -- "($tool --help lists the options)" "$WORK/err" || fail "$tool: $(cat "$WORK/err")"
  [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "$tool's usage error is not one line: $(cat "$WORK/err")"
done
# Habits from other toolkits: the option probably meant is named.
expect 2 "(--beam-size: did you mean --beam?)" "$BIN/nmt-translate" --model "$MODEL" --beam-size 5
expect 2 "(--n-best: did you mean --nbest?)" "$BIN/nmt-align" --model "$MODEL" --n-best 2
# One model where the tool takes one (nmt-translate takes several: an ensemble).
expect 2 "nmt-align: error: --model was given 2 times; nmt-align takes it once" "$BIN/nmt-align" -m "$MODEL" -m "$MODEL"
expect 2 "(--metric: did you mean --metrics?)" "$BIN/nmt-eval" --ref "$WORK/in.txt" --metric bleu
# A bad option value is a usage error too (exit 2), before any work.
expect 2 'unknown metric "ter"' "$BIN/nmt-eval" --ref "$WORK/in.txt" --metrics bleu,ter
expect 2 "0 is not above 0" "$BIN/nmt-translate" --model "$MODEL" --beam 0
expect 2 "--beam" "$BIN/nmt-translate" --model "$MODEL" --beam many
# Range messages are short (CLI11's own print 309-digit bounds), and more threads than
# cores use the cores.
expect 2 "-1 is not from 0 to 1024" "$BIN/nmt-translate" --model "$MODEL" --threads -1
[ "$(wc -c <"$WORK/err")" -lt 200 ] || fail "--threads -1 message is $(wc -c <"$WORK/err") bytes"
expect 2 "0 is not above 0" "$BIN/nmt-align" --model "$MODEL" --nbest 0
expect 0 "is more than the $(nproc) cores here; using $(nproc)" "$BIN/nmt-translate" --model "$MODEL" --threads 1000 <"$WORK/in.txt"

# Every config bound is checked before anything is written, whatever the schedule.
for bad in train.plateau_factor=0 train.plateau_factor=2 train.plateau_factor=-1 train.plateau_patience=0 \
           train.patience=-1 train.min_learning_rate=-1 train.learning_rate=0 train.adam_beta2=1 \
           train.label_smoothing=1 train.seed=-1 model.dropout=1 model.transformer.heads=0; do
  expect 1 "invalid config: ${bad%%=*} is ${bad#*=}; it must be" "$BIN/nmt-train" "${TRAIN[@]}" --threads 1 \
    --model-dir "$WORK/bounds" --set "$bad"
  [ ! -e "$WORK/bounds" ] || fail "a config out of bounds ($bad) left $WORK/bounds behind"
done

# A read error on stdin is an error, not an empty input.
expect 1 "cannot read stdin: Is a directory" "$BIN/nmt-translate" --model "$MODEL" <"$WORK"
expect 1 "cannot read stdin: Is a directory" "$BIN/nmt-align" --model "$MODEL" <"$WORK"
expect 1 "cannot read stdin: Is a directory" "$BIN/nmt-eval" --ref "$WORK/in.txt" <"$WORK"
# A NUL byte is no text: a warning naming the line and an empty output line, like invalid UTF-8.
printf '%s\n' "$(head -1 "$WORK/in.txt")" >"$WORK/nul.txt"
printf 'a\0b\n' >>"$WORK/nul.txt"
expect 0 "line 2: NUL byte at byte 2" "$BIN/nmt-translate" --model "$MODEL" <"$WORK/nul.txt"
[ "$(sed -n 2p "$WORK/out")" = "" ] && [ -n "$(sed -n 1p "$WORK/out")" ] || fail "NUL line: output $(cat -A "$WORK/out")"
"$BIN/nmt-translate" --help >"$WORK/help.txt" || fail "--help does not exit 0"
grep -q -- "--beam" "$WORK/help.txt" || fail "--help does not list the options"

# Outputs that are not regular files: a symlink is followed, a FIFO written in place.
echo old >"$WORK/target.jsonl"
ln -s "$WORK/target.jsonl" "$WORK/link.jsonl"
"$BIN/nmt-align" --model "$MODEL" --output "$WORK/link.jsonl" <"$WORK/in.txt" 2>/dev/null
[ -L "$WORK/link.jsonl" ] || fail "--output replaced a symlink by a file"
[ "$(wc -l <"$WORK/target.jsonl")" -eq 3 ] || fail "--output through a symlink did not reach its target"
mkfifo "$WORK/pipe.jsonl"
cat "$WORK/pipe.jsonl" >"$WORK/from-pipe.jsonl" &
reader=$!
"$BIN/nmt-align" --model "$MODEL" --output "$WORK/pipe.jsonl" <"$WORK/in.txt" 2>/dev/null
wait "$reader"
[ -p "$WORK/pipe.jsonl" ] || fail "--output replaced a FIFO"
[ "$(wc -l <"$WORK/from-pipe.jsonl")" -eq 3 ] || fail "the FIFO reader did not get 3 lines"
# A failed run leaves an existing --output as it was.
cp "$WORK/target.jsonl" "$WORK/before.jsonl"
expect 1 "not an nmt checkpoint" "$BIN/nmt-align" --model "$WORK/train.en" --output "$WORK/target.jsonl" <"$WORK/in.txt"
cmp -s "$WORK/target.jsonl" "$WORK/before.jsonl" || fail "a failed nmt-align changed its --output"

# Damaged, truncated and foreign checkpoints: clear errors, never a translation.
python3 - "$MODEL" "$WORK/flipped.pt" "$WORK/truncated.pt" <<'PY'
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rng = random.Random(7)
flipped = bytearray(data)
for _ in range(50):
    i = rng.randrange(200, len(flipped))  # past the header: the payload
    flipped[i] ^= 1 << rng.randrange(8)
open(sys.argv[2], "wb").write(flipped)
open(sys.argv[3], "wb").write(data[: len(data) // 2])
PY
expect 1 "flipped.pt is corrupted (checksum mismatch)" "$BIN/nmt-translate" --model "$WORK/flipped.pt" <"$WORK/in.txt"
expect 1 "truncated.pt is truncated" "$BIN/nmt-translate" --model "$WORK/truncated.pt" <"$WORK/in.txt"
expect 1 "not an nmt checkpoint" "$BIN/nmt-translate" --model "$WORK/spm.model" <"$WORK/in.txt"
expect 2 "is actually a directory" "$BIN/nmt-translate" --model "$WORK/run" <"$WORK/in.txt"
# The checkpoint of an older main still translates (no seal, flat config).
"$BIN/nmt-translate" --model "$SRC/tests/fixtures/main-896ef85/gru.pt" --quiet <"$WORK/in.txt" >"$WORK/old.txt"
[ "$(wc -l <"$WORK/old.txt")" -eq 3 ] || fail "the old checkpoint did not translate"

# A line with no tokens (zero-width space, BOM, control bytes): a warning, never a crash.
printf 'three\n\xe2\x80\x8b\n\xef\xbb\xbf\n\x01\x02\nfour\n' >"$WORK/invisible.txt"
"$BIN/nmt-translate" --model "$MODEL" <"$WORK/invisible.txt" >"$WORK/out.txt" 2>"$WORK/err.txt"
[ "$(wc -l <"$WORK/out.txt")" -eq 5 ] || fail "nmt-translate did not keep one line per input line"
grep -q "line 2: the line has no tokens" "$WORK/err.txt" || fail "no warning for the zero-width line"
"$BIN/nmt-align" --model "$MODEL" <"$WORK/invisible.txt" >"$WORK/align.jsonl" 2>"$WORK/err.txt" ||
  fail "nmt-align failed on lines without tokens"
[ "$(grep -c '"skipped":true' "$WORK/align.jsonl")" -ge 2 ] || fail "nmt-align did not mark the empty lines skipped"

# Over-long lines: translate mode truncates with a warning, forced decoding skips the pair
# with a warning; the other lines are still exported.
long=$(printf 'seven hundred seventy-seven thousand %.0s' $(seq 300))
longde=$(printf 'siebenhundertsiebenundsiebzigtausend %.0s' $(seq 300))
printf 'three\n%s\nfour\n' "$long" >"$WORK/long.en"
printf 'drei\n%s\nvier\n' "$longde" >"$WORK/long.de"
"$BIN/nmt-align" --model "$MODEL" <"$WORK/long.en" >"$WORK/long.jsonl" 2>"$WORK/err.txt" || fail "nmt-align failed on a long line"
grep -q "line 2: input of .* tokens truncated" "$WORK/err.txt" || fail "nmt-align did not warn about the truncation"
[ "$(wc -l <"$WORK/long.jsonl")" -eq 3 ] || fail "nmt-align lost lines around a long one"
"$BIN/nmt-align" --model "$MODEL" --tgt "$WORK/long.de" <"$WORK/long.en" >"$WORK/forced.jsonl" 2>"$WORK/err.txt" ||
  fail "forced nmt-align failed on a long pair"
grep -q "line 2: pair of .* longer than the model's" "$WORK/err.txt" || fail "no warning for the long forced pair"
[ "$(grep -c '"skipped":true' "$WORK/forced.jsonl")" -eq 1 ] || fail "the long forced pair was not skipped alone"

# n-best text output has Moses' four fields; the HTML page takes the first --html-max.
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --nbest 2 --quiet <"$WORK/in.txt" >"$WORK/nbest.txt"
awk -F' [|][|][|] ' 'NF != 4 || $3 !~ /^LogProb= / { bad = 1 } END { exit bad }' "$WORK/nbest.txt" ||
  fail "n-best lines are not 'id ||| text ||| LogProb= x ||| score'"
[ "$(wc -l <"$WORK/nbest.txt")" -eq 6 ] || fail "expected 2 n-best lines per input line"
"$BIN/nmt-align" --model "$MODEL" --html "$WORK/first2.html" --html-max 2 <"$WORK/in.txt" >/dev/null 2>&1
grep -q "the first 2 of 3 objects" "$WORK/first2.html" || fail "the page does not say it shows the first 2 of 3"
[ "$(grep -o '"line":' "$WORK/first2.html" | wc -l)" -eq 2 ] || fail "the page holds other than 2 sentences"

# An impossible beam is refused up front, not left to the out-of-memory killer.
expect 1 "use a smaller --beam" "$BIN/nmt-translate" --model "$MODEL" --beam 100000000 <"$WORK/in.txt"

# Two runs on one model directory: the second fails at once, naming it.
"$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/busy" --max-steps 100000 --threads 1 --quiet >/dev/null 2>&1 &
first=$!
for _ in $(seq 1200); do [ -f "$WORK/busy/config.json" ] && break; sleep 0.1; done
[ -f "$WORK/busy/config.json" ] || fail "the first run on $WORK/busy did not start within 120 s"
expect 1 "$WORK/busy is in use by another process" "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/busy" --threads 1
kill -TERM "$first"
wait "$first" || fail "the first run did not stop cleanly"
# Prepared corpora: damaged, foreign and stale files are refused by name; usage errors.
PREP=(--src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model")
"$BIN/nmt-prepare" --src "$WORK/train.en" --tgt "$WORK/train.de" "${PREP[@]}" --output "$WORK/c.nmtc" 2>/dev/null
# nmt-prepare killed with -9 while writing: the next preparation of that output removes
# the temporary it left (it no longer holds its lock; the PID is gone).
for _ in $(seq 400); do cat "$WORK/train.en"; done >"$WORK/big.en"
for _ in $(seq 400); do cat "$WORK/train.de"; done >"$WORK/big.de"
"$BIN/nmt-prepare" --src "$WORK/big.en" --tgt "$WORK/big.de" "${PREP[@]}" --output "$WORK/big.nmtc" --threads 1 2>/dev/null &
killed=$!
for _ in $(seq 600); do compgen -G "$WORK/big.nmtc.tmp.*" >/dev/null && break; sleep 0.05; done
kill -9 "$killed" 2>/dev/null || true
wait "$killed" 2>/dev/null || true
if compgen -G "$WORK/big.nmtc.tmp.*" >/dev/null; then
  "$BIN/nmt-prepare" --src "$WORK/train.en" --tgt "$WORK/train.de" "${PREP[@]}" --output "$WORK/big.nmtc" 2>"$WORK/err"
  grep -q "removed $WORK/big.nmtc.tmp.$killed.[0-9]* (left by an interrupted preparation)" "$WORK/err" \
    || fail "the rerun did not say it removed the killed preparation's temporary: $(cat "$WORK/err")"
  ! compgen -G "$WORK/big.nmtc.tmp.*" >/dev/null || fail "a killed nmt-prepare's temporary is still there after a rerun"
  cmp -s "$WORK/big.nmtc" "$WORK/c.nmtc" || fail "the rerun after a kill did not prepare the corpus as a first run does"
else
  echo "not checked here: nmt-prepare was done before it could be killed" >&2
fi
# A symlinked --output is followed, as for every tool: the link stays, its target is written.
ln -s "$WORK/linked-target.nmtc" "$WORK/linked.nmtc"
"$BIN/nmt-prepare" --src "$WORK/train.en" --tgt "$WORK/train.de" "${PREP[@]}" --output "$WORK/linked.nmtc" 2>/dev/null
[ -L "$WORK/linked.nmtc" ] && cmp -s "$WORK/linked-target.nmtc" "$WORK/c.nmtc" \
  || fail "nmt-prepare --output through a symlink replaced the link or missed its target"
TRAIN_PREPARED=(--config "$WORK/tiny.json" --valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" "${PREP[@]}"
                --threads 1 --max-steps 1 --quiet)
head -c 300 "$WORK/c.nmtc" >"$WORK/cut.nmtc"
expect 1 "cut.nmtc is truncated" "$BIN/nmt-train" "${TRAIN_PREPARED[@]}" --train-data "$WORK/cut.nmtc" --model-dir "$WORK/p1"
cp "$WORK/c.nmtc" "$WORK/flip.nmtc"
printf '\x7f' | dd of="$WORK/flip.nmtc" bs=1 seek=500 conv=notrunc 2>/dev/null
expect 1 "flip.nmtc is corrupted" "$BIN/nmt-train" "${TRAIN_PREPARED[@]}" --train-data "$WORK/flip.nmtc" --model-dir "$WORK/p1"
expect 1 "is not a prepared corpus" "$BIN/nmt-train" "${TRAIN_PREPARED[@]}" --train-data "$MODEL" --model-dir "$WORK/p1"
[ ! -e "$WORK/p1" ] || fail "a refused --train-data left $WORK/p1 behind"
expect 2 "--train-data" "$BIN/nmt-train" "${TRAIN_PREPARED[@]}" --train-data "$WORK/c.nmtc" --train-src "$WORK/train.en" \
  --train-tgt "$WORK/train.de" --model-dir "$WORK/p1"
expect 2 "--train-src" "$BIN/nmt-train" "${TRAIN_PREPARED[@]}" --model-dir "$WORK/p1"
cp "$WORK/train.en" "$WORK/changing.en"
"$BIN/nmt-prepare" --src "$WORK/changing.en" --tgt "$WORK/train.de" "${PREP[@]}" --output "$WORK/stale.nmtc" 2>/dev/null
echo "one more line" >>"$WORK/changing.en"
expect 1 "changing.en changed since it was prepared" "$BIN/nmt-train" "${TRAIN_PREPARED[@]}" \
  --train-data "$WORK/stale.nmtc" --model-dir "$WORK/p1"
"$BIN/nmt-train" "${TRAIN_PREPARED[@]}" --train-data "$WORK/c.nmtc" --model-dir "$WORK/p2" >/dev/null 2>"$WORK/err" ||
  { cat "$WORK/err" >&2; fail "nmt-train --train-data failed"; }
[ -z "$(ls -A "$WORK/p2/data-cache" | grep -v '^valid-')" ] || fail "--train-data was copied into the data cache"

# A prepared corpus truncated or overwritten in place while a run reads it: the run stops
# with an error naming it (exit 1), neither killed by SIGBUS nor training on unchecked data.
for change in truncate overwrite; do
  cp "$WORK/c.nmtc" "$WORK/live.nmtc"
  "$BIN/nmt-train" --config "$WORK/tiny.json" --valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" "${PREP[@]}" \
    --threads 1 --quiet --max-steps 1000000 --train-data "$WORK/live.nmtc" \
    --model-dir "$WORK/live-$change" >/dev/null 2>"$WORK/live.err" & run=$!
  for _ in $(seq 1200); do [ -f "$WORK/live-$change/best.pt" ] && break; sleep 0.1; done
  [ -f "$WORK/live-$change/best.pt" ] || { cat "$WORK/live.err" >&2; fail "the run on live.nmtc did not start"; }
  if [ "$change" = truncate ]; then truncate -s 0 "$WORK/live.nmtc"; else cp "$WORK/c.nmtc" "$WORK/live.nmtc"; fi
  got=0
  wait "$run" || got=$?
  [ "$got" -eq 1 ] && grep -Eq "live.nmtc (was truncated|changed) while this run read it" "$WORK/live.err" \
    || { cat "$WORK/live.err" >&2; fail "a prepared corpus changed by $change under a run: exit $got"; }
done

# Two runs that share a --data-cache and start together: one prepares (under the cache's
# lock), the other waits and maps what it made; the corpus is never prepared twice.
for _ in $(seq 170); do cat "$WORK/train.en"; done >"$WORK/big.en"
for _ in $(seq 170); do cat "$WORK/train.de"; done >"$WORK/big.de"
SHARED=(--config "$WORK/tiny.json" --train-src "$WORK/big.en" --train-tgt "$WORK/big.de" --valid-src "$WORK/valid.en"
        --valid-tgt "$WORK/valid.de" "${PREP[@]}" --threads 1 --max-steps 1 --data-cache "$WORK/shared-cache")
"$BIN/nmt-train" "${SHARED[@]}" --model-dir "$WORK/s1" >/dev/null 2>"$WORK/s1.err" & first=$!
"$BIN/nmt-train" "${SHARED[@]}" --model-dir "$WORK/s2" >/dev/null 2>"$WORK/s2.err" & second=$!
wait "$first" || { cat "$WORK/s1.err" >&2; fail "the first of two runs on one cache failed"; }
wait "$second" || { cat "$WORK/s2.err" >&2; fail "the second of two runs on one cache failed"; }
[ "$(cat "$WORK/s1.err" "$WORK/s2.err" | grep -c "^preparing .*big.en")" -eq 1 ] ||
  { cat "$WORK/s1.err" "$WORK/s2.err" >&2; fail "two runs on one cache did not prepare it exactly once"; }
[ "$(cat "$WORK/s1.err" "$WORK/s2.err" | grep -c "^using the prepared corpus .*train-")" -eq 1 ] ||
  fail "the run that did not prepare did not use the other's corpus"

# A disk that fills while preparing: an error naming the file, and nothing left behind.
mkdir -p "$WORK/small-disk"
if mount -t tmpfs -o size=8k tmpfs "$WORK/small-disk" 2>/dev/null; then
  cleanup() { umount "$WORK/small-disk" 2>/dev/null || true; rm -rf "$WORK"; }
  expect 1 "cannot write $WORK/small-disk/c.nmtc: No space left on device" "$BIN/nmt-prepare" \
    --src "$WORK/train.en" --tgt "$WORK/train.de" "${PREP[@]}" --output "$WORK/small-disk/c.nmtc"
  [ -z "$(ls -A "$WORK/small-disk")" ] || fail "a failed nmt-prepare left $(ls -A "$WORK/small-disk")"
  expect 1 "No space left on device" "$BIN/nmt-train" "${TRAIN[@]}" --threads 1 --quiet \
    --data-cache "$WORK/small-disk/cache" --model-dir "$WORK/p3"
  [ -z "$(ls -A "$WORK/small-disk")" ] || fail "a failed nmt-train left $(ls -A "$WORK/small-disk")"
  [ ! -e "$WORK/p3" ] || fail "a failed nmt-train created $WORK/p3"
  umount "$WORK/small-disk"
else
  echo "not checked here: a disk that fills while preparing (cannot mount a tmpfs)" >&2
fi
echo "fault tests passed"
