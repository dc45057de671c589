"""PostgreSQL for the shared stores: the URL, the connection pool, timeouts, retries, error mapping, migrations.

``PgDatabase(url)`` opens a ``psycopg_pool.ConnectionPool`` and, at start-up, applies the versioned migrations of
``storage.pg_migrations`` under a PostgreSQL advisory lock (two replicas starting together migrate once). The stores
of ``storage.pg_stores`` run their queries through ``read`` / ``write``:

- every connection has ``statement_timeout`` set, and connecting has ``connect_timeout``;
- a lost connection (``psycopg.OperationalError``, a timeout included) is retried for reads and for writes that are
  safe to repeat (upserts, updates to given values, deletes); a write that is not safe to repeat is not retried and
  raises ``StoreUnavailable`` saying whether it may have been applied;
- while the server does not answer (a connection refused or timed out, after a first call waited for the pool),
  calls fail at once with ``StoreUnavailable`` instead of each waiting for a connection: a quick direct connect
  probes the server at most every ``probe_interval_seconds`` and the pool is used again once it answers;
- every other database error becomes ``StoreError``. Messages are English and name the server with its password
  masked (``mask_url``); the password never reaches a log line.

``?schema=name`` in the URL (or ``schema=``) puts the tables in that schema (``search_path``), created when missing:
tests use a schema each, and one database can hold several deployments.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.types.string import StrBinaryDumper, StrDumperUnknown
from psycopg_pool import ConnectionPool, PoolTimeout

from storage.errors import StoreError, StoreUnavailable

__all__ = ["PgDatabase", "StoreError", "StoreUnavailable", "is_postgres_url", "mask_url", "migrate",
           "split_schema", "url_with_schema"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_WAIT_SLICE_SECONDS = 1.0  # a wait for a pooled connection checks the server itself this often
_MIGRATE_LOCK_CLASS = 0x70726F64  # "prod": the first key of the advisory lock the migrator takes (per schema)


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and urllib.parse.urlsplit(str(url)).scheme in ("postgres", "postgresql")


def mask_url(url: str) -> str:
    """The URL with its password replaced by ``***`` (also a ``password=`` query parameter): for logs and errors."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparseable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{hostport}"
    query = "&".join(
        f"{k}=***" if k.lower() == "password" else f"{k}={v}"
        for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def split_schema(url: str) -> tuple[str, str | None]:
    """``(url without the schema parameter, schema or None)``; libpq itself does not know ``schema=``."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), None)
    rest = urllib.parse.urlencode([(k, v) for k, v in query if k != "schema"])
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), schema or None


def url_with_schema(url: str, schema: str) -> str:
    """``url`` with ``?schema=<schema>`` (replacing one it had)."""
    base, _ = split_schema(url)
    parts = urllib.parse.urlsplit(base)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True) + [("schema", schema)]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, urllib.parse.urlencode(query),
                                    parts.fragment))


def _check_schema(schema: str) -> str:
    if not _SCHEMA_NAME.match(schema):
        raise ValueError(f"schema name {schema!r} is not valid: use lower-case letters, digits and _ (no digit first), at most 63")
    return schema


class _NulSafeText:
    """psycopg dumpers for str that store a NUL character (which PostgreSQL text cannot hold) as U+FFFD, so a page
    whose extracted text carries one is stored instead of failing the whole crawl commit."""

    @staticmethod
    def register(conn: psycopg.Connection) -> None:
        conn.adapters.register_dumper(str, _NulSafeStrDumper)
        conn.adapters.register_dumper(str, _NulSafeStrBinaryDumper)


class _NulSafeStrDumper(StrDumperUnknown):
    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace("\x00", "\ufffd") if "\x00" in obj else obj)


class _NulSafeStrBinaryDumper(StrBinaryDumper):
    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace("\x00", "\ufffd") if "\x00" in obj else obj)


class PgDatabase:
    """One pool of connections to the PostgreSQL at ``url`` (thread-safe; share it between the stores)."""

    def __init__(self, url: str, *, schema: str | None = None, statement_timeout_seconds: float = 15.0,
                 connect_timeout_seconds: float = 5.0, pool_size: int = 5, retries: int = 2,
                 migrate_on_open: bool = True, probe_interval_seconds: float = 2.0) -> None:
        if not is_postgres_url(url):
            raise ValueError(f"not a PostgreSQL URL: {mask_url(url)} (use postgresql://user:password@host:5432/db)")
        conninfo, from_url = split_schema(url)
        self.schema = _check_schema(schema or from_url or "public")
        self.masked_url = mask_url(url)
        self.statement_timeout_seconds = float(statement_timeout_seconds)
        self.connect_timeout_seconds = float(connect_timeout_seconds)
        self.retries = max(0, int(retries))
        self._conninfo = conninfo
        self._password = urllib.parse.urlsplit(conninfo).password or ""
        self._closed = False
        self._close_lock = threading.Lock()
        self.probe_interval_seconds = float(probe_interval_seconds)
        self._down: str | None = None  # why the server did not answer, while it does not
        self._down_since = 0.0
        self._next_probe = 0.0
        self._probe_lock = threading.Lock()
        if migrate_on_open:
            migrate(self)
        self._pool = ConnectionPool(
            conninfo, min_size=1, max_size=max(1, int(pool_size)), open=False, name="prodi-bot-store",
            kwargs=self._connect_kwargs(), configure=_NulSafeText.register,
            check=ConnectionPool.check_connection, timeout=self.connect_timeout_seconds + 5.0,
        )
        try:
            self._pool.open(wait=True, timeout=self.connect_timeout_seconds + 5.0)
        except PoolTimeout as error:
            self._pool.close()
            raise StoreUnavailable(f"PostgreSQL at {self.masked_url} did not accept connections within "
                                   f"{self.connect_timeout_seconds + 5.0:.0f} s") from error
        logger.info("store: PostgreSQL at %s, schema %s", self.masked_url, self.schema)

    def _connect_kwargs(self) -> dict[str, Any]:
        timeout_ms = max(1, int(self.statement_timeout_seconds * 1000))
        return {
            "connect_timeout": max(1, round(self.connect_timeout_seconds)),
            "options": f"-c statement_timeout={timeout_ms} -c search_path={self.schema}",
            "application_name": "prodi-bot",
        }

    def raw_connect(self, *, autocommit: bool = True, statement_timeout_seconds: float | None = None
                    ) -> psycopg.Connection:
        """A connection outside the pool (the migrator, bulk copies), with the same schema and timeouts."""
        kwargs = self._connect_kwargs()
        if statement_timeout_seconds is not None:
            kwargs["options"] = (f"-c statement_timeout={max(1, int(statement_timeout_seconds * 1000))}"
                                 f" -c search_path={self.schema}")
        try:
            conn = psycopg.connect(self._conninfo, autocommit=autocommit, **kwargs)
        except psycopg.OperationalError as error:
            raise StoreUnavailable(f"could not connect to PostgreSQL at {self.masked_url}: "
                                   f"{self._clean(error)}") from None
        _NulSafeText.register(conn)
        return conn

    def _clean(self, error: BaseException) -> str:
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return text.replace(self._password, "***") if self._password else text

    # --- running queries ------------------------------------------------------------------------------------
    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection in a transaction: committed when the block ends, rolled back when it raises."""
        if self._closed:
            raise StoreUnavailable(f"the PostgreSQL store at {self.masked_url} is closed")
        # wait for a pooled connection in short slices: between them a direct connect tells a busy pool (wait on)
        # from a server that is gone (fail now, instead of after the whole pool timeout)
        deadline = time.monotonic() + self._pool.timeout
        with contextlib.ExitStack() as stack:
            while True:
                left = deadline - time.monotonic()
                try:
                    conn = stack.enter_context(self._pool.connection(timeout=max(0.05, min(_WAIT_SLICE_SECONDS,
                                                                                            left))))
                    break
                except PoolTimeout:
                    if left <= _WAIT_SLICE_SECONDS:
                        raise
                    down = self._probe()
                    if down is not None:
                        self._mark_down(down)
                        raise StoreUnavailable(f"PostgreSQL at {self.masked_url} does not answer ({down})") from None
            yield conn

    def read(self, what: str, fn: Callable[[psycopg.Connection], T]) -> T:
        """Run a read; a lost connection or a timeout is retried ``retries`` times."""
        return self._run(what, fn, repeatable=True)

    def write(self, what: str, fn: Callable[[psycopg.Connection], T], *, repeatable: bool) -> T:
        """Run a write in one transaction. ``repeatable``: applying it twice is the same as once (an upsert, an
        update to given values, a delete), so a lost connection is retried; otherwise it raises at once."""
        return self._run(what, fn, repeatable=repeatable)

    def _probe(self) -> str | None:
        """None when the server takes a direct connection now, else why not (refused at once, or after
        connect_timeout)."""
        try:
            psycopg.connect(self._conninfo, connect_timeout=max(1, round(self.connect_timeout_seconds)),
                            application_name="prodi-bot-probe").close()
        except psycopg.OperationalError as error:
            return self._clean(error)
        return None

    def _check_down(self, what: str) -> None:
        """While the server is known not to answer: raise at once, probing it now and then (one thread at a time)."""
        if self._down is None:
            return
        now = time.monotonic()
        if now >= self._next_probe and self._probe_lock.acquire(blocking=False):
            try:
                self._next_probe = now + self.probe_interval_seconds
                reason = self._probe()
                if reason is None:
                    logger.warning("store: PostgreSQL at %s answers again (after %.0f s)", self.masked_url,
                                   now - self._down_since)
                    self._down = None
                    return
                self._down = reason
            finally:
                self._probe_lock.release()
        if self._down is not None:
            raise StoreUnavailable(f"{what} failed: PostgreSQL at {self.masked_url} has not answered for "
                                   f"{time.monotonic() - self._down_since:.0f} s ({self._down}); not tried")

    def _mark_down(self, reason: str) -> None:
        if self._down is None:
            self._down_since = time.monotonic()
            logger.error("store: PostgreSQL at %s does not answer (%s); store calls fail at once until it does",
                         self.masked_url, reason)
        self._down = reason
        self._next_probe = time.monotonic() + self.probe_interval_seconds

    def _run(self, what: str, fn: Callable[[psycopg.Connection], T], *, repeatable: bool) -> T:
        self._check_down(what)
        attempts = 1 + (self.retries if repeatable else 0)
        for attempt in range(1, attempts + 1):
            try:
                with self.connection() as conn:
                    return fn(conn)
            except StoreUnavailable as error:  # the server went away while waiting for a connection
                raise StoreUnavailable(f"{what} failed: {error}") from None
            except (psycopg.OperationalError, PoolTimeout) as error:
                timed_out = isinstance(error, psycopg.errors.QueryCanceled)
                reason = (f"ran past the statement timeout ({self.statement_timeout_seconds:g} s)" if timed_out
                          else f"lost or could not get a connection ({self._clean(error)})")
                if not timed_out:
                    down = self._probe()  # the server itself, or only this connection?
                    if down is not None:
                        self._mark_down(down)
                        raise StoreUnavailable(f"{what} failed: PostgreSQL at {self.masked_url} does not answer "
                                               f"({down})" + ("" if repeatable or attempt > 1 else
                                                              "; it may or may not have been applied")) from None
                if attempt < attempts:
                    logger.warning("store: %s on PostgreSQL at %s %s; retrying (%d of %d)", what, self.masked_url,
                                   reason, attempt, attempts - 1)
                    time.sleep(0.2 * attempt)
                    continue
                if repeatable:
                    message = f"{what} failed: PostgreSQL at {self.masked_url} {reason}"
                    if attempts > 1:
                        message += f" (tried {attempts} times)"
                else:
                    message = (f"{what} failed: PostgreSQL at {self.masked_url} {reason}; not retried because it "
                               "is not safe to repeat, and it may or may not have been applied")
                raise StoreUnavailable(message) from None
            except psycopg.Error as error:
                raise StoreError(f"{what} failed on PostgreSQL at {self.masked_url}: "
                                 f"{type(error).__name__}: {self._clean(error)}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._pool.close()

    def __enter__(self) -> PgDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def migrate(db: PgDatabase, migrations: list[tuple[int, str, str]] | None = None) -> list[int]:
    """Apply the migrations ``db`` lacks, in version order, each in its own transaction, under an advisory lock on
    (this project, the schema): replicas starting together wait for each other and each version runs once.
    Returns the versions this call applied. The schema is created when missing."""
    from storage.pg_migrations import MIGRATIONS

    todo = sorted(MIGRATIONS if migrations is None else migrations)
    if len({v for v, _, _ in todo}) != len(todo):
        raise ValueError("two migrations share a version number")
    applied: list[int] = []
    # a generous timeout: waiting for another replica's migration, or a migration on a big table, is expected here
    conn = db.raw_connect(autocommit=True, statement_timeout_seconds=max(300.0, db.statement_timeout_seconds))
    try:
        conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (_MIGRATE_LOCK_CLASS, db.schema))
        try:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(db.schema)))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
            for version, name, statements in todo:
                if version in done:
                    continue
                with conn.transaction():
                    conn.execute(statements)  # type: ignore[arg-type]  (trusted, versioned SQL of this package)
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))
                applied.append(version)
                logger.info("store: applied migration %d (%s) in schema %s", version, name, db.schema)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_MIGRATE_LOCK_CLASS, db.schema))
    except psycopg.OperationalError as error:
        raise StoreUnavailable(f"migrating the store on PostgreSQL at {db.masked_url} failed: "
                               f"{db._clean(error)}") from None
    except psycopg.Error as error:
        raise StoreError(f"migrating the store on PostgreSQL at {db.masked_url} failed: "
                         f"{type(error).__name__}: {db._clean(error)}") from None
    finally:
        conn.close()
    return applied
