"""Kill Redis in the middle of a conversation: the bot keeps answering (without history) and recovers."""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import time

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.answerer import CorpusAnswerer

pytestmark = pytest.mark.faults


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnRedis:
    """A test-owned redis-server on a spare port (no persistence)."""

    def __init__(self, tmp_path) -> None:
        self.port = _free_port()
        self.dir = tmp_path
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed; install it (apt-get install redis-server) and rerun")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the test redis-server did not start")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def own_redis(tmp_path):
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.kill()


async def test_redis_dies_mid_conversation_and_comes_back(own_redis, data_dir, caplog):
    answerer = CorpusAnswerer()
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=f"redis://127.0.0.1:{own_redis.port}/0",
                 user_rate_limit_per_minute=50),
        answerer=answerer, status_provider=dict, reindex_trigger=lambda who: None, index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}")

    async def ask(text: str) -> dict:
        async with session.post("/api/chat", json={"message": text, "session_id": "mhs-1"}) as r:
            assert r.status == 200
            return await r.json()

    try:
        assert "Supriyono" in (await ask("Siapa ketua program studi?"))["answer"]
        assert len(answerer.calls[-1][1]) == 0
        assert "3 SKS" in (await ask("Berapa SKS mata kuliah Basis Data?"))["answer"]
        assert len(answerer.calls[-1][1]) == 2  # history came from Redis

        own_redis.kill()
        with caplog.at_level(logging.WARNING):
            for _ in range(3):
                data = await ask("Apa saja laboratorium yang tersedia?")
                assert "laboratorium" in data["answer"] and data["sources"]
                assert answerer.calls[-1][1] == []  # answered without history
            async with session.get("/healthz") as r:
                assert r.status == 200 and (await r.json())["checks"]["redis"] is False  # alive without Redis
        warnings = [r for r in caplog.records if "Redis failed" in r.getMessage()]
        assert len(warnings) == 1  # at most one warning a minute

        own_redis.start()
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            await ask("Siapa ketua program studi?")
            await ask("Berapa SKS mata kuliah Basis Data?")
        assert len(answerer.calls[-1][1]) == 2  # history works again
        assert any("reachable again" in r.getMessage() for r in caplog.records)
        async with session.get("/healthz") as r:
            assert r.status == 200
    finally:
        await session.close()
        await app.stop()
