#!/usr/bin/env bash
# Fetches Marian itself for the tests that compare our Marian export with it: the npm package
# @browsermt/bergamot-translator 0.4.9 (browsermt/marian-dev compiled to WebAssembly, run by
# Node from tests/apps/marian_reference.js). Not part of the build; nothing of it is linked.
# Unpacks it into ${NMT_MARIAN_REFERENCE:-~/.cache/nmt/bergamot-translator-0.4.9}, checked
# against the tarball's SHA-256. Idempotent. Without network or Node it says so and exits 0:
# the comparison test is then skipped, and says why. `--where` prints the folder and exits.
set -euo pipefail
version=0.4.9
sha256=9011be93222d839d7448ffdf00549d53ce8f541fd782ffc79779d1756397c41f
url=https://registry.npmjs.org/@browsermt/bergamot-translator/-/bergamot-translator-$version.tgz
target=${NMT_MARIAN_REFERENCE:-${XDG_CACHE_HOME:-$HOME/.cache}/nmt/bergamot-translator-$version}
if [ "${1:-}" = --where ]; then echo "$target"; exit 0; fi

if [ -f "$target/package/worker/bergamot-translator-worker.wasm" ]; then
  echo "Marian reference: $target" >&2
  exit 0
fi
command -v node >/dev/null || { echo "note: no node: the Marian comparison test will be skipped" >&2; exit 0; }
mkdir -p "$target"
tarball=$target/bergamot-translator-$version.tgz
if ! curl -fsSL --retry 2 -o "$tarball.part" "$url"; then
  rm -f "$tarball.part"
  rmdir "$target" 2>/dev/null || true
  echo "note: cannot download $url: the Marian comparison test will be skipped" >&2
  exit 0
fi
if ! echo "$sha256  $tarball.part" | sha256sum -c --quiet -; then
  rm -f "$tarball.part"
  echo "error: $url is not the tarball this script knows (SHA-256 differs)" >&2
  exit 1
fi
mv "$tarball.part" "$tarball"
tar -xzf "$tarball" -C "$target"
echo "Marian reference: $target" >&2
