"""Shared Redis plumbing for the small per-user stores: one client factory and one failure policy.

The policy (issue 6): when Redis fails at run time, the caller gets a fallback value instead of an exception, a
warning is logged at most once per ``warn_interval`` seconds, and the next successful call logs the recovery.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

__all__ = ["RedisGuard", "connect_redis"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

FAILURES: tuple[type[BaseException], ...] = (RedisError, OSError, asyncio.TimeoutError)


def connect_redis(url: str, *, timeout: float = 2.0) -> aioredis.Redis:
    """A ``redis.asyncio`` client with socket timeouts and one quick retry (no connection is made yet)."""
    return aioredis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=15,
        decode_responses=True,
    )


class RedisGuard:
    """Runs Redis calls; on failure returns a fallback and warns at most once per ``warn_interval`` seconds."""

    def __init__(self, name: str, *, warn_interval: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.warn_interval = warn_interval
        self._clock = clock
        self._last_warning: float | None = None
        self.down = False
        self.failures = 0

    async def run(self, call: Callable[[], Awaitable[T]], fallback: T) -> T:
        try:
            result = await call()
        except FAILURES as error:
            self.failures += 1
            self._warn(error)
            return fallback
        if self.down:
            self.down = False
            logger.warning("Redis is reachable again; %s works normally", self.name)
        return result

    def _warn(self, error: BaseException) -> None:
        self.down = True
        now = self._clock()
        if self._last_warning is None or now - self._last_warning >= self.warn_interval:
            self._last_warning = now
            logger.warning(
                "Redis failed for %s (%s: %s); continuing without it. Check REDIS_URL and that redis-server runs.",
                self.name,
                type(error).__name__,
                error,
            )
