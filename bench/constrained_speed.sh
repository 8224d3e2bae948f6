#!/usr/bin/env bash
# Lexically constrained decoding against plain beam 5 on Multi30k test_2016_flickr.de
# (1,000 lines): sentences/s (nmt-translate's own summary, model loading excluded; the three
# settings alternated REPEATS times, median and range), BLEU, and the lines whose output
# holds all their phrases. The constraints are words of each line's reference: the longest
# (and the second longest) of more than 3 letters, so the outputs can be checked.
# Usage: bench/constrained_speed.sh MODEL.pt   Env: REPEATS (3), THREADS (2). Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$1
DATA=${MULTI30K:-../shared/data/multi30k}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-2}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$DATA/test_2016_flickr.en" "$WORK" <<'PY'
import re, sys
one, two = [], []
for ref in open(sys.argv[1]).read().splitlines():
    words = sorted(set(w for w in re.findall(r"[A-Za-z]+", ref) if len(w) > 3), key=lambda w: (-len(w), w))
    one.append("\t".join(words[:1]))
    two.append("\t".join(words[:2]))
open(sys.argv[2] + "/c1.txt", "w").write("\n".join(one) + "\n")
open(sys.argv[2] + "/c2.txt", "w").write("\n".join(two) + "\n")
PY
run() {  # run NAME [FLAGS...]: one timed translation, appends sentences/s to WORK/NAME.rate
  local name=$1; shift
  build/bin/nmt-translate --model "$MODEL" --beam 5 --threads "$THREADS" "$@" <"$DATA/test_2016_flickr.de" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  grep -o '[0-9.]* sentences/s' "$WORK/$name.err" | cut -d' ' -f1 >>"$WORK/$name.rate"
}
for _ in $(seq "$REPEATS"); do
  run plain
  run one --constraints "$WORK/c1.txt"
  run two --constraints "$WORK/c2.txt"
done
echo "Model $MODEL, beam 5, $THREADS threads, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), median of $REPEATS alternated runs (range)"
echo
echo "| constraints per line | sentences/s | / plain | BLEU | lines holding all their phrases |"
echo "|---|---:|---:|---:|---:|"
plain=$(sort -n "$WORK/plain.rate" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
for name in plain one two; do
  rates=$(sort -n "$WORK/$name.rate")
  median=$(echo "$rates" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  range="$(echo "$rates" | head -1)-$(echo "$rates" | tail -1)"
  bleu=$(build/bin/nmt-eval --ref "$DATA/test_2016_flickr.en" <"$WORK/$name.out" | grep -o '^BLEU = [0-9.]*' | cut -d' ' -f3)
  file=$WORK/c1.txt; [ "$name" = two ] && file=$WORK/c2.txt
  held=$(python3 - "$WORK/$name.out" "$file" <<'PY'
import sys
outs = open(sys.argv[1]).read().splitlines()
cons = [l.split("\t") if l else [] for l in open(sys.argv[2]).read().splitlines()]
print(sum(all(c in o for c in cs) for o, cs in zip(outs, cons)))
PY
)
  label=$name; [ "$name" = plain ] && label="none (plain beam 5; held: by chance)"
  echo "| $label | $median ($range) | $(python3 -c "print(f'{$median / $plain:.2f}')") | $bleu | $held / 1000 |"
done
