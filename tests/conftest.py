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
for _name in list(os.environ):
    if _name.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "LLM_", "ADMIN_")) or _name in ("DATA_DIR", "EMBEDDER"):
        del os.environ[_name]


# --- Redis ----------------------------------------------------------------------------------------------------

_DB_NUMBERS = itertools.cycle(range(1, 16))


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A real Redis (REDIS_URL or 127.0.0.1:6379) on a logical DB of its own, flushed before and after."""
    import redis

    base = _REDIS_BASE.rstrip("/")
    if base.count("/") > 2:  # strip an explicit db number
        base = base.rsplit("/", 1)[0]
    db = next(_DB_NUMBERS)
    url = f"{base}/{db}"
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as error:  # pragma: no cover - CI starts Redis
        pytest.fail(f"Redis is not reachable at {base}: {error}. Start it (see README) and rerun.")
    client.flushdb()
    try:
        yield url
    finally:
        client.flushdb()
        client.close()


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


@pytest.fixture
def mutable_sample_site():
    """A SampleSite serving a temporary copy (``.root``) that the test may edit, ``.set_down()`` or ``.stop()``."""
    from bot.sample_site import SampleSite

    with SampleSite(mutable=True) as site:
        yield site
