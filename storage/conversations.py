"""Conversation memory: the last N messages per user and channel (docs/answers.md, "Conversation window").

``RedisConversationStore`` is for production and for several replicas sharing one Redis; keys are namespaced
(``<namespace>:conv:<user_key>``), each list is trimmed to the window and its TTL is refreshed on every append.
``MemoryConversationStore`` is the embedded default when no ``REDIS_URL`` is configured.

If Redis fails at run time the Redis store degrades instead of raising: ``history`` returns an empty list (the bot
answers without history), ``append`` and ``clear`` do nothing, a warning is logged at most once a minute, and the
next successful call recovers by itself.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict, deque
from typing import Protocol, runtime_checkable

import redis.asyncio as aioredis

from storage import keys
from storage.models import Message
from storage.redis_guard import RedisGuard, connect_redis

__all__ = ["ConversationStore", "MemoryConversationStore", "RedisConversationStore"]


@runtime_checkable
class ConversationStore(Protocol):
    """Per-user message window. ``user_key`` is channel-qualified, e.g. ``telegram:12345``."""

    async def append(self, user_key: str, message: Message) -> None: ...

    async def history(self, user_key: str, limit: int | None = None) -> list[Message]: ...

    async def clear(self, user_key: str) -> None: ...


def _encode(message: Message) -> str:
    return json.dumps({"role": message.role, "text": message.text, "ts": message.ts}, ensure_ascii=False)


def _decode(raw: str | bytes) -> Message | None:
    try:
        data = json.loads(raw)
        return Message(role=str(data["role"]), text=str(data["text"]), ts=float(data.get("ts", 0.0)))
    except (ValueError, KeyError, TypeError):
        return None


class MemoryConversationStore:
    """In-process store: one bounded deque per user, least recently used users evicted past ``max_users``."""

    def __init__(self, window: int = 20, *, max_users: int = 10_000) -> None:
        self.window = window
        self.max_users = max_users
        self._data: OrderedDict[str, deque[Message]] = OrderedDict()

    async def append(self, user_key: str, message: Message) -> None:
        if self.window <= 0:
            return
        messages = self._data.get(user_key)
        if messages is None:
            messages = self._data[user_key] = deque(maxlen=self.window)
        messages.append(message)
        self._data.move_to_end(user_key)
        while len(self._data) > self.max_users:
            self._data.popitem(last=False)

    async def history(self, user_key: str, limit: int | None = None) -> list[Message]:
        messages = list(self._data.get(user_key, ()))
        if limit is not None:
            messages = messages[-limit:] if limit > 0 else []
        return messages

    async def clear(self, user_key: str) -> None:
        self._data.pop(user_key, None)

    async def close(self) -> None:
        self._data.clear()


class RedisConversationStore:
    """Redis list per user: RPUSH + LTRIM to the window + EXPIRE, in one MULTI transaction."""

    def __init__(
        self,
        url: str | None = None,
        window: int = 20,
        ttl_days: float = 30,
        namespace: str = keys.NAMESPACE,
        *,
        client: aioredis.Redis | None = None,
        guard: RedisGuard | None = None,
    ) -> None:
        if client is None and not url:
            raise ValueError("RedisConversationStore needs a Redis URL (REDIS_URL, e.g. redis://127.0.0.1:6379/0)")
        self.window = window
        self.ttl_seconds = max(1, int(ttl_days * 86400))
        self.namespace = namespace
        self._owns_client = client is None
        self._client = client if client is not None else connect_redis(url or "")
        self.guard = guard or RedisGuard("conversation memory")

    def key(self, user_key: str) -> str:
        return keys.conversation(user_key, self.namespace)

    async def append(self, user_key: str, message: Message) -> None:
        if self.window <= 0:
            return
        key = self.key(user_key)
        if not message.ts:
            message = Message(role=message.role, text=message.text, ts=time.time())

        async def call() -> None:
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.rpush(key, _encode(message))
                pipe.ltrim(key, -self.window, -1)
                pipe.expire(key, self.ttl_seconds)
                await pipe.execute()

        await self.guard.run(call, None)

    async def history(self, user_key: str, limit: int | None = None) -> list[Message]:
        n = self.window if limit is None else min(limit, self.window)
        if n <= 0:
            return []
        key = self.key(user_key)
        raw: list[bytes | str] = await self.guard.run(lambda: self._client.lrange(key, -n, -1), [])
        return [m for m in (_decode(item) for item in raw) if m is not None]

    async def clear(self, user_key: str) -> None:
        await self.guard.run(lambda: self._client.delete(self.key(user_key)), 0)

    async def close(self) -> None:
        if self._owns_client:
            await self._client.aclose()
