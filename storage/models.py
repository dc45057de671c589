"""Records that every layer shares: a stored document and one of its chunks."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Chunk", "Document"]


@dataclass(frozen=True, slots=True)
class Document:
    """One logical document: a page, a PDF, or one entity split from a page (a lecturer, a course row set).

    ``urls`` holds every URL the same content was seen at (duplicates collapse); ``url`` is the canonical one.
    ``kind`` is ``page``, ``pdf``, ``lecturer`` or ``curriculum`` and lets retrieval build its facts tables.
    """

    doc_id: str
    url: str
    title: str
    text: str
    content_hash: str
    fetched_at: str = ""
    kind: str = "page"
    urls: tuple[str, ...] = ()
    sections: tuple[tuple[str, str], ...] = ()  # (heading, body) in page order
    meta: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable span of a document. ``text`` starts with its section heading on continuation chunks."""

    chunk_id: str
    doc_id: str
    url: str
    title: str
    section: str
    position: int
    text: str
    content_hash: str
    fetched_at: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation. ``role`` is ``user`` or ``assistant``; ``ts`` is a Unix timestamp."""

    role: str
    text: str
    ts: float = 0.0
