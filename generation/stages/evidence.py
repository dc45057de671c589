"""The rules answerer's evidence: the hits split into sentences, each scored as a weighted sum of components, and
the anchor coverage that the hand-threshold gate reads (docs/answers.md, "Choosing the sentence")."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from generation.answer_type import expected_type, expected_unit, type_ok, unit_ok
from generation.compose import display
from generation.config import StopReason
from generation.stages.base import Abstain, Evidence, StageContext, Turn
from generation.stages.retrieve import gap_round
from generation.support import (
    EvidenceSentence,
    anchor_coverage,
    corpus_weights,
    idf_weights,
    is_number_anchor,
    split_evidence,
    stems,
    text_stems,
    within_stated_bounds,
)
from generation.text import normalize, words
from retrieval.types import Hit

__all__ = ["EVIDENCE_COMPONENTS", "EVIDENCE_WEIGHTS", "EvidenceStage", "build_evidence", "is_heading",
           "low_evidence", "refresh_evidence", "with_bounds"]

# A sentence naming what the previous reply named, when the student asks for another one ("ada lagi yang …?"):
# larger than any sentence's score range (the weighted components stay within about ±1), so it goes last; set, not
# fitted
EXCLUDED_PENALTY = 1.0

# How an evidence sentence is scored: a weighted sum of its components (Evidence.components, each in 0..1 except
# the rank). lexical = idf-weighted anchor coverage of the sentence; embedding = cosine(question, sentence) mapped
# from 0.70..0.95 to 0..1; chunk = anchor coverage of its chunk; rank = its chunk's retrieval rank (0 = best);
# short = fewer than 4 words and no "Label: value"; off_topic = its chunk misses the question's anchors (below
# anchor_coverage_min); type_miss = it cannot carry the answer type the question wants. See docs/answers.md
# ("Choosing the sentence") for how these were set and measured (bench/fit_evidence.py).
EVIDENCE_WEIGHTS: dict[str, float] = {
    "lexical": 0.55, "embedding": 0.35, "chunk": 0.10, "rank": -0.01, "short": -0.3, "off_topic": -0.5,
    "type_miss": -0.25,
}
EVIDENCE_COMPONENTS = tuple(EVIDENCE_WEIGHTS)



class EvidenceStage:
    """Split the hits into scored evidence sentences and measure anchor coverage (docs/answers.md); a missing anchor
    gets one anchor-constrained retrieval round."""

    name = "evidence"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        cfg = self.ctx.config
        turn.anchor_stems = list(dict.fromkeys(stems(turn.anchor_text)))
        if not turn.anchor_stems:  # no content word to check evidence against (another script, only stop words)
            turn.trace.add("gate", decision="abstain", anchors=[])
            return Abstain(StopReason.ABSTAIN_LOW_RETRIEVAL)
        turn.kind = None if turn.list_q else expected_type(turn.normalized)
        turn.unit = None if turn.list_q else expected_unit(turn.anchor_text)  # in formal words ("org" → "orang")
        corpus_w = await self.ctx.run(corpus_weights, turn.index, turn.anchor_text)
        if turn.followup:
            # a follow-up asks about its own words; the carried-over topic only narrows the search
            own = set(stems(turn.normalized))
            base = corpus_w or {a: 1.0 for a in turn.anchor_stems}
            corpus_w = {a: w * (1.5 if a in own else 0.5) for a, w in base.items()}
        turn.corpus_w = corpus_w
        turn.q_vec = (await self.ctx.embed([turn.query], "query"))[0]
        await refresh_evidence(self.ctx, turn)
        decision = "covered"
        if turn.best_cov < cfg.anchor_coverage_min and cfg.dragin_max_iterations > 0:
            missing = [a for a in turn.anchor_stems if not any(a in s for s in turn.ev.hit_stems.values())]
            if missing:
                grown = await gap_round(self.ctx, turn.index, f"{turn.query} {' '.join(missing)}", turn.hits,
                                        turn.trace, "anchor")
                decision = "anchor_round"
                if grown:
                    turn.hits = grown
                    await refresh_evidence(self.ctx, turn)
        turn.trace.add("gate", anchors=turn.anchor_stems, coverage=round(turn.best_cov, 3),
                       top_sentence_similarity=round(turn.top_sim, 4))
        if low_evidence(self.ctx, turn):
            turn.trace.add("gate", decision="abstain", coverage=round(turn.best_cov, 3),
                           top_sentence_similarity=round(turn.top_sim, 4))
            return Abstain(StopReason.ABSTAIN_LOW_RETRIEVAL)
        return decision


def low_evidence(ctx: StageContext, turn: Turn) -> bool:
    """The hand-threshold gate ("thresholds" mode); the calibrated gate decides after composing instead."""
    cfg = ctx.config
    if not turn.ev.sentences:
        return True
    if ctx.abstention_mode != "thresholds":
        return False
    return turn.best_cov < cfg.anchor_coverage_min or turn.top_sim < cfg.min_top_similarity


async def refresh_evidence(ctx: StageContext, turn: Turn) -> None:
    """The turn's evidence rebuilt from its hits (after retrieval grew them)."""
    assert turn.q_vec is not None  # the evidence stage embeds the query first
    turn.ev = await build_evidence(ctx, turn.hits, turn.anchor_stems, turn.q_vec, turn.corpus_w, turn.kind,
                                   turn.unit, turn.exclude)
    turn.best_cov = max(turn.ev.coverage_chunk.values(), default=0.0)
    vecs = turn.ev.vectors
    turn.top_sim = float(np.max(vecs @ turn.q_vec)) if vecs is not None and len(vecs) else 0.0


