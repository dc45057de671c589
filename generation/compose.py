"""Composing replies: the standard abstention message and cited extractive/span answers (seed 002's finalizer)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from generation.support import EvidenceSentence
from generation.text import normalize, words
from generation.types import Source

__all__ = ["ABSTAIN_MESSAGE", "abstain_text", "cite", "compose_answer", "display"]

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


_LABEL_LINE = re.compile(r"^[^:]{2,40}:\s+\S")


def display(s: EvidenceSentence) -> str:
    """The sentence as shown: a bare "Label: value" line gets its page title in front, so "Jabatan: Sekretaris
    Program Studi" on a lecturer's page says whose post it is."""
    text = s.text.rstrip()
    if _LABEL_LINE.match(text) and s.title and normalize(s.title) not in normalize(text):
        return f"{s.title} — {text}"
    return text


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
        out.append(f"{display(s)} [{order[key]}]")
    return out, tuple(sources)


def compose_answer(
    span: str | None, support: Sequence[EvidenceSentence], *, as_list: bool = False
) -> tuple[str, tuple[Source, ...]]:
    """A short answer: the accepted span (when it adds something) followed by its supporting sentence(s),
    each with a citation marker. ``as_list``: the lines one per row, cited once per source at the end."""
    if as_list:
        _, sources = cite(support)
        marks = " ".join(f"[{i}]" for i in range(1, len(sources) + 1))
        return "\n".join(s.text.rstrip() for s in support) + f" {marks}", sources
    cited, sources = cite(support)
    body = " ".join(cited)
    if span:
        span_n = normalize(span)
        first = normalize(support[0].text) if support else ""
        # lead with the span only when the sentence is long enough to hide it (phones: the answer comes first)
        if span_n and (not first or len(words(first)) > 12) and len(words(first)) - len(words(span_n)) > 3:
            lead = span.strip().rstrip(".")
            return f"{lead}.\n{body}", sources
    return body, sources
