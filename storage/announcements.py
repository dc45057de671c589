"""Announcements pushed from the nightly rescrape (issue 32): who subscribed to what.

One SQLite file (``DATA_DIR/announcements.sqlite3``; PostgreSQL with ``DATABASE_URL``:
``storage.pg_announcements``):

- ``subscriptions``: (user key, channel, topic). The user key is the channel's own address of the student
  (``telegram:<id>``, ``whatsapp:<number>``): an announcement has to reach them, so it is kept as it is, and only
  here; ``/berhenti`` and ``/hapus`` delete it. The topic is the normalised form (``retrieval.topics``) or
  ``all``.
- ``announcements``: what a reindex found (``sync_jobs.announcements``): title, date, summary (verbatim lead
  sentences; the admin may edit it), link, status (``pending`` → ``sent`` or ``discarded``), the run that found
  it. ``key`` (the page version) is unique, so a second reindex, a restart or another replica records it once.
- ``deliveries``: one row per (announcement, subscriber), claimed (``sending``) before the message goes out and
  finished as ``sent``, ``skipped`` (WhatsApp outside the 24-hour window without a template) or ``failed``. The
  claim is an insert on the primary key: a restart, a second reindex or another replica never sends twice.

Blocking: async callers run the methods in an executor. Bad input raises ValueError and writes nothing.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from storage.sqlite_file import open_shared, write_transaction

__all__ = ["ALL", "ANNOUNCEMENT_STATUSES", "MAX_TOPICS", "Announcement", "AnnouncementStore", "Subscription",
           "check_subscription"]

ANNOUNCEMENT_STATUSES = ("pending", "sent", "discarded")
DELIVERY_STATUSES = ("sending", "sent", "skipped", "failed")
MAX_SUMMARY_CHARS = 1000

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
CREATE TABLE IF NOT EXISTS announcements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    url TEXT NOT NULL,
    title TEXT NOT NULL,
    date TEXT NOT NULL,
    summary TEXT NOT NULL,
    status TEXT NOT NULL,
    run_id TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    topic_text TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS announcements_status ON announcements (status, id);
CREATE TABLE IF NOT EXISTS deliveries (
    announcement_id INTEGER NOT NULL,
    user_key TEXT NOT NULL,
    channel TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (announcement_id, user_key)
);
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


@dataclass(frozen=True, slots=True)
class Announcement:
    id: int
    key: str
    doc_id: str
    url: str
    title: str
    date: str
    summary: str
    status: str
    run_id: str = ""
    created_at: str = ""
    updated_at: str = ""
    topic_text: str = ""  # the title and the page's text the topics are matched against (not shown)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "url": self.url, "title": self.title, "date": self.date, "summary": self.summary,
                "status": self.status, "run_id": self.run_id, "created_at": self.created_at,
                "updated_at": self.updated_at}


ANNOUNCEMENT_COLUMNS = ("key", "doc_id", "url", "title", "date", "summary", "status", "run_id", "created_at",
                        "updated_at", "topic_text")


def announcement_from_row(row: Any) -> Announcement:
    return Announcement(id=int(row["id"]), **{c: row[c] for c in ANNOUNCEMENT_COLUMNS})


def check_status(status: str) -> str:
    if status not in ANNOUNCEMENT_STATUSES:
        raise ValueError(f"unknown status {status!r}; choose one of {', '.join(ANNOUNCEMENT_STATUSES)}")
    return status


def check_summary(summary: str) -> str:
    summary = " ".join((summary or "").split())
    if not summary:
        raise ValueError("the summary may not be empty")
    if len(summary) > MAX_SUMMARY_CHARS:
        raise ValueError(f"the summary may have at most {MAX_SUMMARY_CHARS} characters")
    return summary


def announcement_row(draft: Any, run_id: str, status: str, now: str) -> tuple[object, ...]:
    """The stored columns of a ``sync_jobs.announcements.Draft`` (any object with its fields)."""
    return (draft.key, draft.doc_id, draft.url, draft.title[:300], draft.date, check_summary(draft.summary),
            check_status(status), run_id or "", now, now, str(getattr(draft, "text", ""))[:20000])


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
        self._lock = threading.RLock()
        self._db = open_shared(self.path, _SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnnouncementStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """A transaction holding SQLite's write lock from its first statement (another process waits)."""
        return write_transaction(self._db, self._lock)

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
        query = "SELECT * FROM subscriptions"
        params: tuple[str, ...] = ()
        if channel is not None:
            query, params = query + " WHERE channel = ?", (channel,)
        with self._lock:
            return [subscription_from_row(r) for r in self._db.execute(query + " ORDER BY user_key, topic", params)]

    def forget_user(self, user_key: str) -> int:
        """Everything stored about the user here (``/hapus``): subscriptions and delivery records."""
        removed = self.unsubscribe(user_key)
        with self._write() as db:
            db.execute("DELETE FROM deliveries WHERE user_key = ?", (user_key,))
        return removed

    # --- announcements ----------------------------------------------------------------------------------------
    def add_announcements(self, drafts: list[Any], *, run_id: str = "", status: str = "pending"
                          ) -> list[Announcement]:
        """Record the drafts a run found; a page version already recorded (same ``key``) is skipped. Returns the
        ones added now, in order."""
        now = utc_now()
        rows = [announcement_row(d, run_id, status, now) for d in drafts]
        added: list[int] = []
        with self._write() as db:
            for row in rows:
                cur = db.execute(f"INSERT OR IGNORE INTO announcements ({', '.join(ANNOUNCEMENT_COLUMNS)}) "
                                 f"VALUES ({', '.join('?' * len(ANNOUNCEMENT_COLUMNS))})", row)
                if cur.rowcount:
                    assert cur.lastrowid is not None  # an INSERT that added a row sets it
                    added.append(int(cur.lastrowid))
        return [a for a in (self.announcement(i) for i in added) if a is not None]

    def announcement(self, announcement_id: int) -> Announcement | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM announcements WHERE id = ?", (int(announcement_id),)).fetchone()
        return announcement_from_row(row) if row else None

    def announcements(self, *, status: str | None = None, limit: int = 50) -> list[Announcement]:
        """Newest first."""
        query = "SELECT * FROM announcements"
        params: tuple[str, ...] = ()
        if status is not None:
            query, params = query + " WHERE status = ?", (check_status(status),)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY id DESC LIMIT ?", (*params, int(limit))).fetchall()
        return [announcement_from_row(r) for r in rows]

    def set_status(self, announcement_id: int, status: str, *, expect: str | None = None) -> bool:
        """Move an announcement to ``status``; with ``expect``, only from that status (so two admins clicking at
        once move it once). True when it moved."""
        check_status(status)
        query = "UPDATE announcements SET status = ?, updated_at = ? WHERE id = ?"
        params: tuple[str | int, ...] = (status, utc_now(), int(announcement_id))
        if expect is not None:
            query, params = query + " AND status = ?", (*params, check_status(expect))
        with self._write() as db:
            return db.execute(query, params).rowcount > 0

    def set_summary(self, announcement_id: int, summary: str) -> bool:
        """The admin's edit of the summary (only while pending). ValueError on an empty or too long one."""
        summary = check_summary(summary)
        with self._write() as db:
            return db.execute("UPDATE announcements SET summary = ?, updated_at = ? WHERE id = ? AND status = "
                              "'pending'", (summary, utc_now(), int(announcement_id))).rowcount > 0

    # --- deliveries ------------------------------------------------------------------------------------------
    def claim_delivery(self, announcement_id: int, user_key: str, channel: str) -> bool:
        """Claim (announcement, user) for one send; False when it was claimed before (by anyone, ever)."""
        with self._write() as db:
            return db.execute("INSERT OR IGNORE INTO deliveries (announcement_id, user_key, channel, status, "
                              "updated_at) VALUES (?,?,?,'sending',?)",
                              (int(announcement_id), user_key, channel, utc_now())).rowcount > 0

    def finish_delivery(self, announcement_id: int, user_key: str, status: str, *, detail: str = "",
                        attempts: int = 1) -> None:
        if status not in DELIVERY_STATUSES[1:]:
            raise ValueError(f"unknown delivery status {status!r}")
        with self._write() as db:
            db.execute("UPDATE deliveries SET status = ?, detail = ?, attempts = ?, updated_at = ? "
                       "WHERE announcement_id = ? AND user_key = ?",
                       (status, detail[:200], int(attempts), utc_now(), int(announcement_id), user_key))

    def delivery_counts(self, announcement_id: int) -> dict[str, int]:
        """{sending, sent, skipped, failed} for one announcement."""
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM deliveries WHERE announcement_id = ? "
                                    "GROUP BY status", (int(announcement_id),)).fetchall()
        return {**dict.fromkeys(DELIVERY_STATUSES, 0), **{r[0]: int(r[1]) for r in rows}}
