"""Announcements to their subscribers (issue 32, stage 3): who gets which announcement, and sending it on Telegram
and WhatsApp within the platforms' rules, each (announcement, subscriber) at most once.

- **Who**: every subscription whose topic matches the announcement (``retrieval.topics.topic_matches`` on its title
  and page text, so "bsw" meets "Beasiswa"), or ``all``; one message per user however many topics match.
- **At most once**: a delivery is claimed in the store before it is sent (``claim_delivery``: an insert on the
  (announcement, user) key) and finished as sent, skipped or failed. A restart, a second reindex or another replica
  finds the claim and sends nothing.
- **Telegram**: python-telegram-bot's ``ExtBot`` with ``AIORateLimiter`` (at most 30 messages a second overall,
  Telegram's broadcast limit; a ``RetryAfter`` pauses every send), timeouts on every request. A user who blocked the
  bot (``Forbidden``) is unsubscribed.
- **WhatsApp**: inside the user's 24-hour window a normal text; outside it the approved template
  ``WHATSAPP_ANNOUNCE_TEMPLATE`` in ``WHATSAPP_ANNOUNCE_TEMPLATE_LANGUAGE`` with three body variables (title,
  summary, link) through pywa's template API; without a template the delivery is skipped and counted.
- **Retries**: a network error or a 5xx is retried with exponential backoff (``retries``, ``backoff_seconds``);
  a refusal (4xx) is not. The Graph client retries 429/5xx itself as well.

No user id, number or text goes to a log line: only counts and the announcement id.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from retrieval.topics import topic_matches

__all__ = ["Blocked", "Deliverer", "TelegramAnnouncer", "WhatsAppAnnouncer", "format_html", "format_plain"]

logger = logging.getLogger(__name__)

SERVICE_WINDOW_SECONDS = 24 * 3600


class Blocked(Exception):
    """The user blocked the bot (Telegram ``Forbidden``): unsubscribe them."""


class Refused(Exception):
    """The platform refused this message (a 4xx): retrying will not help."""


def format_plain(a: Any) -> str:
    """The announcement as plain text (WhatsApp)."""
    return f"📢 *{a.title}*\n{a.date}\n\n{a.summary}\n\nSelengkapnya: {a.url}\n\nKetik /berhenti untuk berhenti."


def format_html(a: Any) -> str:
    """The announcement as Telegram HTML (escaped)."""
    return (f"📢 <b>{html.escape(a.title)}</b>\n{html.escape(a.date)}\n\n{html.escape(a.summary)}\n\n"
            f'<a href="{html.escape(a.url, quote=True)}">Selengkapnya</a>\n\nKetik /berhenti untuk berhenti.')


class TelegramAnnouncer:
    """Sends announcements through PTB's ExtBot with AIORateLimiter (``overall_max_rate`` messages a second)."""

    def __init__(self, token: str, *, base_url: str = "https://api.telegram.org/bot", timeout_seconds: float = 10.0,
                 overall_max_rate: float = 30, pool_size: int = 8) -> None:
        from telegram.ext import AIORateLimiter, ExtBot
        from telegram.request import HTTPXRequest

        t = timeout_seconds
        request = HTTPXRequest(connection_pool_size=pool_size, connect_timeout=t, read_timeout=t, write_timeout=t,
                               pool_timeout=t)
        file_url = base_url.replace("/bot", "/file/bot") if base_url.endswith("/bot") else base_url
        self.bot = ExtBot(token, base_url=base_url, base_file_url=file_url, request=request,
                          rate_limiter=AIORateLimiter(overall_max_rate=overall_max_rate, overall_time_period=1,
                                                      max_retries=3))
        self._ready = False

    async def start(self) -> None:
        if not self._ready:
            await self.bot.initialize()
            self._ready = True

    async def close(self) -> None:
        if self._ready:
            await self.bot.shutdown()
            self._ready = False

    async def send(self, user_id: str, user_key: str, announcement: Any) -> str:
        from telegram.error import BadRequest, Forbidden

        await self.start()
        try:
            await self.bot.send_message(int(user_id) if user_id.lstrip("-").isdigit() else user_id,
                                        format_html(announcement), parse_mode="HTML",
                                        disable_web_page_preview=True)
        except Forbidden as error:
            raise Blocked(str(error)[:100]) from None
        except BadRequest as error:  # chat not found, bad markup: retrying will not help
            raise Refused(f"BadRequest: {str(error)[:100]}") from None
        return "sent"


