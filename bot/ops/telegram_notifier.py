"""``TelegramNotifier``: sends admin notifications through the Bot API's ``sendMessage``."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import aiohttp

__all__ = ["TelegramNotifier"]

logger = logging.getLogger(__name__)


def _telegram_chat_id(admin_id: str) -> str | None:
    """``123`` or ``telegram:123`` → ``123``; ids of other channels (``whatsapp:62…``, ``web:…``) → None."""
    value = admin_id.strip()
    if ":" in value:
        channel, _, value = value.partition(":")
        if channel.lower() != "telegram":
            return None
    value = value.strip()
    return value if value.lstrip("-").isdigit() else None


class TelegramNotifier:
    """Sends plain-text messages to admins with the Telegram Bot API (``{base}{token}/sendMessage``)."""

    def __init__(self, token: str, admin_ids: Iterable[str], *, api_base_url: str = "https://api.telegram.org/bot",
                 timeout_seconds: float = 10.0) -> None:
        if not token:
            raise ValueError("TelegramNotifier needs TELEGRAM_TOKEN; without it admins cannot be notified")
        self._url = f"{api_base_url.rstrip('/')}{token}/sendMessage" if api_base_url.endswith("bot") else (
            f"{api_base_url.rstrip('/')}/bot{token}/sendMessage")
        self.admin_ids = [a for a in admin_ids if a.strip()]
        self.timeout = aiohttp.ClientTimeout(total=timeout_seconds)

    async def __call__(self, text: str, chat_ids: Sequence[str] | None = None) -> int:
        targets = [c for c in (_telegram_chat_id(a) for a in (chat_ids or self.admin_ids)) if c]
        if not targets:
            return 0
        sent = 0
        async with aiohttp.ClientSession(timeout=self.timeout) as session:
            for chat_id in dict.fromkeys(targets):
                try:
                    async with session.post(self._url, json={"chat_id": chat_id, "text": text[:4000]}) as response:
                        body = await response.json(content_type=None)
                        if response.status == 200 and body.get("ok"):
                            sent += 1
                        else:
                            logger.warning("Telegram refused the admin notification (HTTP %s): %s",
                                           response.status, str(body.get("description", ""))[:200])
                except (aiohttp.ClientError, TimeoutError, ValueError) as error:
                    logger.warning("could not notify an admin on Telegram: %s", type(error).__name__)
        return sent
