#!/usr/bin/env bash
# The project on a CUDA machine that has PyTorch (its LibTorch), nvcc, CMake and ninja but no
# Debian development packages and no network: builds against the image's LibTorch, runs the
# tests with NMT_TEST_DEVICE=cuda, then measures decoding and training on the GPU, all within
# one 10-minute command. Logs and summary.md go to $OUT.
#
#   scripts/cuda-check.sh --prepare   here (Debian, network): downloads the Debian packages the
#                                     build needs (apt-get download) and copies the shared model
#                                     and Multi30k into .cuda-carry/ (ignored by git, ~50 MB)
#   scripts/cuda-check.sh             there, with .cuda-carry/ carried beside the tree: the run
#   scripts/cuda-check.sh --dry-run   here: the same steps against Debian's LibTorch on the CPU,
#                                     shortened, into build-cuda-dry/ (what can be checked
#                                     without a GPU: unpacking, configuring with the unpacked
#                                     packages first on the path, building, the steps' commands)
# The packages are unpacked with dpkg-deb -x (or ar + tar) into .cuda-carry/root, never into /.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}
carry=.cuda-carry
started=$SECONDS
budget=${CUDA_CHECK_SECONDS:-570}  # the device runs a command for at most 600 s
OUT=${OUT:-$PWD/cuda-check-out}
mkdir -p "$OUT"

# The Debian 12 packages the build reads: headers and CMake files, SentencePiece and its
# protobuf-lite at run time, wrk for bench/serve_load.sh.
packages=(libsentencepiece-dev libsentencepiece0 libprotobuf-lite32 libcli11-dev nlohmann-json3-dev catch2
  libgloo-dev libdnnl-dev zlib1g-dev libboost1.74-dev wrk libluajit-5.1-2)

prepare() {
  rm -rf "$carry" && mkdir -p "$carry/debs" "$carry/shared/models" "$carry/shared/data/multi30k"
  (cd "$carry/debs" && apt-get download "${packages[@]}" >/dev/null)
  cp ../shared/models/m30k-transformer-60min.pt "$carry/shared/models/"
  cp ../shared/data/multi30k/{train,val,test_2016_flickr}.{de,en} "$carry/shared/data/multi30k/"
  du -sh "$carry"
  echo "carry .cuda-carry with the device command: scripts/cuda-check.sh" >&2
}

left() { echo $((budget - (SECONDS - started))); }
log() { echo "[$((SECONDS - started)) s] $*" | tee -a "$OUT/summary.md" >&2; }
# step NAME SECONDS COMMAND...: runs COMMAND with at most SECONDS (or what is left), output to $OUT/NAME.log.
step() {
  local name=$1 limit=$2
  shift 2
  local allowed=$(( $(left) < limit ? $(left) : limit ))
  if [ "$allowed" -lt 10 ]; then log "$name: skipped (no time left)"; return 0; fi
  local begin=$SECONDS status=0
  timeout "$allowed" "$@" >"$OUT/$name.log" 2>&1 || status=$?
  log "$name: exit $status in $((SECONDS - begin)) s (limit $allowed s)"
  return 0
}

unpack() {
  rm -rf "$carry/root" && mkdir -p "$carry/root"
  for deb in "$carry"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$deb" "$carry/root"
    else
      local tmp
      tmp=$(mktemp -d)
      (cd "$tmp" && ar x "$OLDPWD/$deb" && tar xf data.tar.*)
      rm -f "$tmp"/{control,data}.tar.* "$tmp/debian-binary"
      cp -a "$tmp"/. "$carry/root/" && rm -rf "$tmp"
    fi
  done
}

case "$mode" in
  --prepare) prepare; exit 0 ;;
  --dry-run) build=build-cuda-dry device=cpu budget=${CUDA_CHECK_SECONDS:-1800} ;;
  run) build=build-cuda device=cuda ;;
  *) echo "usage: $0 [--prepare | --dry-run]" >&2; exit 2 ;;
esac
[ -d "$carry/debs" ] || { echo "error: $carry/debs missing: run $0 --prepare where Debian's packages are reachable" >&2; exit 1; }
shared=$carry/shared
[ -f "$shared/models/m30k-transformer-60min.pt" ] || shared=../shared
echo "# scripts/cuda-check.sh ($mode), $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$OUT/summary.md"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"; nproc; } >>"$OUT/summary.md"

