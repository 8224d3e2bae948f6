# Shared by the training benchmarks (sourced): Multi30k paths, a scratch dir, the joint
# 8k BPE tokenizer, and the mean throughput of a run.
DATA=${MULTI30K:-../shared/data/multi30k}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
build/bin/nmt-spm-train --input "$DATA/train.de" "$DATA/train.en" --model-prefix "$WORK/spm" \
  --vocab-size 8000 --model-type bpe >/dev/null 2>&1

# mean_tokens_per_second TRAIN_JSONL: mean over the progress reports after the first
# (which includes start-up).
mean_tokens_per_second() {
  grep '"type":"progress"' "$1" | tail -n +2 |
    sed 's/.*"target_tokens_per_second":\([0-9.e+]*\).*/\1/' | awk '{s+=$1; n++} END {printf "%.0f", s/n}'
}
