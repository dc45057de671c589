"""RedisGuard: a Redis that fails degrades the stores to their fallbacks and warns once per interval."""

from __future__ import annotations

import logging

from storage.conversations import RedisConversationStore
from storage.dedup import MessageDeduper
from storage.models import Message
from storage.redis_guard import RedisGuard, connect_redis


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
