"""The root of the project's error tree, and the errors of the stores that callers may catch without knowing the
backend (SQLite or PostgreSQL).

storage is the lowest layer, so every layer imports ``ProdiBotError`` from here and puts its own base under it:
``StoreError`` (storage), ``RetrievalError`` (retrieval.errors), ``GenerationError`` (generation.errors),
``CrawlError`` (sync_jobs.errors), ``ChannelError`` (handlers.errors).

Messages are English, for the logs; a caller that reaches a student turns them into a polite Indonesian reply.
"""

from __future__ import annotations

__all__ = ["ProdiBotError", "StoreError", "StoreUnavailable"]


class ProdiBotError(Exception):
    """The root of every error the project raises on purpose.

    Messages are English, for the logs; a caller that reaches a student turns them into a polite Indonesian reply.
    Each layer has one base under it, and a lower layer's error (or a library's) is mapped to the layer's own type
    at the boundary where it arises, with the original as ``__cause__``.
    """


class StoreError(ProdiBotError):
    """A store could not do what was asked (a database error that is not bad input; bad input is ValueError)."""


class StoreUnavailable(StoreError):
    """The database could not be reached, or a query ran past its timeout: nothing was changed, or (for a write
    that is not safe to repeat) it is unknown whether it was; the message says which."""
