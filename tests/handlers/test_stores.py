"""The per-user stores against a real Redis (fresh logical DB per test) and in memory."""

from __future__ import annotations

import logging

import pytest

from storage.conversations import MemoryConversationStore, RedisConversationStore
from storage.dedup import MessageDeduper, UserState
from storage.feedback import FeedbackStore
from storage.models import Message
from storage.redis_guard import RedisGuard, connect_redis


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


@pytest.mark.parametrize("use_redis", [True, False])
async def test_feedback_votes_counts_and_delete(redis_url, use_redis):
    client = connect_redis(redis_url) if use_redis else None
    store = FeedbackStore(client)
    try:
        assert await store.add("telegram:1", "t1", "up")
        assert await store.add("telegram:1", "t2", "down")
        assert await store.add("telegram:1", "t2", "up")  # a changed vote replaces the earlier one
        assert await store.add("whatsapp:9", "t3", "down")
        assert not await store.add("telegram:1", "", "up")
        assert await store.counts() == {"up": 2, "down": 1}
        assert {(e.trace_id, e.value) for e in await store.entries("telegram:1")} == {("t1", "up"), ("t2", "up")}
        assert await store.delete_user("telegram:1") == 2
        assert await store.counts() == {"up": 0, "down": 1}
        with pytest.raises(ValueError, match="up, down"):
            await store.add("telegram:1", "t1", "meh")
    finally:
        if client is not None:
            await client.aclose()


@pytest.mark.parametrize("use_redis", [True, False])
async def test_dedup_and_rate_limit_and_user_state(redis_url, use_redis):
    client = connect_redis(redis_url) if use_redis else None
    try:
        dedup = MessageDeduper(client)
        assert await dedup.first_time("wamid.1")
        assert not await dedup.first_time("wamid.1")
        assert await dedup.first_time("wamid.2")
        state = UserState(client)
        results = [(await state.hit_rate("web:x", 3))[0] for _ in range(5)]
        assert results == [True, True, True, False, False]
        assert (await state.hit_rate("web:y", 3))[0]
        await state.touch_inbound("web:x", 123.5)
        assert await state.last_inbound("web:x") == 123.5
        await state.set_last_answer("web:x", "tr", [{"url": "http://a", "title": "A"}])
        assert (await state.last_answer("web:x"))["trace_id"] == "tr"
        await state.delete_user("web:x")
        assert await state.last_inbound("web:x") is None
        assert await state.last_answer("web:x") is None
        assert (await state.hit_rate("web:x", 3))[0]  # counters are gone too
    finally:
        if client is not None:
            await client.aclose()


async def test_redis_failure_degrades_and_warns_once_per_interval(caplog, unused_tcp_port):
    """Nothing listens on the port: calls return fallbacks, and only one warning is logged per interval."""
    now = [0.0]
    guard = RedisGuard("test", warn_interval=60, clock=lambda: now[0])
    client = connect_redis(f"redis://127.0.0.1:{unused_tcp_port}/0", timeout=0.5)
    store = RedisConversationStore(client=client, guard=guard)
    dedup = MessageDeduper(client, guard=guard)
    try:
        with caplog.at_level(logging.WARNING, logger="storage.redis_guard"):
            await store.append("u", Message("user", "halo"))
            assert await store.history("u") == []
            assert await dedup.first_time("m1")
            assert not await dedup.first_time("m1")  # the in-memory fallback still dedups
            assert len([r for r in caplog.records if "Redis failed" in r.getMessage()]) == 1
            now[0] = 61.0
            await store.history("u")
            assert len([r for r in caplog.records if "Redis failed" in r.getMessage()]) == 2
        assert guard.down and guard.failures >= 4
    finally:
        await client.aclose()


async def test_delete_user_treats_the_key_literally(redis_url):
    client = connect_redis(redis_url)
    try:
        state = UserState(client)
        await state.touch_inbound("web:a*", 1.0)
        await state.touch_inbound("web:ab", 2.0)
        await state.delete_user("web:a*")
        assert await state.last_inbound("web:a*") is None
        assert await state.last_inbound("web:ab") == 2.0  # not matched by the '*' in the other key
    finally:
        await client.aclose()
