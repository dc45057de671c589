"""Fixtures of the storage tests: a PostgreSQL schema of its own per test, and both store backends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.auxil.postgres import fresh_schema


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The test database's URL with ``?schema=<random>``: a schema created for this test and dropped after it."""
    with fresh_schema() as (url, _name):
        yield url


@dataclass
class Backend:
    """Opens the stores of one backend; each call is a new instance (as another process would open it)."""

    name: str
    root: Path
    url: str = ""
    _opened: list[Any] = field(default_factory=list)

    def _database(self) -> Any:
        from storage.pg import PgDatabase

        return PgDatabase(self.url, statement_timeout_seconds=10, connect_timeout_seconds=5)

    def _own(self, store: Any) -> Any:
        self._opened.append(store)
        return store

    def docstore(self) -> Any:
        if self.name == "sqlite":
            from storage.docstore import DocumentStore

            store = DocumentStore(self.root / "prodi.sqlite3")
            self._opened.append(store)
            return store
        from storage.pg_stores import PgDocumentStore

        return self._own(PgDocumentStore(self._database(), close_db=True))

    def runs(self) -> Any:
        if self.name == "sqlite":
            from storage.runs import RunStore

            return RunStore(self.root / "runs.sqlite3")
        from storage.pg_stores import PgRunStore

        return self._own(PgRunStore(self._database(), close_db=True))

    def insights(self) -> Any:
        if self.name == "sqlite":
            from storage.insights import InsightsStore

            store = InsightsStore(self.root / "insights.sqlite3")
            self._opened.append(store)
            return store
        from storage.pg_stores import PgInsightsStore

        return self._own(PgInsightsStore(self._database(), close_db=True))

    def close(self) -> None:
        for item in reversed(self._opened):
            item.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each store backend in turn: SQLite files under tmp_path, then PostgreSQL in a schema of the test's own."""
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    opened = Backend(request.param, tmp_path, url)
    try:
        yield opened
    finally:
        opened.close()
