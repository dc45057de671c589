"""Query rewriting: follow-ups from the conversation window, and RQ refinement with seed 004 §3's validators.

Refinement is deterministic (no LLM): student shorthand is expanded and fillers are dropped. A candidate is kept
only when it stays close to the original (cosine ≥ threshold, unless it is a follow-up rewrite), keeps the main
entities, and its retrieval does not degrade (top-distance margin, source Jaccard).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from generation.text import QUESTION_WORDS, anchors, words
from retrieval.normalize import GLOSSARY

__all__ = ["FollowUp", "Validation", "expand_query", "jaccard", "rewrite_followup", "validate_refinement"]

# Student shorthand → the words the site uses. The glossary lives in the retrieval layer now, because the query
# normaliser applies it before retrieval (retrieval/normalize.py); the refinement and the support check reuse it.
ABBREVIATIONS = GLOSSARY

_FOLLOWUP_MARKERS = re.compile(
    r"^(yang|yg|kalau|kalo|bagaimana dengan|gimana dengan|terus|lalu|trus|dan|selain itu|ada lagi|ada yang lain|"
    r"yang lain|lainnya|itu|tersebut|dia|beliau)\b|\b(lainnya|yang lain|tersebut|itu saja|saja\?*$|beliau|dia)\b|"
    r"\b\w{3,}nya\s*\?*\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class FollowUp:
    query: str
    rewritten: bool
    previous: str = ""


def rewrite_followup(question: str, history: Sequence[object]) -> FollowUp:
    """Resolve a follow-up ("ada yang lain?", "yang 3 SKS saja?") with the previous user question's topic."""
    previous = ""
    reply = ""
    for msg in reversed(list(history)):
        role, text = getattr(msg, "role", ""), str(getattr(msg, "text", "")).strip()
        if role == "assistant" and not previous and not reply:
            reply = text
        if role == "user" and text and text != question.strip():
            previous = text
            break
    if not previous:
        return FollowUp(question, False)
    own = anchors(question)
    is_followup = bool(_FOLLOWUP_MARKERS.search(question.strip())) and len(own) <= 4
    if not is_followup and len(own) <= 1 and len(words(question)) <= 4:
        is_followup = True
    if not is_followup:
        return FollowUp(question, False)
    prev_core = previous.rstrip(" ?!.")
    extra = [w for w in own if w not in {"lain", "lainnya", "saja", "lagi"}]
    if not extra:  # "ada yang lain?": the previous question again
        return FollowUp(prev_core + "?", True, previous)
    # the new question first, then the previous question's topic words it leaves implicit, and the names the
    # previous answer gave ("emailnya?" after "Ketua prodi adalah Supriyono, M.Kom.")
    own_words = set(words(question))
    topic = [w for w in words(prev_core) if w not in QUESTION_WORDS and (w.isdigit() or w not in own_words)]
    # names only for a pronoun-like reference ("emailnya?", "beliau"), not for a narrowing ("yang 3 SKS saja?")
    refers = re.search(r"\w{3,}-?nya\b|\b(dia|beliau)\b", question, re.IGNORECASE)
    names = ([n for n in _names(reply) if n.lower() not in topic]
             if refers and reply and not reply.startswith("Maaf") else [])
    query = f"{question.strip().rstrip('?!. ')} {' '.join(topic + names)}".strip()
    return FollowUp(query + "?", True, previous)


_NAME = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,3}")
_NOT_NAMES = frozenset(
    "Program Studi Teknik Informatika Universitas Fakultas Maaf Sumber Mata Kuliah Menurut Kom Eng Pd Ag".split()
)


def _names(reply: str) -> list[str]:
    """Capitalised name-like words of the first line of the previous answer (at most four)."""
    first = reply.splitlines()[0] if reply else ""
    out: list[str] = []
    for m in _NAME.finditer(first):
        for w in m.group(0).split():
            if w not in _NOT_NAMES and len(w) > 2 and w not in out:
                out.append(w)
    return out[:4]


def expand_query(query: str) -> str:
    """The refinement candidate: shorthand expanded, polite fillers removed; same language, same entities."""
    out = []
    for raw in re.findall(r"\S+", query):
        core = raw.strip("?!.,;:()\"'").lower()
        if core in ABBREVIATIONS:
            out.append(ABBREVIATIONS[core])
        elif core in {"tolong", "mohon", "dong", "kak", "min", "gan", "sih", "ya", "deh", "nih", "kah"}:
            continue
        else:
            out.append(raw)
    text = " ".join(out).strip()
    if query.strip().endswith("?") and not text.endswith("?"):
        text += "?"
    return text


def main_entities(query: str) -> set[str]:
    """The words that name what is asked about (anchors with shorthand expanded)."""
    return set(anchors(expand_query(query))) - QUESTION_WORDS


def jaccard(a: set[str], b: set[str]) -> float:
    """Seed 004 eq. 14."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class Validation:
    accepted: bool
    reason: str
    cosine: float = 0.0
    jaccard: float = 0.0
    top_distance_orig: float | None = None
    top_distance_cand: float | None = None


def validate_refinement(
    original: str,
    candidate: str,
    cosine: float,
    *,
    followup: bool,
    orig_sources: set[str],
    cand_sources: set[str],
    orig_top_distance: float | None,
    cand_top_distance: float | None,
    sim_threshold: float = 0.9,
    margin: float = 0.15,
    jaccard_min: float = 0.2,
) -> Validation:
    """Seed 004 §3: BLOCK on low cosine (not for follow-up rewrites), changed entities, a worse top distance by
    more than ``margin``, or a source Jaccard below ``jaccard_min``; otherwise ACCEPT."""
    j = jaccard(orig_sources, cand_sources)
    base = dict(cosine=cosine, jaccard=j, top_distance_orig=orig_top_distance, top_distance_cand=cand_top_distance)
    if not followup and cosine < sim_threshold:
        return Validation(False, "low_similarity", **base)
    if not main_entities(original) <= main_entities(candidate):
        return Validation(False, "entities_changed", **base)
    if orig_top_distance is not None and cand_top_distance is not None and cand_top_distance > orig_top_distance + margin:
        return Validation(False, "top_distance_worse", **base)
    if not followup and j < jaccard_min:
        return Validation(False, "low_jaccard", **base)
    return Validation(True, "accepted", **base)
