"""IndexWatcher: reloads the serving index on a Redis pub/sub message and on the periodic pointer check."""

from __future__ import annotations

import asyncio
import json

import redis.asyncio as aioredis

from bot.ops.index_watcher import IndexWatcher


async def test_watcher_reloads_on_pubsub_and_on_the_pointer_check(redis_url) -> None:
    client = aioredis.Redis.from_url(redis_url, socket_timeout=2)
    versions = iter(["v2", None, None, "v3"])
    loaded: list[str] = []

    def reload() -> bool:  # a pointer that moved to v2 when the message arrives
        version = next(versions, None)
        if version:
            loaded.append(version)
        return version is not None

    watcher = IndexWatcher(reload, redis=client, channel="t:index", interval_seconds=0)
    await watcher.start()
    try:
        receivers = await client.publish("t:index", json.dumps({"version": "v2"}))
        assert receivers == 1
        for _ in range(100):
            if watcher.reloads:
                break
            await asyncio.sleep(0.05)
        assert loaded == ["v2"] and watcher.reloads == 1
    finally:
        await watcher.stop()
        await client.aclose()
    # without Redis the periodic pointer check does it
    polled = IndexWatcher(reload, interval_seconds=0.05)
    await polled.start()
    try:
        for _ in range(100):
            if polled.reloads:
                break
            await asyncio.sleep(0.05)
        assert polled.reloads == 1 and loaded == ["v2", "v3"]
    finally:
        await polled.stop()
