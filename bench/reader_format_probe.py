"""Does the reader lose its footing when a passage is laid out in lines instead of prose, or when the question is
worded as students type it?

Study-programme pages are "Label: value" lines, IDK-MRC is Wikipedia prose, and on the sample site the reader's
"no answer" score often sits near its ceiling. Before training on passages re-laid in lines, this probe measures
whether the layout alone moves the shipped reader: each passage of the IDK-MRC tune split's dev part
(``bench.train_reader._is_dev``; the check split is not read) is read as it is and again one sentence per line, a
sentence of the form "X adalah Y" written "X: Y" (``bench.train_reader.as_lines``). Only answerable questions whose
gold answers survive the re-layout intact are kept, so both readings ask the same question of the same words.

For each layout: the span correct with no threshold (it holds a gold answer, or a gold answer holds it), the mean
calibrated probability, and (answered correctly, unanswerable refused) at the shipped selector's threshold on the
span's own probability. The re-layout is a probe of the training data, not a rule of the answer path.

The same figures are then given for the question's word order, on the prose passages and on the sampled questions
that open with a question word: as written, with the question word at the end, and without it
(``bench.train_reader.asked_forms``: "Di mana letak X?", "letak X di mana?", "letak X").

    python -m bench.reader_format_probe [--limit 300] [--seed 0] [--model DIR]     # prints the figures as JSON
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.idkmrc import is_check, train_path
from bench.train_reader import _is_dev, as_lines, asked_forms, moved_start


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def figures(read: Callable[[str, str], Any], threshold: float, answerable: list[tuple[str, str, list[str]]],
            unanswerable: list[tuple[str, str]]) -> dict:
    """``read(question, passage)`` (the reader's span or None) on (question, passage, gold answers) and (question,
    passage): the span correct with no threshold, the mean probabilities, and both shares at ``threshold`` on the
    span's own probability."""
    right, p_una = [], []
    for question, passage, golds in answerable:
        span = read(question, passage)
        ok = span is not None and any(_norm(g) in _norm(span.text) or _norm(span.text) in _norm(g) for g in golds)
        right.append((ok, span.p if span else 0.0))
    for question, passage in unanswerable:
        span = read(question, passage)
        p_una.append(span.p if span else 0.0)
    return {
        "span_correct": round(sum(ok for ok, _ in right) / max(len(right), 1), 4),
        "mean_p_answerable": round(sum(p for _, p in right) / max(len(right), 1), 4),
        "mean_p_unanswerable": round(sum(p_una) / max(len(p_una), 1), 4),
        "answered_correctly": round(sum(ok and p >= threshold for ok, p in right) / max(len(right), 1), 4),
        "refused": round(sum(p < threshold for p in p_una) / max(len(p_una), 1), 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=300, help="answerable and unanswerable questions each")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="a reader's directory (default: the shipped one)")
    args = ap.parse_args(argv)

    from generation.reader.reader import Reader

    answerable, unanswerable = [], []
    for passage in json.loads(train_path().read_text(encoding="utf-8")):
        context = passage["context"]
        if is_check(context) or not _is_dev(context):
            continue
        lines, where = as_lines(context)
        for qa in passage["qas"]:
            answers = [a for a in qa.get("answers", []) if a.get("text")]
            if qa.get("is_impossible") or not answers:
                unanswerable.append((qa["question"], context, lines, []))
            elif all(moved_start(where, int(a["answer_start"]), len(a["text"])) is not None for a in answers):
                answerable.append((qa["question"], context, lines, [a["text"] for a in answers]))
    rng = random.Random(args.seed)
    rng.shuffle(answerable)
    rng.shuffle(unanswerable)
    answerable, unanswerable = answerable[:args.limit], unanswerable[:args.limit]
    reader = Reader(args.model)
    threshold = reader.config.threshold

    @functools.cache
    def read(question: str, passage: str) -> Any:  # the questions as written over prose are read once, for both blocks
        return reader.read(question, [passage])[0]

    started = time.time()
    report: dict = {"questions": {"answerable": len(answerable), "unanswerable": len(unanswerable)},
                    "threshold": threshold}
    for layout, col in (("prose", 1), ("lines", 2)):
        report[layout] = figures(read, threshold, [(q[0], q[col], q[3]) for q in answerable],
                                 [(q[0], q[col]) for q in unanswerable])
    asked_a = [(q, f) for q in answerable if (f := asked_forms(q[0]))]
    asked_u = [(q, f) for q in unanswerable if (f := asked_forms(q[0]))]
    report["asked"] = {"questions": {"answerable": len(asked_a), "unanswerable": len(asked_u)}}
    for name, pick in (("as_written", lambda q, f: q[0]), ("word_at_end", lambda q, f: f[0]),
                       ("no_question_word", lambda q, f: f[1])):
        report["asked"][name] = figures(read, threshold, [(pick(q, f), q[1], q[3]) for q, f in asked_a],
                                        [(pick(q, f), q[1]) for q, f in asked_u])
    report["seconds"] = round(time.time() - started, 1)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
