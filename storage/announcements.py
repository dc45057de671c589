"""Announcements pushed from the nightly rescrape (issue 32): who subscribed to what.

One SQLite file (``DATA_DIR/announcements.sqlite3``; PostgreSQL with ``DATABASE_URL``:
``storage.pg_announcements``), one table so far:

- ``subscriptions``: (user key, channel, topic). The user key is the channel's own address of the student
  (``telegram:<id>``, ``whatsapp:<number>``): an announcement has to reach them, so it is kept as it is, and only
  here; ``/berhenti`` and ``/hapus`` delete it. The topic is the normalised form (``retrieval.topics``) or
  ``all``.

Blocking: async callers run the methods in an executor. Bad input raises ValueError and writes nothing.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["ALL", "MAX_TOPICS", "AnnouncementStore", "Subscription", "check_subscription"]

ALL = "all"
MAX_TOPICS = 10  # topics a user may hold (``all`` included)
MAX_TOPIC_CHARS = 60

_SCHEMA = """
CREATE TABLE IF NOT EXISTS subscriptions (
    user_key TEXT NOT NULL,
    channel TEXT NOT NULL,
    topic TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_key, topic)
);
CREATE INDEX IF NOT EXISTS subscriptions_channel ON subscriptions (channel);
"""


@dataclass(frozen=True, slots=True)
class Subscription:
    user_key: str
    channel: str
    topic: str  # normalised, or ``all``
    created_at: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"user_key": self.user_key, "channel": self.channel, "topic": self.topic,
                "created_at": self.created_at}


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_subscription(user_key: str, channel: str, topic: str) -> tuple[str, str, str]:
    """The fields as stored; ValueError naming what is wrong."""
    user_key, channel, topic = (user_key or "").strip(), (channel or "").strip(), (topic or "").strip()
    if not user_key or not channel or ":" not in user_key:
        raise ValueError("a subscription needs a user key (channel:id) and its channel")
    if not topic:
        raise ValueError("a subscription needs a topic (or 'all')")
    if len(topic) > MAX_TOPIC_CHARS:
        raise ValueError(f"a topic may have at most {MAX_TOPIC_CHARS} characters")
    return user_key, channel, topic


def subscription_from_row(row: Any) -> Subscription:
    return Subscription(user_key=row["user_key"], channel=row["channel"], topic=row["topic"],
                        created_at=row["created_at"])


class AnnouncementStore:
    """Subscriptions in one SQLite file. Thread-safe (one connection, one lock)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=10)
        self._db.row_factory = sqlite3.Row
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnnouncementStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A transaction holding SQLite's write lock from its first statement (another process waits)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.rollback()
                raise
            self._db.commit()

    # --- subscriptions --------------------------------------------------------------------------------------
    def subscribe(self, user_key: str, channel: str, topic: str) -> bool:
        """Add (user, topic); True when it is new. ValueError beyond ``MAX_TOPICS`` topics (nothing written)."""
        user_key, channel, topic = check_subscription(user_key, channel, topic)
        with self._write() as db:
            have = [r[0] for r in db.execute("SELECT topic FROM subscriptions WHERE user_key = ?", (user_key,))]
            if topic in have:
                return False
            if len(have) >= MAX_TOPICS:
                raise ValueError(f"at most {MAX_TOPICS} topics per user")
            db.execute("INSERT INTO subscriptions (user_key, channel, topic, created_at) VALUES (?,?,?,?)",
                       (user_key, channel, topic, utc_now()))
            return True

    def unsubscribe(self, user_key: str, topic: str | None = None) -> int:
        """Remove one topic, or every subscription of the user (``topic`` None); how many rows went."""
        with self._write() as db:
            if topic is None:
                return db.execute("DELETE FROM subscriptions WHERE user_key = ?", (user_key,)).rowcount
            return db.execute("DELETE FROM subscriptions WHERE user_key = ? AND topic = ?",
                              (user_key, topic)).rowcount

    def topics(self, user_key: str) -> list[str]:
        """The user's topics, in the order subscribed."""
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT topic FROM subscriptions WHERE user_key = ? ORDER BY created_at, topic", (user_key,))]

    def subscriptions(self, channel: str | None = None) -> list[Subscription]:
        """Every subscription (of one channel), by user key and topic."""
        query, params = "SELECT * FROM subscriptions", ()
        if channel is not None:
            query, params = query + " WHERE channel = ?", (channel,)
        with self._lock:
            return [subscription_from_row(r) for r in self._db.execute(query + " ORDER BY user_key, topic", params)]

    def forget_user(self, user_key: str) -> int:
        """Everything stored about the user here (``/hapus``)."""
        return self.unsubscribe(user_key)
