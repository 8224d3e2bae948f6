#!/usr/bin/env bash
# Debian 12's build (this machine's build/: LibTorch 1.13, oneDNN 2.6) against Debian 13's
# (the root of scripts/check-debian13.sh, its clone's build/: LibTorch 2.6, oneDNN 3.7), the
# same commit on the same CPU, alternated in one run (who goes first alternates by round):
#  - decoding test_2016_flickr.de (1,000 lines) with the shared model: beam 5 and greedy,
#    fp32 and int8 (where the CPU has AVX2): sentences/s from nmt-translate's summary;
#  - whether each stack's output is byte-identical to the other's (bf16 too, where the CPU
#    has AVX512-BF16), else the BLEU of each;
#  - training the Transformer preset on Multi30k, fp32 and bf16 (where the CPU has it):
#    target tokens/s over STEPS updates;
#  - a last.pt written by each stack resumes training and translates on the other.
# Usage: bench/stacks.sh [REPEATS] [STEPS]   (default 5 rounds of decoding, 3 of training; 60 steps)
# TRAIN_REPEATS sets the training rounds, TRAIN_PRECISIONS="fp32" the precisions trained.
# Needs: build/ of this commit (cmake --build build), then `bash scripts/check-debian13.sh`
# (builds the same commit in the root); NMT_DEBIAN13_ROOT as for that script. Run as root,
# on an otherwise idle machine. Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-5}
STEPS=${2:-60}
TRAIN_REPEATS=${TRAIN_REPEATS:-3}
DATA=$(cd "${MULTI30K:-../shared/data/multi30k}" && pwd)
MODEL=$(realpath "${MODEL:-../shared/models/m30k-transformer-60min.pt}")
root=${NMT_DEBIAN13_ROOT:-/var/cache/nmt/debian13}
bin12=$PWD/build/bin
bin13=/work/main/build/bin  # inside the root
[ -x "$root$bin13/nmt-translate" ] || { echo "error: no Debian 13 build in $root/work/main: run scripts/check-debian13.sh" >&2; exit 1; }
commit12=$(git rev-parse --short HEAD)
commit13=$(git -C "$root/work/main" rev-parse --short HEAD)
[ "$commit12" = "$commit13" ] || echo "warning: Debian 12 build is of $commit12, Debian 13's of $commit13" >&2

