"""Answer evaluation: gold-span containment, token F1, abstention precision/recall, degenerate and template-leak
rates, citation rate, semantic similarity and answer relevancy (embeddings), faithfulness (share of answer sentences
supported by the retrieved context) and PCA/CPR on constraint items (seed 001)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from generation.guards import check_degenerate, is_template_leak
from generation.support import check_support, text_stems
from generation.text import normalize, sentences

__all__ = ["ItemResult", "contains_span", "strip_citations", "summarize", "token_f1"]

_CITATION = re.compile(r"\s*\[\d+\]")
_CODE = re.compile(r"\b[A-Z]{2,4}-\d{3}\b")


def strip_citations(text: str) -> str:
    return _CITATION.sub("", text).strip()


def contains_span(answer: str, span: str) -> bool:
    a, s = normalize(answer), normalize(span)
    return bool(s) and f" {s} " in f" {a} "


def token_f1(answer: str, gold: str) -> float:
    a, g = normalize(answer).split(), normalize(gold).split()
    if not a or not g:
        return float(a == g)
    common = Counter(a) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    p, r = same / len(a), same / len(g)
    return 2 * p * r / (p + r)


@dataclass
class ItemResult:
    id: str
    query: str
    answerable: bool
    answer: str
    abstained: bool
    sources: list[dict[str, str]]
    stop_reason: str
    latency_ms: float
    golds: list[str] = field(default_factory=list)
    reference: str = ""
    context: list[str] = field(default_factory=list)
    expected_items: list[str] = field(default_factory=list)
    category: str = ""

    def dump(self) -> dict[str, Any]:
        return {"id": self.id, "answer": self.answer, "abstained": self.abstained, "sources": self.sources,
                "stop_reason": self.stop_reason}


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def summarize(items: Sequence[ItemResult], embedder: Any, item_vocabulary: Sequence[str] = ()) -> dict[str, Any]:
    """All metrics over the evaluated items (rates in 0..1; None when no item qualifies)."""
    answerable = [r for r in items if r.answerable]
    unanswerable = [r for r in items if not r.answerable]
    answered = [r for r in items if not r.abstained]
    m: dict[str, Any] = {"items": len(items), "answerable": len(answerable), "unanswerable": len(unanswerable)}

    any_hits, all_hits, f1s = [], [], []
    for r in answerable:
        text = "" if r.abstained else strip_citations(r.answer)
        golds = [g for g in r.golds if g.strip()]
        if not golds:
            continue
        any_hits.append(float(any(contains_span(text, g) for g in golds)))
        all_hits.append(float(all(contains_span(text, g) for g in golds)))
        f1s.append(max(token_f1(text, g) for g in golds))
    m["gold_span_any"] = _mean(any_hits)
    m["gold_span_all"] = _mean(all_hits)
    m["token_f1"] = _mean(f1s)

    abstained = [r for r in items if r.abstained]
    tp = sum(1 for r in abstained if not r.answerable)
    m["abstention_precision"] = round(tp / len(abstained), 4) if abstained else None
    m["abstention_recall"] = round(tp / len(unanswerable), 4) if unanswerable else None
    m["abstained_on_answerable"] = sum(1 for r in answerable if r.abstained)

    degenerate = [check_degenerate(strip_citations(r.answer)).degenerate for r in answered]
    m["degenerate_rate"] = _mean([float(d) for d in degenerate]) if answered else 0.0
    m["template_leak_rate"] = _mean([float(is_template_leak(r.answer)) for r in answered]) if answered else 0.0
    m["citation_rate"] = _mean([float(len(r.sources) > 0) for r in answered]) if answered else None

    # embeddings: semantic similarity (answer vs reference), answer relevancy (question vs answer)
    sims, rels, faiths = [], [], []
    for r in answered:
        text = strip_citations(r.answer)
        a_vec = np.asarray(embedder.embed([text], kind="passage"))[0]
        q_vec = np.asarray(embedder.embed([r.query], kind="query"))[0]
        rels.append(float(a_vec @ q_vec))
        if r.answerable and r.reference:
            ref_vec = np.asarray(embedder.embed([r.reference], kind="passage"))[0]
            sims.append(float(a_vec @ ref_vec))
        claims = [c for line in text.splitlines() for c in sentences(line)] or [text]
        ctx_sentences = [s for c in r.context for s in sentences(c)]
        if ctx_sentences:
            ctx_stems: set[str] = set()
            for c in r.context:
                ctx_stems |= text_stems(c)
            c_vecs = np.asarray(embedder.embed(ctx_sentences, kind="passage"))
            cl_vecs = np.asarray(embedder.embed(claims, kind="passage"))
            sup = check_support(claims, ctx_stems, cl_vecs, c_vecs)
            faiths.append(sum(s.supported for s in sup) / len(sup))
        else:
            faiths.append(0.0)
    m["semantic_similarity"] = _mean(sims)
    m["answer_relevancy"] = _mean(rels)
    m["faithfulness"] = _mean(faiths)

    # PCA / CPR (seed 001) on items with expected_items: recall of the expected items in the answer, and the
    # share of listed items (course codes or known names) that satisfy the constraints
    pcas, cprs = [], []
    vocab = list(dict.fromkeys(item_vocabulary))
    for r in items:
        if not r.expected_items:
            continue
        text = "" if r.abstained else r.answer
        expected = r.expected_items
        found = [e for e in expected if contains_span(text, e)]
        pcas.append(len(found) / len(expected))
        listed = set(_CODE.findall(text)) | {v for v in vocab if contains_span(text, v)}
        listed |= set(found)
        cprs.append(len(set(found) & listed) / len(listed) if listed else 0.0)
    m["pca"] = _mean(pcas)
    m["cpr"] = _mean(cprs)
    m["constraint_items"] = len(pcas)

    lat = [r.latency_ms for r in items]
    m["latency_ms_p50"] = round(float(np.percentile(lat, 50)), 1) if lat else None
    m["latency_ms_p95"] = round(float(np.percentile(lat, 95)), 1) if lat else None
    m["stop_reasons"] = dict(Counter(r.stop_reason for r in items))
    return m
