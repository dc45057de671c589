"""Telegram (python-telegram-bot v22): the Application, the channel for ``serve``, and admin notifications.

Polling mode keeps PTB's Updater; webhook mode (``TELEGRAM_WEBHOOK_URL``) builds the Application without one
(``updater(None)``): updates arrive on the shared aiohttp server at ``/telegram/webhook`` and are put on
``application.update_queue``. What an update does is ``handlers/telegram.py``'s business.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import secrets
from collections.abc import Iterable, Sequence
from typing import Any

from aiohttp import web
from telegram import Bot, Update
from telegram.error import TelegramError
from telegram.ext import AIORateLimiter, Application
from telegram.request import HTTPXRequest

from bot.channels.base import Channel
from bot.server import json_error
from bot.settings import Settings
from handlers.telegram import TelegramHandlers

__all__ = ["ALLOWED_UPDATES", "TelegramAdminNotifier", "TelegramChannel", "build_telegram_application"]

logger = logging.getLogger(__name__)

# Update types the bot asks Telegram for; everything else is never even delivered (and ignored if it is).
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]


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
        .base_file_url(_file_url(base_url))
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


def _file_url(base_url: str) -> str:
    return base_url.replace("/bot", "/file/bot") if base_url.endswith("/bot") else base_url


class TelegramChannel(Channel):
    """Long polling, or the webhook on the shared server when TELEGRAM_WEBHOOK_URL is set."""

    name = "telegram"
    routes = (("POST", "/telegram/webhook", "webhook"),)

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.application: Application | None = None
        self.mode: str | None = None  # "webhook" or "polling" once started
        self.secret: str | None = None

    @classmethod
    def why_not(cls, settings: Settings) -> str | None:
        return None if settings.channels.telegram_token is not None else "TELEGRAM_TOKEN is not set"

    def describe(self) -> str:
        return f"telegram ({self.mode})" if self.application is not None else ""

    def state(self) -> object:
        return self.mode if self.application is not None else False

    async def start(self) -> None:
        s = self.context.settings.channels
        assert s.telegram_token is not None
        webhook = bool(s.telegram_webhook_url)
        handlers = TelegramHandlers(self.context.service, metrics=self.context.metrics)
        application = build_telegram_application(
            s.telegram_token.get_secret_value(), handlers, base_url=s.telegram_api_base_url, webhook=webhook
        )
        try:
            await application.initialize()
        except Exception as error:  # boundary: channel start-up (bad token, Bot API unreachable): keep the other channels running
            logger.error("Telegram disabled: could not reach the Bot API at %s (%s). Check TELEGRAM_TOKEN and "
                         "TELEGRAM_API_BASE_URL.", s.telegram_api_base_url, error)
            with contextlib.suppress(Exception):
                await application.shutdown()
            return
        await application.start()
        self.application = application
        if webhook:
            self.mode = "webhook"
            secret = s.telegram_secret_token.get_secret_value() if s.telegram_secret_token else ""
            if not secret:
                secret = secrets.token_urlsafe(32)
                logger.warning("TELEGRAM_SECRET_TOKEN is not set; using a random secret for this run")
            self.secret = secret
            try:
                await application.bot.set_webhook(url=s.telegram_webhook_url, secret_token=secret,
                                                  allowed_updates=ALLOWED_UPDATES)
            except Exception as error:  # boundary: channel start-up; the other channels keep running, the log says how to fix the webhook
                logger.error("setWebhook failed (%s); updates may not arrive. Check that TELEGRAM_WEBHOOK_URL is a "
                             "public HTTPS URL ending in /telegram/webhook.", error)
            return
        self.mode = "polling"
        try:
            await application.bot.delete_webhook()
            assert application.updater is not None
            await application.updater.start_polling(
                allowed_updates=ALLOWED_UPDATES,
                error_callback=lambda error: logger.warning("Telegram polling error: %s", error),
            )
        except Exception as error:  # boundary: channel start-up; the other channels keep running
            logger.error("Telegram polling could not start (%s); the other channels keep running", error)

    async def webhook(self, request: web.Request) -> web.Response:
        application = self.application if self.mode == "webhook" else None
        if application is None:
            return json_error(404, "Telegram webhook mode is not enabled (set TELEGRAM_WEBHOOK_URL)")
        expected = self.secret or ""
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        # a header of non-UTF-8 bytes arrives as surrogate escapes: compare bytes, never fail on the encoding
        if not expected or not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode()):
            logger.warning("Telegram webhook: wrong or missing secret token; refused")
            return json_error(403, "wrong secret token")
        try:
            data = json.loads(await request.read())
        except (ValueError, UnicodeDecodeError, RecursionError):
            return json_error(400, "body is not JSON")
        if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
            return json_error(400, "not a Telegram update (needs an integer update_id)")
        dedup = self.context.stores.dedup  # Telegram re-delivers an update the webhook was slow on
        if dedup is not None and not await dedup.first_time(f"tg:{data['update_id']}"):
            return web.Response(text="duplicate")
        try:
            update = Update.de_json(data, application.bot)
        except Exception as error:  # boundary: the webhook handler; a malformed update is ignored, not a 500 that Telegram re-delivers
            logger.warning("Telegram update %s could not be parsed (%s); ignored", data.get("update_id"), error)
            return web.Response(text="ignored")
        await application.update_queue.put(update)
        return web.Response(text="ok")

    async def stop(self) -> None:
        application, self.application = self.application, None
        if application is None:
            return
        if application.updater is not None and application.updater.running:
            with contextlib.suppress(Exception):
                await application.updater.stop()
        try:
            if application.running:
                await application.stop()
            await application.shutdown()
        except Exception:  # boundary: shutdown; the other stop steps still run
            logger.warning("Telegram shutdown failed", exc_info=True)


# --- admin notifications ----------------------------------------------------------------------------------------

def _telegram_chat_id(admin_id: str) -> str | None:
    """``123`` or ``telegram:123`` → ``123``; ids of other channels (``whatsapp:62…``, ``web:…``) → None."""
    value = admin_id.strip()
    if ":" in value:
        channel, _, value = value.partition(":")
        if channel.lower() != "telegram":
            return None
    value = value.strip()
    return value if value.lstrip("-").isdigit() else None


class TelegramAdminNotifier:
    """Sends plain-text messages to the Telegram admins with python-telegram-bot's ``Bot.send_message``: run
    summaries, failed runs and the weekly digest (``notify(text, chat_ids)``, see ``bot.ops.coordinator.Notifier``).
    Works with or without a running ``serve`` (the CLI's ``reindex`` notifies too)."""

    def __init__(self, token: str, admin_ids: Iterable[str], *, base_url: str = "https://api.telegram.org/bot",
                 timeout_seconds: float = 10.0) -> None:
        if not token:
            raise ValueError("admin notifications need TELEGRAM_TOKEN; without it admins cannot be notified")
        self._token = token
        self.base_url = base_url
        self.timeout = timeout_seconds
        self.admin_ids = [a for a in admin_ids if a.strip()]

    async def __call__(self, text: str, chat_ids: Sequence[str] | None = None, *,
                       buttons: Sequence[Sequence[tuple[str, str]]] | None = None) -> int:
        """Send ``text`` to each admin; ``buttons``: rows of (label, callback data) as an inline keyboard."""
        from telegram import InlineKeyboardButton, InlineKeyboardMarkup

        markup = InlineKeyboardMarkup([[InlineKeyboardButton(label, callback_data=data) for label, data in row]
                                       for row in buttons]) if buttons else None
        targets = [c for c in (_telegram_chat_id(a) for a in (chat_ids or self.admin_ids)) if c]
        if not targets:
            return 0
        t = self.timeout
        request = HTTPXRequest(connection_pool_size=2, connect_timeout=t, read_timeout=t, write_timeout=t,
                               pool_timeout=t)
        bot = Bot(self._token, base_url=self.base_url, base_file_url=_file_url(self.base_url), request=request)
        sent = 0
        try:
            await bot.initialize()
        except (TelegramError, OSError) as error:
            logger.warning("could not notify the admins on Telegram: %s", type(error).__name__)
            return 0
        try:
            for chat_id in dict.fromkeys(targets):
                try:
                    await bot.send_message(chat_id, text[:4000], reply_markup=markup)
                    sent += 1
                except (TelegramError, OSError) as error:
                    logger.warning("Telegram refused an admin notification: %s", str(error)[:200])
        finally:
            with contextlib.suppress(Exception):
                await bot.shutdown()
        return sent
