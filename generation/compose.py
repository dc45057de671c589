"""Composing replies: the standard abstention message and cited extractive/span answers (seed 002's finalizer)."""

from __future__ import annotations

from collections.abc import Sequence

from generation.support import EvidenceSentence
from generation.text import normalize, words
from generation.types import Source

__all__ = ["ABSTAIN_MESSAGE", "abstain_text", "cite", "compose_answer"]

ABSTAIN_MESSAGE = (
    "Maaf, saya belum menemukan informasi yang cukup di situs program studi untuk menjawab pertanyaan itu."
)


def abstain_text(contact_url: str | None = None, related: Sequence[str] = ()) -> str:
    """One standard Indonesian message plus a helpful pointer (contact page, related topics)."""
    parts = [ABSTAIN_MESSAGE]
    if related:
        parts.append("Topik terkait yang mungkin membantu: " + "; ".join(related[:3]) + ".")
    if contact_url:
        parts.append(f"Untuk pertanyaan lebih lanjut, silakan hubungi program studi: {contact_url}")
    else:
        parts.append("Untuk pertanyaan lebih lanjut, silakan hubungi sekretariat program studi.")
    return "\n".join(parts)


def cite(sentences: Sequence[EvidenceSentence]) -> tuple[list[str], tuple[Source, ...]]:
    """Number the distinct sources of the sentences; returns each sentence with its ``[n]`` marker."""
    order: dict[str, int] = {}
    sources: list[Source] = []
    out = []
    for s in sentences:
        key = s.url or s.chunk_id
        if key not in order:
            order[key] = len(order) + 1
            sources.append(Source(url=s.url, title=s.title or s.url))
        out.append(f"{s.text.rstrip()} [{order[key]}]")
    return out, tuple(sources)


def compose_answer(span: str | None, support: Sequence[EvidenceSentence]) -> tuple[str, tuple[Source, ...]]:
    """A short answer: the accepted span (when it adds something) followed by its supporting sentence(s),
    each with a citation marker."""
    cited, sources = cite(support)
    body = " ".join(cited)
    if span:
        span_n = normalize(span)
        first = normalize(support[0].text) if support else ""
        # the span alone is enough when the sentence is barely longer than it
        if span_n and (not first or len(words(first)) - len(words(span_n)) > 3):
            lead = span.strip().rstrip(".")
            return f"{lead}.\n{body}", sources
    return body, sources
