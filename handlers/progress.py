"""What a user sees while an answer is being made: the channel's typing indicator, re-sent every ``interval``
seconds, and their place in the LLM queue, told once. The chat adapters (Telegram, WhatsApp, the console) answer
through ``answer_with_progress``; the web chat's JSON endpoint answers in one request and has no typing indicator.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from handlers import texts
from handlers.chat import ChatService, Reply, UserRef

__all__ = ["answer_with_progress"]

logger = logging.getLogger(__name__)


async def answer_with_progress(
    service: ChatService,
    user: UserRef,
    text: str,
    *,
    typing: Callable[[], Awaitable[None]] | None = None,
    notice: Callable[[str], Awaitable[None]] | None = None,
    interval: float = 4.0,
) -> Reply:
    """``service.handle(user, text)`` while ``typing()`` runs every ``interval`` seconds and ``notice(text)`` tells a
    queued user their position once. Failures of ``typing`` and ``notice`` are the channel's to swallow."""
    told = False

    async def keep_typing() -> None:
        assert typing is not None
        while True:
            await typing()
            await asyncio.sleep(interval)

    async def on_position(position: int) -> None:
        nonlocal told
        if position >= 1 and not told and notice is not None:
            told = True
            await notice(texts.QUEUED.format(position=position))

    task = asyncio.create_task(keep_typing()) if typing is not None else None
    try:
        return await service.handle(user, text, on_position=on_position)
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
