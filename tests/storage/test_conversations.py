"""The conversation window against a real Redis (fresh logical DB per test) and in memory."""

from __future__ import annotations

import pytest

from storage.conversations import MemoryConversationStore, RedisConversationStore
from storage.models import Message
from storage.redis_guard import connect_redis


async def test_redis_window_keeps_the_last_20_messages_with_namespace_and_ttl(redis_url):
    store = RedisConversationStore(redis_url, window=20, ttl_days=30, namespace="tst")
    try:
        for i in range(25):
            await store.append("telegram:1", Message("user" if i % 2 == 0 else "assistant", f"pesan {i}", ts=i + 1))
        history = await store.history("telegram:1")
        assert [m.text for m in history] == [f"pesan {i}" for i in range(5, 25)]
        assert [m.text for m in await store.history("telegram:1", 3)] == ["pesan 22", "pesan 23", "pesan 24"]
        raw = connect_redis(redis_url)
        try:
            assert await raw.exists("tst:conv:telegram:1") == 1
            ttl = await raw.ttl("tst:conv:telegram:1")
            assert 29 * 86400 < ttl <= 30 * 86400
        finally:
            await raw.aclose()
        assert await store.history("whatsapp:1") == []  # per user *and* channel
        await store.clear("telegram:1")
        assert await store.history("telegram:1") == []
    finally:
        await store.close()


async def test_memory_store_window_and_clear():
    store = MemoryConversationStore(window=3)
    for i in range(5):
        await store.append("web:a", Message("user", str(i)))
    assert [m.text for m in await store.history("web:a")] == ["2", "3", "4"]
    assert [m.text for m in await store.history("web:a", 1)] == ["4"]
    await store.clear("web:a")
    assert await store.history("web:a") == []


def test_redis_store_without_url_says_how_to_fix():
    with pytest.raises(ValueError, match="REDIS_URL"):
        RedisConversationStore(None)
