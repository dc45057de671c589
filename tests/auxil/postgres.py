"""A PostgreSQL schema of its own for one test: the real server at TEST_DATABASE_URL, never a stand-in.

``make test`` (``.ci/test-env``) exports TEST_DATABASE_URL, starting a throwaway PostgreSQL when nothing answers;
without it the tests use postgresql://postgres@127.0.0.1:5432/test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from storage.pg import mask_url, url_with_schema

__all__ = ["TEST_DATABASE_URL", "fresh_schema"]

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
