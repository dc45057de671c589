"""storage.pg while PostgreSQL is down: the first call finds out, later ones fail at once (no connection wait each),
a probe notices the server is back, and committed rows survive. Against a server this test starts and stops itself
(never the machine's shared one)."""

from __future__ import annotations

import time

import pytest

from storage.errors import StoreUnavailable
from storage.pg import PgDatabase
from tests.auxil.postgres import ThrowawayPostgres

pytestmark = pytest.mark.postgres


@pytest.fixture
def server():
    own = ThrowawayPostgres()
    try:
        yield own.start()
    finally:
        own.close()


def _count(db: PgDatabase) -> int:
    return db.read("counting", lambda conn: conn.execute("SELECT count(*) FROM marks").fetchone()[0])


def test_calls_fail_fast_while_the_server_is_down_and_work_again_after(server):
    db = PgDatabase(server.url, statement_timeout_seconds=5, connect_timeout_seconds=2, probe_interval_seconds=0.5,
                    migrate_on_open=False)
    try:
        db.write("creating", lambda conn: conn.execute("CREATE TABLE marks (n INT)"), repeatable=True)
        db.write("marking", lambda conn: conn.execute("INSERT INTO marks VALUES (1)"), repeatable=False)
        server.stop()
        started = time.perf_counter()
        with pytest.raises(StoreUnavailable, match="^counting failed: PostgreSQL at .* does not answer"):
            _count(db)
        first = time.perf_counter() - started
        for _ in range(5):
            started = time.perf_counter()
            with pytest.raises(StoreUnavailable, match="has not answered for"):
                db.write("marking", lambda conn: conn.execute("INSERT INTO marks VALUES (2)"), repeatable=False)
            assert time.perf_counter() - started < 0.5  # no wait for a connection
        assert first < 5  # a wait for a pooled connection notices the server is gone within a second or so
        server.start()
        back = time.perf_counter()
        deadline = time.monotonic() + 20
        while True:
            try:
                assert _count(db) == 1  # what was committed before is there, nothing of the refused writes
                break
            except StoreUnavailable:
                assert time.monotonic() < deadline, "the store never noticed the server was back"
                time.sleep(0.3)
        print(f"first failing call {first:.2f} s, working again {time.perf_counter() - back:.2f} s after the start")
        db.write("marking", lambda conn: conn.execute("INSERT INTO marks VALUES (3)"), repeatable=False)
        assert _count(db) == 2
    finally:
        db.close()
