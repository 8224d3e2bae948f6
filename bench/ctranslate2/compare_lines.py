"""Greedy outputs of two decoders of one model, line by line (bench/ctranslate2_compare.sh).

Prints the share of equal lines, then for each differing line the first target piece where the
two part and the log-probabilities our model gives each of the two pieces after their common
prefix (nmt-align force-decodes both outputs). Greedy search takes the most probable piece, so a
gap near 0 is an equal-score tie or a float difference between the two decoders' arithmetic;
a large gap would be a real difference in the model's computation.

Usage: compare_lines.py OURS THEIRS SOURCE NMT_ALIGN MODEL WORKDIR
"""
import json
import subprocess
import sys

TIE = 1e-3  # nats: below this, the two pieces were equally likely within float error


def force_decode(nmt_align, model, sources, targets, work, name):
    src, tgt = f"{work}/{name}.src", f"{work}/{name}.tgt"
    with open(src, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in sources)
    with open(tgt, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in targets)
    with open(src, encoding="utf-8") as stdin:
        out = subprocess.run([nmt_align, "--model", model, "--tgt", tgt, "--threads", "2", "--heads", "mean",
                              "--layers", "last"], stdin=stdin, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def main():
    ours_path, theirs_path, source_path, nmt_align, model, work = sys.argv[1:7]
    read = lambda path: open(path, encoding="utf-8").read().split("\n")[:-1]
    ours, theirs, sources = read(ours_path), read(theirs_path), read(source_path)
    assert len(ours) == len(theirs) == len(sources), "line counts differ"
    differing = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    equal = len(ours) - len(differing)
    print(f"Greedy, fp32: {equal} of {len(ours)} lines equal ({100.0 * equal / len(ours):.1f}%).")
    if not differing:
        return
    ours_scored = force_decode(nmt_align, model, [sources[i] for i in differing], [ours[i] for i in differing],
                               work, "ours")
    theirs_scored = force_decode(nmt_align, model, [sources[i] for i in differing],
                                 [theirs[i] for i in differing], work, "theirs")
    print()
    print("| line | first differing piece: ours / CTranslate2 | log p ours | log p CTranslate2 | gap | reading |")
    print("|---:|---|---:|---:|---:|---|")
    for line, a, b in zip(differing, ours_scored, theirs_scored):
        pa, pb = a["target"]["pieces"], b["target"]["pieces"]
        k = next((j for j, (x, y) in enumerate(zip(pa, pb)) if x != y), min(len(pa), len(pb)))
        if k >= len(pa) or k >= len(pb):
            print(f"| {line + 1} | one output is a prefix of the other after re-tokenization | | | | not classified |")
            continue
        la, lb = a["token_log_probs"][k], b["token_log_probs"][k]
        gap = la - lb
        reading = "tie or float difference" if abs(gap) < TIE else "different choice"
        print(f"| {line + 1} | `{pa[k]}` / `{pb[k]}` (piece {k + 1}) | {la:.5f} | {lb:.5f} | {gap:.5f} | {reading} |")


if __name__ == "__main__":
    main()
