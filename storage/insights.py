"""What the prodi's admins act on: the question log (masked) and the admin answers (a curated, versioned FAQ).

One SQLite file (``DATA_DIR/insights.sqlite3``), two tables:

- ``questions``: one row per answered question, keyed by the answer's trace id: time, channel, a keyed hash of the
  user (only so that ``/hapus`` can find that user's rows; never shown), the question and the answer *masked*
  (``storage.privacy.mask_personal``: e-mail addresses, phone numbers, NIKs and other long digit runs replaced
  before they are stored; the question arrives masked already, ChatService cleans it at the entry), whether the bot
  refused, and the user's 👍/👎 when one came. No user id, number or name is stored.
- ``admin_answers``: every version of every admin answer (question, answer, optional link, author, time, expiry,
  deleted); the newest version of an id is the one in force.

Blocking (SQLite): async callers use ``QuestionLog`` or run the methods in an executor.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from storage.errors import StoreError
from storage.privacy import mask_personal
from storage.sqlite_file import open_shared, write_transaction

__all__ = ["AdminAnswer", "InsightsStore", "QuestionLog", "mask_personal"]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS questions (
    trace_id TEXT PRIMARY KEY,
    ts REAL NOT NULL,
    channel TEXT NOT NULL,
    user_hash TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL DEFAULT '',
    abstained INTEGER NOT NULL,
    feedback TEXT,
    feedback_ts REAL
);
CREATE INDEX IF NOT EXISTS questions_ts ON questions (ts);
CREATE INDEX IF NOT EXISTS questions_user ON questions (user_hash);
CREATE TABLE IF NOT EXISTS admin_answers (
    id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    link TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires TEXT NOT NULL DEFAULT '',
    deleted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (id, version)
);
"""


@dataclass(frozen=True, slots=True)
class AdminAnswer:
    """One version of an admin answer. ``expires`` is an ISO date ("" = never); after it the answer stops."""

    id: int
    version: int
    question: str
    answer: str
    link: str
    author: str
    created_at: str
    expires: str = ""
    deleted: bool = False

    def active(self, today: date | None = None) -> bool:
        if self.deleted:
            return False
        if not self.expires:
            return True
        today = today or datetime.now(UTC).date()
        try:
            return date.fromisoformat(self.expires) >= today
        except ValueError:
            return True

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "question": self.question, "answer": self.answer,
                "link": self.link, "author": self.author, "created_at": self.created_at, "expires": self.expires,
                "deleted": self.deleted, "active": self.active()}


def _check_expires(expires: str) -> str:
    expires = (expires or "").strip()
    if expires:
        try:
            date.fromisoformat(expires)
        except ValueError:
            raise ValueError(f"expiry {expires!r} is not a date; use YYYY-MM-DD, or leave it empty") from None
    return expires


def _check_link(link: str) -> str:
    link = (link or "").strip()
    if link and not re.match(r"^https?://\S+$", link):
        raise ValueError(f"link {link!r} is not a web address; use one that starts with https://, or leave it empty")
    return link


def clean_answer(question: str, answer: str, author: str, link: str, expires: str) -> tuple[str, str, str, str, str]:
    """An admin answer's fields as stored; ValueError (with what to fix) on bad input."""
    question, answer, author = (question or "").strip(), (answer or "").strip(), (author or "").strip() or "admin"
    if not question or not answer:
        raise ValueError("both the question and the answer are needed")
    if len(question) > 500 or len(answer) > 4000:
        raise ValueError("the question may have at most 500 characters and the answer at most 4000")
    return question, answer, author, _check_link(link), _check_expires(expires)


def answer_from_row(row: Any) -> AdminAnswer:
    return AdminAnswer(id=row["id"], version=row["version"], question=row["question"], answer=row["answer"],
                       link=row["link"], author=row["author"], created_at=row["created_at"],
                       expires=row["expires"], deleted=bool(row["deleted"]))


def keyed_user_hash(salt: bytes, user_key: str) -> str:
    return hmac.new(salt, user_key.encode("utf-8"), hashlib.sha256).hexdigest()[:24]


