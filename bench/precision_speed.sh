#!/usr/bin/env bash
# shellcheck disable=SC2086  # the lists of speeds are split into arguments on purpose
# fp32 against int8 decoding, per instruction set: for the CPU as found and capped with
# NMT_CPU_ISA=avx2 (OpenBLAS on its Haswell kernels unless OPENBLAS_CORETYPE is set),
# nmt-translate on Multi30k test_2016_flickr.de (1,000 lines), 2 threads, default batching,
# beam BEAMS (default "5 1"): sentences/s (its own summary, model loading excluded), the
# int8/fp32 ratio and cased BLEU (nmt-eval, 13a).
# BASELINE=DIR/nmt-translate (a build of the previous commit) runs the same precision and
# ISA right after each of ours: its sentences/s, the ratio ours/baseline, and whether the
# outputs are identical. REPEATS (default 3) alternated rounds; median (range).
# Usage: bench/precision_speed.sh MODEL.pt   Prints Markdown. Records the CPU and OPENBLAS_CORETYPE.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: bench/precision_speed.sh MODEL.pt" >&2; exit 2; }
MODEL=$1
DATA=${MULTI30K:-../shared/data/multi30k}
REPEATS=${REPEATS:-3}
BASELINE=${BASELINE:-}
read -r -a beams <<<"${BEAMS:-5 1}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

source bench/stats.sh

# speed BINARY ISA PRECISION BEAM OUT: one run; prints its sentences/s.
speed() {
  local binary=$1 isa=$2 precision=$3 beam=$4 out=$5
  local -a env_cap=()
  [ "$isa" = avx2 ] && env_cap=(NMT_CPU_ISA=avx2 OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}")
  env "${env_cap[@]}" "$binary" --model "$MODEL" --beam "$beam" --threads 2 --precision "$precision" \
    <"$DATA/test_2016_flickr.de" >"$out" 2>"$WORK/err.txt" || { cat "$WORK/err.txt" >&2; exit 1; }
  grep '^translated' "$WORK/err.txt" | sed 's/.*: \([0-9.]*\) sentences.*/\1/'
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) ($(grep -o 'avx512[a-z_0-9]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')), $(nproc) cores"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} as found; model $MODEL; median of $REPEATS alternated rounds (range)"
[ -n "$BASELINE" ] && echo "Baseline: $BASELINE"
echo
echo "| ISA | beam | precision | sentences/s | int8 / fp32 | BLEU |$([ -n "$BASELINE" ] && echo " baseline sentences/s | ours / baseline | same output |")"
echo "|---|---:|---|---:|---:|---:|$([ -n "$BASELINE" ] && echo "---:|---:|---|")"
for isa in found avx2; do
  for beam in "${beams[@]}"; do
    declare -A ours=() theirs=() same=()
    for round in $(seq "$REPEATS"); do
      # The second run of a pair tends to be the faster here: the order alternates.
      order="fp32 int8"
      [ $((round % 2)) -eq 0 ] && order="int8 fp32"
      for precision in $order; do
        ours[$precision]+=" $(speed build/bin/nmt-translate "$isa" "$precision" "$beam" "$WORK/ours.$precision")"
        if [ -n "$BASELINE" ]; then
          theirs[$precision]+=" $(speed "$BASELINE" "$isa" "$precision" "$beam" "$WORK/theirs.$precision")"
          cmp -s "$WORK/ours.$precision" "$WORK/theirs.$precision" && same[$precision]+=y || same[$precision]+=n
        fi
      done
    done
    fp32_median=$(median ${ours[fp32]})
    for precision in fp32 int8; do
      bleu=$(build/bin/nmt-eval --ref "$DATA/test_2016_flickr.en" -b --metrics bleu <"$WORK/ours.$precision")
      ratio=$(awk -v a="$(median ${ours[$precision]})" -v b="$fp32_median" 'BEGIN {printf "%.2f", a / b}')
      row="| $isa | $beam | $precision | $(median_range ${ours[$precision]}) | $ratio | $bleu |"
      if [ -n "$BASELINE" ]; then
        vs=$(awk -v a="$(median ${ours[$precision]})" -v b="$(median ${theirs[$precision]})" 'BEGIN {printf "%.2f", a / b}')
        [[ ${same[$precision]} == *n* ]] && identical=no || identical=yes
        row+=" $(median_range ${theirs[$precision]}) | $vs | $identical |"
      fi
      echo "$row"
    done
    unset ours theirs same
  done
done
