"""The generation layer's base error (issue 30's error tree: ``storage.errors.ProdiBotError`` is the root).

The LLM pool wraps anything unexpected a backend raises (a ``KeyError`` from a surprising reply, say) into a
``GenerationError`` with the original as ``__cause__``, so the answer pipeline catches this one type and falls back
to its extractive answer.
"""

from __future__ import annotations

from storage.errors import ProdiBotError

__all__ = ["GenerationError"]


class GenerationError(ProdiBotError):
    """The model (or the reader) could not produce an output: it did not load, failed, timed out or was closed."""
