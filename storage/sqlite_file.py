"""One SQLite file shared by the threads of a process: how the insights and announcement stores open theirs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["open_shared"]


def open_shared(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating its directory) ``path`` for use from several threads under the caller's lock: rows by name,
    write-ahead logging, 10 s to wait for another writer, and ``schema`` (idempotent DDL) applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, timeout=10)
    db.row_factory = sqlite3.Row
    with db:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(schema)
    return db
