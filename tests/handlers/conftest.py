"""Fixtures for the channel tests: the stores (in memory, and on a real Redis), the ChatService over a small real
answerer, fake APIs.

``stores`` runs each test that uses it twice: over the in-memory stores (what the console and a ``serve`` without
REDIS_URL use; ``make test-fast``) and over a real Redis (marked ``redis`` and ``slow``; the full ``make test``)."""

from __future__ import annotations

import pytest

from handlers.chat import ChatService
from storage.conversations import MemoryConversationStore, RedisConversationStore
from storage.dedup import MessageDeduper, UserState
from storage.feedback import FeedbackStore
from storage.redis_guard import RedisGuard, connect_redis
from tests.auxil.answerer import CorpusAnswerer
from tests.auxil.fake_apis import FakeApis


class Stores:
    """The channel stores on a real Redis at ``url``, or in this process's memory without one (``client`` None)."""

    def __init__(self, url: str | None = None) -> None:
        self.client = connect_redis(url) if url else None
        self.guard = RedisGuard("test")
        if self.client is None:
            self.conversations = MemoryConversationStore(window=20)
        else:
            self.conversations = RedisConversationStore(client=self.client, guard=self.guard, window=20)
        self.feedback = FeedbackStore(self.client, guard=self.guard)
        self.state = UserState(self.client, guard=self.guard)
        self.dedup = MessageDeduper(self.client, guard=self.guard)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()


@pytest.fixture(params=["memory", pytest.param("redis", marks=[pytest.mark.redis, pytest.mark.slow])])
async def stores(request):
    """The in-memory stores, then the same stores on a real Redis (a logical DB of the test's own)."""
    s = Stores(request.getfixturevalue("redis_url") if request.param == "redis" else None)
    yield s
    await s.close()


@pytest.fixture
def answerer() -> CorpusAnswerer:
    return CorpusAnswerer()


@pytest.fixture
def reindex_calls() -> list[str]:
    return []


@pytest.fixture
def service(stores, answerer, reindex_calls) -> ChatService:
    async def reindex(requested_by: str) -> str:
        reindex_calls.append(requested_by)
        return "run r-1"

    def status() -> dict:
        return {
            "index": {"version": "v20260101", "chunks": 321},
            "runs": [{"run_id": "r-1", "status": "SUCCESS", "ended_at": "2026-01-01T02:05:00Z"}],
        }

    return ChatService(
        answerer,
        stores.conversations,
        stores.feedback,
        stores.state,
        admin_ids=["telegram:1", "628111"],
        rate_limit_per_minute=5,
        status_provider=status,
        reindex_trigger=reindex,
        queue_depth=lambda: 2,
    )


@pytest.fixture
async def fake_apis():
    apis = await FakeApis().start()
    yield apis
    await apis.close()


@pytest.fixture
async def tg(service, fake_apis):
    """The real python-telegram-bot Application over ``service`` (this module's or the one above), in webhook mode
    against the loopback Bot API stand-in."""
    from bot.channels.telegram import build_telegram_application
    from handlers.telegram import TelegramHandlers

    app = build_telegram_application(
        "123:fake", TelegramHandlers(service, typing_interval=0.05), base_url=fake_apis.telegram_base, webhook=True
    )
    await app.initialize()
    yield app
    await app.shutdown()