async def build_evidence(
    ctx: StageContext,
    hits: list[Hit],
    anchor_stems: list[str],
    q_vec: np.ndarray,
    corpus_w: dict[str, float] | None = None,
    kind: str | None = None,
    unit: str | None = None,
    exclude: Sequence[str] = (),
) -> Evidence:
    """The hits' evidence sentences, scored (EVIDENCE_WEIGHTS) against the question's anchors and vector."""
    ev = Evidence(hits=list(hits))
    ev.sentences = split_evidence(hits, max_sentences=60)
    numbers = [a for a in anchor_stems if is_number_anchor(a)]
    for h in hits:
        ev.hit_stems[h.chunk_id] = text_stems(f"{h.title} {h.text}")
        # a value the student gives ("IP 2,9") is on a page that states the rule as a bound ("di bawah 3,00")
        bounded = within_stated_bounds([n for n in numbers if n not in ev.hit_stems[h.chunk_id]], h.text)
        if bounded:
            ev.bounded[h.chunk_id] = bounded
            ev.hit_stems[h.chunk_id] |= bounded
    weights = corpus_w or idf_weights(anchor_stems, list(ev.hit_stems.values()))
    ev.weights = weights
    ev.coverage_chunk = {cid: anchor_coverage(anchor_stems, s, weights) for cid, s in ev.hit_stems.items()}
    if not ev.sentences:
        ev.vectors = np.zeros((0, 1), dtype=np.float32)
        return ev
    ev.vectors = await ctx.embed([s.text for s in ev.sentences], "passage")
    _score_sentences(ctx, ev, anchor_stems, ev.vectors @ q_vec, corpus_w, kind, unit, exclude)
    _demote_headings(ev, hits)
    return ev