# A scratch folder both stacks see: in the root's /tmp, by the same relative paths.
inner=/tmp/nmt-stacks-$$
WORK=$root$inner
mounted=()
cleanup() {
  local m
  for m in "${mounted[@]}"; do umount -R "$m" 2>/dev/null || umount -R -l "$m" || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
for m in proc sys; do
  mountpoint -q "$root/$m" && continue
  mount --rbind "/$m" "$root/$m" && mount --make-rslave "$root/$m" && mounted+=("$root/$m")
done
mkdir -p "$WORK"
cp "$MODEL" "$WORK/model.pt"
for f in test_2016_flickr.de test_2016_flickr.en train.de train.en val.de val.en; do cp "$DATA/$f" "$WORK/"; done

cp configs/transformer.json "$WORK/"
# The root's tools run in a clean environment but for OpenBLAS's settings, as found here.
passed=()
while IFS= read -r name; do passed+=("$name=${!name}"); done < <(compgen -e | grep '^OPENBLAS_' || true)

# on STACK PROGRAM ARGS...: runs an nmt tool of that stack in $WORK (arguments relative to it).
on() {
  local stack=$1 program=$2
  shift 2
  if [ "$stack" = 12 ]; then
    (cd "$WORK" && "$bin12/$program" "$@")
  else
    chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 "${passed[@]}" \
      bash -c 'cd "$0" && exec "$@"' "$inner" "$bin13/$program" "$@"
  fi
}
source bench/stats.sh
order() { if [ $(($1 % 2)) -eq 1 ]; then echo "12 13"; else echo "13 12"; fi; }
# alternated ROUNDS MEASURE ARGS...: "MEASURE STACK ARGS..." on both stacks ROUNDS times, who
# goes first alternating ($round is visible to MEASURE); fills r12 and r13 with the figures
# MEASURE prints and ratios with 13 / 12 per round.
alternated() {
  local rounds=$1 measure=$2 round stack figure
  shift 2
  r12=() r13=() ratios=()
  for round in $(seq "$rounds"); do
    for stack in $(order "$round"); do
      figure=$("$measure" "$stack" "$@")
      if [ "$stack" = 12 ]; then r12+=("$figure"); else r13+=("$figure"); fi
    done
    ratios+=("$(awk -v a="${r13[-1]}" -v b="${r12[-1]}" 'BEGIN {printf "%.3f", a / b}')")
  done
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
echo "CPU: $cpu ($(grep -o 'avx512[a-z_0-9]*\|avx2\|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')), $(nproc) cores," \
  "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $(date -u +%F); commits $commit12 (Debian 12) / $commit13 (Debian 13)"
echo "Debian 12: $("$bin12/nmt-translate" --version)"
echo "Debian 13: $(on 13 nmt-translate --version)"
echo

# --- decoding ---------------------------------------------------------------------------
precisions=(fp32)
grep -qw avx2 /proc/cpuinfo && precisions+=(int8)
identical_precisions=("${precisions[@]}")
grep -qw avx512_bf16 /proc/cpuinfo && identical_precisions+=(bf16)

# translate STACK PRECISION BEAM: one run of the test set; prints sentences/s.
translate() {
  on "$1" nmt-translate --model model.pt --precision "$2" --beam "$3" --threads 2 \
    <"$WORK/test_2016_flickr.de" >"$WORK/out-$1-$2-$3.txt" 2>"$WORK/err-$1.txt"
  sed -n 's/^translated.*: \([0-9.]*\) sentences.*/\1/p' "$WORK/err-$1.txt"
}
bleu() { on 12 nmt-eval --ref test_2016_flickr.en --metrics bleu <"$1" | grep -o 'BLEU[^ ]* = [0-9.]*' | head -1 | grep -o '[0-9.]*$'; }

echo "Decoding, 2 threads, median (range) of $REPEATS alternated rounds:"
echo
echo "| precision | beam | Debian 12 sentences/s | Debian 13 sentences/s | 13 / 12 | outputs |"
echo "|---|---:|---:|---:|---:|---|"
for precision in "${identical_precisions[@]}"; do
  for beam in 5 1; do
    timed=false
    [[ " ${precisions[*]} " == *" $precision "* ]] && timed=true
    rounds=$REPEATS
    $timed || rounds=1
    alternated "$rounds" translate "$precision" "$beam"
    a=$WORK/out-12-$precision-$beam.txt
    b=$WORK/out-13-$precision-$beam.txt
    if cmp -s "$a" "$b"; then
      same="byte-identical"
    else
      differing=$(paste -d '\t' "$a" "$b" | awk -F'\t' '$1 != $2' | wc -l)
      same="$differing lines differ; BLEU $(bleu "$a") (12) / $(bleu "$b") (13)"
    fi
    if $timed; then
      echo "| $precision | $beam | $(median_range "${r12[@]}") | $(median_range "${r13[@]}") | $(median_range "${ratios[@]}") | $same |"
    else
      echo "| $precision | $beam | (not timed) | | | $same |"
    fi
  done
done
echo

# --- training ---------------------------------------------------------------------------
if [ -n "${TRAIN_PRECISIONS:-}" ]; then
  read -r -a train_precisions <<<"$TRAIN_PRECISIONS"
else
  train_precisions=(fp32)
  grep -qw avx512_bf16 /proc/cpuinfo && train_precisions+=(bf16)
fi
on 12 nmt-spm-train --input train.de train.en --model-prefix spm --vocab-size 8000 --model-type bpe >/dev/null 2>&1
on 12 nmt-prepare --src train.de --tgt train.en --src-spm spm.model --tgt-spm spm.model --output train.nmtc >/dev/null 2>&1

# train STACK PRECISION DIR [STEPS]: nmt-train of the preset; prints mean target tokens/s.
train() {
  on "$1" nmt-train --config transformer.json --train-data train.nmtc \
    --valid-src val.de --valid-tgt val.en --src-spm spm.model --tgt-spm spm.model --model-dir "$3" --threads 2 \
    --max-steps "${4:-$STEPS}" --set train.log_every=10 --set train.valid_every=1000000 --set train.valid_max_sentences=1 \
    --set train.precision="\"$2\"" >"$WORK/$3.out" 2>"$WORK/$3.err" || { tail -3 "$WORK/$3.err" >&2; return 1; }
  grep '"type":"progress"' "$WORK/$3/train.jsonl" | tail -n +2 |
    sed 's/.*"target_tokens_per_second":\([0-9.e+]*\).*/\1/' | awk '{s+=$1; n++} END {printf "%.0f", s/n}'
}

echo "Training the Transformer preset, 2 threads, $STEPS updates, mean target tokens/s after the first report, median (range) of $TRAIN_REPEATS alternated rounds:"
echo
echo "| precision | Debian 12 tokens/s | Debian 13 tokens/s | 13 / 12 |"
echo "|---|---:|---:|---:|"
# train_round STACK PRECISION: one round's run, in its own model directory.
train_round() { train "$1" "$2" "run-$1-$2-$round"; }
for precision in "${train_precisions[@]}"; do
  alternated "$TRAIN_REPEATS" train_round "$precision"
  echo "| $precision | $(median_range "${r12[@]}") | $(median_range "${r13[@]}") | $(median_range "${ratios[@]}") |"
done
echo

# --- checkpoints across stacks ----------------------------------------------------------
echo "Checkpoints across stacks (a last.pt of one resumes $((STEPS / 2)) more updates and translates on the other):"
echo
for pair in "12 13" "13 12"; do
  read -r writer reader <<<"$pair"
  run=run-$writer-fp32-1
  cp -r "$WORK/$run" "$WORK/cross-$writer"
  resumed=$(train "$reader" fp32 "cross-$writer" $((STEPS + STEPS / 2)) >/dev/null && echo yes || echo NO)
  # A short run may translate lines to nothing: what counts is that every line gets its answer.
  if head -20 "$WORK/test_2016_flickr.de" | on "$reader" nmt-translate --model "cross-$writer/last.pt" --quiet \
      >"$WORK/cross-$writer.txt" 2>/dev/null; then
    translated="yes, $(wc -l <"$WORK/cross-$writer.txt") lines for 20"
  else
    translated=NO
  fi
  echo "- written by Debian $writer, read by Debian $reader: resumed to step $((STEPS + STEPS / 2)): $resumed; translated: $translated"
done