class WhatsAppAnnouncer:
    """Inside the 24-hour window a text; outside it the template, or skipped without one."""

    def __init__(self, graph: Any, last_inbound: Callable[[str], Any], *, template: str = "",
                 language: str = "id") -> None:
        self.graph = graph
        self.last_inbound = last_inbound  # async (user key) -> epoch seconds or None (storage.dedup.UserState)
        self.template = template
        self.language = language

    async def close(self) -> None:
        await self.graph.close()

    async def send(self, user_id: str, user_key: str, announcement: Any) -> str:
        from handlers.whatsapp import GraphSendError

        last = await self.last_inbound(user_key)
        try:
            if last is not None and time.time() - last < SERVICE_WINDOW_SECONDS:
                await self.graph.send_text(user_id, format_plain(announcement))
                return "sent"
            if not self.template:
                return "skipped"
            await self.graph.send_template(user_id, self.template, self.language,
                                           [announcement.title, announcement.summary, announcement.url])
            return "sent"
        except GraphSendError as error:
            if "refused" in str(error):
                raise Refused(str(error)[:150]) from None
            raise


@dataclass
class DeliveryReport:
    announcement_id: int
    counts: dict[str, int] = field(default_factory=lambda: {"sent": 0, "skipped": 0, "failed": 0, "already": 0})
    unsubscribed: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"announcement_id": self.announcement_id, **self.counts, "unsubscribed": self.unsubscribed}


class Deliverer:
    """Delivers announcements to their subscribers over the configured channels (``senders``: channel → announcer).
    The store is blocking (``storage.contracts.AnnouncementStoreAPI``) and runs in the executor."""

    def __init__(self, store: Any, senders: dict[str, Any], *, retries: int = 3, backoff_seconds: float = 0.5,
                 concurrency: int = 64) -> None:
        self.store = store
        self.senders = senders
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self.concurrency = concurrency

    async def _blocking(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import functools

        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))

    def recipients(self, announcement: Any, subscriptions: Iterable[Any]) -> list[tuple[str, str]]:
        """(user key, channel) of every subscriber one of whose topics matches, each once, in key order."""
        text = announcement.topic_text or f"{announcement.title}\n{announcement.summary}"
        chosen: dict[str, str] = {}
        for sub in subscriptions:
            if sub.user_key not in chosen and topic_matches(sub.topic, text):
                chosen[sub.user_key] = sub.channel
        return sorted(chosen.items())

    async def deliver(self, announcement: Any) -> DeliveryReport:
        report = DeliveryReport(announcement.id)
        subscriptions = await self._blocking(self.store.subscriptions)
        targets = [(k, c) for k, c in self.recipients(announcement, subscriptions) if c in self.senders]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(user_key: str, channel: str) -> None:
            async with gate:
                await self._deliver_one(announcement, user_key, channel, report)

        await asyncio.gather(*(one(k, c) for k, c in targets))
        logger.info("announcement %s delivered: %s", announcement.id,
                    " ".join(f"{k}={v}" for k, v in report.as_json().items() if k != "announcement_id"))
        return report

    async def _deliver_one(self, announcement: Any, user_key: str, channel: str, report: DeliveryReport) -> None:
        if not await self._blocking(self.store.claim_delivery, announcement.id, user_key, channel):
            report.counts["already"] += 1
            return
        sender = self.senders[channel]
        user_id = user_key.split(":", 1)[1]
        delay = self.backoff_seconds
        attempts, status, detail = 0, "failed", ""
        while True:
            attempts += 1
            try:
                status = await sender.send(user_id, user_key, announcement)
                detail = ""
                break
            except Blocked:
                status, detail = "failed", "blocked"
                await self._blocking(self.store.unsubscribe, user_key)
                report.unsubscribed += 1
                break
            except Refused as error:
                status, detail = "failed", str(error)
                break
            except asyncio.CancelledError:
                raise
            except Exception as error:  # boundary: one recipient's send over any channel (network, timeouts, 5xx after the client's retries): retried, then recorded failed; the delivery goes on
                detail = f"{type(error).__name__}: {str(error)[:120]}"
                if attempts > self.retries:
                    status = "failed"
                    break
                await asyncio.sleep(delay)
                delay *= 2
        report.counts[status] += 1
        try:
            await self._blocking(self.store.finish_delivery, announcement.id, user_key, status, detail=detail,
                                 attempts=attempts)
        except Exception:  # boundary: the per-recipient delivery loop goes on; the claim stands (never sent twice), only its outcome is unrecorded
            logger.exception("recording a delivery of announcement %s failed", announcement.id)
