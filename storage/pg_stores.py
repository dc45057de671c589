"""The PostgreSQL implementations of the shared stores (``DATABASE_URL``), with the contracts of the SQLite ones
(``storage.contracts``): ``PgDocumentStore``, ``PgRunStore`` and ``PgInsightsStore``, all over one ``PgDatabase``.

Each method is one transaction through ``PgDatabase.read`` / ``write`` (timeouts, retries, ``StoreError``). Writes
that several replicas may make at once are serialised where the SQLite store relied on its single writer: a crawl
commit and an admin answer take a transaction-scoped advisory lock, a run's log line locks that run.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage.docstore import (
    PAGE_COLUMNS,
    DocChanges,
    PageState,
    chunk_from_row,
    document_from_row,
    document_row,
    net_changes,
    page_state_from_row,
    page_state_row,
)
from storage.insights import AdminAnswer, answer_from_row, clean_answer, keyed_user_hash
from storage.models import Chunk, Document
from storage.pg import PgDatabase
from storage.privacy import mask_personal
from storage.runs import (
    RUN_COLUMNS,
    JobRun,
    check_changes,
    check_final,
    log_text,
    new_run,
    run_from_row,
    seconds_between,
    utc_now,
)

__all__ = ["PgDocumentStore", "PgInsightsStore", "PgRunStore", "PgStoreBase"]

# second keys of the transaction-scoped advisory locks (first key: storage.pg's project key)
_LOCK_PROJECT = 0x70726F64
_LOCK_CRAWL_COMMIT = 1
_LOCK_ADMIN_ANSWERS = 2


def _xact_lock(conn: psycopg.Connection, key: int) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_PROJECT, key))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class PgStoreBase:
    def __init__(self, db: PgDatabase, *, close_db: bool = False) -> None:
        self.db = db
        self._close_db = close_db

    def close(self) -> None:
        """Close the database too when this store was given it to own (``close_db``); a shared one stays open."""
        if self._close_db:
            self.db.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rows(self, what: str, query: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        def run(conn: psycopg.Connection) -> list[dict[str, Any]]:
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(query, params)  # type: ignore[arg-type]
                return cur.fetchall()

        return self.db.read(what, run)

    def _one(self, what: str, query: str, params: tuple | list = ()) -> dict[str, Any] | None:
        rows = self._rows(what, query, params)
        return rows[0] if rows else None


# --- documents and crawl state -----------------------------------------------------------------------------------


class PgDocumentStore(PgStoreBase):
    """Documents, chunks, crawl state and per-crawl changes in PostgreSQL (the contract of ``DocumentStore``)."""

    def documents(self, kind: str | None = None) -> list[Document]:
        if kind is None:
            rows = self._rows("reading documents", "SELECT * FROM documents ORDER BY seq, doc_id")
        else:
            rows = self._rows("reading documents", "SELECT * FROM documents WHERE kind = %s ORDER BY seq, doc_id",
                              (kind,))
        return [document_from_row(r) for r in rows]

    def document(self, doc_id: str) -> Document | None:
        row = self._one("reading a document", "SELECT * FROM documents WHERE doc_id = %s", (doc_id,))
        return document_from_row(row) if row else None

    def chunks(self, doc_ids: Iterable[str] | None = None) -> list[Chunk]:
        if doc_ids is None:
            rows = self._rows("reading chunks", "SELECT c.* FROM chunks c JOIN documents d USING (doc_id) "
                                                "ORDER BY d.seq, c.doc_id, c.position")
        else:
            ids = list(doc_ids)
            if not ids:
                return []
            rows = self._rows("reading chunks", "SELECT * FROM chunks WHERE doc_id = ANY(%s) ORDER BY doc_id, position",
                              (ids,))
        return [chunk_from_row(r) for r in rows]

    def doc_hashes(self) -> dict[str, str]:
        return {r["doc_id"]: r["content_hash"]
                for r in self._rows("reading document hashes", "SELECT doc_id, content_hash FROM documents")}

    def counts(self) -> dict[str, int]:
        row = self._one("counting documents", "SELECT (SELECT COUNT(*) FROM documents) AS documents, "
                                              "(SELECT COUNT(*) FROM chunks) AS chunks, "
                                              "(SELECT COUNT(*) FROM pages WHERE status = 'ok') AS pages")
        assert row is not None
        return {"documents": int(row["documents"]), "chunks": int(row["chunks"]), "pages": int(row["pages"])}

    def page_states(self) -> dict[str, PageState]:
        return {r["url"]: page_state_from_row(r) for r in self._rows("reading crawl state", "SELECT * FROM pages")}

    # --- commits --------------------------------------------------------------------------------------------
    @staticmethod
    def _sync(conn: psycopg.Connection, crawl_id: int, documents: list[Document],
              chunks: Mapping[str, list[Chunk]], replace_all: bool) -> DocChanges:
        existing = dict(conn.execute("SELECT doc_id, content_hash FROM documents").fetchall())
        added: list[str] = []
        changed: list[str] = []
        chunks_added = chunks_removed = 0
        now = _now()
        seen: set[str] = set()
        for seq, doc in enumerate(documents):
            seen.add(doc.doc_id)
            old_hash = existing.get(doc.doc_id)
            row = document_row(doc, seq, now)
            if old_hash == doc.content_hash:
                conn.execute(
                    "UPDATE documents SET url=%s, title=%s, text=%s, content_hash=%s, fetched_at=%s, kind=%s, urls=%s,"
                    " sections=%s, meta=%s, seq=%s, updated_at=%s WHERE doc_id=%s", row)
                continue
            if doc.doc_id not in chunks:
                raise ValueError(f"document {doc.doc_id} is new or changed but no chunks were given for it")
            (changed if old_hash is not None else added).append(doc.doc_id)
            chunks_removed += conn.execute("DELETE FROM chunks WHERE doc_id=%s", (doc.doc_id,)).rowcount
            conn.execute("DELETE FROM documents WHERE doc_id=%s", (doc.doc_id,))
            conn.execute(
                "INSERT INTO documents (url, title, text, content_hash, fetched_at, kind, urls, sections, meta, seq,"
                " updated_at, doc_id) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", row)
            new_chunks = chunks[doc.doc_id]
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO chunks (chunk_id, doc_id, url, title, section, position, text, content_hash,"
                    " fetched_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (chunk_id) DO UPDATE SET"
                    " doc_id=EXCLUDED.doc_id, url=EXCLUDED.url, title=EXCLUDED.title, section=EXCLUDED.section,"
                    " position=EXCLUDED.position, text=EXCLUDED.text, content_hash=EXCLUDED.content_hash,"
                    " fetched_at=EXCLUDED.fetched_at",
                    [(c.chunk_id, c.doc_id, c.url, c.title, c.section, c.position, c.text, c.content_hash,
                      c.fetched_at) for c in new_chunks],
                )
            chunks_added += len(new_chunks)
        removed = sorted(set(existing) - seen) if replace_all else []
        for doc_id in removed:
            chunks_removed += conn.execute("DELETE FROM chunks WHERE doc_id=%s", (doc_id,)).rowcount
            conn.execute("DELETE FROM documents WHERE doc_id=%s", (doc_id,))
        entries = ([(crawl_id, d, "added") for d in added] + [(crawl_id, d, "changed") for d in changed]
                   + [(crawl_id, d, "removed") for d in removed])
        if entries:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO changes (crawl_id, doc_id, change) VALUES (%s,%s,%s)", entries)
        return DocChanges(crawl_id, tuple(added), tuple(changed), tuple(removed), chunks_added, chunks_removed)

    @staticmethod
    def _write_pages(conn: psycopg.Connection, pages: list[PageState], removed: list[str]) -> None:
        with conn.cursor() as cur:
            if removed:
                cur.executemany("DELETE FROM pages WHERE url=%s", [(u,) for u in removed])
            if pages:
                updates = ", ".join(f"{c}=EXCLUDED.{c}" for c in PAGE_COLUMNS if c != "url")
                cur.executemany(
                    f"INSERT INTO pages ({', '.join(PAGE_COLUMNS)}) VALUES ({','.join(['%s'] * len(PAGE_COLUMNS))})"
                    f" ON CONFLICT (url) DO UPDATE SET {updates}",
                    [page_state_row(p) for p in pages],
                )

    def commit_crawl(self, *, pages: Iterable[PageState], removed_pages: Iterable[str], documents: list[Document],
                     chunks: Mapping[str, list[Chunk]], report: Mapping | None = None,
                     started_at: str = "") -> DocChanges:
        """Atomically record one finished crawl (see ``DocumentStore.commit_crawl``). Not retried: a commit whose
        connection is lost raises ``StoreUnavailable`` (it was rolled back unless the loss came at COMMIT)."""
        pages, removed_pages = list(pages), list(removed_pages)
        report_text = json.dumps(dict(report or {}))

        def run(conn: psycopg.Connection) -> DocChanges:
            _xact_lock(conn, _LOCK_CRAWL_COMMIT)
            crawl_id = int(conn.execute(
                "INSERT INTO crawls (started_at, finished_at, report) VALUES (%s,%s,%s) RETURNING crawl_id",
                (started_at or _now(), _now(), report_text)).fetchone()[0])
            self._write_pages(conn, pages, removed_pages)
            return self._sync(conn, crawl_id, documents, chunks, replace_all=True)

        return self.db.write("committing a crawl", run, repeatable=False)

    def sync_documents(self, documents: list[Document], chunks: Mapping[str, list[Chunk]],
                       *, replace_all: bool = True) -> DocChanges:
        if replace_all:
            return self.commit_crawl(pages=(), removed_pages=(), documents=documents, chunks=chunks,
                                     report={"source": "sync_documents"})

        def run(conn: psycopg.Connection) -> DocChanges:
            _xact_lock(conn, _LOCK_CRAWL_COMMIT)
            now = _now()
            crawl_id = int(conn.execute(
                "INSERT INTO crawls (started_at, finished_at, report) VALUES (%s,%s,'{}') RETURNING crawl_id",
                (now, now)).fetchone()[0])
            return self._sync(conn, crawl_id, documents, chunks, replace_all=False)

        return self.db.write("storing documents", run, repeatable=False)

    # --- the reindex's staging copy ------------------------------------------------------------------------
    def export_sqlite(self, target: Path) -> dict[str, int]:
        """Write a SQLite document store at ``target`` (which must not exist) holding this store's rows: the
        reindex crawls into such a local copy and swaps it back with ``replace_from_sqlite``."""
        from storage.docstore import DocumentStore
        from storage.pg_transfer import DOCUMENT_TABLES, pg_to_sqlite

        DocumentStore(target).close()
        return pg_to_sqlite(self.db, target, DOCUMENT_TABLES)

    def replace_from_sqlite(self, source: Path, tables: Sequence[str]) -> dict[str, int]:
        """Replace ``tables`` with those of the SQLite document store ``source`` in one transaction."""
        from storage.pg_transfer import sqlite_to_pg

        return sqlite_to_pg(source, self.db, tables, mode="replace")

    # --- change history -------------------------------------------------------------------------------------
    def last_crawl_id(self) -> int:
        row = self._one("reading the last crawl", "SELECT MAX(crawl_id) AS last FROM crawls")
        return int((row or {}).get("last") or 0)

    def changes_since(self, crawl_id: int) -> DocChanges:
        def run(conn: psycopg.Connection) -> DocChanges:
            rows = conn.execute("SELECT crawl_id, doc_id, change FROM changes WHERE crawl_id > %s "
                                "ORDER BY crawl_id", (crawl_id,)).fetchall()
            last = conn.execute("SELECT MAX(crawl_id) FROM crawls").fetchone()[0] or crawl_id
            return net_changes(rows, int(last))

        return self.db.read("reading document changes", run)

    def last_changes(self) -> DocChanges:
        last = self.last_crawl_id()
        return self.changes_since(last - 1) if last else DocChanges(0)


# --- job runs ---------------------------------------------------------------------------------------------------


class PgRunStore(PgStoreBase):
    """Reindex runs in PostgreSQL (the contract of ``RunStore``); newest first by start time, then start order."""

    def start(self, trigger: str, *, requested_by: str | None = None, status: str = "RUNNING") -> JobRun:
        run = new_run(trigger, requested_by=requested_by, status=status)
        values = tuple(getattr(run, name) for name in RUN_COLUMNS)

        def insert(conn: psycopg.Connection) -> None:  # the run id is chosen here: repeating it is harmless
            conn.execute(f"INSERT INTO job_runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join(['%s'] * len(values))})"
                         " ON CONFLICT (run_id) DO NOTHING", values)

        self.db.write("recording a run's start", insert, repeatable=True)
        return run

    def update(self, run_id: str, **changes: Any) -> JobRun:
        check_changes(changes)
        if changes:
            assignments = ", ".join(f"{name} = %s" for name in changes)

            def run(conn: psycopg.Connection) -> int:
                return conn.execute(f"UPDATE job_runs SET {assignments} WHERE run_id = %s",
                                    (*changes.values(), run_id)).rowcount

            if self.db.write("updating a run", run, repeatable=True) == 0:
                raise KeyError(f"no job run {run_id!r}")
        found = self.get(run_id)
        if found is None:
            raise KeyError(f"no job run {run_id!r}")
        return found

    def finish(self, run_id: str, status: str, *, error: str | None = None, **changes: Any) -> JobRun:
        check_final(status)
        run = self.get(run_id)
        if run is None:
            raise KeyError(f"no job run {run_id!r}")
        ended = utc_now()
        return self.update(run_id, status=status, ended_at=ended, duration_seconds=seconds_between(run.started_at, ended),
                           error=error, **changes)

    def log(self, run_id: str, line: Mapping[str, Any]) -> None:
        text = log_text(line)

        def run(conn: psycopg.Connection) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"prodi-bot:run-log:{run_id}",))
            conn.execute("INSERT INTO job_run_logs (run_id, seq, line) VALUES "
                         "(%s, (SELECT COALESCE(MAX(seq), 0) + 1 FROM job_run_logs WHERE run_id = %s), %s)",
                         (run_id, run_id, text))

        self.db.write("appending a run's log line", run, repeatable=False)

    def set_progress(self, run_id: str, stage: str, done: int = 0, total: int | None = None) -> None:
        params = (run_id, stage, int(done), None if total is None else int(total), utc_now())
        self.db.write("recording a run's progress", lambda conn: conn.execute(
            "INSERT INTO job_run_progress (run_id, stage, done, total, updated_at) VALUES (%s,%s,%s,%s,%s) "
            "ON CONFLICT (run_id) DO UPDATE SET stage = EXCLUDED.stage, done = EXCLUDED.done, "
            "total = EXCLUDED.total, updated_at = EXCLUDED.updated_at", params), repeatable=True)

    def progress(self, run_id: str) -> dict[str, Any] | None:
        row = self._one("reading a run's progress",
                        "SELECT stage, done, total, updated_at FROM job_run_progress WHERE run_id = %s", (run_id,))
        return dict(row) if row else None

    def abort_running(self, reason: str = "the process stopped before the run ended",
                      except_ids: tuple[str, ...] = ()) -> list[str]:
        ids = [r["run_id"] for r in self._rows("reading running runs",
                                               "SELECT run_id FROM job_runs WHERE status = 'RUNNING' ORDER BY seq")
               if r["run_id"] not in except_ids]
        for run_id in ids:
            self.finish(run_id, "ABORTED", error=reason)
        return ids

    def get(self, run_id: str) -> JobRun | None:
        row = self._one("reading a run", "SELECT * FROM job_runs WHERE run_id = %s", (run_id,))
        return run_from_row(row) if row else None

    def recent(self, limit: int = 10, *, status: str | None = None) -> list[JobRun]:
        query = "SELECT * FROM job_runs"
        params: tuple[Any, ...] = ()
        if status is not None:
            query += " WHERE status = %s"
            params = (status,)
        query += " ORDER BY started_at DESC, seq DESC LIMIT %s"
        return [run_from_row(r) for r in self._rows("reading recent runs", query, (*params, int(limit)))]

    def last_success(self) -> JobRun | None:
        found = self.recent(1, status="SUCCESS")
        return found[0] if found else None

    def logs(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._rows("reading a run's log", "SELECT line FROM job_run_logs WHERE run_id = %s ORDER BY seq",
                          (run_id,))
        return [json.loads(r["line"]) for r in rows]


# --- the question log and the admin answers -------------------------------------------------------------------------


class PgInsightsStore(PgStoreBase):
    """The masked question log and the admin answers in PostgreSQL (the contract of ``InsightsStore``)."""

    def __init__(self, db: PgDatabase, *, close_db: bool = False) -> None:
        super().__init__(db, close_db=close_db)
        fresh = secrets.token_hex(16)

        def salt(conn: psycopg.Connection) -> str:  # the first replica's salt wins; every later one reads it
            conn.execute("INSERT INTO meta (key, value) VALUES ('user_salt', %s) ON CONFLICT (key) DO NOTHING",
                         (fresh,))
            return str(conn.execute("SELECT value FROM meta WHERE key = 'user_salt'").fetchone()[0])

        self._salt = self.db.write("reading the user-hash key", salt, repeatable=True).encode("ascii")

    def user_hash(self, user_key: str) -> str:
        return keyed_user_hash(self._salt, user_key)

    # --- the question log -----------------------------------------------------------------------------------
    def record(self, *, trace_id: str, channel: str, user_key: str, question: str, answer: str, abstained: bool,
               ts: float | None = None) -> bool:
        if not trace_id:
            return False
        params = (trace_id, time.time() if ts is None else ts, channel, self.user_hash(user_key),
                  mask_personal(question)[:1000], mask_personal(answer)[:2000], int(bool(abstained)))
        # the SQLite store's INSERT OR REPLACE: the row is replaced whole (its feedback too)
        self.db.write("logging a question", lambda conn: conn.execute(
            "INSERT INTO questions (trace_id, ts, channel, user_hash, question, answer, abstained) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (trace_id) DO UPDATE SET ts = EXCLUDED.ts, "
            "channel = EXCLUDED.channel, user_hash = EXCLUDED.user_hash, question = EXCLUDED.question, "
            "answer = EXCLUDED.answer, abstained = EXCLUDED.abstained, feedback = NULL, feedback_ts = NULL",
            params), repeatable=True)
        return True

    def set_feedback(self, trace_id: str, value: str, ts: float | None = None) -> bool:
        params = (value, time.time() if ts is None else ts, trace_id)
        return self.db.write("recording feedback", lambda conn: conn.execute(
            "UPDATE questions SET feedback = %s, feedback_ts = %s WHERE trace_id = %s", params).rowcount,
            repeatable=True) > 0

    def forget_user(self, user_key: str) -> int:
        user = self.user_hash(user_key)
        return int(self.db.write("forgetting a user", lambda conn: conn.execute(
            "DELETE FROM questions WHERE user_hash = %s", (user,)).rowcount, repeatable=True))

    def prune(self, older_than: float) -> int:
        return int(self.db.write("pruning the question log", lambda conn: conn.execute(
            "DELETE FROM questions WHERE ts < %s", (older_than,)).rowcount, repeatable=True))

    def questions(self, since: float = 0.0, until: float | None = None) -> list[dict[str, Any]]:
        until = time.time() + 1 if until is None else until
        rows = self._rows("reading the question log",
                          "SELECT trace_id, ts, channel, question, answer, abstained, feedback, feedback_ts "
                          "FROM questions WHERE ts >= %s AND ts < %s ORDER BY ts", (since, until))
        return [{**r, "abstained": bool(r["abstained"])} for r in rows]

    def feedback_rows(self, since: float = 0.0) -> list[dict[str, Any]]:
        return self._rows("reading feedback",
                          "SELECT trace_id, ts, channel, question, answer, feedback, feedback_ts FROM questions "
                          "WHERE feedback IS NOT NULL AND feedback_ts >= %s ORDER BY feedback_ts", (since,))

    # --- admin answers --------------------------------------------------------------------------------------
    def save_answer(self, *, question: str, answer: str, author: str, link: str = "", expires: str = "",
                    answer_id: int | None = None) -> AdminAnswer:
        question, answer, author, link, expires = clean_answer(question, answer, author, link, expires)
        created = datetime.now(UTC).isoformat(timespec="seconds")

        def run(conn: psycopg.Connection) -> tuple[int, int]:
            _xact_lock(conn, _LOCK_ADMIN_ANSWERS)  # ids and versions are MAX + 1: one writer at a time
            if answer_id is None:
                new_id = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM admin_answers").fetchone()[0])
                version = 1
            else:
                latest = conn.execute("SELECT MAX(version) FROM admin_answers WHERE id = %s", (answer_id,)).fetchone()[0]
                if latest is None:
                    raise ValueError(f"there is no admin answer {answer_id}")
                new_id, version = answer_id, int(latest) + 1
            conn.execute(
                "INSERT INTO admin_answers (id, version, question, answer, link, author, created_at, expires, deleted)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,0)", (new_id, version, question, answer, link, author, created, expires))
            return new_id, version

        new_id, version = self.db.write("saving an admin answer", run, repeatable=False)
        return AdminAnswer(new_id, version, question, answer, link, author, created, expires)

    def delete_answer(self, answer_id: int, author: str) -> bool:
        created = datetime.now(UTC).isoformat(timespec="seconds")

        def run(conn: psycopg.Connection) -> bool:
            _xact_lock(conn, _LOCK_ADMIN_ANSWERS)
            with conn.cursor(row_factory=dict_row) as cur:
                current = cur.execute("SELECT * FROM admin_answers WHERE id = %s ORDER BY version DESC LIMIT 1",
                                      (answer_id,)).fetchone()
            if current is None or current["deleted"]:
                return False
            conn.execute(
                "INSERT INTO admin_answers (id, version, question, answer, link, author, created_at, expires, deleted)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,1)",
                (answer_id, current["version"] + 1, current["question"], current["answer"], current["link"],
                 (author or "admin").strip(), created, current["expires"]))
            return True

        return bool(self.db.write("deleting an admin answer", run, repeatable=False))

    def answer(self, answer_id: int) -> AdminAnswer | None:
        row = self._one("reading an admin answer",
                        "SELECT * FROM admin_answers WHERE id = %s ORDER BY version DESC LIMIT 1", (answer_id,))
        return answer_from_row(row) if row else None

    def history(self, answer_id: int) -> list[AdminAnswer]:
        return [answer_from_row(r) for r in self._rows(
            "reading an admin answer's history", "SELECT * FROM admin_answers WHERE id = %s ORDER BY version",
            (answer_id,))]

    def answers(self, *, include_deleted: bool = False) -> list[AdminAnswer]:
        rows = self._rows("reading the admin answers",
                          "SELECT DISTINCT ON (id) * FROM admin_answers ORDER BY id DESC, version DESC")
        out = [answer_from_row(r) for r in rows]
        return out if include_deleted else [a for a in out if not a.deleted]

    def active_answers(self, today: date | None = None) -> list[AdminAnswer]:
        return [a for a in self.answers() if a.active(today)]
