"""Fit the reader's chunk selector and its gate threshold where the pipeline uses them: after retrieval, over
several chunks.

``bench/train_reader.py`` calibrates the reader on gold passages. In the pipeline the reader reads the top chunks of a
search, one of their spans answers, and the gate decides on its probability; so the choice of chunk and the operating
point are measured where they happen. This script answers every question of the IDK-MRC tune split's *dev* part
(``train_reader._is_dev``, about 10% of the tune passages: data the reader was not trained on and the report never
reads) with the gate off. Those passages, plus a fixed-seed sample of other tune passages as distractors (so the index
is about the size of the check split's), are indexed as their own corpus. For each chunk the reader read, the trace
gives the span's margin (span score minus null score) and the chunk's retrieval score
(``generation.reader.CHUNK_FEATURES``); the label is whether quoting that span gives a reply that holds a gold
answer.

1. **Chunk selector**: a logistic regression over those features (``generation.calibration.fit_logistic``). Its
   out-of-fold probabilities (5 folds by passage) choose each question's chunk and give the figures below; the
   shipped weights are the fit on all dev questions.
2. **Threshold**: the one that makes the two shares most even on the out-of-fold probabilities: max over t of
   min(answerable answered correctly, unanswerable refused).

The report compares it with the span's own probability (the largest Platt probability among the chunks), measured on
the same replies.

    python -m bench.fit_reader_gate                 # writes the selector and threshold into generation/data/reader/reader.json
    python -m bench.fit_reader_gate --no-selector   # the threshold alone, on the span's own probability

The IDK-MRC check split and the sample-site sets are not used.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import idkmrc
from bench.train_reader import _is_dev
from generation.calibration import fit_logistic, operating_point
from generation.reader.reader import (
    CHUNK_FEATURES,
    CONFIG_FILE,
    DEFAULT_DIR,
    ReaderConfig,
    Span,
    chunk_features,
)

SEED = 20261125
DISTRACTORS = 430  # with the ~290 dev passages, about the check split's 722
FOLDS = 5
L2 = 1.0


@dataclass(frozen=True, slots=True)
class ReadChunk:
    """One chunk the reader read for a question: the selector's features, its span probability, and the label."""

    features: tuple[float, ...]
    p_span: float
    correct: bool


@dataclass(frozen=True, slots=True)
class ReadQuestion:
    id: str
    group: str  # the passage: folds never split one passage's questions
    answerable: bool
    chunks: tuple[ReadChunk, ...]


def balanced_threshold(p: Sequence[float], answerable: Sequence[bool], correct: Sequence[bool]) -> tuple[float, dict]:
    best_t, best_v, best = 0.5, -1.0, None
    for t in np.unique(np.round(np.asarray(p, dtype=np.float64), 5)):
        point = operating_point(p, answerable, correct, float(t))
        v = min(point.correct_answerable, point.refused_unanswerable)
        if v > best_v:
            best_t, best_v, best = float(t), v, point
    return best_t, best.as_json() if best else {}


def read_question(item: dict[str, Any], steps: Sequence[dict[str, Any]], texts: dict[str, str]) -> ReadQuestion:
    """The chunks of one reply's "read" trace step, labelled against the item's gold answers."""
    from generation.evaluation import contains_span
    from generation.quote import quote_span

    golds = [str(g) for g in item.get("answers") or () if str(g).strip()]
    answerable = bool(item.get("answerable", bool(golds)))
    read = next((s for s in steps if s.get("step") == "read"), None)
    chunks = []
    for entry in (read or {}).get("spans") or ():
        if not entry or not str(entry.get("span", "")).strip():
            continue
        text = texts.get(str(entry["chunk_id"]), "")
        quoted = quote_span(text, int(entry["start"]), int(entry["end"])).text if text else str(entry["span"])
        correct = answerable and any(contains_span(quoted, g) for g in golds)
        span = Span(int(entry["start"]), int(entry["end"]), str(entry["span"]), float(entry["score"]),
                    float(entry["null"]), float(entry["p_span"]))
        chunks.append(ReadChunk(chunk_features(span, float(entry["retrieval"])), span.p, correct))
    group = str((item.get("relevant_doc_ids") or [item.get("id")])[0])
    return ReadQuestion(str(item.get("id")), group, answerable, tuple(chunks))