class InsightsStore:
    """The question log and the admin answers in one SQLite file. Thread-safe (one connection, one lock)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._db = open_shared(self.path, _SCHEMA)
        with self._lock, self._db:
            row = self._db.execute("SELECT value FROM meta WHERE key='user_salt'").fetchone()
            if row is None:
                salt = secrets.token_hex(16)
                self._db.execute("INSERT INTO meta (key, value) VALUES ('user_salt', ?)", (salt,))
            else:
                salt = row["value"]
        self._salt = salt.encode("ascii")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._db:
            yield self._db

    def _write_tx(self) -> AbstractContextManager[sqlite3.Connection]:
        """A transaction that takes SQLite's write lock before its first read: another process saving an admin
        answer at the same moment waits for it instead of reading the same MAX(id) and failing on the key."""
        return write_transaction(self._db, self._lock)

    def user_hash(self, user_key: str) -> str:
        """A keyed hash of ``channel:user_id``: the same user gives the same hash, the hash gives no user back."""
        return keyed_user_hash(self._salt, user_key)

    # --- the question log ---------------------------------------------------------------------------------------
    def record(self, *, trace_id: str, channel: str, user_key: str, question: str, answer: str, abstained: bool,
               ts: float | None = None) -> bool:
        """Log one answered question (masked). False when there is no trace id to key it by."""
        if not trace_id:
            return False
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO questions (trace_id, ts, channel, user_hash, question, answer, abstained) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (trace_id, time.time() if ts is None else ts, channel, self.user_hash(user_key),
                 mask_personal(question)[:1000], mask_personal(answer)[:2000], int(bool(abstained))))
        return True

    def set_feedback(self, trace_id: str, value: str, ts: float | None = None) -> bool:
        """Attach 👍/👎 (``up``/``down``) to a logged answer; False when the answer is not in the log."""
        with self._tx() as db:
            cur = db.execute("UPDATE questions SET feedback=?, feedback_ts=? WHERE trace_id=?",
                             (value, time.time() if ts is None else ts, trace_id))
            return cur.rowcount > 0

    def forget_user(self, user_key: str) -> int:
        """Delete every logged question of one user (``/hapus``); returns how many."""
        with self._tx() as db:
            return db.execute("DELETE FROM questions WHERE user_hash=?", (self.user_hash(user_key),)).rowcount

    def prune(self, older_than: float) -> int:
        """Delete log rows older than a Unix time (retention)."""
        with self._tx() as db:
            return db.execute("DELETE FROM questions WHERE ts < ?", (older_than,)).rowcount

    def questions(self, since: float = 0.0, until: float | None = None) -> list[dict[str, Any]]:
        """Logged questions in [since, until), oldest first, without the user hash."""
        until = time.time() + 1 if until is None else until
        with self._lock:
            rows = self._db.execute(
                "SELECT trace_id, ts, channel, question, answer, abstained, feedback, feedback_ts FROM questions "
                "WHERE ts >= ? AND ts < ? ORDER BY ts", (since, until)).fetchall()
        return [{**dict(r), "abstained": bool(r["abstained"])} for r in rows]

    def feedback_rows(self, since: float = 0.0) -> list[dict[str, Any]]:
        """Logged answers that got 👍/👎 at or after ``since``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT trace_id, ts, channel, question, answer, feedback, feedback_ts FROM questions "
                "WHERE feedback IS NOT NULL AND feedback_ts >= ? ORDER BY feedback_ts", (since,)).fetchall()
        return [dict(r) for r in rows]

    # --- admin answers ------------------------------------------------------------------------------------------
    _answer = staticmethod(answer_from_row)

    def save_answer(self, *, question: str, answer: str, author: str, link: str = "", expires: str = "",
                    answer_id: int | None = None) -> AdminAnswer:
        """Write a new answer, or a new version of ``answer_id``. ValueError (with what to fix) on bad input."""
        question, answer, author, link, expires = clean_answer(question, answer, author, link, expires)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._write_tx() as db:
            if answer_id is None:
                answer_id = int(db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM admin_answers").fetchone()[0])
                version = 1
            else:
                row = db.execute("SELECT MAX(version) FROM admin_answers WHERE id=?", (answer_id,)).fetchone()
                if row[0] is None:
                    raise ValueError(f"there is no admin answer {answer_id}")
                version = int(row[0]) + 1
            db.execute(
                "INSERT INTO admin_answers (id, version, question, answer, link, author, created_at, expires, deleted)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
                (answer_id, version, question, answer, link, author, created, expires))
        return AdminAnswer(answer_id, version, question, answer, link, author, created, expires)

    def delete_answer(self, answer_id: int, author: str) -> bool:
        """Mark an answer deleted (a new version, so the history keeps who deleted it); False if unknown."""
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._write_tx() as db:
            row = db.execute("SELECT * FROM admin_answers WHERE id=? ORDER BY version DESC LIMIT 1",
                             (answer_id,)).fetchone()
            current = self._answer(row) if row else None
            if current is None or current.deleted:
                return False
            db.execute(
                "INSERT INTO admin_answers (id, version, question, answer, link, author, created_at, expires, deleted)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (answer_id, current.version + 1, current.question, current.answer, current.link,
                 (author or "admin").strip(), created, current.expires))
        return True

    def answer(self, answer_id: int) -> AdminAnswer | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM admin_answers WHERE id=? ORDER BY version DESC LIMIT 1",
                                   (answer_id,)).fetchone()
        return self._answer(row) if row else None

    def history(self, answer_id: int) -> list[AdminAnswer]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM admin_answers WHERE id=? ORDER BY version", (answer_id,)).fetchall()
        return [self._answer(r) for r in rows]

    def answers(self, *, include_deleted: bool = False) -> list[AdminAnswer]:
        """The version in force of every answer, newest id first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT a.* FROM admin_answers a JOIN (SELECT id, MAX(version) v FROM admin_answers GROUP BY id) m "
                "ON a.id = m.id AND a.version = m.v ORDER BY a.id DESC").fetchall()
        out = [self._answer(r) for r in rows]
        return out if include_deleted else [a for a in out if not a.deleted]

    def active_answers(self, today: date | None = None) -> list[AdminAnswer]:
        """The answers that take part in retrieval: not deleted, not expired."""
        return [a for a in self.answers() if a.active(today)]


class QuestionLog:
    """The async face of the question log for ``handlers.ChatService``; every call runs in the executor and a
    failure is logged, never raised (the log must not break an answer)."""

    def __init__(self, store: InsightsStore) -> None:
        self.store = store

    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import functools
        import logging

        try:
            return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))
        except (sqlite3.Error, StoreError, OSError) as error:
            logging.getLogger(__name__).warning("question log unavailable: %s", error)
            return None

    async def record(self, **kwargs: Any) -> Any:
        return await self._run(self.store.record, **kwargs)

    async def feedback(self, trace_id: str, value: str) -> Any:
        return await self._run(self.store.set_feedback, trace_id, value)

    async def forget(self, user_key: str) -> Any:
        return await self._run(self.store.forget_user, user_key)
