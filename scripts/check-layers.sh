#!/usr/bin/env bash
# Checks the dependency direction between the library's subsystems (docs/ARCHITECTURE.md):
# a file in lib/S/ or include/nmt/S/ may include "nmt/T/..." only where T is S itself or a
# layer S may use. Prints every violation as FILE:LINE and exits 1 if there is one.
# Usage: scripts/check-layers.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# What each subsystem may include besides itself. Lowest first.
declare -A may_use=(
  [base]=""
  [kernels]="base"
  [text]="base"
  [models]="base kernels text"
  [decoding]="base kernels text models"
  [eval]="base text"
  [export]="base kernels text models decoding"
  [training]="base kernels text models decoding eval"
  [tools]="base kernels text models decoding eval export training"
  [tasks]="base"
  [serve]="base kernels text models decoding eval export"
)

status=0
for layer in "${!may_use[@]}"; do
  allowed=" $layer ${may_use[$layer]} "
  for dir in "lib/$layer" "include/nmt/$layer"; do
    [ -d "$dir" ] || continue
    while IFS=: read -r file line text; do
      used=$(sed -E 's/.*"nmt\/([a-z_]+)\/.*/\1/' <<<"$text")
      if [[ "$allowed" != *" $used "* ]]; then
        echo "$file:$line: $layer may not include $used (${text#*#})" >&2
        status=1
      fi
    done < <(grep -rnE '#include "nmt/[a-z_]+/' "$dir" || true)
  done
done
# Every folder of lib/ must be a known layer, so a new one cannot escape the check.
for dir in lib/*/; do
  name=$(basename "$dir")
  [[ -v "may_use[$name]" ]] || { echo "lib/$name: not a known layer (add it to $0)" >&2; status=1; }
done
# No header may sit loose in include/nmt/: each belongs to a layer.
loose=$(find include/nmt -maxdepth 1 -type f)
[ -z "$loose" ] || { echo "headers outside a layer folder: $loose" >&2; status=1; }
[ $status -eq 0 ] && echo "layers ok: ${!may_use[*]}"
exit $status
