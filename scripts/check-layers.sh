#!/usr/bin/env bash
# Checks the dependency direction between the library's subsystems (docs/ARCHITECTURE.md):
# a file in lib/S/ or include/nmt/S/ may include "nmt/T/..." only where T is S itself or a
# layer S may use. Prints every violation as FILE:LINE and exits 1 if there is one. Also checks
# that every file docs/ARCHITECTURE.md names exists.
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
      used=${text#*\"nmt/}
      used=${used%%/*}
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
# include/nmt/ holds what other folders, the apps and the tests include; a header only its
# own lib/ folder includes is private and sits there.
# One pass over the includes, then in-process lookups (a process per header took seconds).
declare -A used_outside=()
while IFS=: read -r file header; do
  header=${header#\#include \"}
  header=${header%\"}
  layer=${header#nmt/}
  layer=${layer%%/*}
  [[ "$file" == "lib/$layer/"* ]] || used_outside[$header]=1
done < <(grep -roE '#include "nmt/[a-z0-9_/]+\.h"' lib include apps tests)
while read -r header; do
  layer=${header#nmt/}
  layer=${layer%%/*}
  [[ -v "used_outside[$header]" ]] || { echo "include/$header: only lib/$layer/ includes it; make it private there" >&2; status=1; }
done < <(cd include && find nmt -name '*.h' | sort)
# A folder's private headers (lib/S/*.h) are its own: nothing reaches one by a relative path
# (a test that needs something of a folder includes a public header of it).
reached=$(grep -rnE '#include "(\.\./)+' lib include apps tests || true)
[ -z "$reached" ] || { echo "a private header included by a relative path:"$'\n'"$reached" >&2; status=1; }
# The table of layers in docs/ARCHITECTURE.md says what each may use: the same as above.
while IFS= read -r row; do
  layer=$(sed -E 's/^\| `([a-z_]+)\/`.*/\1/' <<<"$row")
  documented=$(sed -E 's/.*\| ([^|]*) \|$/\1/' <<<"$row" | tr -d ',—' | xargs -n1 | sort | xargs)
  [[ -v "may_use[$layer]" ]] || { echo "docs/ARCHITECTURE.md: layer $layer is not in $0" >&2; status=1; continue; }
  expected=$(xargs -n1 <<<"${may_use[$layer]}" | sort | xargs)
  [ "$documented" = "$expected" ] ||
    { echo "docs/ARCHITECTURE.md: $layer may use \"$documented\", $0 says \"$expected\"" >&2; status=1; }
done < <(grep -E '^\| `[a-z_]+/` \|' docs/ARCHITECTURE.md)
# Every file and folder docs/ARCHITECTURE.md names (in backticks) exists, so the map cannot
# drift from the tree: a path from the root or from a layer folder (include/nmt/, lib/), a
# module named without its extension (.h or .cpp), a folder, or a bare file name anywhere in
# the sources; a header CMake generates (configure_file) counts as there.
declare -A tree_names=() tree_dirs=()
while read -r entry; do tree_names[${entry##*/}]=1; done < <(find include lib apps tests scripts bench docs configs -type f)
while read -r entry; do tree_dirs[${entry##*/}]=1; done < <(find include lib tests -type d)
exists_in_tree() {
  local name=$1 base suffix
  if [[ "$name" == */ ]]; then
    name=${name%/}
    [[ -v "tree_dirs[${name##*/}]" ]]
    return
  fi
  if [[ "$name" != */* ]]; then
    [[ -v "tree_names[$name]" ]] || grep -q "configure_file(.*/$name" CMakeLists.txt
    return
  fi
  for base in "" include/nmt/ lib/ tests/; do
    for suffix in "" .h .cpp; do [ -e "$base$name$suffix" ] && return 0; done
  done
  return 1
}
while read -r name; do
  exists_in_tree "$name" || { echo "docs/ARCHITECTURE.md names $name, which is not in the tree" >&2; status=1; }
done < <(grep -oE '`[A-Za-z0-9_./-]+\.(h|cpp|sh|md|json|js|py)`|`[a-z_]+/[A-Za-z0-9_./-]*`' docs/ARCHITECTURE.md |
         tr -d '`' | sort -u)
[ $status -eq 0 ] && echo "layers ok: ${!may_use[*]}; every file docs/ARCHITECTURE.md names exists"
exit $status
