"""The reader's chunk selector and gate fit (bench/fit_reader_gate.py): labels from the pipeline's read trace, the
selector's fit, its out-of-fold figures, and the threshold."""

from __future__ import annotations

import random

import pytest

from bench.fit_reader_gate import (
    ReadChunk,
    ReadQuestion,
    decide,
    figures,
    fit_selector,
    fold_of,
    out_of_fold,
    read_question,
)
from generation.reader.reader import CHUNK_FEATURES

PAGE = "Skripsi memiliki bobot 6 SKS.\nKerja praktik berbobot 2 SKS dan wajib ditempuh."


def _entry(rank: int, start: int, end: int, score: float, null: float, retrieval: float) -> dict:
    return {"chunk_id": f"c{rank}", "rank": rank, "retrieval": retrieval, "span": PAGE[start:end], "start": start,
            "end": end, "score": score, "null": null, "p_span": 0.5, "p": 0.5}


def test_a_chunk_is_right_when_its_quote_holds_a_gold_answer():
    steps = [{"step": "read", "spans": [_entry(0, 23, 28, 7.0, 1.0, 1.0), None, _entry(2, 50, 55, 3.0, 2.0, 0.4)]}]
    texts = {"c0": PAGE, "c2": PAGE}
    item = {"id": "q1", "answers": ["6 SKS"], "answerable": True, "relevant_doc_ids": ["idk-7"]}
    q = read_question(item, steps, texts)
    assert q.group == "idk-7" and q.answerable
    assert [c.correct for c in q.chunks] == [True, False]  # the empty chunk is skipped
    assert q.chunks[0].features == (6.0, 1.0) and len(q.chunks[0].features) == len(CHUNK_FEATURES)
    unanswerable = read_question({**item, "answers": [], "answerable": False}, steps, texts)
    assert not any(c.correct for c in unanswerable.chunks)  # nothing is right for a question the page cannot answer


def _synthetic(n: int, seed: int) -> list[ReadQuestion]:
    """The best-retrieved chunk is right more often and a large margin means right; the span probability alone
    is noise."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        answerable = rng.random() < 0.55
        right = rng.choice([0, 0, 0, 1, 2]) if answerable else -1
        chunks = []
        for rank in range(3):
            ok = rank == right
            margin = rng.gauss(4.0 if ok else -2.0, 2.0)
            chunks.append(ReadChunk((margin, 1.0 - 0.2 * rank), rng.random(), ok))
        out.append(ReadQuestion(f"q{i}", f"p{i // 3}", answerable, tuple(chunks)))
    return out


def test_the_selector_learns_which_chunk_answers_and_beats_the_span_probability_out_of_fold():
    questions = _synthetic(600, seed=3)
    weights, bias = fit_selector(questions)
    assert weights[0] > 0 and weights[1] > 0  # a larger margin helps, and so does a better retrieval score
    oof = out_of_fold(questions)
    assert [len(p) for p in oof] == [len(q.chunks) for q in questions]
    t_sel, sel = figures(questions, oof)
    t_span, span = figures(questions, [[c.p_span for c in q.chunks] for q in questions])
    assert sel["chosen_chunk_right_answerable"] > span["chosen_chunk_right_answerable"] + 0.2
    assert min(sel["correct_answerable"], sel["refused_unanswerable"]) > 0.7
    assert 0.0 < t_sel < 1.0


def test_folds_keep_a_passage_together_and_decide_takes_the_first_of_equals():
    assert fold_of("idk-12") == fold_of("idk-12") and {fold_of(f"idk-{i}") for i in range(200)} == set(range(5))
    q = ReadQuestion("q", "p", True, (ReadChunk((1.0, 1.0), 0.5, False), ReadChunk((1.0, 0.8), 0.5, True)))
    empty = ReadQuestion("e", "p", False, ())
    p, correct = decide([q, empty], [[0.6, 0.6], []])
    assert p == [0.6, 0.0] and correct == [False, False]
    with pytest.raises(ValueError):
        decide([q], [[0.1, 0.2], []])
