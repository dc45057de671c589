"""The ``Channel`` interface ``serve`` builds its channels from (see ``bot/channels/__init__.py`` for the list).

A channel is one module in ``bot/channels/``: a class with a ``name``, ``why_not(settings)`` (None when it is
configured, otherwise the reason in one line), ``routes`` on the shared HTTP server, and ``start`` / ``stop``.
Everything channel-neutral (commands, answers, feedback, the typing loop) lives in ``handlers/``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.settings import Settings
from handlers.chat import ChatService

__all__ = ["Channel", "ChannelContext", "Route"]

# (method, path, name of the channel's handler method): GET/POST on the shared aiohttp server
Route = tuple[str, str, str]


@dataclass
class ChannelContext:
    """What every channel gets from ``serve``."""

    settings: Settings
    service: ChatService
    stores: Any  # bot.wiring.ChannelStores: conversations, feedback, per-user state, dedup, the Redis client
    metrics: Any = None  # bot.metrics.Metrics
    search: Callable[[str, int], Awaitable[list[dict[str, Any]]]] | None = None  # for /api/retrieve


class Channel:
    """Base class of a channel. ``routes`` are served while the channel runs; when the channel is not configured
    ``serve`` answers them with 404 and the ``why_not`` reason, so a misrouted webhook says what to set."""

    name: ClassVar[str] = ""
    routes: ClassVar[tuple[Route, ...]] = ()

    def __init__(self, context: ChannelContext) -> None:
        self.context = context

    @classmethod
    def why_not(cls, settings: Settings) -> str | None:
        """None when the settings configure this channel; otherwise why not (e.g. "TELEGRAM_TOKEN is not set")."""
        return None

    async def start(self) -> None:
        """Connect to the platform (after the HTTP server is up). A platform that cannot be reached disables this
        channel with a log line; the other channels keep running."""

    async def stop(self) -> None:
        """Stop taking updates and finish or drop what is in flight (after the HTTP server stopped)."""

    def describe(self) -> str:
        """How the channel appears in the "serving:" log line ("" when it could not start)."""
        return self.name

    def state(self) -> object:
        """What ``serve --json`` prints for this channel (true when running; Telegram says its mode)."""
        return True
