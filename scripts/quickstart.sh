#!/usr/bin/env bash
# Installs, builds the tools (not the tests: scripts/test.sh builds those), generates the
# bundled number-words task, trains its tokenizer and a small attention model, translates
# and scores the test set, and writes an attention heatmap. Prints each stage's time.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
stage_start=$SECONDS
stage() {  # stage NAME: closes the previous stage's timing line, opens the next
  [ -z "${stage_name:-}" ] || echo "== $stage_name: $((SECONDS - stage_start)) s" >&2
  stage_name=$1
  stage_start=$SECONDS
  [ -z "$stage_name" ] || echo "== $stage_name ..." >&2
}
stage "installing Debian packages"
bash scripts/install-deps.sh
stage "building the tools (the tests are built by scripts/test.sh)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target quickstart-tools
stage "generating the number-words task (data/numbers)"
build/bin/nmt-make-numbers --output-dir data/numbers --seed 1
mkdir -p work/numbers
stage "training the tokenizer"
build/bin/nmt-spm-train --input data/numbers/train.en data/numbers/train.de \
  --model-prefix work/numbers/spm --vocab-size 120 --model-type bpe
stage "training the attention model (400 steps)"
build/bin/nmt-train --config configs/numbers-attention.json \
  --train-src data/numbers/train.en --train-tgt data/numbers/train.de \
  --valid-src data/numbers/valid.en --valid-tgt data/numbers/valid.de \
  --src-spm work/numbers/spm.model --tgt-spm work/numbers/spm.model --model-dir work/numbers/attention
stage "translating and scoring the test set"
head -5 data/numbers/test.en | build/bin/nmt-translate --model work/numbers/attention/best.pt --beam 5
build/bin/nmt-translate --model work/numbers/attention/best.pt --quiet < data/numbers/test.en \
  > work/numbers/test.hyp.de
build/bin/nmt-eval --ref data/numbers/test.de --metrics chrf < work/numbers/test.hyp.de
stage "exporting attention"
head -4 data/numbers/test.en | build/bin/nmt-align --model work/numbers/attention/best.pt \
  --html work/numbers/heatmap.html --output work/numbers/attention.jsonl
stage ""
cat >&2 <<EOT

quick start done in $((SECONDS - started)) s:
  model         work/numbers/attention/best.pt (training log: work/numbers/attention/train.jsonl)
  translations  work/numbers/test.hyp.de
  heatmap       work/numbers/heatmap.html (attention matrices: work/numbers/attention.jsonl)
next, on real data: README.md, "Walkthrough: German to English on Multi30k" (how to get
Multi30k, then a tokenizer and a Transformer trained for 10 minutes, validated and saved):
  D=work/multi30k
  build/bin/nmt-spm-train --input \$D/train.de \$D/train.en --model-prefix work/m30k/spm8k --vocab-size 8000 --model-type bpe
  build/bin/nmt-train --config configs/transformer.json --train-src \$D/train.de --train-tgt \$D/train.en \\
    --valid-src \$D/val.de --valid-tgt \$D/val.en --src-spm work/m30k/spm8k.model --tgt-spm work/m30k/spm8k.model \\
    --model-dir work/m30k/transformer --max-time 10
EOT