def _design(questions: Sequence[ReadQuestion]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = [(q_i, c) for q_i, q in enumerate(questions) for c in q.chunks]
    x = np.array([[*c.features, 1.0] for _, c in rows], dtype=np.float64).reshape(len(rows), len(CHUNK_FEATURES) + 1)
    y = np.array([c.correct for _, c in rows], dtype=np.float64)
    owner = np.array([q_i for q_i, _ in rows], dtype=np.int64)
    return x, y, owner


def fit_selector(questions: Sequence[ReadQuestion], l2: float = L2) -> tuple[list[float], float]:
    """The selector's weights (in CHUNK_FEATURES order) and bias, fitted on every chunk of ``questions``."""
    x, y, _ = _design(questions)
    w = fit_logistic(x, y, l2=l2)
    return [float(v) for v in w[:-1]], float(w[-1])


def fold_of(group: str, folds: int = FOLDS) -> int:
    return int(hashlib.sha1(group.encode("utf-8")).hexdigest(), 16) % folds


def out_of_fold(questions: Sequence[ReadQuestion], folds: int = FOLDS, l2: float = L2) -> list[list[float]]:
    """Each chunk's selector probability from the fit on the other folds' passages."""
    x, y, owner = _design(questions)
    fold = np.array([fold_of(questions[i].group, folds) for i in owner], dtype=np.int64)
    p = np.zeros(len(y))
    for f in range(folds):
        test = fold == f
        if not test.any():
            continue
        w = fit_logistic(x[~test], y[~test], l2=l2)
        p[test] = 1.0 / (1.0 + np.exp(-np.clip(x[test] @ w, -60, 60)))
    out: list[list[float]] = [[] for _ in questions]
    for i, q_i in enumerate(owner):
        out[q_i].append(float(p[i]))
    return out


def decide(questions: Sequence[ReadQuestion], probs: Sequence[Sequence[float]]) -> tuple[list[float], list[bool]]:
    """Each question's answer probability (its best chunk's) and whether that chunk's reply is right."""
    p_best, correct = [], []
    for q, ps in zip(questions, probs, strict=True):
        if not ps:
            p_best.append(0.0)
            correct.append(False)
            continue
        k = max(range(len(ps)), key=lambda j: (ps[j], -j))
        p_best.append(ps[k])
        correct.append(q.chunks[k].correct)
    return p_best, correct


def figures(questions: Sequence[ReadQuestion], probs: Sequence[Sequence[float]]) -> tuple[float, dict]:
    p_best, correct = decide(questions, probs)
    answerable = [q.answerable for q in questions]
    threshold, point = balanced_threshold(p_best, answerable, correct)
    chosen_right = sum(c for c, a in zip(correct, answerable, strict=True) if a) / max(sum(answerable), 1)
    return threshold, {**point, "chosen_chunk_right_answerable": round(chosen_right, 4)}


async def read_dev(model_dir: str, distractors: int, limit: int, chunks: int) -> tuple[list[ReadQuestion], dict]:
    from dataclasses import replace

    from bench.evaluation import build_jsonl_index
    from bot import wiring
    from bot.settings import Settings
    from generation.pipeline import AnswerPipeline, PipelineConfig

    tune, _ = idkmrc.split(idkmrc.load_passages())
    dev = [p for p in tune if _is_dev(p.context)]
    rest = [p for p in tune if not _is_dev(p.context)]
    sample = random.Random(SEED).sample(rest, min(distractors, len(rest)))
    items = idkmrc.items(dev)
    if limit:
        items = random.Random(SEED).sample(items, min(limit, len(items)))
    with tempfile.TemporaryDirectory(prefix="prodi-reader-gate-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp) / "data", redis_url=None)
        manager, _ = build_jsonl_index(settings, idkmrc.documents(dev + sample))
        texts = {c.chunk_id: c.text for c in manager.current().chunks}
        pool = wiring.build_llm_pool(settings)
        config = PipelineConfig(answerer="reader", reader_model_dir=model_dir, reader_chunks=chunks,
                                abstention="off", top_k=settings.retrieval.similarity_top_k)
        config = replace(config, context_max_docs=max(config.context_max_docs, chunks))
        pipeline = AnswerPipeline(manager.current, pool, config, manager.embedder)
        out = []
        try:
            for n, item in enumerate(items, 1):
                answer = await pipeline.answer(str(item["query"]), [])
                out.append(read_question(item, answer.trace.steps if answer.trace else [], texts))
                if n % 100 == 0:
                    print(f"  {n}/{len(items)}", file=sys.stderr, flush=True)
        finally:
            pool.close()
    return out, {"passages": len(dev), "distractors": len(sample)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=str(DEFAULT_DIR))
    ap.add_argument("--distractors", type=int, default=DISTRACTORS)
    ap.add_argument("--chunks", type=int, default=None,
                    help="chunks the reader reads (default: the pipeline's reader_chunks)")
    ap.add_argument("--no-selector", action="store_true", help="fit the threshold on the span's own probability")
    ap.add_argument("--limit", type=int, default=0, help="only N dev questions (a smoke run)")
    ap.add_argument("--dry-run", action="store_true", help="report without writing into reader.json")
    args = ap.parse_args(argv)
    from generation.pipeline import PipelineConfig

    chunks = args.chunks or PipelineConfig().reader_chunks
    started = time.perf_counter()
    questions, corpus = asyncio.run(read_dev(args.model_dir, args.distractors, args.limit, chunks))
    span_t, span_fig = figures(questions, [[c.p_span for c in q.chunks] for q in questions])
    report: dict[str, Any] = {
        "questions": len(questions), "answerable": sum(q.answerable for q in questions), **corpus,
        "chunks_read": chunks, "span_probability": {"threshold": round(span_t, 5), "figures": span_fig},
        "fitted_on": "IDK-MRC tune split, dev part (bench/train_reader.py _is_dev), after retrieval"}
    cfg_path = Path(args.model_dir) / CONFIG_FILE
    meta = json.loads(cfg_path.read_text(encoding="utf-8"))
    if args.no_selector:
        threshold, weights, bias = span_t, [], 0.0
    else:
        threshold, oof = figures(questions, out_of_fold(questions))
        weights, bias = fit_selector(questions)
        report["selector"] = {"features": list(CHUNK_FEATURES), "weights": [round(w, 6) for w in weights],
                              "bias": round(bias, 6), "l2": L2, "folds": FOLDS,
                              "out_of_fold": {"threshold": round(threshold, 5), "figures": oof}}
    report["threshold"] = round(threshold, 5)
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))
    if not args.dry_run:
        # the threshold holds for the arithmetic it was fitted with: write the int8 weight width down with it
        fitted = ReaderConfig.from_json(meta["config"])
        meta["config"].update(threshold=round(threshold, 5), chunk_weights=[round(w, 6) for w in weights],
                              chunk_bias=round(bias, 6), int8_weight_bits=fitted.int8_weight_bits)
        meta["gate"] = report
        cfg_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        print(f"wrote the selector and the threshold {threshold:.4f} into {cfg_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
