#!/usr/bin/env bash
# How corpus size costs: for corpora of LINES lines (Multi30k's training pairs drawn at
# random with a fixed seed, de -> en), reports
#   - nmt-spm-train on both sides: seconds and peak RSS (it samples --max-sentences lines);
#   - preparing at 2 threads (nmt-train's first start) and 1 thread (nmt-prepare; only up to
#     ONE_THREAD_MAX_LINES lines): seconds and lines/s, and that both wrote the same bytes;
#   - nmt-train (Transformer preset, 2 threads) on the raw text: seconds from the process's
#     start to "start-up took" (all checks and data done) and to the first step's line, on
#     the first start (which prepares the corpus into the cache) and on a resume (which
#     finds it; also the seconds its first epoch's batch plan took), its peak RSS, RssAnon (heap) and RssFile (mapped), and target tokens/s
#     over STEPS updates;
#   - 2 ranks on this host (scripts/launch-local.sh, 1 thread each) on the prepared corpus:
#     the larger rank's peak RSS and RssAnon.
# Usage: bench/corpus_scale.sh [LINES ...]   (default: 29000 2000000; the 20M row: 20000000)
# Env: STEPS (default 30), MULTI30K, ONE_THREAD_MAX_LINES, KEEP_WORK=1 keeps the scratch dir. Needs a build and
# ../shared/data/multi30k. Prints a Markdown table; say which CPU it ran on.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(29000 2000000)
STEPS=${STEPS:-30}
DATA=${MULTI30K:-../shared/data/multi30k}
WORK=$(mktemp -d -p "${TMPDIR:-/tmp}" corpus-scale.XXXXXX)
[ "${KEEP_WORK:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
BIN=build/bin
watch() { python3 bench/proc_watch.py "$@"; }
field() { python3 -c "import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print('-' if v is None else v)" "$1" "$2"; }
mean_tokens_per_second() {
  grep '"type":"progress"' "$1" | tail -n +2 |
    sed 's/.*"target_tokens_per_second":\([0-9.e+]*\).*/\1/' | awk '{s+=$1; n++} END {printf "%.0f", n ? s/n : 0}'
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
isa=$(grep -o 'avx512[a-z_0-9]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "CPU: $cpu ($isa), $(nproc) cores; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $STEPS steps of configs/transformer.json"
echo
echo "| lines | spm-train s / RSS MiB | prepare 1 thread s (lines/s) | prepare 2 threads s (lines/s) | speed-up | first start: start-up s / first step s | resume: start-up s / plan s / first step s | peak RSS / RssAnon / RssFile MiB | tokens/s | 2 ranks: peak RSS / RssAnon MiB per rank |"
echo "|---:|---|---|---|---:|---|---|---|---:|---|"
paste -d '\t' "$DATA/train.de" "$DATA/train.en" >"$WORK/pairs.tsv"
for lines in "${SIZES[@]}"; do
  dir=$WORK/$lines
  mkdir -p "$dir"
  awk -v n="$lines" 'NR == FNR {pair[NR] = $0; count = NR; next}
    END {srand(1); for (i = 0; i < n; i++) print pair[int(rand() * count) + 1]}' "$WORK/pairs.tsv" /dev/null >"$dir/pairs.tsv"
  cut -f1 "$dir/pairs.tsv" >"$dir/train.de"
  cut -f2 "$dir/pairs.tsv" >"$dir/train.en"
  rm "$dir/pairs.tsv"

  spm=$(watch --stderr "$dir/spm.err" -- $BIN/nmt-spm-train --input "$dir/train.de" "$dir/train.en" \
    --model-prefix "$dir/spm" --vocab-size 8000 --threads 2)

  train=(--config configs/transformer.json --train-src "$dir/train.de" --train-tgt "$dir/train.en"
    --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" --src-spm "$dir/spm.model" --tgt-spm "$dir/spm.model"
    --threads 2 --set train.log_every=1 --set train.valid_every=100000 --set train.valid_max_sentences=1)
  marks=(--mark start='start-up took' --mark step='^step +[0-9]+ \|')
  # The first start prepares the corpus on 2 threads: its log gives the 2-thread figure.
  first=$(watch "${marks[@]}" --stderr "$dir/first.err" -- $BIN/nmt-train "${train[@]}" --model-dir "$dir/model" \
    --max-steps 1)
  cached=$(ls "$dir"/model/data-cache/train-*.nmtc)
  prep2=$(grep -o "prepared $cached: .* in [0-9.]* s" "$dir/first.err" | sed 's/.* in \([0-9.]*\) s$/\1/')
  prep1=-
  if [ "$lines" -le "${ONE_THREAD_MAX_LINES:-1000000000000}" ]; then
    result=$(watch --stderr "$dir/prepare1.err" -- $BIN/nmt-prepare --src "$dir/train.de" --tgt "$dir/train.en" \
      --src-spm "$dir/spm.model" --tgt-spm "$dir/spm.model" --output "$dir/prepared1.nmtc" --threads 1)
    prep1=$(grep -o 'in [0-9.]* s$' "$dir/prepare1.err" | awk '{print $2}')
    cmp "$dir/prepared1.nmtc" "$cached" || { echo "1 and 2 threads prepared different files" >&2; exit 1; }
    rm "$dir/prepared1.nmtc"
  fi
  prep=("$prep1" "$prep2")
  resumed=$(watch "${marks[@]}" --stderr "$dir/resume.err" -- $BIN/nmt-train "${train[@]}" --model-dir "$dir/model" \
    --max-steps $((STEPS + 1)))
  rate=$(mean_tokens_per_second "$dir/model/train.jsonl")
  plan=$(grep -o 'planned in [0-9.]* s' "$dir/resume.err" | head -1 | awk '{print $3}')
  ranks=$(MASTER_PORT=$((29600 + RANDOM % 300)) watch --stderr "$dir/ranks.err" -- scripts/launch-local.sh 2 \
    $BIN/nmt-train --config configs/transformer.json --train-data "$cached" \
    --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" --src-spm "$dir/spm.model" --tgt-spm "$dir/spm.model" \
    --threads 1 --set train.valid_every=100000 --set train.valid_max_sentences=1 --model-dir "$dir/ranks" \
    --max-steps 3)
  speedup=$(awk -v a="${prep[0]}" -v b="${prep[1]}" 'BEGIN {if (a == "-") print "-"; else printf "%.2f", a / b}')
  per_second() { awk -v n="$lines" -v s="$1" 'BEGIN {if (s == "-") print "-"; else printf "%.0f", n / s}'; }
  echo "| $lines | $(field "$spm" seconds) / $(field "$spm" peak_rss_mib) | ${prep[0]} ($(per_second "${prep[0]}")) |" \
    "${prep[1]} ($(per_second "${prep[1]}")) | $speedup |" \
    "$(field "$first" start) / $(field "$first" step) | $(field "$resumed" start) / ${plan:--} / $(field "$resumed" step) |" \
    "$(field "$resumed" peak_rss_mib) / $(field "$resumed" peak_rss_anon_mib) / $(field "$resumed" peak_rss_file_mib) |" \
    "$rate | $(field "$ranks" peak_rss_mib) / $(field "$ranks" peak_rss_anon_mib) |"
  [ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$dir"
done
