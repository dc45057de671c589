"""Fixtures of the crawler tests: the loopback site of tests/sync_jobs/test_crawl_safety.py and a document store."""

from __future__ import annotations

import pytest

from storage.docstore import DocumentStore
from tests.sync_jobs.test_crawl_safety import Server


@pytest.fixture
async def server():
    srv = Server()
    yield srv
    await srv.close()


@pytest.fixture
def store(data_dir):
    s = DocumentStore(data_dir / "prodi.sqlite3")
    yield s
    s.close()
