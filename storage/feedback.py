"""Feedback (👍/👎) per answer, keyed by the answer's trace id, in Redis or in memory.

Layout in Redis: ``<ns>:fb:user:<user_key>`` is a hash ``trace_id -> {"value","ts"}`` (one vote per answer, a later
vote replaces the earlier one) and ``<ns>:fb:counts`` holds the totals ``up``/``down``. ``delete_user`` removes a
user's votes and takes them out of the totals (the ``/hapus`` command). Redis failures degrade to "not stored" with
a throttled warning, never an exception.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import cast

import redis.asyncio as aioredis

from storage import keys
from storage.redis_guard import RedisGuard

__all__ = ["FEEDBACK_VALUES", "FeedbackEntry", "FeedbackStore"]

FEEDBACK_VALUES = ("up", "down")


@dataclass(frozen=True, slots=True)
class FeedbackEntry:
    user_key: str
    trace_id: str
    value: str
    ts: float


def _check(value: str) -> str:
    if value not in FEEDBACK_VALUES:
        raise ValueError(f"feedback value {value!r} is not valid; use one of {', '.join(FEEDBACK_VALUES)}")
    return value


class FeedbackStore:
    """Votes in Redis when ``client`` is given, otherwise in process memory."""

    def __init__(
        self, client: aioredis.Redis | None = None, *, namespace: str = keys.NAMESPACE, guard: RedisGuard | None = None
    ) -> None:
        self._client = client
        self.namespace = namespace
        self.guard = guard or RedisGuard("feedback")
        self._memory: dict[str, dict[str, tuple[str, float]]] = {}

    def _user_key(self, user_key: str) -> str:
        return keys.feedback_user(user_key, self.namespace)

    @property
    def _counts_key(self) -> str:
        return keys.feedback_counts(self.namespace)

    async def add(self, user_key: str, trace_id: str, value: str, ts: float | None = None) -> bool:
        """Store one vote; returns False when it could not be stored (no trace id, or Redis down)."""
        _check(value)
        if not trace_id:
            return False
        ts = time.time() if ts is None else ts
        if self._client is None:
            votes = self._memory.setdefault(user_key, {})
            votes[trace_id] = (value, ts)
            return True
        client = self._client
        key = self._user_key(user_key)

        async def call() -> bool:
            previous = await client.hget(key, trace_id)
            async with client.pipeline(transaction=True) as pipe:
                pipe.hset(key, trace_id, json.dumps({"value": value, "ts": ts}))
                if previous:
                    old = json.loads(previous).get("value")
                    if old in FEEDBACK_VALUES:
                        pipe.hincrby(self._counts_key, old, -1)
                pipe.hincrby(self._counts_key, value, 1)
                await pipe.execute()
            return True

        return await self.guard.run(call, False)

    async def entries(self, user_key: str) -> list[FeedbackEntry]:
        if self._client is None:
            return [
                FeedbackEntry(user_key, trace, value, ts)
                for trace, (value, ts) in self._memory.get(user_key, {}).items()
            ]
        client = self._client
        raw: dict[bytes | str, bytes | str] = await self.guard.run(lambda: client.hgetall(self._user_key(user_key)), {})
        # connect_redis sets decode_responses=True, which redis' types cannot express: the fields are str
        votes = cast(dict[str, str], raw)
        out = []
        for trace, blob in votes.items():
            try:
                data = json.loads(blob)
                out.append(FeedbackEntry(user_key, trace, str(data["value"]), float(data["ts"])))
            except (ValueError, KeyError, TypeError):
                continue
        return sorted(out, key=lambda e: e.ts)

    async def counts(self) -> dict[str, int]:
        if self._client is None:
            totals = dict.fromkeys(FEEDBACK_VALUES, 0)
            for votes in self._memory.values():
                for value, _ts in votes.values():
                    totals[value] += 1
            return totals
        client = self._client
        raw: dict[bytes | str, bytes | str] = await self.guard.run(lambda: client.hgetall(self._counts_key), {})
        return {value: max(0, int(raw.get(value, 0) or 0)) for value in FEEDBACK_VALUES}

    async def delete_user(self, user_key: str) -> int:
        """Delete every vote of one user; returns how many were removed."""
        if self._client is None:
            return len(self._memory.pop(user_key, {}))
        entries = await self.entries(user_key)
        client = self._client

        async def call() -> int:
            async with client.pipeline(transaction=True) as pipe:
                for entry in entries:
                    if entry.value in FEEDBACK_VALUES:
                        pipe.hincrby(self._counts_key, entry.value, -1)
                pipe.delete(self._user_key(user_key))
                await pipe.execute()
            return len(entries)

        return await self.guard.run(call, 0)
