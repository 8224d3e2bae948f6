#!/usr/bin/env bash
# fp32 training speed against the fp32 GEMM rate of the same machine, in one run: for each
# instruction set (as found, then capped with NMT_CPU_ISA=avx2), the GEMM probe
# (bench/gemm_rate.cpp) at the preset's shapes, then nmt-train in fp32 for STEPS updates;
# the fraction is (target tokens/s x FLOP per target token) / GEMM rate, against the best
# of the BLAS and oneDNN rates. REPEATS alternated rounds; median and range.
# BASELINE=DIR/nmt-train (a build of the previous commit) adds its tokens/s, trained right
# after (odd rounds) or before (even rounds) each of ours, and the ratio ours/baseline (median of the rounds).
# ISAS (default "found avx2") chooses the instruction sets.
# Usage: bench/train_speed.sh [STEPS] [REPEATS] [PRESET]   (default 60 3 transformer)
# Needs ../shared/data/multi30k (or MULTI30K) and a build. Records the CPU and OPENBLAS_CORETYPE;
# under the cap OpenBLAS is given OPENBLAS_CORETYPE=Haswell (AVX2 kernels) unless one is set.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-60}
REPEATS=${2:-3}
PRESET=${3:-transformer}
read -r -a isas <<<"${ISAS:-found avx2}"
cmake --build build --target gemm_rate nmt-train >/dev/null
source bench/common.sh

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
echo "CPU: $cpu ($(grep -o 'avx512[a-z_0-9]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')), $(nproc) cores;" \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; preset configs/$PRESET.json, fp32, $STEPS steps, 2 threads"

# capped_env ISA COMMAND...: runs COMMAND as found (ISA "found"), or capped to ISA (OpenBLAS too).
capped_env() {
  local isa=$1
  shift
  if [ "$isa" = found ]; then "$@"; else env NMT_CPU_ISA="$isa" OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}" "$@"; fi
}

# train ISA ROUND [BINARY]: one fp32 run; prints its mean target tokens/s after the first report.
train() {
  local dir=$WORK/$1-$2
  capped_env "$1" "${3:-build/bin/nmt-train}" --config "configs/$PRESET.json" \
    --train-src "$DATA/train.de" --train-tgt "$DATA/train.en" --valid-src "$DATA/val.de" --valid-tgt "$DATA/val.en" \
    --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --model-dir "$dir" --threads 2 \
    --max-steps "$STEPS" --set train.log_every=10 --set train.valid_every="$STEPS" --set train.valid_max_sentences=1 \
    --set train.precision='"fp32"' --data-cache "$WORK/cache" >"$dir.out" 2>"$dir.err"
  mean_tokens_per_second "$dir/train.jsonl"
}

# probe ISA: the GEMM probe's FLOP per token and rates, as "flop blas onednn".
probe() {
  local corpus
  corpus=$(ls "$WORK"/cache/train-*.nmtc 2>/dev/null | head -1)
  capped_env "$1" build/bench/gemm_rate --config "configs/$PRESET.json" --threads 2 \
    ${corpus:+--corpus "$corpus"} >"$WORK/probe-$1.txt"
  awk '/^flop_per_target_token/ {f=$2} /^blas_gflops/ {b=$2} /^onednn_gflops/ {o=$2} END {print f, b, o}' \
    "$WORK/probe-$1.txt"
}

train found warmup >/dev/null  # prepares the corpus cache and warms the page cache
BASELINE=${BASELINE:-}
declare -A rates fractions probes base_rates ratios
for round in $(seq "$REPEATS"); do
  for isa in "${isas[@]}"; do
    read -r flop blas onednn < <(probe "$isa")
    # The second run of a pair tends to be the faster here: who goes first alternates.
    if [ -n "$BASELINE" ] && [ $((round % 2)) -eq 0 ]; then
      base_rate=$(train "$isa" "baseline-$round" "$BASELINE")
      rate=$(train "$isa" "$round")
    elif [ -n "$BASELINE" ]; then
      rate=$(train "$isa" "$round")
      base_rate=$(train "$isa" "baseline-$round" "$BASELINE")
    else
      rate=$(train "$isa" "$round")
    fi
    best=$(awk -v b="$blas" -v o="${onednn:-0}" 'BEGIN {print (o > b ? o : b)}')
    rates[$isa]+="$rate "
    fractions[$isa]+="$(awk -v r="$rate" -v f="$flop" -v g="$best" 'BEGIN {printf "%.3f", r * f / (g * 1e9)}') "
    probes[$isa]+="$blas/$onednn "
    if [ -n "$BASELINE" ]; then
      base_rates[$isa]+="$base_rate "
      ratios[$isa]+="$(awk -v r="$rate" -v b="$base_rate" 'BEGIN {printf "%.3f", r / b}') "
    fi
    flop_per_token=$flop
  done
done

median_range() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {printf "%s (%s-%s)", v[int((NR+1)/2)], v[1], v[NR]}'; }
echo "FLOP per target token (Linear products, forward + both backward products, non-padding tokens): $flop_per_token"
echo
header="| ISA | target tokens/s | GEMM probe GFLOP/s (blas/onednn, per round) | fraction of the best GEMM rate |"
rule="|---|---:|---|---:|"
[ -n "$BASELINE" ] && header="$header baseline tokens/s | ratio to baseline |" && rule="$rule---:|---:|"
echo "${BASELINE:+Baseline: $BASELINE}"
echo "$header"
echo "$rule"
for isa in "${isas[@]}"; do
  row="| $isa | $(echo "${rates[$isa]}" | median_range) | ${probes[$isa]} | $(echo "${fractions[$isa]}" | median_range) |"
  [ -n "$BASELINE" ] && row="$row $(echo "${base_rates[$isa]}" | median_range) | $(echo "${ratios[$isa]}" | median_range) |"
  echo "$row"
done
echo
for isa in "${isas[@]}"; do echo "probe ($isa, last round):"; cat "$WORK/probe-$isa.txt"; echo; done
