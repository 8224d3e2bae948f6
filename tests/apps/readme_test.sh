#!/usr/bin/env bash
# Runs the README's walkthrough as written: every block fenced as ```bash in README.md, in
# order, in one shell (a variable set in one block is seen by the next), from a folder laid
# out as the repository is after the quick start (build/bin, configs/). Blocks fenced as
# ```sh (downloads, a server left running, programs not installed) are not run.
# The data is small: the walkthrough's Multi30k folder holds the first lines of the bundled
# number-words task under Multi30k's file names, so the commands run unchanged but for the
# substitutions below (a vocabulary that small data can fill, updates instead of minutes).
# Each substitution must match the README: when the text changes, this test says so.
# Usage: readme_test.sh BIN_DIR SOURCE_DIR
BIN=$1
SRC=$2
source "$SRC/tests/apps/test_harness.sh"  # strict mode; every failure names its line
WORK=$(mktemp -d)
cleanup() { rm -rf "$WORK"; }

substitutions=(
  "--vocab-size 8000|--vocab-size 150"
  "--max-time 10|--max-steps 4"
  "--max-time 20|--max-steps 6"
)

# The blocks, in order.
awk '/^```bash$/ { inside = 1; next }
     /^```/ { if (inside) print ""; inside = 0; next }
     inside { print }' "$SRC/README.md" >"$WORK/walkthrough.sh"
[ -s "$WORK/walkthrough.sh" ] || fail "README.md has no \`\`\`bash block"
script=$(cat "$WORK/walkthrough.sh")
for substitution in "${substitutions[@]}"; do
  from=${substitution%%|*} to=${substitution#*|}
  [[ "$script" == *"$from"* ]] || fail "README.md's walkthrough no longer says '$from': update $0"
  script=${script//"$from"/"$to"}
done
printf '%s\n' "$script" >"$WORK/walkthrough.sh"

# The repository's layout, and the data where the walkthrough's download puts it.
mkdir -p "$WORK/repo/build" "$WORK/repo/work/multi30k"
ln -s "$(cd "$BIN" && pwd)" "$WORK/repo/build/bin"
ln -s "$SRC/configs" "$WORK/repo/configs"
for side in de en; do
  head -2000 "$SRC/data/numbers/train.$side" >"$WORK/repo/work/multi30k/train.$side"
  head -30 "$SRC/data/numbers/valid.$side" >"$WORK/repo/work/multi30k/val.$side"
  head -30 "$SRC/data/numbers/test.$side" >"$WORK/repo/work/multi30k/test_2016_flickr.$side"
done

FAIL_LOGS+=("$WORK/walkthrough.log")
(cd "$WORK/repo" && bash -e -o pipefail "$WORK/walkthrough.sh") >"$WORK/walkthrough.log" 2>&1 ||
  fail "the README's walkthrough failed (its output follows; the script run: $WORK/walkthrough.sh)"

# What the walkthrough says it makes.
out=$WORK/repo/work/m30k
for made in spm8k.model transformer/best.pt transformer/last.pt test.en attention.jsonl heatmap.html ct2/model.bin; do
  [ -s "$out/$made" ] || fail "the walkthrough did not make work/m30k/$made"
done
[ "$(wc -l <"$out/test.en")" -eq 30 ] || fail "work/m30k/test.en has $(wc -l <"$out/test.en") lines, not 30"
[ "$(wc -l <"$out/attention.jsonl")" -eq 5 ] || fail "work/m30k/attention.jsonl has $(wc -l <"$out/attention.jsonl") lines, not 5"
grep -q '"step": *6[,}]' "$out/transformer/train.jsonl" ||
  fail "the second nmt-train did not continue the run to its new limit (no step 6 in train.jsonl)"
grep -q 'transformer' "$WORK/walkthrough.log" || fail "nmt-info did not say the model is a Transformer"
grep -qE '^BLEU' "$WORK/walkthrough.log" || fail "nmt-eval printed no BLEU line"
echo "the README's walkthrough ran: $(grep -c . "$WORK/walkthrough.sh") lines of commands"
