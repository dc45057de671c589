"""One SQLite file shared by the threads of a process: how the insights and announcement stores open theirs."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["open_shared", "write_transaction"]


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


@contextmanager
def write_transaction(db: sqlite3.Connection, lock: threading.RLock) -> Iterator[sqlite3.Connection]:
    """A transaction that holds SQLite's write lock from its first statement (``BEGIN IMMEDIATE``): another process
    writing at the same moment waits instead of reading what this one is about to change (two saves reading the same
    MAX(id) and failing on the key). Rolled back on any exception, committed otherwise."""
    with lock:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.rollback()
            raise
        db.commit()
