"""Job-run records: one row per reindex run, plus its JSON log lines, in SQLite under DATA_DIR.

Blocking (SQLite): call it from an executor when you are in async code. Each call opens its own short-lived
connection, so one ``RunStore`` may be shared by threads and by several processes on the same volume.
"""

from __future__ import annotations

import calendar
import json
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

__all__ = ["RUN_STATUSES", "RUN_TRIGGERS", "JobRun", "RunStore", "utc_now"]

RUN_STATUSES = ("RUNNING", "SUCCESS", "FAILED", "ABORTED", "SKIPPED")
RUN_TRIGGERS = ("schedule", "admin", "cli")
FINAL_STATUSES = frozenset({"SUCCESS", "FAILED", "ABORTED", "SKIPPED"})


def utc_now() -> str:
    """The current time as an ISO-8601 UTC string with milliseconds (sortable as text)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class JobRun:
    """One reindex run. Counts are zero until the stage that fills them has run."""

    run_id: str
    trigger: str
    status: str
    started_at: str
    ended_at: str | None = None
    requested_by: str | None = None
    pages_fetched: int = 0
    pages_changed: int = 0
    pages_unchanged: int = 0
    pages_failed: int = 0
    pages_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0
    chunks_total: int = 0
    embed_seconds: float = 0.0
    duration_seconds: float = 0.0
    index_version: str | None = None
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["embed_seconds"] = round(self.embed_seconds, 3)
        data["duration_seconds"] = round(self.duration_seconds, 3)
        return data


_COUNT_FIELDS = tuple(f.name for f in fields(JobRun) if f.name not in ("run_id", "trigger", "started_at"))
_COLUMNS = tuple(f.name for f in fields(JobRun))

_SCHEMA = """
CREATE TABLE IF NOT EXISTS job_runs (
    run_id TEXT PRIMARY KEY,
    trigger TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    requested_by TEXT,
    pages_fetched INTEGER NOT NULL DEFAULT 0,
    pages_changed INTEGER NOT NULL DEFAULT 0,
    pages_unchanged INTEGER NOT NULL DEFAULT 0,
    pages_failed INTEGER NOT NULL DEFAULT 0,
    pages_removed INTEGER NOT NULL DEFAULT 0,
    chunks_added INTEGER NOT NULL DEFAULT 0,
    chunks_removed INTEGER NOT NULL DEFAULT 0,
    chunks_embedded INTEGER NOT NULL DEFAULT 0,
    chunks_total INTEGER NOT NULL DEFAULT 0,
    embed_seconds REAL NOT NULL DEFAULT 0,
    duration_seconds REAL NOT NULL DEFAULT 0,
    index_version TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS job_runs_started ON job_runs (started_at);
CREATE TABLE IF NOT EXISTS job_run_logs (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS job_run_progress (
    run_id TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER,
    updated_at TEXT NOT NULL
);
"""


class RunStore:
    """Job runs in ``path`` (SQLite). ``start`` → ``update``/``log`` → ``finish``; ``recent`` lists newest first."""

    def __init__(self, path: Path | str, *, timeout_seconds: float = 10.0) -> None:
        self.path = Path(path)
        self._timeout = timeout_seconds
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA busy_timeout={int(self._timeout * 1000)}")
            db.row_factory = sqlite3.Row
            yield db
        finally:
            db.close()

    # --- writing -------------------------------------------------------------------------------------------
    def start(self, trigger: str, *, requested_by: str | None = None, status: str = "RUNNING") -> JobRun:
        run = new_run(trigger, requested_by=requested_by, status=status)
        with self._connect() as db:
            db.execute(
                f"INSERT INTO job_runs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                tuple(getattr(run, name) for name in _COLUMNS),
            )
        return run

    def update(self, run_id: str, **changes: Any) -> JobRun:
        """Set counts or fields of a run and return the updated record."""
        check_changes(changes)
        if changes:
            assignments = ", ".join(f"{name} = ?" for name in changes)
            with self._connect() as db:
                cursor = db.execute(
                    f"UPDATE job_runs SET {assignments} WHERE run_id = ?", (*changes.values(), run_id)
                )
                if cursor.rowcount == 0:
                    raise KeyError(f"no job run {run_id!r}")
        run = self.get(run_id)
        if run is None:
            raise KeyError(f"no job run {run_id!r}")
        return run

    def finish(self, run_id: str, status: str, *, error: str | None = None, **changes: Any) -> JobRun:
        """Close a run with a final status; the duration is computed from its start."""
        check_final(status)
        run = self.get(run_id)
        if run is None:
            raise KeyError(f"no job run {run_id!r}")
        ended = utc_now()
        duration = seconds_between(run.started_at, ended)
        return self.update(
            run_id, status=status, ended_at=ended, duration_seconds=duration, error=error, **changes
        )

    def log(self, run_id: str, line: Mapping[str, Any]) -> None:
        """Append one JSON log line (stage, counts, duration, …) to a run."""
        text = log_text(line)
        with self._connect() as db:
            db.execute(
                "INSERT INTO job_run_logs (run_id, seq, line) VALUES "
                "(?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM job_run_logs WHERE run_id = ?), ?)",
                (run_id, run_id, text),
            )

    def set_progress(self, run_id: str, stage: str, done: int = 0, total: int | None = None) -> None:
        """Where a running run is now: its stage and ``done`` of ``total`` items (pages, chunks; total None when
        unknown). One row per run, overwritten; the admin page polls it (the run may live in another process)."""
        with self._connect() as db:
            db.execute(
                "INSERT INTO job_run_progress (run_id, stage, done, total, updated_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT(run_id) DO UPDATE SET stage = excluded.stage, done = excluded.done, "
                "total = excluded.total, updated_at = excluded.updated_at",
                (run_id, stage, int(done), None if total is None else int(total), utc_now()),
            )

    def progress(self, run_id: str) -> dict[str, Any] | None:
        """``{"stage", "done", "total", "updated_at"}`` of a run, or None before its first report."""
        with self._connect() as db:
            row = db.execute("SELECT * FROM job_run_progress WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        return {"stage": row["stage"], "done": row["done"], "total": row["total"], "updated_at": row["updated_at"]}

    def abort_running(self, reason: str = "the process stopped before the run ended",
                      except_ids: tuple[str, ...] = ()) -> list[str]:
        """Mark every RUNNING run ABORTED (call while holding the reindex lock: no other run can be alive)."""
        with self._connect() as db:
            ids = [row["run_id"] for row in db.execute("SELECT run_id FROM job_runs WHERE status = 'RUNNING'")
                   if row["run_id"] not in except_ids]
        for run_id in ids:
            self.finish(run_id, "ABORTED", error=reason)
        return ids

    # --- reading -------------------------------------------------------------------------------------------
    def get(self, run_id: str) -> JobRun | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM job_runs WHERE run_id = ?", (run_id,)).fetchone()
        return _row(row) if row else None

    def recent(self, limit: int = 10, *, status: str | None = None) -> list[JobRun]:
        """Runs newest first, optionally only those with ``status``."""
        query = "SELECT * FROM job_runs"
        params: tuple[Any, ...] = ()
        if status is not None:
            query += " WHERE status = ?"
            params = (status,)
        query += " ORDER BY started_at DESC, rowid DESC LIMIT ?"
        with self._connect() as db:
            rows = db.execute(query, (*params, int(limit))).fetchall()
        return [_row(row) for row in rows]

    def last_success(self) -> JobRun | None:
        found = self.recent(1, status="SUCCESS")
        return found[0] if found else None

    def logs(self, run_id: str) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT line FROM job_run_logs WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [json.loads(row["line"]) for row in rows]


def _row(row: sqlite3.Row) -> JobRun:
    run = JobRun(**{name: row[name] for name in _COLUMNS})
    return replace(run, embed_seconds=float(run.embed_seconds), duration_seconds=float(run.duration_seconds))


def _parse(stamp: str) -> float:
    base, _, rest = stamp.rstrip("Z").partition(".")
    seconds = calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S"))
    return seconds + (int(rest or 0) / 1000.0)


# --- shared with the PostgreSQL store (storage.pg_stores) -----------------------------------------------------------

RUN_COLUMNS = _COLUMNS
run_from_row = _row


def new_run(trigger: str, *, requested_by: str | None = None, status: str = "RUNNING") -> JobRun:
    """A new run record (not stored yet); ValueError for an unknown trigger."""
    if trigger not in RUN_TRIGGERS:
        raise ValueError(f"unknown trigger {trigger!r}; choose one of {', '.join(RUN_TRIGGERS)}")
    return JobRun(
        run_id=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:8],
        trigger=trigger,
        status=status,
        started_at=utc_now(),
        requested_by=requested_by,
    )


def check_changes(changes: Mapping[str, Any]) -> None:
    """ValueError naming the valid choices for an unknown field or status of ``RunStore.update``."""
    unknown = set(changes) - set(_COUNT_FIELDS)
    if unknown:
        raise ValueError(f"unknown run fields {sorted(unknown)}; valid: {', '.join(_COUNT_FIELDS)}")
    if "status" in changes and changes["status"] not in RUN_STATUSES:
        raise ValueError(f"unknown status {changes['status']!r}; choose one of {', '.join(RUN_STATUSES)}")


def check_final(status: str) -> None:
    if status not in FINAL_STATUSES:
        raise ValueError(f"{status!r} is not a final status; choose one of {', '.join(sorted(FINAL_STATUSES))}")


def seconds_between(started_at: str, ended_at: str) -> float:
    return max(0.0, _parse(ended_at) - _parse(started_at))


def log_text(line: Mapping[str, Any]) -> str:
    """One run log line as stored."""
    return json.dumps(dict(line), ensure_ascii=False, default=str, sort_keys=False)
