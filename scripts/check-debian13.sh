#!/usr/bin/env bash
# Runs the README's two set-up commands (scripts/quickstart.sh, then scripts/test.sh) in a
# clean clone of this repository's HEAD inside a Debian 13 (trixie) root, so that one
# Debian 12 machine checks the project on both stacks (LibTorch 1.13 / oneDNN 2.6 / Catch2 2
# here, LibTorch 2.6 / oneDNN 3 / Catch2 3 / clang 19 there).
#
# The root is made once with debootstrap (~1 minute, ~340 MB; then ~1 GB of packages that
# scripts/install-deps.sh installs inside it) in $NMT_DEBIAN13_ROOT, outside the clone
# (default /var/cache/nmt/debian13), and reused by later runs: its packages and its ccache
# stay. Each run clones anew. ../shared, where it is beside this repository, is mounted
# read-only beside the clone, as it is here. What is mounted is unmounted on every exit.
#
# --cuda: the same against Debian 13's LibTorch built with CUDA 12.4 (libtorch-cuda-dev, with
# NCCL: contrib and non-free are enabled in the root), in a root of its own (default
# /var/cache/nmt/debian13-cuda; ~3.4 GB more of packages): scripts/test.sh with
# NMT_LIBTORCH=cuda, so the NCCL process group and every CUDA branch compile and link, and
# the whole suite passes with that LibTorch on a machine without a GPU (the CUDA tests say
# "skipped: no CUDA").
#
# --under-load N: after the quick start, scripts/test.sh N times in a row with a CPU load
# beside it (scripts/test-under-load.sh), instead of once.
# --quick-start: the quick start alone (to time it; CCACHE_DISABLE=1, passed into the root,
# times it as on a fresh machine, whose compiler cache is empty).
# Usage: scripts/check-debian13.sh [--cuda | --under-load N | --quick-start]   (as root: debootstrap, chroot and mount need it)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cuda=0
under_load=0
quick_start_only=0
case "${1:-}" in
  "") ;;
  --cuda) cuda=1 ;;
  --quick-start) quick_start_only=1 ;;
  --under-load)
    under_load=${2:-}
    [[ "$under_load" =~ ^[1-9][0-9]*$ ]] || { echo "error: --under-load needs a number of runs" >&2; exit 2; } ;;
  *) echo "usage: $0 [--cuda | --under-load N | --quick-start]" >&2; exit 2 ;;
