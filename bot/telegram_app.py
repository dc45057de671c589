"""Build the python-telegram-bot Application: token, Bot API base URL, rate limiter, handlers, timeouts.

Polling mode keeps PTB's Updater; webhook mode builds the Application without one (``updater(None)``): updates
arrive on the shared aiohttp server at ``/telegram/webhook`` and are put on ``application.update_queue``.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram.ext import AIORateLimiter, Application

from handlers.telegram import TelegramHandlers

__all__ = ["build_telegram_application"]

logger = logging.getLogger(__name__)


def build_telegram_application(
    token: str,
    handlers: TelegramHandlers,
    *,
    base_url: str = "https://api.telegram.org/bot",
    webhook: bool = False,
    timeout_seconds: float = 20.0,
    concurrent_updates: int = 16,
    rate_limiter: bool = True,
) -> Application:
    """An Application with our handlers registered (not yet initialised)."""
    if not token:
        raise ValueError("TELEGRAM_TOKEN is empty; set it to the token @BotFather gave you")
    builder: Any = (
        Application.builder()
        .token(token)
        .base_url(base_url)
        .base_file_url(base_url.replace("/bot", "/file/bot") if base_url.endswith("/bot") else base_url)
        .concurrent_updates(concurrent_updates)
        .connect_timeout(timeout_seconds)
        .read_timeout(timeout_seconds)
        .write_timeout(timeout_seconds)
        .pool_timeout(timeout_seconds)
        .get_updates_connect_timeout(timeout_seconds)
        .get_updates_read_timeout(timeout_seconds + 30)
    )
    if rate_limiter:
        builder = builder.rate_limiter(AIORateLimiter(max_retries=2))
    if webhook:
        builder = builder.updater(None)
    application = builder.build()
    handlers.register(application)
    return application
