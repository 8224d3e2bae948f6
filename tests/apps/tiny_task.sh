# Sourced by the end-to-end tests in tests/apps/: the tiny task they all train on.
# Needs BIN (the tools) and SRC (the source tree) set by the caller.
# tiny_task WORK TRAIN_LINES VALID_LINES: WORK/{train,valid}.{en,de}, the first lines of
# data/numbers, and WORK/spm.model, a 60-piece BPE tokenizer trained on them.
tiny_task() {
  local work=$1 train_lines=$2 valid_lines=$3 side
  for side in en de; do
    head -"$train_lines" "$SRC/data/numbers/train.$side" >"$work/train.$side"
    head -"$valid_lines" "$SRC/data/numbers/valid.$side" >"$work/valid.$side"
  done
  "$BIN/nmt-spm-train" --input "$work/train.en" "$work/train.de" --model-prefix "$work/spm" --vocab-size 60 \
    --model-type bpe 2>/dev/null
}
