"""Shared fixtures: the loopback-only network guard, real Redis, data dirs, the bundled sample site."""

from __future__ import annotations

import ipaddress
import itertools
import os
import socket
from collections.abc import Iterator

import pytest

# --- network guard: a test that leaves loopback fails -------------------------------------------------------

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and the like
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


class NetworkAccessError(RuntimeError):
    pass


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise NetworkAccessError(f"test tried to reach {address!r}; tests may only use loopback")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise NetworkAccessError(f"test tried to reach {address!r}; tests may only use loopback")
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]

# Offline for every library that could try a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Settings read the environment: tests start from the defaults, whatever the developer's or CI's shell exports.
# The Redis address is kept for the `redis_url` fixture only; tests that want Redis ask for that fixture.
_REDIS_BASE = os.environ.pop("REDIS_URL", "") or "redis://127.0.0.1:6379"
_CLEARED_PREFIXES = ("TELEGRAM_", "WHATSAPP_", "SITE_", "LLM_", "ADMIN_", "DATABASE_")  # DATABASE_URL: SQLite by default
for _name in list(os.environ):
    if _name.startswith(_CLEARED_PREFIXES) or _name in ("DATA_DIR", "EMBEDDER", "DEMO"):
        del os.environ[_name]


# --- Redis ----------------------------------------------------------------------------------------------------

# Each test gets a logical DB of its own, leased in DB 0 (SET NX with a TTL) so that no other test — in this
# process, a leftover child process, or another pytest run on the same Redis — flushes it underneath: the fixture
# used to cycle through DBs 1-15 and flush them, which made a concurrent run wipe a claim mid-test
# (test_reindex_acceptance's "the same tick fired again does not run again").
_LEASE_PREFIX = "prodibot:tests:db-lease:"
_LEASE_TTL_SECONDS = 3600
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
_NEXT_DB = itertools.count()


def _lease_db(admin, owner: str) -> int | None:
    start = next(_NEXT_DB)
    for step in range(15):
        db = 1 + (start + step) % 15
        if admin.set(f"{_LEASE_PREFIX}{db}", owner, nx=True, ex=_LEASE_TTL_SECONDS):
            return db
    return None


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A real Redis (REDIS_URL or 127.0.0.1:6379) on a logical DB leased to this test, flushed before and after."""
    import time
    import uuid

    import redis

    base = _REDIS_BASE.rstrip("/")
    if base.count("/") > 2:  # strip an explicit db number
        base = base.rsplit("/", 1)[0]
    admin = redis.Redis.from_url(f"{base}/0", socket_timeout=5)
    try:
        admin.ping()
    except redis.RedisError as error:  # pragma: no cover - `make test` starts a Redis when none answers
        pytest.fail(f"Redis is not reachable at {base}: {error}. Start it (see README) and rerun.")
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"
    db = _lease_db(admin, owner)
    for _ in range(600):  # all 15 leased by other runs: wait for one (a leased DB is never taken over)
        if db is not None:
            break
        time.sleep(0.5)
        db = _lease_db(admin, owner)
    if db is None:  # pragma: no cover
        pytest.fail(f"every Redis DB 1-15 at {base} is leased by other test runs ({_LEASE_PREFIX}*)")
    url = f"{base}/{db}"
    client = redis.Redis.from_url(url, socket_timeout=5)
    client.flushdb()
    try:
        yield url
    finally:
        client.flushdb()
        client.close()
        admin.eval(_RELEASE, 1, f"{_LEASE_PREFIX}{db}", owner)
        admin.close()


# the reindex fixtures (a warm embedding cache, a tiny editable site) for the tests of bot/ops, sync_jobs, bot
pytest_plugins = ["tests.auxil.reindex_site"]


# Tests that need a Redis server are marked `redis` by the fixtures they use, so `pytest -m "not redis"` runs on a
# machine without one (`make test` runs everything and starts a throwaway Redis when none answers).
REDIS_FIXTURES = frozenset({"redis_url", "own_redis"})
# Likewise `postgres` for the tests that use a PostgreSQL schema of their own (TEST_DATABASE_URL).
POSTGRES_FIXTURES = frozenset({"pg_url"})


# `slow`: what `make test-fast` leaves to the full `make test`. A test is slow by a module's `pytestmark` (crawls,
# index builds, subprocesses, training), by its own mark, or by what it uses: a Redis or PostgreSQL server (the
# `redis` / `postgres` tests above) or one of these fixtures, each seconds to build or minutes per module: an index
# built with the real embedder, the crawled sample site, a full reindex, the bundled llama.cpp model, the learned
# reader. The channel tests run over the in-memory stores in the fast loop (tests/handlers/conftest.py `stores`).
SLOW_FIXTURES = frozenset({"prodi_index", "sample_site_index", "warm_embeddings", "warm_data_dir",
                           "mutable_sample_site", "default_model_path", "reader"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if REDIS_FIXTURES & names:
            item.add_marker(pytest.mark.redis)
        if POSTGRES_FIXTURES & names:
            item.add_marker(pytest.mark.postgres)
        if SLOW_FIXTURES & names or item.get_closest_marker("redis") or item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def data_dir(tmp_path):
    path = tmp_path / "data"
    path.mkdir()
    return path


# --- the bundled sample prodi website -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sample_site() -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT``, no trailing slash) of the bundled sample site, shared by the session."""
    from bot.sample_site import SampleSite

    with SampleSite() as site:
        yield site.base_url


@pytest.fixture(scope="session")
def sample_site_index(tmp_path_factory, sample_site):
    """(settings, IndexManager) of the sample site crawled over loopback and indexed with the real embedder, shared
    by the session (the answer pipeline's tests over the real site: follow-up subjects, asking back)."""
    from bench.evaluation import build_fresh_index, site_settings

    settings = site_settings(sample_site, tmp_path_factory.mktemp("sample-index") / "data", answerer="rules")
    return settings, build_fresh_index(settings)[0]


@pytest.fixture
def mutable_sample_site():
    """A SampleSite serving a temporary copy (``.root``) that the test may edit, ``.set_down()`` or ``.stop()``."""
    from bot.sample_site import SampleSite

    with SampleSite(mutable=True) as site:
        yield site
