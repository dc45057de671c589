"""The retrieval layer's base error (issue 30's error tree: ``storage.errors.ProdiBotError`` is the root)."""

from __future__ import annotations

from storage.errors import ProdiBotError

__all__ = ["RetrievalError"]


class RetrievalError(ProdiBotError):
    """Retrieval could not do what was asked (the index is missing or unusable, …); the message says why."""