def _score_sentences(ctx: StageContext, ev: Evidence, anchor_stems: list[str], sims: np.ndarray,
                     corpus_w: dict[str, float] | None, kind: str | None, unit: str | None,
                     exclude: Sequence[str]) -> None:
    """Each sentence's score components (EVIDENCE_COMPONENTS) and weighted score, appended to ``ev``."""
    # scored as shown: a "Label: value" row carries its page title (compose.display), so the page's subject
    # counts for the row (a community page's "Dosen pembina: …" row answers "siapa pembina komunitas itu")
    shown = [display(s) for s in ev.sentences]
    # … and cited under its page's title: the page's subject counts for each of its sentences ("minimal 640 jam"
    # on a magang page answers "magang berapa jam"); a page without a title (a plain passage) adds nothing
    titles = {t: text_stems(t) for t in {s.title or "" for s in ev.sentences}}
    sent_stems = [text_stems(text) | titles[s.title or ""] for s, text in zip(ev.sentences, shown, strict=True)]
    sent_stems = [with_bounds(st, ev, s) for s, st in zip(ev.sentences, sent_stems, strict=True)]
    sent_weights = corpus_w or idf_weights(anchor_stems, sent_stems)
    weight = np.asarray([ctx.evidence_weights[c] for c in EVIDENCE_COMPONENTS])
    for i, s in enumerate(ev.sentences):
        chunk_cov = ev.coverage_chunk.get(s.chunk_id, 0.0)
        parts = (
            anchor_coverage(anchor_stems, sent_stems[i], sent_weights),
            min(max((float(sims[i]) - 0.7) / 0.25, 0.0), 1.0),
            chunk_cov,
            float(s.hit_rank),
            # headings say little on their own; a "Label: value" line (Telepon: (0341) 558933) is a fact
            float(len(words(s.text)) < 4 and ":" not in s.text),
            # a sentence from a chunk that misses the question's anchors cannot be the cited answer
            float(chunk_cov < ctx.config.anchor_coverage_min),
            # the finalizer (docs/answers.md): a "berapa"/"kapan"/"siapa" question wants a sentence that can carry a
            # number, a time or a name (display() adds the page title to "Label: value" lines); a number in
            # another unit than the question names ("100 SKS" for "berapa jam") is half a miss
            1.0 if kind is not None and not type_ok(kind, shown[i]) else (0.5 if not unit_ok(unit, shown[i]) else 0.0),
        )
        ev.components.append(parts)
        score = float(weight @ np.asarray(parts))
        if exclude and _names_any(shown[i], exclude):
            score -= EXCLUDED_PENALTY  # "ada lagi yang …?": what the previous reply named is not the answer
        ev.scores.append(score)
        ev.citable.append(True)


def _demote_headings(ev: Evidence, hits: Sequence[Hit]) -> None:
    """A question on the page (an FAQ entry) or a heading is not an answer; the sentence after it usually is."""
    sections = {h.chunk_id: (getattr(h, "section", "") or "", getattr(h, "title", "") or "") for h in hits}
    for i, s in enumerate(ev.sentences):
        if s.text.rstrip().endswith("?") or is_heading(s.text, *sections.get(s.chunk_id, ("", ""))):
            nxt = i + 1
            if nxt < len(ev.sentences) and ev.sentences[nxt].chunk_id == s.chunk_id:
                ev.scores[nxt] = max(ev.scores[nxt], ev.scores[i] - 0.02)
            ev.scores[i] = -1.0
            ev.citable[i] = False


def with_bounds(found: set[str], ev: Evidence, sentence: EvidenceSentence) -> set[str]:
    """A sentence's stems plus the question's numbers its chunk matched through a stated bound (``Evidence.bounded``)
    when the sentence itself states that bound."""
    numbers = ev.bounded.get(sentence.chunk_id)
    if not numbers:
        return found
    return found | within_stated_bounds(sorted(numbers - found), sentence.text)


def _names_any(text: str, names: Sequence[str]) -> bool:
    """``text`` names one of ``names`` (as a whole word, ignoring case)."""
    low = text.lower()
    return any(re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", low) for n in names if n)


def is_heading(text: str, section: str, title: str) -> bool:
    """A heading line: the chunk's own section or page title, or a short label without a verb-like ending,
    number, colon or full stop ("Sambutan Ketua Program Studi")."""
    line = text.strip()
    norm = normalize(line)
    if norm and norm in {normalize(section), normalize(title)}:
        return True
    tokens = line.split()
    if not 1 <= len(tokens) <= 6 or any(ch.isdigit() or ch in ".,:;!?()@" for ch in line):
        return False  # a name with its titles ("Dr. Rina, M.T."), a label, a number or a sentence
    capitalised = sum(1 for t in tokens if t[:1].isupper())
    return capitalised >= max(2, len(tokens) - 1)
