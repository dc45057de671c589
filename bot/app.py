"""Startup and shutdown of everything ``python -m bot serve`` runs.

``ServeApp.start()`` builds the stores (Redis when ``REDIS_URL`` is set, memory otherwise), the answer pipeline,
the ChatService, the shared aiohttp server (web chat, JSON API, admin, health, metrics, webhooks), Telegram
(polling, or webhook when ``TELEGRAM_WEBHOOK_URL`` is set) and WhatsApp when configured, and the reindex schedule.
Channels without configuration are skipped with a log line. ``stop()`` undoes it in reverse order: stop taking
updates, drain WhatsApp background tasks, stop Telegram, close the HTTP server, the stores and Redis.

Every part can be injected (tests pass a small answerer, the fake API base URLs come through Settings).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot import wiring
from bot.metrics import Metrics
from bot.server import ServerParts, build_server
from bot.settings import Settings
from handlers.awaitables import resolve
from handlers.chat import Answerer, ChatService
from handlers.telegram import TelegramHandlers
from handlers.web import WebApi
from handlers.whatsapp import WhatsAppWebhook
from storage.insights import QuestionLog

__all__ = ["ServeApp"]

logger = logging.getLogger(__name__)

# Update types the bot asks Telegram for; everything else is never even delivered (and ignored if it is).
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]


class ServeApp:
    """Owns every long-lived part of the ``serve`` process."""

    def __init__(
        self,
        settings: Settings,
        *,
        answerer: Answerer | None = None,
        search: Callable[[str, int], Awaitable[list[dict[str, Any]]]] | None = None,
        status_provider: Callable[[], Any] | None = None,
        reindex_trigger: Callable[[str | None], Any] | None = None,
        index_ready: Callable[[], bool] | None = None,
        start_scheduler: bool = True,
        llm_warm_up: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        self.settings = settings
        self.answerer = answerer
        self.search = search
        self.status_provider = status_provider
        self.reindex_trigger = reindex_trigger
        self.index_ready = index_ready
        self.start_scheduler = start_scheduler
        self.llm_warm_up = llm_warm_up
        self.index_manager: Any = None
        self.readiness: Any = None  # bot.readiness.Readiness, for /readyz
        self.metrics: Any = None
        self._queue_depth: Callable[[], int] | None = None
        self.stores: wiring.ChannelStores | None = None
        self.service: ChatService | None = None
        self.whatsapp: WhatsAppWebhook | None = None
        self.telegram: Any = None
        self.telegram_mode: str | None = None
        self.telegram_secret: str | None = None
        self.runner: web.AppRunner | None = None
        self.port: int | None = None
        self.ops: Any = None
        self.insights: Any = None  # bot.insights.Insights: the admins' report and answers
        self.digest: Any = None  # bot.insights.DigestSender at DIGEST_CRON, or None
        self._closers: list[Callable[[], Any]] = []

    # --- start -----------------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Build and start everything; on a failure, whatever was started is stopped again before re-raising."""
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        s = self.settings
        self.metrics = Metrics()  # its own Prometheus registry: one per process
        self.stores = wiring.build_channel_stores(s)
        self._closers.append(self.stores.close)
        index_manager = None
        if self.answerer is None:
            answering = await wiring.build_answering(s, metrics=self.metrics)
            self._closers.append(answering.close)
            self.answerer = answering.answerer
            self.search = self.search or answering.search
            self.index_ready = self.index_ready or answering.index_ready
            self._queue_depth = answering.queue_depth
            index_manager = self.index_manager = answering.index_manager
            self.llm_warm_up = self.llm_warm_up or answering.warm_up
        if self.status_provider is None or self.reindex_trigger is None:
            self.ops = await wiring.build_serve_operations(s, metrics=self.metrics, index_manager=index_manager)
            self._closers.append(self.ops.close)
            self.status_provider = self.status_provider or self.ops.status
            self.reindex_trigger = self.reindex_trigger or self.ops.reindex
        self.insights = wiring.build_insights(s, index_manager=index_manager)
        self._closers.append(self.insights.store.close)
        self.service = wiring.build_chat_service(
            s,
            self.answerer,
            self.stores,
            status_provider=self.status_provider,
            reindex_trigger=self.reindex_trigger,
            queue_depth=self._queue_depth,
            question_log=QuestionLog(self.insights.store),
            admin_answer=self._admin_answer,
        )
        self.digest = wiring.attach_digest(s, self.ops, self.insights)
        wiring.attach_answer_expiry(s, self.ops, self.insights)
        await self._start_whatsapp()
        await self._start_telegram()
        await self._start_http()
        await self._start_polling()
        if self.ops is not None:
            await self.ops.start(schedule=self.start_scheduler)
            if self.start_scheduler and self.index_ready is not None and not self.index_ready():
                # a first deploy (or the demo) should not wait for the night: build the first index now
                logger.info("no index yet: building the first one from %s in the background",
                            "the bundled demo site" if wiring.uses_demo_site(s) else "SITE_SEEDS")
                self.ops.coordinator.start("cli")
        logger.info("serving: web%s%s on http://%s:%s", self._tg_note(), ", whatsapp" if self.whatsapp else "",
                    s.channels.http_host, self.port)

    async def _admin_answer(self, question: str, answer: str, author: str) -> int:
        """``/jawab`` from a Telegram admin: store the answer and rebuild the index (in the executor)."""
        insights = self.insights
        saved = await asyncio.get_running_loop().run_in_executor(
            None, lambda: insights.save_answer(question=question, answer=answer, author=author))
        return saved.id

    def _tg_note(self) -> str:
        return f", telegram ({self.telegram_mode})" if self.telegram is not None else ""

    async def _start_whatsapp(self) -> None:
        s = self.settings
        missing = [
            name
            for name, value in (
                ("WHATSAPP_TOKEN", s.channels.whatsapp_token),
                ("WHATSAPP_PHONE_NUMBER_ID", s.channels.whatsapp_phone_number_id),
                ("WHATSAPP_APP_SECRET", s.channels.whatsapp_app_secret),
                ("WHATSAPP_VERIFY_TOKEN", s.channels.whatsapp_verify_token),
            )
            if not value
        ]
        if s.channels.whatsapp_token is None:
            logger.info("WhatsApp skipped: WHATSAPP_TOKEN is not set")
            return
        if missing:
            logger.warning("WhatsApp skipped: set %s as well (see .env.example)", ", ".join(missing))
            return
        assert self.service is not None and self.stores is not None
        self.whatsapp = wiring.build_whatsapp(s, self.service, self.stores, metrics=self.metrics)

    async def _start_telegram(self) -> None:
        s = self.settings
        if s.channels.telegram_token is None:
            logger.info("Telegram skipped: TELEGRAM_TOKEN is not set")
            return
        assert self.service is not None
        from bot.telegram_app import build_telegram_application

        webhook = bool(s.channels.telegram_webhook_url)
        handlers = TelegramHandlers(self.service, metrics=self.metrics)
        application = build_telegram_application(
            s.channels.telegram_token.get_secret_value(), handlers, base_url=s.channels.telegram_api_base_url, webhook=webhook
        )
        try:
            await application.initialize()
        except Exception as error:  # bad token, Bot API unreachable: keep the other channels running
            logger.error("Telegram disabled: could not reach the Bot API at %s (%s). Check TELEGRAM_TOKEN and "
                         "TELEGRAM_API_BASE_URL.", s.channels.telegram_api_base_url, error)
            with contextlib.suppress(Exception):
                await application.shutdown()
            return
        await application.start()
        self.telegram = application
        if webhook:
            self.telegram_mode = "webhook"
            secret = s.channels.telegram_secret_token.get_secret_value() if s.channels.telegram_secret_token else ""
            if not secret:
                secret = secrets.token_urlsafe(32)
                logger.warning("TELEGRAM_SECRET_TOKEN is not set; using a random secret for this run")
            self.telegram_secret = secret
            try:
                await application.bot.set_webhook(url=s.channels.telegram_webhook_url, secret_token=secret,
                                                  allowed_updates=ALLOWED_UPDATES)
            except Exception as error:
                logger.error("setWebhook failed (%s); updates may not arrive. Check that TELEGRAM_WEBHOOK_URL is a "
                             "public HTTPS URL ending in /telegram/webhook.", error)
        else:
            self.telegram_mode = "polling"

    async def _start_polling(self) -> None:
        if self.telegram is not None and self.telegram_mode == "polling":
            try:
                await self.telegram.bot.delete_webhook()
                await self.telegram.updater.start_polling(
                    allowed_updates=ALLOWED_UPDATES,
                    error_callback=lambda error: logger.warning("Telegram polling error: %s", error),
                )
            except Exception as error:
                logger.error("Telegram polling could not start (%s); the other channels keep running", error)

    async def _start_http(self) -> None:
        s = self.settings
        assert self.service is not None and self.stores is not None
        stores = self.stores
        checks: dict[str, Callable[[], Any]] = {}
        if self.index_ready is not None:
            checks["index"] = self.index_ready
        if stores.client is not None:
            checks["redis"] = stores.ping
        parts = ServerParts(
            web=WebApi(self.service, self.search, metrics=self.metrics),
            whatsapp=self.whatsapp,
            telegram=self.telegram if self.telegram_mode == "webhook" else None,
            telegram_secret=self.telegram_secret,
            telegram_dedup=stores.dedup,
            admin_token=s.channels.admin_token.get_secret_value() if s.channels.admin_token else None,
            admin_session_minutes=s.channels.admin_session_minutes,
            admin_status=self.status_provider,
            feedback_counts=stores.feedback.counts,
            reindex=(lambda: self.reindex_trigger(None)) if self.reindex_trigger else None,
            admin_runs=wiring.build_run_views(s, self.ops),
            admin_insights=self.insights,
            health_checks=checks,
            metrics=self.metrics,
            before_metrics=self._queue_depth,
        )
        parts.readiness = self.readiness = self._build_readiness()
        self.runner = web.AppRunner(build_server(parts), access_log=None, shutdown_timeout=5.0)
        await self.runner.setup()
        site = web.TCPSite(self.runner, s.channels.http_host, s.channels.http_port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # the bound port (HTTP_PORT=0 picks a free one)
        self.port = sockets[0].getsockname()[1] if sockets else s.channels.http_port

    def _build_readiness(self) -> Any:
        """/readyz: the loaded index, the LLM warm-up (started here), Redis and the last reindex run."""
        from bot.readiness import Readiness

        manager, index_ready, stores = self.index_manager, self.index_ready, self.stores

        def index_info() -> dict[str, Any] | None:
            if manager is not None:
                index = manager.current()
                return None if index is None else dict(index.info)
            return {} if index_ready is not None and index_ready() else None

        async def last_run() -> dict[str, Any] | None:
            if self.ops is not None and self.ops.runs is not None:
                runs = await asyncio.get_running_loop().run_in_executor(None, self.ops.runs.recent, 1)
                return runs[0].as_json() if runs else None
            if self.status_provider is not None:
                status = await resolve(self.status_provider())
                runs = status.get("runs") if isinstance(status, dict) else None
                return runs[0] if runs and isinstance(runs[0], dict) else None
            return None

        readiness = Readiness(index_info=index_info, warm_up=self.llm_warm_up,
                              redis_ping=stores.ping if stores is not None and stores.client is not None else None,
                              last_run=last_run)
        readiness.start()
        self._closers.append(readiness.close)
        return readiness

    # --- stop ------------------------------------------------------------------------------------------------
    async def stop(self) -> None:
        """Stop in reverse order; every step runs even when an earlier one fails."""
        if self.telegram is not None and self.telegram.updater is not None and self.telegram.updater.running:
            with contextlib.suppress(Exception):
                await self.telegram.updater.stop()
        if self.runner is not None:
            with contextlib.suppress(Exception):
                await self.runner.cleanup()
            self.runner = None
        if self.whatsapp is not None:
            with contextlib.suppress(Exception):
                await self.whatsapp.close()
        if self.telegram is not None:
            app, self.telegram = self.telegram, None
            try:
                if app.running:
                    await app.stop()
                await app.shutdown()
            except Exception:
                logger.warning("Telegram shutdown failed", exc_info=True)
        closers, self._closers = self._closers, []
        for close in reversed(closers):
            try:
                await resolve(close())
            except Exception:
                logger.warning("shutdown step failed", exc_info=True)

    async def run_forever(self, stop_event: asyncio.Event | None = None) -> None:
        """Start, wait for ``stop_event`` (or cancellation), stop."""
        stop_event = stop_event or asyncio.Event()
        await self.start()
        try:
            await stop_event.wait()
        finally:
            await self.stop()
