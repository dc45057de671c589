"""``IndexWatcher``: reloads the serving index when another process published a new version on Redis pub/sub
(``storage.keys.INDEX_CHANNEL``), with a periodic pointer check as the fallback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from storage.keys import INDEX_CHANNEL

__all__ = ["IndexWatcher"]

logger = logging.getLogger(__name__)


class IndexWatcher:
    """Reloads the serving index when it changed: on a Redis pub/sub message and every ``interval`` seconds.

    ``reload`` is blocking (it may load HNSW files) and returns truthy when a new version was loaded; it runs in the
    default executor. ``redis`` is a ``redis.asyncio.Redis`` or None (pointer checks only).
    """

    def __init__(
        self,
        reload: Callable[[], Any],
        *,
        redis: Any = None,
        channel: str = INDEX_CHANNEL,
        interval_seconds: float = 30.0,
    ) -> None:
        self._reload = reload
        self.redis = redis
        self.channel = channel
        self.interval = interval_seconds
        self.reloads = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._subscribed = asyncio.Event()

    async def check(self) -> bool:
        """Reload now if the pointer moved. Returns whether a new version was loaded."""
        async with self._lock:
            changed = await asyncio.get_running_loop().run_in_executor(None, self._reload)
        if changed:
            self.reloads += 1
            logger.info("loaded a new index version")
        return bool(changed)

    async def start(self) -> None:
        if self._tasks:
            return
        if self.redis is not None:
            self._tasks.append(asyncio.create_task(self._listen(), name="index watcher (pub/sub)"))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._subscribed.wait(), 5)
        if self.interval > 0:
            self._tasks.append(asyncio.create_task(self._poll(), name="index watcher (poll)"))

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.check()
            except Exception:  # boundary: the watcher's poll loop keeps running; the next check retries
                logger.exception("index pointer check failed")

    async def _listen(self) -> None:
        backoff = 1.0
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                self._subscribed.set()
                backoff = 1.0
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None:
                        continue
                    try:
                        payload = json.loads(message.get("data") or b"{}")
                    except (TypeError, ValueError):
                        payload = {}
                    logger.info("index update announced: version %s", payload.get("version"))
                    await self.check()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # boundary: the pub/sub listener loop reconnects with backoff; the poll still picks changes up
                logger.warning("index pub/sub listener stopped (%s); retrying in %.0fs", error, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
