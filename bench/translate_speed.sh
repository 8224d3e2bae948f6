#!/usr/bin/env bash
# Decoding speed on Multi30k test_2016_flickr.de (1,000 lines), default batching, alpha 0.6:
# for beam 1 and 5, 1 and 2 threads, fp32, bf16 (where the CPU has AVX512-BF16) and int8
# (where it has AVX2; 7-bit weights without AVX512-VNNI):
# sentences/s and target tokens/s (nmt-translate's own summary, model loading excluded),
# --batch-size 1 latency (ms per sentence, first LATENCY_LINES lines), peak RSS and BLEU.
# BASELINE=DIR/nmt-translate (e.g. a build of the previous commit) adds each figure's
# ratio new/baseline (the baseline in fp32, older builds lacking --precision; BASELINE_PRECISION=same
# runs it in each row's precision), measured alternately in the same run. REPEATS (default 3) runs
# each measurement that many times and reports the median (and the range).
# Usage: bench/translate_speed.sh MODEL.pt   Prints Markdown. Records OPENBLAS_CORETYPE.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=$1
DATA=${MULTI30K:-../shared/data/multi30k}
REPEATS=${REPEATS:-3}
LATENCY_LINES=${LATENCY_LINES:-100}
BASELINE=${BASELINE:-}
BASELINE_PRECISION=${BASELINE_PRECISION:-fp32}
case "$BASELINE_PRECISION" in fp32 | same) ;; *) echo "error: BASELINE_PRECISION is fp32 or same" >&2; exit 2 ;; esac
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
head -n "$LATENCY_LINES" "$DATA/test_2016_flickr.de" >"$WORK/latency.de"
# PRECISIONS="fp32 int8" limits the table; by default fp32 and what this CPU runs natively.
if [ -n "${PRECISIONS:-}" ]; then
  read -r -a precisions <<<"$PRECISIONS"
else
  precisions=(fp32)
  grep -qw avx512_bf16 /proc/cpuinfo && precisions+=(bf16)
  grep -qw avx2 /proc/cpuinfo && precisions+=(int8)
fi

# run BINARY OUT ARGS...: one nmt-translate run; prints "sentences/s tokens/s rss_mib seconds"
run() {
  local binary=$1 out=$2
  shift 2
  /usr/bin/time -v -o "$WORK/time.txt" "$binary" --model "$MODEL" "$@" >"$out" 2>"$WORK/err.txt"
  local summary
  summary=$(grep '^translated' "$WORK/err.txt")
  echo "$(echo "$summary" | sed 's/.*: \([0-9.]*\) sentences.*/\1/') \
$(echo "$summary" | sed 's/.*, \([0-9]*\) target tokens.*/\1/') \
$(awk -F: '/Maximum resident/ {printf "%.0f", $2/1024}' "$WORK/time.txt") \
$(echo "$summary" | sed 's/.* in \([0-9.]*\) s:.*/\1/')"
}
source bench/stats.sh

echo "Model $MODEL, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, median of $REPEATS runs (range)${BASELINE:+, baseline $BASELINE}"
echo
header="| precision | beam | threads | sentences/s | target tokens/s | latency ms/sentence (--batch-size 1) | peak RSS (MiB) | BLEU |"
rule="|---|---:|---:|---:|---:|---:|---:|---:|"
baseline_name="baseline $([ "$BASELINE_PRECISION" = same ] && echo "same precision" || echo fp32)"
[ -n "$BASELINE" ] && header="$header sentences/s / $baseline_name | latency / $baseline_name |" && rule="$rule---:|---:|"
echo "$header"
echo "$rule"
for precision in "${precisions[@]}"; do
  for beam in 1 5; do
    for threads in 1 2; do
      args=(--beam "$beam" --threads "$threads" --precision "$precision")
      sps=() tps=() rss=() lat=() base_sps=() base_lat=()
      for _ in $(seq "$REPEATS"); do
        read -r s t r _ < <(run build/bin/nmt-translate "$WORK/out.txt" "${args[@]}" <"$DATA/test_2016_flickr.de")
        sps+=("$s") tps+=("$t") rss+=("$r")
        read -r _ _ _ secs < <(run build/bin/nmt-translate /dev/null "${args[@]}" --batch-size 1 <"$WORK/latency.de")
        lat+=("$(awk -v s="$secs" -v n="$LATENCY_LINES" 'BEGIN {printf "%.2f", 1000 * s / n}')")
        if [ -n "$BASELINE" ]; then
          base_args=(--beam "$beam" --threads "$threads")  # fp32 by default (older builds lack --precision)
          [ "$BASELINE_PRECISION" = same ] && base_args+=(--precision "$precision")
          read -r s _ _ _ < <(run "$BASELINE" "$WORK/base.txt" "${base_args[@]}" <"$DATA/test_2016_flickr.de")
          base_sps+=("$s")
          read -r _ _ _ secs < <(run "$BASELINE" /dev/null "${base_args[@]}" --batch-size 1 <"$WORK/latency.de")
          base_lat+=("$(awk -v s="$secs" -v n="$LATENCY_LINES" 'BEGIN {printf "%.2f", 1000 * s / n}')")
        fi
      done
      bleu=$(build/bin/nmt-eval --ref "$DATA/test_2016_flickr.en" -b --metrics bleu <"$WORK/out.txt")
      row="| $precision | $beam | $threads | $(median_range "${sps[@]}") | $(median "${tps[@]}") | $(median_range "${lat[@]}") | $(median "${rss[@]}") | $bleu |"
      if [ -n "$BASELINE" ]; then
        same=""
        [ "$precision" = fp32 ] || [ "$BASELINE_PRECISION" = same ] && { cmp -s "$WORK/out.txt" "$WORK/base.txt" && same=" (identical text)" || same=" (text differs)"; }
        row="$row $(awk -v a="$(median "${sps[@]}")" -v b="$(median "${base_sps[@]}")" 'BEGIN {printf "%.2f", a / b}')$same | \
$(awk -v a="$(median "${lat[@]}")" -v b="$(median "${base_lat[@]}")" 'BEGIN {printf "%.2f", a / b}') |"
      fi
      echo "$row"
    done
  done
done
