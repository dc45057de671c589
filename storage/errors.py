"""Errors of the stores that callers may catch without knowing the backend (SQLite or PostgreSQL).

Messages are English, for the logs; a caller that reaches a student turns them into a polite Indonesian reply.
"""

from __future__ import annotations

__all__ = ["StoreError", "StoreUnavailable"]


class StoreError(Exception):
    """A store could not do what was asked (a database error that is not bad input; bad input is ValueError)."""


class StoreUnavailable(StoreError):
    """The database could not be reached, or a query ran past its timeout: nothing was changed, or (for a write
    that is not safe to repeat) it is unknown whether it was; the message says which."""
