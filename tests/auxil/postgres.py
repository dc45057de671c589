"""A PostgreSQL schema of its own for one test: the real server at TEST_DATABASE_URL, never a stand-in.

``make test`` (``.ci/test-env``) exports TEST_DATABASE_URL, starting a throwaway PostgreSQL when nothing answers;
without it the tests use postgresql://postgres@127.0.0.1:5432/test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from storage.pg import mask_url, url_with_schema

__all__ = ["TEST_DATABASE_URL", "ThrowawayPostgres", "fresh_database", "fresh_schema"]

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/test"


@contextmanager
def fresh_schema(prefix: str = "t") -> Iterator[tuple[str, str]]:
    """Create a schema with a random name, yield ``(url with ?schema=name, name)``, then DROP SCHEMA … CASCADE."""
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(TEST_DATABASE_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:  # pragma: no cover - `make test` starts a PostgreSQL when none answers
        pytest.fail(f"PostgreSQL is not reachable at {mask_url(TEST_DATABASE_URL)}: {error}. "
                    "Start it or set TEST_DATABASE_URL (`make test` starts a throwaway one), or skip: -m 'not postgres'")
    with admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        try:
            yield url_with_schema(TEST_DATABASE_URL, name), name
        finally:
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@contextmanager
def fresh_database() -> Iterator[Any]:
    """A ``storage.pg.PgDatabase`` on a fresh schema (:func:`fresh_schema`), closed after the test; the timeouts the
    store tests use."""
    from storage.pg import PgDatabase

    with fresh_schema() as (url, _name):
        db = PgDatabase(url, statement_timeout_seconds=10, connect_timeout_seconds=5)
        try:
            yield db
        finally:
            db.close()


class ThrowawayPostgres:
    """A PostgreSQL server of the test's own (initdb in a temporary directory, trust auth, a free loopback port,
    database ``test``), which the test may stop and start again on the same data and port: the outage tests, which
    must never stop the machine's shared server. As root, initdb and postgres run as the ``postgres`` user (they
    refuse root), like ``.ci/test-env``. ``pytest.skip`` when the server binaries are not installed."""

    def __init__(self) -> None:
        import glob
        import shutil
        import socket
        import tempfile

        found = shutil.which("initdb")
        candidates = [os.path.dirname(found)] if found else sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        self.bin = next((c for c in reversed(candidates) if os.access(os.path.join(c, "initdb"), os.X_OK)), None)
        if self.bin is None:
            pytest.skip("no PostgreSQL server binaries (initdb) to start a throwaway server with")
        self.dir = tempfile.mkdtemp(prefix="test-postgres-")  # under /tmp: the postgres user must reach it
        self._owner: tuple[int, int] | None = None
        if os.geteuid() == 0:
            import pwd

            entry = pwd.getpwnam("postgres")
            self._owner = (entry.pw_uid, entry.pw_gid)
            os.chown(self.dir, *self._owner)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/test"
        self._proc: Any = None
        self._created = False
        self._run("initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    def _command(self, name: str, *args: str) -> list[str]:
        command = [os.path.join(self.bin, name), *args]
        if self._owner is not None:
            command = ["setpriv", f"--reuid={self._owner[0]}", f"--regid={self._owner[1]}", "--clear-groups", "--",
                       *command]
        return command

    def _run(self, name: str, *args: str) -> None:
        import subprocess

        done = subprocess.run(self._command(name, *args), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{name} failed: {done.stdout[-2000:]} {done.stderr[-2000:]}")

    def start(self) -> ThrowawayPostgres:
        import subprocess
        import time

        import psycopg

        log = open(f"{self.dir}/postgres.log", "ab")  # noqa: SIM115 - the server's log, closed in stop()
        self._proc = subprocess.Popen(self._command(
            "postgres", "-D", f"{self.dir}/data", "-k", self.dir, "-p", str(self.port),
            "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off"), stdout=log, stderr=subprocess.STDOUT)
        self._log = log
        deadline = time.monotonic() + 60
        database = "test" if self._created else "postgres"
        while True:
            try:
                with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/{database}", connect_timeout=2,
                                     autocommit=True) as conn:
                    if not self._created:
                        conn.execute("CREATE DATABASE test")
                        self._created = True
                return self
            except psycopg.OperationalError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the throwaway PostgreSQL did not start: see {self.dir}/postgres.log") from None
                time.sleep(0.2)

    def stop(self) -> None:
        """Fast shutdown (SIGINT): open sessions are ended, committed data stays."""
        import signal

        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
            self._proc.wait(timeout=60)
        self._proc = None
        if getattr(self, "_log", None) is not None:
            self._log.close()
            self._log = None

    def close(self) -> None:
        import shutil

        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
