"""Marian's per-word scores against ours, on the lines where both translated alike.

Marian's (tests/apps/marian_reference.js with MARIAN_WORD_SCORES=1): per word, its pieces'
log-probabilities averaged, </s> not counted (bergamot's quality scores without a QE model).
Ours: nmt-translate --format jsonl's pieces and token_log_probs, grouped the same way (a piece
that starts with the space marker starts a word).

Usage: marian_word_scores.py OURS.jsonl MARIAN_TEXT MARIAN_SCORES [TOLERANCE]
Prints one line: the lines and words compared, the largest difference, how many words differ
by more than TOLERANCE (default 1e-4). Exits 1 when any does, or when a line's word counts differ.
"""
import json
import sys


def our_word_scores(hypothesis):
    pieces, log_probs = hypothesis["tokens"], hypothesis["token_log_probs"]
    if pieces and pieces[-1] == "</s>":
        pieces, log_probs = pieces[:-1], log_probs[:-1]
    words = []
    for piece, log_prob in zip(pieces, log_probs):
        if not words or piece.startswith("\u2581"):
            words.append([])
        words[-1].append(log_prob)
    return [sum(word) / len(word) for word in words]


def main(ours_path, marian_text_path, marian_scores_path, tolerance=1e-4):
    with open(ours_path, encoding="utf-8") as ours_file:
        ours = [json.loads(line)["hypotheses"][0] for line in ours_file]
    with open(marian_text_path, encoding="utf-8") as text_file:
        marian_text = text_file.read().split("\n")
    with open(marian_scores_path, encoding="utf-8") as scores_file:
        marian_scores = scores_file.read().split("\n")
    largest, over, words, lines, mismatched = 0.0, 0, 0, 0, 0
    for i, hypothesis in enumerate(ours):
        if hypothesis["text"] != marian_text[i]:
            continue
        mine = our_word_scores(hypothesis)
        theirs = [float(x) for x in marian_scores[i].split()]
        if len(mine) != len(theirs):
            print(f"line {i + 1}: {len(mine)} words here, {len(theirs)} in Marian's scores")
            mismatched += 1
            continue
        lines += 1
        for a, b in zip(mine, theirs):
            words += 1
            largest = max(largest, abs(a - b))
            over += abs(a - b) > tolerance
    print(f"per-word scores on {lines} identical lines ({words} words): largest difference {largest:.2e}; "
          f"{over} words differ by more than {tolerance:g}")
    return 1 if over or mismatched else 0


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:4], *(float(x) for x in sys.argv[4:])))