esac
if [ "$cuda" = 1 ]; then root=${NMT_DEBIAN13_ROOT:-/var/cache/nmt/debian13-cuda}
else root=${NMT_DEBIAN13_ROOT:-/var/cache/nmt/debian13}; fi
complete_mark=$root/.nmt-root-complete
[ "$(id -u)" -eq 0 ] || { echo "error: $0 needs root (debootstrap, chroot, mount)" >&2; exit 1; }
case "$root/" in
  "$repo"/*) echo "error: NMT_DEBIAN13_ROOT=$root is inside the clone; choose a folder outside it" >&2; exit 1 ;;
esac

step_start=$SECONDS
step() { echo "== debian13: $1 (at $((SECONDS - step_start)) s)" >&2; }

# One run at a time per root: a second would share its mounts and its apt state.
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock -n 9 || { echo "error: another check-debian13.sh is using $root" >&2; exit 1; }

mounted=()  # innermost last
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}" || true
  done
  mounted=()
  # What the tests mounted inside and propagation kept (ip netns's /run/netns), deepest first.
  local left
  while read -r left; do umount -l "$left" 2>/dev/null || true; done < <(mounts_under | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2-)
}
trap unmount_all EXIT
trap 'exit 130' INT TERM

mounts_under() { awk -v r="$root/" 'index($2 "/", r) == 1 { print $2 }' /proc/mounts; }

# A root whose debootstrap did not finish (no mark) is made again; never delete through
# a mount left by a killed run.
if [ ! -e "$complete_mark" ]; then
  if [ -n "$(mounts_under)" ]; then
    echo "error: $root is unfinished and has mounts under it; unmount them first:" >&2
    mounts_under >&2
    exit 1
  fi
  command -v debootstrap >/dev/null || {
    step "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  step "making the root in $root (debootstrap --variant=minbase trixie)"
  rm -rf "$root"
  debootstrap --variant=minbase trixie "$root" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; echo "error: debootstrap failed (log: $root.debootstrap.log)" >&2; exit 1; }
  touch "$complete_mark"
else
  step "reusing the root in $root"
fi

# The CUDA LibTorch and its CUDA libraries are in contrib and non-free.
if [ "$cuda" = 1 ]; then
  echo "deb http://deb.debian.org/debian trixie main contrib non-free" >"$root/etc/apt/sources.list"
fi

bind() {  # bind SOURCE TARGET [ro]: a recursive bind mount, its submounts not propagated back
  mkdir -p "$2"
  mount --rbind "$1" "$2"
  mounted+=("$2")
  mount --make-rslave "$2"
  [ "${3:-}" != ro ] || mount -o remount,bind,ro "$2"
}
# The root bound onto itself is a mount point: `ip netns exec` (the multi-host test) makes
# its mounts slaves of the root's, which fails on a plain folder.
mount --bind "$root" "$root" && mounted+=("$root")
mount --make-private "$root"
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
bind /sys "$root/sys"
bind /dev "$root/dev"  # with /dev/shm (Chromium) and /dev/pts
cp -L /etc/resolv.conf "$root/etc/resolv.conf"  # apt-get inside the root

# The clone: a fresh one each run, in the root's /work as ../shared's sibling.
work=$root/work
rm -rf "$work/main"
mkdir -p "$work"
git clone --quiet --no-hardlinks "$repo" "$work/main"
if [ -d "$repo/../shared" ]; then bind "$repo/../shared" "$work/shared" ro; fi
step "clone of $(git -C "$repo" rev-parse --short HEAD) in $work/main"
# The tests' reference Marian, fetched (and checked) on this machine, handed to the root as a
# copy, for a root that cannot fetch it itself (https through a proxy only the host trusts).
reference=$(bash "$repo/scripts/fetch-marian-reference.sh" --where)
in_root_reference=$root/root/.cache/nmt/$(basename "$reference")
if [ -f "$reference/package/worker/bergamot-translator-worker.wasm" ] &&
    [ ! -f "$in_root_reference/package/worker/bergamot-translator-worker.wasm" ]; then
  mkdir -p "$in_root_reference"
  cp -r "$reference/." "$in_root_reference/"
fi

# The README's two commands, as a user on a fresh Debian 13 runs them.
# A clean environment but for CI, OpenBLAS's settings (which tests leave as they find them)
# and CCACHE_DISABLE.
passed=(CI="${CI:-}")
while IFS= read -r name; do passed+=("$name=${!name}"); done < <(compgen -e | grep '^OPENBLAS_\|^CCACHE_DISABLE$' || true)
in_root() { chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 "${passed[@]}" bash -c "cd /work/main && $1"; }
if [ "$cuda" = 1 ]; then
  step "LibTorch for CUDA (libtorch-cuda-dev, NCCL, CUDA 12.4)"
  in_root "bash -s" <<'ROOT'
set -euo pipefail
apt-get update -qq
export DEBIAN_FRONTEND=noninteractive
# nvidia-cudnn, which libtorch-cuda-2.6 depends on, is an installer: it downloads cuDNN from
# NVIDIA's site. Where that site cannot be reached, the package is left unconfigured, and
# with it LibTorch.
apt-get install -y -qq --no-install-recommends libtorch-cuda-dev libgloo-cuda-dev libnccl-dev \
  nvidia-cuda-toolkit >/dev/null 2>/tmp/cuda-install.err || true
if ! dpkg-query -W -f='${Status}' nvidia-cudnn 2>/dev/null | grep -q "install ok installed"; then
  echo "nvidia-cudnn could not download cuDNN (NVIDIA's site is not reachable from here):" \
    "its package is marked configured without it" >&2
  printf '#!/bin/sh\nexit 0\n' >/var/lib/dpkg/info/nvidia-cudnn.postinst
  dpkg --configure -a >/dev/null
fi
# Without cuDNN, libtorch_cuda.so (which needs libcudnn.so.9) can be neither linked against
# nor loaded. A stand-in whose every function returns an error takes its place: nothing
# calls cuDNN on a machine without a GPU (the project's own code never does), so the CPU
# tests run as they would beside the real one; on a GPU machine the real cuDNN is needed.
if ! ldconfig -p | grep 'libcudnn\.so\.9 ' >/dev/null; then  # not -q: ldconfig would die of SIGPIPE
  echo "cuDNN is not installed: /usr/local/lib/libcudnn.so.9 is a stand-in whose every function fails" >&2
  dir=$(mktemp -d)
  nm -D --undefined-only /usr/lib/x86_64-linux-gnu/libtorch_cuda.so | awk '$2 ~ /^cudnn/ { sub(/@.*/, "", $2); print $2 }' |
    sort -u | while read -r f; do
      case "$f" in
        cudnnGetErrorString | cudnnGetLastErrorString) echo "const char* $f() { return \"cuDNN is not installed\"; }" ;;
        cudnnGetVersion | cudnnGetCudartVersion | cudnnGetMaxDeviceVersion) echo "unsigned long $f() { return 0; }" ;;
        *) echo "int $f() { return 1; }" ;;  # CUDNN_STATUS_NOT_INITIALIZED
      esac
    done >"$dir/cudnn.c"
  echo 'libcudnn.so.9 { global: *; };' >"$dir/cudnn.map"  # libtorch_cuda.so wants the versioned names
  gcc -shared -fPIC -w -Wl,-soname,libcudnn.so.9 -Wl,--version-script,"$dir/cudnn.map" \
    -o /usr/local/lib/libcudnn.so.9 "$dir/cudnn.c"
  ldconfig
  rm -rf "$dir"
fi
ROOT
  step "NMT_LIBTORCH=cuda bash scripts/test.sh"
  in_root "NMT_LIBTORCH=cuda bash scripts/test.sh"
  step "done: the tests passed on Debian 13 with LibTorch for CUDA"
  exit 0
fi
step "bash scripts/quickstart.sh"
in_root "bash scripts/quickstart.sh"
if [ "$quick_start_only" = 1 ]; then
  step "done: the quick start passed on Debian 13"
  exit 0
fi
if [ "$under_load" -gt 0 ]; then
  step "bash scripts/test-under-load.sh --runs $under_load"
  in_root "bash scripts/test-under-load.sh --runs $under_load"
  step "done: the quick start and $under_load runs of the tests under load passed on Debian 13"
  exit 0
fi
step "bash scripts/test.sh"
in_root "bash scripts/test.sh"
step "done: both commands passed on Debian 13"