unpack
deps=$PWD/$carry/root/usr
arch_libs=$deps/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$arch_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
log "LibTorch: ${torch_prefix:-the system one (no Python torch)}; packages unpacked in $carry/root"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
step configure 120 cmake "${generator[@]}" -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_PREFIX_PATH=${torch_prefix:+$torch_prefix;}$deps;$arch_libs/cmake" \
  "-DCMAKE_INCLUDE_PATH=$deps/include" "-DCMAKE_LIBRARY_PATH=$arch_libs"
step build 300 cmake --build "$build" -j"$(nproc)"
bin=$build/bin
[ -x "$bin/nmt-translate" ] || { log "build failed: see $OUT/build.log"; tail -30 "$OUT/build.log" >&2; exit 1; }

# The unit tests that take a device, on it; the rest of ctest as time allows, at the end.
step unit_tests_on_device 120 env NMT_TEST_DEVICE="$device" "$bin/nmt_tests"
tail -3 "$OUT/unit_tests_on_device.log" >>"$OUT/summary.md"

data=$shared/data/multi30k
model=$shared/models/m30k-transformer-60min.pt
translate() {  # translate OUT DEVICE ARGS...: stdout to OUT, the summary line to the log
  local out=$1 dev=$2
  shift 2
  "$bin/nmt-translate" --model "$model" --device "$dev" "$@" <"$data/test_2016_flickr.de" >"$out"
}
step translate_cpu_greedy 60 translate "$OUT/cpu-greedy.txt" cpu --beam 1 --threads "$(nproc)"
step translate_cpu_beam5 90 translate "$OUT/cpu-beam5.txt" cpu --beam 5 --threads "$(nproc)"
for beam in 1 5; do
  for batch in 1 32 256; do
    step "translate_${device}_beam${beam}_batch${batch}" 60 translate "$OUT/$device-beam$beam-batch$batch.txt" "$device" \
      --beam "$beam" --batch-size "$batch"
    grep -h '^translated' "$OUT/translate_${device}_beam${beam}_batch${batch}.log" | sed "s/^/beam $beam batch $batch: /" \
      >>"$OUT/summary.md" || true
  done
done
if [ -f "$OUT/$device-beam1-batch32.txt" ] && [ -f "$OUT/cpu-greedy.txt" ]; then
  equal=$(paste -d '\t' "$OUT/cpu-greedy.txt" "$OUT/$device-beam1-batch32.txt" | awk -F'\t' '$1 == $2' | wc -l)
  log "greedy $device vs cpu: $equal of $(wc -l <"$OUT/cpu-greedy.txt") lines equal"
  for out in cpu-beam5 "$device-beam5-batch32"; do
    [ -f "$OUT/$out.txt" ] && log "BLEU $out: $("$bin/nmt-eval" --ref "$data/test_2016_flickr.en" -b <"$OUT/$out.txt")"
  done
fi

# Training: the Transformer preset on Multi30k in bf16 (train.precision auto), timed; then the
# Transformer-base shape for throughput.
work=$OUT/train
mkdir -p "$work"
step spm 60 "$bin/nmt-spm-train" --input "$data/train.de" "$data/train.en" --model-prefix "$work/spm" --vocab-size 8000
train() {  # train DIR MINUTES ARGS...
  local dir=$1 minutes=$2
  shift 2
  "$bin/nmt-train" --config configs/transformer.json --train-src "$data/train.de" --train-tgt "$data/train.en" \
    --valid-src "$data/val.de" --valid-tgt "$data/val.en" --src-spm "$work/spm.model" --tgt-spm "$work/spm.model" \
    --model-dir "$dir" --device "$device" --max-time "$minutes" --set train.precision=auto "$@"
}
step train_preset 200 train "$work/preset" 2.5 --set train.valid_every=500
grep -h 'validation @\|tok/s' "$OUT/train_preset.log" | tail -4 >>"$OUT/summary.md" || true
step train_base 90 train "$work/base" 1 --max-steps 60 --set train.log_every=10 --set model.transformer.d_model=512 \
  --set model.transformer.heads=8 --set model.transformer.ffn_dim=2048 --set model.transformer.encoder_layers=6 \
  --set model.transformer.decoder_layers=6 --set train.batch_tokens=25000 --set train.valid_every=100000
grep -h 'tok/s' "$OUT/train_base.log" | tail -2 >>"$OUT/summary.md" || true

# The tools end to end (on the CPU: they take no device flag from the environment).
step ctest_end_to_end 600 ctest --test-dir "$build" -j4 --output-on-failure -R 'end_to_end|cli_faults'
tail -3 "$OUT/ctest_end_to_end.log" >>"$OUT/summary.md"
log "done"
