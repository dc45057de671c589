"""Per-user small state: message-id dedup, the per-minute rate limit, last inbound time, last answer, the last
ask-back's choices.

Everything lives in Redis when a client is given (so several replicas agree), otherwise in process memory. When
Redis fails at run time each store falls back to its in-memory copy for the duration, so a redelivered WhatsApp
message still gets one reply and rate limits still apply on this replica.
"""

from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import redis.asyncio as aioredis

from storage import keys
from storage.redis_guard import RedisGuard

__all__ = ["MessageDeduper", "UserState"]

_Value = str | int | float  # what the in-memory stores keep: dedup marks, counters, timestamps, JSON blobs


class _TTLDict:
    """A bounded dict whose entries expire; enough for dedup keys and counters in one process."""

    def __init__(self, max_items: int = 50_000, clock: Callable[[], float] = time.monotonic) -> None:
        self._data: OrderedDict[str, tuple[float, _Value]] = OrderedDict()
        self._max = max_items
        self._clock = clock

    def get(self, key: str) -> _Value | None:
        item = self._data.get(key)
        if item is None:
            return None
        if item[0] <= self._clock():
            del self._data[key]
            return None
        return item[1]

    def set(self, key: str, value: _Value, ttl: float) -> None:
        self._data[key] = (self._clock() + ttl, value)
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)

    def pop(self, key: str) -> None:
        self._data.pop(key, None)

    def pop_prefix(self, prefix: str) -> None:
        for key in [k for k in self._data if k.startswith(prefix)]:
            del self._data[key]


class MessageDeduper:
    """``first_time(message_id)`` is True once per id within ``ttl_seconds`` (Redis ``SET NX EX``)."""

    def __init__(
        self,
        client: aioredis.Redis | None = None,
        *,
        namespace: str = keys.NAMESPACE,
        ttl_seconds: int = 86_400,
        guard: RedisGuard | None = None,
    ) -> None:
        self._client = client
        self.namespace = namespace
        self.ttl_seconds = ttl_seconds
        self.guard = guard or RedisGuard("message dedup")
        self._memory = _TTLDict()

    def _memory_first(self, key: str) -> bool:
        if self._memory.get(key) is not None:
            return False
        self._memory.set(key, 1, self.ttl_seconds)
        return True

    async def first_time(self, message_id: str) -> bool:
        key = keys.dedup(message_id, self.namespace)
        if self._client is None:
            return self._memory_first(key)
        client = self._client
        result: bool | str | bytes | None = await self.guard.run(
            lambda: client.set(key, "1", nx=True, ex=self.ttl_seconds), "down"
        )
        if result == "down":
            return self._memory_first(key)
        return bool(result)


