"""``resolve``: await a value if it is awaitable. Callbacks the bot and the handlers take (status providers,
reindex triggers, health checks, closers) may be plain functions or coroutine functions; callers use this once."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["resolve"]


async def resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
