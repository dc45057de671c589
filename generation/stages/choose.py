"""The rules answerer's choice of what to show: the page's lines for a list question, else the span's sentence or
the best one or two, and the support signals of the chosen sentence that the gate reads."""

from __future__ import annotations

from generation.answer_type import type_ok
from generation.compose import disagree_by_year, display, list_item, list_start, newest_first
from generation.config import MAX_LIST_LINES, StopReason
from generation.stages.base import Abstain, Evidence, StageContext, Turn
from generation.stages.evidence import with_bounds
from generation.stages.generate import SPAN_SENTENCE_MIN
from generation.support import (
    EvidenceSentence,
    anchor_coverage,
    idf_weights,
    is_number_anchor,
    is_soft,
    stem,
    stems,
    text_stems,
)
from generation.text import is_negated, name_words, normalize

__all__ = ["ComposeStage", "choose_list", "choose_sentences"]


class ComposeStage:
    """Choose the sentences to show: the page's lines for a list, else the span's sentence or the best 1–2."""

    name = "compose"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        ev = turn.ev
        turn.trace.add("context", chunk_ids=[h.chunk_id for h in turn.hits])
        if turn.list_q and ev.sentences and max(ev.scores) >= 0:
            turn.chosen = choose_list(self.ctx, ev)
            turn.span = None  # a list answer is the page's own lines
        else:
            turn.chosen = choose_sentences(self.ctx, ev, turn.span)
        if not turn.chosen:
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        top = turn.chosen[0]
        weights = ev.weights or idf_weights(turn.anchor_stems, list(ev.hit_stems.values()))
        turn.cov_chunk = ev.coverage_chunk.get(top.chunk_id, 0.0)
        sentence_stems = with_bounds(text_stems(display(top)), ev, top)
        turn.cov_sentence = anchor_coverage(turn.anchor_stems, sentence_stems, weights)
        chunk_stems = ev.hit_stems.get(top.chunk_id, set())
        turn.missing = [a for a in turn.anchor_stems if a not in chunk_stems]
        top_weight = max((weights.get(a, 1.0) for a in turn.anchor_stems), default=1.0) or 1.0
        turn.max_missing = max((weights.get(a, 1.0) / top_weight for a in turn.missing), default=0.0)
        numbers = {a for a in turn.anchor_stems if is_number_anchor(a)}
        turn.numbers_ok = numbers <= chunk_stems
        # the anchors the question writes as names, marked in the anchor table (which missing anchors were names)
        names = {stem(w) for w in name_words(turn.anchor_text)} & set(turn.anchor_stems)
        turn.negated = is_negated(turn.anchor_text)
        if turn.negated:
            cited_hit = next((h for h in turn.hits if h.chunk_id == top.chunk_id), None)
            turn.negation_ok = is_negated(f"{cited_hit.title} {cited_hit.text}" if cited_hit else top.text)
        turn.type_ok = turn.list_q or type_ok(turn.kind, " ".join([turn.span or ""] + [display(c) for c in turn.chosen]))
        # each anchor's weight and where it was found: where an answer was lost, and what a refit of the soft
        # anchor weight needs (bench/fit_abstention.py)
        anchor_table = [{"stem": a, "weight": round(weights.get(a, 1.0), 4), "soft": is_soft(a, question_stems=turn.anchor_stems),
                         "name": a in names, "chunk": a in chunk_stems, "sentence": a in sentence_stems}
                        for a in turn.anchor_stems]
        turn.trace.add("support", sentence=top.text, coverage_chunk=round(turn.cov_chunk, 3),
                       coverage_sentence=round(turn.cov_sentence, 3), anchors=anchor_table)
        return "list" if turn.list_q else ("span" if turn.span else "extractive")


def choose_list(ctx: StageContext, ev: Evidence) -> list[EvidenceSentence]:
    """A list question: the best sentence and the lines that follow it in the same chunk (the items). When the
    best line is an item in the middle of a run ("Akademisi dan Peneliti: …"), the list starts with the sentence
    introducing the run (compose.list_start); an item line counts by the name it shows (compose.list_item)."""
    order = sorted(range(len(ev.sentences)), key=lambda i: -ev.scores[i])
    best = order[0]
    lines = [s for s in ev.sentences if s.chunk_id == ev.sentences[best].chunk_id]  # the best line's chunk, in order
    first = list_start([s.text for s in lines], lines.index(ev.sentences[best]))
    chosen: list[EvidenceSentence] = []
    used = 0
    for s in lines[first:]:
        if len(chosen) >= MAX_LIST_LINES or (chosen and s.text.rstrip().endswith("?")):
            break
        size = len(list_item(s.text) or s.text)
        if chosen and used + size > ctx.config.max_answer_chars:
            break
        chosen.append(s)
        used += size
    return chosen


def choose_sentences(ctx: StageContext, ev: Evidence, span: str | None) -> list[EvidenceSentence]:
    """The sentence(s) to show: the best-scoring one containing the span, or the best 1–2 (extractive).

    Headings and the page's own questions are never cited. With the hand thresholds, a negative best score
    (every sentence from a chunk that misses the question's words) abstains here; with the calibrated gate the
    best sentence is composed anyway and the gate decides on all its signals (its evidence score among them)."""
    order = sorted((i for i in range(len(ev.sentences)) if ev.citable[i]), key=lambda i: -ev.scores[i])
    if not order or (ctx.abstention_mode == "thresholds" and ev.scores[order[0]] < 0):
        return []
    if span:
        norm = normalize(span)
        top_score = ev.scores[order[0]]
        containing = [i for i in order if norm and norm in normalize(ev.sentences[i].text)
                      and _near(ev.scores[i], top_score, SPAN_SENTENCE_MIN)]
        if containing:
            if containing[0] == order[0]:
                return [ev.sentences[order[0]]]
            # the model chose a near-best sentence: show the best one first, then the model's
            return [ev.sentences[order[0]], ev.sentences[containing[0]]]
        span_stems = set(stems(span))
        eligible = [i for i in order if _near(ev.scores[i], top_score, SPAN_SENTENCE_MIN)]
        if span_stems and eligible:
            best = max(eligible, key=lambda i: (len(span_stems & set(stems(ev.sentences[i].text))), ev.scores[i]))
            if len(span_stems & set(stems(ev.sentences[best].text))) / len(span_stems) >= ctx.config.support_tau:
                return [ev.sentences[best]]
    top = ev.scores[order[0]]
    rival = next((i for i in order[1:] if _near(ev.scores[i], top, 0.9) and ev.sentences[i].url != ev.sentences[order[0]].url
                  and disagree_by_year(ev.sentences[order[0]], ev.sentences[i])), None)
    if rival is not None:  # two pages, two years: the newer first, and the older one said too
        return newest_first([ev.sentences[order[0]], ev.sentences[rival]])
    chosen = [order[0]]
    for i in order[1:]:
        if len(chosen) >= 2:
            break
        if _near(ev.scores[i], top, 0.9) and ev.sentences[i].chunk_id == ev.sentences[order[0]].chunk_id:
            chosen.append(i)
    chosen.sort(key=lambda i: (ev.sentences[i].hit_rank, ev.sentences[i].index))
    return [ev.sentences[i] for i in chosen]


def _near(score: float, top: float, share: float) -> bool:
    """``score`` is within ``1 - share`` of the best score ``top`` (≥ share·top for a positive top; the same
    distance below a negative one)."""
    return score >= top - (1.0 - share) * abs(top)