class UserState:
    """Rate-limit counters, last inbound time, the last answer's sources/trace id and the last ask-back's choices,
    per user key."""

    def __init__(
        self,
        client: aioredis.Redis | None = None,
        *,
        namespace: str = keys.NAMESPACE,
        ttl_days: float = 30,
        guard: RedisGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self.namespace = namespace
        self.ttl_seconds = max(1, int(ttl_days * 86400))
        self.guard = guard or RedisGuard("user state")
        self._clock = clock
        self._memory = _TTLDict(clock=clock)

    def _key(self, user_key: str, what: str) -> str:
        return keys.user_state(user_key, what, self.namespace)

    # --- rate limit: a fixed one-minute window ----------------------------------------------------------------
    async def hit_rate(self, user_key: str, limit: int, window_seconds: int = 60) -> tuple[bool, int]:
        """Count one message; returns (allowed, seconds until the window resets)."""
        bucket = int(self._clock() // window_seconds)
        key = self._key(user_key, f"rate:{bucket}")
        reset = window_seconds - int(self._clock() % window_seconds)

        def memory() -> tuple[bool, int]:
            count = int(self._memory.get(key) or 0) + 1
            self._memory.set(key, count, window_seconds)
            return count <= limit, reset

        if self._client is None:
            return memory()
        client = self._client

        async def call() -> int:
            async with client.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, window_seconds + 1)
                count, _ = await pipe.execute()
            return int(count)

        count = await self.guard.run(call, -1)
        if count < 0:
            return memory()
        return count <= limit, reset

    # --- last inbound (the WhatsApp 24-hour customer-service window) ------------------------------------------
    async def touch_inbound(self, user_key: str, ts: float | None = None) -> None:
        ts = self._clock() if ts is None else ts
        key = self._key(user_key, "inbound")
        self._memory.set(key, ts, self.ttl_seconds)
        if self._client is not None:
            client = self._client
            await self.guard.run(lambda: client.set(key, repr(ts), ex=self.ttl_seconds), None)

    async def last_inbound(self, user_key: str) -> float | None:
        key = self._key(user_key, "inbound")
        if self._client is not None:
            client = self._client
            raw: bytes | str | None = await self.guard.run(lambda: client.get(key), "down")
            if raw != "down":
                return float(raw) if raw else None
        value = self._memory.get(key)
        return float(value) if value is not None else None

    # --- last answer (for /sumber and feedback buttons) -------------------------------------------------------
    async def set_last_answer(self, user_key: str, trace_id: str, sources: list[dict[str, str]]) -> None:
        key = self._key(user_key, "last")
        blob = json.dumps({"trace_id": trace_id, "sources": sources}, ensure_ascii=False)
        self._memory.set(key, blob, self.ttl_seconds)
        if self._client is not None:
            client = self._client
            await self.guard.run(lambda: client.set(key, blob, ex=self.ttl_seconds), None)

    async def last_answer(self, user_key: str) -> dict[str, Any] | None:  # decoded JSON, shape unchecked
        key = self._key(user_key, "last")
        raw: object = None
        if self._client is not None:
            client = self._client
            raw = await self.guard.run(lambda: client.get(key), "down")
            if raw == "down":
                raw = self._memory.get(key)
        else:
            raw = self._memory.get(key)
        if not raw:
            return None
        try:
            data = json.loads(str(raw))
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    # --- the last ask-back's choices (the ``pick:<index>`` buttons of handlers.choices) -----------------------
    async def set_last_choices(self, user_key: str, choices: Sequence[str], ttl_seconds: int = 86_400) -> None:
        """Keep the candidates of the user's last ask-back for ``ttl_seconds`` (a newer ask-back replaces them)."""
        key = keys.user_choices(user_key, self.namespace)
        blob = json.dumps([str(c) for c in choices], ensure_ascii=False)
        self._memory.set(key, blob, ttl_seconds)
        if self._client is not None:
            client = self._client
            await self.guard.run(lambda: client.set(key, blob, ex=max(1, int(ttl_seconds))), None)

    async def last_choices(self, user_key: str) -> tuple[str, ...]:
        """The choices of the user's last ask-back; () when there was none or they expired."""
        key = keys.user_choices(user_key, self.namespace)
        raw: object = None
        if self._client is not None:
            client = self._client
            raw = await self.guard.run(lambda: client.get(key), "down")
        if self._client is None or raw == "down":
            raw = self._memory.get(key)
        try:
            data = json.loads(str(raw)) if raw else []
        except ValueError:
            return ()
        return tuple(str(c) for c in data) if isinstance(data, list) else ()

    async def delete_user(self, user_key: str) -> None:
        """Forget everything about one user (``/hapus``)."""
        prefix = keys.user_state_prefix(user_key, self.namespace)
        self._memory.pop_prefix(prefix)
        if self._client is None:
            return
        client = self._client

        async def call() -> None:
            pattern = re.sub(r"([*?\[\]\\])", r"\\\1", prefix) + "*"  # the user key is literal, not a glob
            keys = [k async for k in client.scan_iter(match=pattern, count=200)]
            if keys:
                await client.delete(*keys)

        await self.guard.run(call, None)
