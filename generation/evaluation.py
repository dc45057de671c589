"""Answer evaluation: each item's outcome (answerable: correct / wrong / abstained; unanswerable: refused /
answered), gold-span containment, token F1, abstention precision/recall, cited-page relevance, degenerate and
template-leak rates, citation rate, semantic similarity and answer relevancy (embeddings), faithfulness (share of
answer sentences supported by the retrieved context) and PCA/CPR on constraint items (docs/answers.md, "Constraint metrics: PCA and CPR").

Two of these hold by construction for the pipeline's replies and are not evidence of quality: faithfulness (an
extractive reply is checked against the very chunks it was copied from, with the pipeline's own support check) and
the degenerate/template-leak rates (the pipeline runs the same guards before it replies). The independent measures
are the outcome counts, gold-span containment, token F1, abstention precision/recall and ``cited_relevant_rate``
(the reply cites a page the dataset marks as relevant)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from generation.guards import check_degenerate, is_template_leak
from generation.support import check_support, text_stems
from generation.text import normalize, sentences, strip_citations, words

__all__ = [
    "ANSWERABLE_OUTCOMES", "OUTCOMES", "UNANSWERABLE_OUTCOMES", "ItemResult", "contains_span", "outcome",
    "outcome_counts", "strip_citations", "summarize", "token_f1",
]

_CODE = re.compile(r"\b[A-Z]{2,4}-\d{3}\b")


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
    relevant: list[str] = field(default_factory=list)  # URL keys (retrieval.evaluation.url_key) of relevant pages
    gold_match: str = "all"  # "all": the reply must contain every gold span; "any": golds are alternatives
    turns: int = 1  # user turns played through the pipeline, this one included (> 1: a multi-turn item)
    previous: list[str] = field(default_factory=list)  # the bot's own earlier replies in the conversation

    def dump(self) -> dict[str, Any]:
        return {"id": self.id, "answer": self.answer, "abstained": self.abstained, "sources": self.sources,
                "stop_reason": self.stop_reason, "outcome": outcome(self)}


ANSWERABLE_OUTCOMES = ("correct", "wrong", "abstained", "unscored")
UNANSWERABLE_OUTCOMES = ("refused", "answered")
OUTCOMES = ANSWERABLE_OUTCOMES + UNANSWERABLE_OUTCOMES


def outcome(r: ItemResult) -> str:
    """``correct`` / ``wrong`` / ``abstained`` for an answerable item (``unscored`` when it has no gold span),
    ``refused`` / ``answered`` for an unanswerable one. Correct = the reply (citations stripped) contains every gold
    span (``gold_match="all"``) or one of them (``"any"``)."""
    if r.gold_match not in ("all", "any"):
        raise ValueError(f"unknown gold_match {r.gold_match!r}; valid choices: all, any")
    if not r.answerable:
        return "refused" if r.abstained else "answered"
    if r.abstained:
        return "abstained"
    golds = [g for g in r.golds if g.strip()]
    if not golds:
        return "unscored"
    text = strip_citations(r.answer)
    found = [contains_span(text, g) for g in golds]
    return "correct" if (all(found) if r.gold_match == "all" else any(found)) else "wrong"


def outcome_counts(items: Sequence[ItemResult]) -> dict[str, int]:
    """Every outcome name with its count (zeros included)."""
    counts = Counter(outcome(r) for r in items)
    return {name: counts.get(name, 0) for name in OUTCOMES}


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def _written_degenerate(r: ItemResult) -> bool:
    """The pipeline's degeneration guard on what the reply itself wrote: the sentences it quotes verbatim from its
    context (a page's list that repeats a word, an English title) are the source's text, so they are left out, and
    names copied from the context pass the language check, as in the pipeline's guard."""
    text = strip_citations(r.answer)
    if not r.context:
        return check_degenerate(text).degenerate
    # case, punctuation, spacing and bracketed numbers aside ("[6]" reads as a citation marker in both)
    flat = [normalize(strip_citations(c)) for c in r.context]
    written = [s for line in text.splitlines() for s in sentences(line)
               if not (normalize(s) and any(normalize(s) in c for c in flat))]
    if not written:
        return False
    context_words = frozenset(w for c in r.context for w in words(c))
    return check_degenerate(" ".join(written), context_words=context_words).degenerate


def summarize(items: Sequence[ItemResult], embedder: Any, item_vocabulary: Sequence[str] = ()) -> dict[str, Any]:
    """All metrics over the evaluated items (rates in 0..1; None when no item qualifies). With ``embedder=None``
    the embedding-based metrics (semantic similarity, relevancy, faithfulness) are None."""
    answerable = [r for r in items if r.answerable]
    unanswerable = [r for r in items if not r.answerable]
    answered = [r for r in items if not r.abstained]
    m: dict[str, Any] = {"items": len(items), "answerable": len(answerable), "unanswerable": len(unanswerable)}
    m.update(outcome_counts(items))
    m["correct_rate"] = round(m["correct"] / len(answerable), 4) if answerable else None
    m.update(_gold_span_metrics(answerable))
    m.update(_abstention_metrics(items, answerable, unanswerable))
    m.update(_reply_metrics(answered))
    m.update(_embedding_metrics(answered if embedder is not None else (), embedder))
    m.update(_constraint_metrics(items, item_vocabulary))
    lat = [r.latency_ms for r in items]
    m["latency_ms_p50"] = round(float(np.percentile(lat, 50)), 1) if lat else None
    m["latency_ms_p95"] = round(float(np.percentile(lat, 95)), 1) if lat else None
    m["stop_reasons"] = dict(Counter(r.stop_reason for r in items))
    return m


def _gold_span_metrics(answerable: Sequence[ItemResult]) -> dict[str, Any]:
    """Gold-span containment (any / all golds) and the best token F1, over the answerable items with a gold span
    (an abstention counts as the empty reply)."""
    any_hits, all_hits, f1s = [], [], []
    for r in answerable:
        text = "" if r.abstained else strip_citations(r.answer)
        golds = [g for g in r.golds if g.strip()]
        if not golds:
            continue
        any_hits.append(float(any(contains_span(text, g) for g in golds)))
        all_hits.append(float(all(contains_span(text, g) for g in golds)))
        f1s.append(max(token_f1(text, g) for g in golds))
    return {"gold_span_any": _mean(any_hits), "gold_span_all": _mean(all_hits), "token_f1": _mean(f1s)}


def _abstention_metrics(items: Sequence[ItemResult], answerable: Sequence[ItemResult],
                        unanswerable: Sequence[ItemResult]) -> dict[str, Any]:
    """Abstention precision (abstentions that were on unanswerable items) and recall (unanswerable items
    abstained on), and the count of abstentions on answerable items."""
    abstained = [r for r in items if r.abstained]
    tp = sum(1 for r in abstained if not r.answerable)
    return {
        "abstention_precision": round(tp / len(abstained), 4) if abstained else None,
        "abstention_recall": round(tp / len(unanswerable), 4) if unanswerable else None,
        "abstained_on_answerable": sum(1 for r in answerable if r.abstained),
    }


def _reply_metrics(answered: Sequence[ItemResult]) -> dict[str, Any]:
    """Over the answered items: cited-page relevance, degenerate and template-leak rates, citation rate."""
    from retrieval.evaluation import url_key

    m: dict[str, Any] = {}
    # independent of the pipeline: does an answered reply cite a page the dataset marks as relevant?
    judged = [r for r in answered if r.answerable and r.relevant]
    cited = [float(any(url_key(str(s.get("url", ""))) in set(r.relevant) for s in r.sources)) for r in judged]
    m["cited_relevant_rate"] = _mean(cited)
    m["cited_relevant_n"] = len(judged)

    degenerate = [_written_degenerate(r) for r in answered]
    m["degenerate_rate"] = _mean([float(d) for d in degenerate]) if answered else 0.0
    m["template_leak_rate"] = _mean([float(is_template_leak(r.answer)) for r in answered]) if answered else 0.0
    m["answered_items"] = len(answered)
    m["degenerate_n"] = sum(degenerate)
    m["template_leak_n"] = sum(is_template_leak(r.answer) for r in answered)
    m["citation_rate"] = _mean([float(len(r.sources) > 0) for r in answered]) if answered else None
    return m


def _embedding_metrics(answered: Sequence[ItemResult], embedder: Any) -> dict[str, Any]:
    """Embeddings over ``answered`` (empty when there is no embedder): semantic similarity (answer vs reference),
    answer relevancy (question vs answer) and faithfulness."""
    sims, rels, faiths, faiths_ctx = [], [], [], []
    for r in answered:
        text = strip_citations(r.answer)
        a_vec = np.asarray(embedder.embed([text], kind="passage"))[0]
        q_vec = np.asarray(embedder.embed([r.query], kind="query"))[0]
        rels.append(float(a_vec @ q_vec))
        if r.answerable and r.reference:
            ref_vec = np.asarray(embedder.embed([r.reference], kind="passage"))[0]
            sims.append(float(a_vec @ ref_vec))
        faith = _faithfulness(text, r.context, embedder)
        if faith is None:
            faiths.append(0.0)  # no retrieved context (a facts-table answer): nothing to check it against
        else:
            faiths.append(faith)
            faiths_ctx.append(faith)
    return {
        "semantic_similarity": _mean(sims), "answer_relevancy": _mean(rels), "faithfulness": _mean(faiths),
        # the same, over the answers that have a retrieved context (facts-table answers left out)
        "faithfulness_with_context": _mean(faiths_ctx), "faithfulness_n": len(faiths_ctx),
    }


def _faithfulness(text: str, context: Sequence[str], embedder: Any) -> float | None:
    """The share of the reply's sentences (``text``, citations stripped) the context supports, by the pipeline's
    support check; None when there is no context sentence to check them against."""
    claims = [c for line in text.splitlines() for c in sentences(line)] or [text]
    ctx_sentences = [s for c in context for s in sentences(c)]
    if not ctx_sentences:
        return None
    ctx_stems: set[str] = set()
    for c in context:
        ctx_stems |= text_stems(c)
    c_vecs = np.asarray(embedder.embed(ctx_sentences, kind="passage"))
    cl_vecs = np.asarray(embedder.embed(claims, kind="passage"))
    sup = check_support(claims, ctx_stems, cl_vecs, c_vecs)
    return sum(s.supported for s in sup) / len(sup)


def _constraint_metrics(items: Sequence[ItemResult], item_vocabulary: Sequence[str]) -> dict[str, Any]:
    """PCA / CPR (docs/answers.md) on items with expected_items: recall of the expected items in the answer, and
    the share of listed items (course codes or known names) that satisfy the constraints."""
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
    return {"pca": _mean(pcas), "cpr": _mean(cprs), "constraint_items": len(pcas)}
