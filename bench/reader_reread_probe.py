"""Can the reader answer a question that asks two things at once, by reading the passage again without the sentence
it quoted?

Students ask two things in one message ("font ukuran brp, spasi brp, margin brp"); the reply quotes the sentence of
the reader's one span. The idea probed: read the passage a second time with that sentence cut out, and quote the
second span's sentence too when the reader's calibrated probability for it reaches a bar. A one-part question should
then rarely gain a sentence (its answer was cut out), a two-part one should gain the other half.

Data: the IDK-MRC tune split's dev part (``bench.train_reader._is_dev``; the check split is not read), each question
on its gold passage. "single": an answerable question; "unanswerable": an unanswerable one; "pair": two answerable
questions of one passage joined by ", ", " dan " or " trus " (a fixed seed chooses the pair and the glue), which holds
both golds only if the reply holds one gold answer of each question. ``--adjacent``: the second sentence only when it
stands next to the first.

    python -m bench.reader_reread_probe [--limit 150] [--seed 13] [--adjacent]     # prints the figures as JSON

docs/answers.md ("Test-time changes to what the reader reads and quotes") has what it gave and what the pipeline
did with it on the sample site.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from bench.idkmrc import is_check, load_passages
from bench.train_reader import _is_dev
from generation.quote import _sentence_spans
from generation.reader import Reader
from generation.text import holds, normalize

BARS = (0.6, 0.5, 0.4, 0.3, 0.2)


def sentence_ranges(passage: str) -> list[tuple[int, int]]:
    """Each sentence of ``passage`` as its character range: the units a reply quotes (generation.quote)."""
    return [(a, b) for a, b, _ in _sentence_spans(passage)]


def _sentence_at(ranges: list[tuple[int, int]], pos: int) -> int | None:
    return next((k for k, (a, b) in enumerate(ranges) if a <= pos < b), None)


def run(limit: int, seed: int, adjacent: bool) -> dict[str, Any]:
    rng = random.Random(seed)
    rows: list[tuple[str, str, list[tuple[str, ...]], str]] = []
    for p in load_passages():
        if is_check(p.context) or not _is_dev(p.context):
            continue
        answerable = [q for q in p.questions if q.answerable and q.answers]
        rows += [("single", q.question, [q.answers], p.context) for q in answerable]
        rows += [("unanswerable", q.question, [], p.context) for q in p.questions if not q.answerable]
        if len(answerable) >= 2:
            a, b = rng.sample(answerable, 2)
            glue = rng.choice([", ", " dan ", " trus "])
            rows.append(("pair", a.question.rstrip("?") + glue + b.question[0].lower() + b.question[1:],
                         [a.answers, b.answers], p.context))
    rng.shuffle(rows)
    kinds = ("single", "pair", "unanswerable")
    chosen = [r for kind in kinds for r in [r for r in rows if r[0] == kind][:limit]]
    reader = Reader()
    started = time.time()
    read: list[tuple[str, list[tuple[str, ...]], str, str, float]] = []
    for kind, question, golds, passage in chosen:
        first = reader.read(question, [passage])[0]
        if first is None:
            continue
        ranges = sentence_ranges(passage)
        k1 = _sentence_at(ranges, first.start)
        lo, hi = ranges[k1] if k1 is not None else (first.start, first.end)
        rest = f"{passage[:lo]}\n{passage[hi:]}"
        second = reader.read(question, [rest])[0]
        text2, p2 = "", 0.0
        if second is not None:
            at = second.start if second.start < lo else second.start - 1 + (hi - lo)  # back to the passage's offsets
            k2 = _sentence_at(ranges, at)
            if k2 is not None and (not adjacent or (k1 is not None and abs(k2 - k1) == 1)):
                text2, p2 = passage[ranges[k2][0]:ranges[k2][1]], second.p
        read.append((kind, golds, passage[lo:hi], text2, p2))
    seconds = time.time() - started

    def figures(bar: float | None) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for kind, golds, text1, text2, p2 in read:
            row = out.setdefault(kind, {"n": 0, "all_golds": 0, "second_added": 0, "mean_chars": 0.0})
            add = bar is not None and bool(text2) and p2 >= bar
            text = normalize(f"{text1} {text2}" if add else text1)
            row["n"] += 1
            row["all_golds"] += bool(golds) and all(any(holds(text, normalize(g)) for g in gs) for gs in golds)
            row["second_added"] += add
            row["mean_chars"] += len(text)
        for row in out.values():
            row["mean_chars"] = round(row["mean_chars"] / max(1, row["n"]), 1)
        return out

    return {"data": "IDK-MRC tune split, dev part, gold passages", "limit": limit, "seed": seed,
            "adjacent": adjacent, "reads": len(read), "seconds": round(seconds, 1),
            "quoted sentence alone": figures(None), **{f"second sentence at p >= {b}": figures(b) for b in BARS}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=150, help="questions of each kind")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--adjacent", action="store_true", help="the second sentence only next to the first")
    args = ap.parse_args(argv)
    json.dump(run(args.limit, args.seed, args.adjacent), sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
