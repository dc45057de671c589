"""Copying store tables between SQLite files and PostgreSQL (same table and column names, see storage.pg_migrations).

- ``sqlite_to_pg(..., mode="replace")``: the reindex's swap with a PostgreSQL serving store (the staging SQLite copy
  replaces the tables in one transaction: readers see the old rows or the new, never a mix);
- ``sqlite_to_pg(..., mode="merge")``: ``migrate-store`` (rows are added by primary key, a row PostgreSQL already
  has is kept: rerunning copies nothing twice and overwrites nothing written there since);
- ``pg_to_sqlite``: the reindex's staging copy of a PostgreSQL serving store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import psycopg
from psycopg import sql

from storage.errors import StoreError, StoreUnavailable
from storage.pg import PgDatabase

__all__ = ["ANNOUNCEMENT_TABLES", "DOCUMENT_TABLES", "INSIGHTS_TABLES", "RUN_TABLES", "pg_counts", "pg_to_sqlite", "sqlite_counts",
           "sqlite_to_pg"]

# parents before children: inserted in this order, deleted in the reverse
DOCUMENT_TABLES = ("pages", "documents", "chunks", "crawls", "changes")
RUN_TABLES = ("job_runs", "job_run_logs", "job_run_progress")
INSIGHTS_TABLES = ("meta", "questions", "admin_answers")
ANNOUNCEMENT_TABLES = ("subscriptions", "announcements", "deliveries")
# explicit ids copied in: move the sequence past them
_IDENTITY = {"crawls": "crawl_id", "announcements": "id"}
_BULK_TIMEOUT_SECONDS = 600.0
_BATCH = 2000


def _sqlite_tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _sqlite_columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]


def _pg_columns(conn: psycopg.Connection, table: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %s AND is_generated = 'NEVER' AND identity_generation IS DISTINCT FROM 'ALWAYS' "
        "ORDER BY ordinal_position", (table,))]


def _fail(what: str, db: PgDatabase, error: psycopg.Error) -> StoreError:
    kind = StoreUnavailable if isinstance(error, psycopg.OperationalError) else StoreError
    return kind(f"{what} failed on PostgreSQL at {db.masked_url}: {type(error).__name__}: {db._clean(error)}")


def sqlite_counts(path: Path, tables: Sequence[str]) -> dict[str, int]:
    """Rows per table of a SQLite store (0 for a table or file that does not exist)."""
    if not Path(path).exists():
        return dict.fromkeys(tables, 0)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        present = _sqlite_tables(db)
        return {t: int(db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]) if t in present else 0
                for t in tables}
    finally:
        db.close()


def pg_counts(db: PgDatabase, tables: Sequence[str]) -> dict[str, int]:
    def run(conn: psycopg.Connection) -> dict[str, int]:
        return {t: int(conn.execute(sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(t))).fetchone()[0])
                for t in tables}

    return db.read("counting rows", run)


def sqlite_to_pg(source: Path, db: PgDatabase, tables: Sequence[str], *,
                 mode: Literal["replace", "merge"]) -> dict[str, int]:
    """Copy ``tables`` of the SQLite file ``source`` into PostgreSQL in one transaction; returns the rows inserted
    per table. ``replace`` empties each table first; ``merge`` keeps every row PostgreSQL has (by primary key)."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    written: dict[str, int] = {}
    try:
        present = _sqlite_tables(src)
        conn = db.raw_connect(autocommit=False, statement_timeout_seconds=_BULK_TIMEOUT_SECONDS)
        try:
            with conn.transaction():
                if mode == "replace":
                    for table in reversed(tables):
                        if table in present:
                            conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))
                for table in tables:
                    if table not in present:
                        continue
                    pg_cols = set(_pg_columns(conn, table))
                    cols = [c for c in _sqlite_columns(src, table) if c in pg_cols]
                    insert = sql.SQL("INSERT INTO {} ({}) VALUES ({}){}").format(
                        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, cols)),
                        sql.SQL(", ").join(sql.Placeholder() * len(cols)),
                        sql.SQL(" ON CONFLICT DO NOTHING" if mode == "merge" else ""))
                    names = ", ".join(f'"{c}"' for c in cols)
                    rows = src.execute(f'SELECT {names} FROM "{table}" ORDER BY rowid')
                    count = 0
                    with conn.cursor() as cur:
                        while batch := rows.fetchmany(_BATCH):
                            cur.executemany(insert, batch)
                            count += max(0, cur.rowcount)  # rows inserted (merge: a row already there is not)
                    written[table] = count
                    if table in _IDENTITY:
                        column = _IDENTITY[table]
                        conn.execute(sql.SQL(
                            "SELECT setval(pg_get_serial_sequence({tname}, {cname}), "
                            "GREATEST(COALESCE(MAX({col}), 0), 1), MAX({col}) IS NOT NULL) FROM {table}").format(
                            tname=sql.Literal(table), cname=sql.Literal(column), col=sql.Identifier(column),
                            table=sql.Identifier(table)))
        finally:
            conn.close()
    except psycopg.Error as error:
        raise _fail(f"copying {source.name} into the store", db, error) from None
    finally:
        src.close()
    return written


def pg_to_sqlite(db: PgDatabase, target: Path, tables: Sequence[str]) -> dict[str, int]:
    """Copy ``tables`` from PostgreSQL into the SQLite file ``target``, whose tables must exist (open the SQLite
    store there first) and be empty. Returns the rows copied per table."""
    dst = sqlite3.connect(target, timeout=30, isolation_level=None)
    copied: dict[str, int] = {}
    try:
        conn = db.raw_connect(autocommit=False, statement_timeout_seconds=_BULK_TIMEOUT_SECONDS)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ  # one snapshot of every table
        try:
            dst.execute("BEGIN IMMEDIATE")
            with conn.transaction():
                for table in tables:
                    sqlite_cols = set(_sqlite_columns(dst, table))
                    cols = [c for c in _pg_columns(conn, table) if c in sqlite_cols]
                    names = ", ".join(f'"{c}"' for c in cols)
                    insert = f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(cols))})'
                    count = 0
                    with conn.cursor(name=f"export_{table}") as cur:  # server-side: big tables stream
                        cur.execute(sql.SQL("SELECT {} FROM {}").format(
                            sql.SQL(", ").join(map(sql.Identifier, cols)), sql.Identifier(table)))
                        while batch := cur.fetchmany(_BATCH):
                            dst.executemany(insert, batch)
                            count += len(batch)
                    copied[table] = count
            dst.execute("COMMIT")
        except BaseException:
            if dst.in_transaction:
                dst.execute("ROLLBACK")
            raise
        finally:
            conn.close()
    except psycopg.Error as error:
        raise _fail("copying the store into a local staging file", db, error) from None
    finally:
        dst.close()
    return copied
