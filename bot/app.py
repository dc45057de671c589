"""Startup and shutdown of everything ``python -m bot serve`` runs.

``ServeApp.start()`` builds the stores (Redis when ``REDIS_URL`` is set, memory otherwise), the answer pipeline,
the ChatService, the channels of ``bot.channels.CHANNELS`` that are configured (the others are skipped with a log
line, and their routes answer 404 with the reason), the shared aiohttp server (the channels' routes, admin, health,
metrics), then starts each channel and the reindex schedule. ``stop()`` undoes it in reverse order: close the HTTP
server, stop the channels (the last started first), then the stores and Redis.

Every part can be injected (tests pass a small answerer, the fake API base URLs come through Settings).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot import channels, wiring
from bot.channels.base import Channel, ChannelContext
from bot.metrics import Metrics
from bot.server import ServerParts, build_server, json_error, proxy_networks
from bot.settings import Settings
from handlers.awaitables import resolve
from handlers.chat import Answerer, ChatService
from storage.insights import QuestionLog

__all__ = ["ServeApp"]

logger = logging.getLogger(__name__)

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
        self.channels: list[Channel] = []  # the configured ones, in bot.channels.CHANNELS order
        self.runner: web.AppRunner | None = None
        self.port: int | None = None
        self.ops: Any = None
        self.insights: Any = None  # bot.insights.Insights: the admins' report and answers
        self.digest: Any = None  # bot.insights.DigestSender at DIGEST_CRON, or None
        self.subscriptions: Any = None  # announcement subscriptions (storage.contracts.AnnouncementStoreAPI)
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
        index_manager = calibration = None
        if self.answerer is None:
            answering = await wiring.build_answering(s, metrics=self.metrics)
            self._closers.append(answering.close)
            self.answerer = answering.answerer
            self.search = self.search or answering.search
            self.index_ready = self.index_ready or answering.index_ready
            self._queue_depth = answering.queue_depth
            index_manager = self.index_manager = answering.index_manager
            calibration = answering.calibration  # with DATABASE_URL: the watcher keeps the pipeline on the shared one
            self.llm_warm_up = self.llm_warm_up or answering.warm_up
        if self.status_provider is None or self.reindex_trigger is None:
            self.ops = await wiring.build_serve_operations(s, metrics=self.metrics, index_manager=index_manager,
                                                           calibration=calibration)
            self._closers.append(self.ops.close)
            self.status_provider = self.status_provider or self.ops.status
            self.reindex_trigger = self.reindex_trigger or self.ops.reindex
        self.insights = wiring.build_insights(s, index_manager=index_manager)
        self._closers.append(self.insights.store.close)
        self.subscriptions = wiring.open_announcement_store(s)
        self._closers.append(self.subscriptions.close)
        # one desk for /admin and the Telegram admin notice's buttons (issue 32)
        self.announcement_desk = wiring.build_announcement_desk(s, store=self.subscriptions, state=self.stores.state)
        self.service = wiring.build_chat_service(
            s,
            self.answerer,
            self.stores,
            status_provider=self.status_provider,
            reindex_trigger=self.reindex_trigger,
            queue_depth=self._queue_depth,
            question_log=QuestionLog(self.insights.store),
            admin_answer=self._admin_answer,
            subscriptions=self.subscriptions,
            announcements=self.announcement_desk,
        )
        self.digest = wiring.attach_digest(s, self.ops, self.insights, announcements=self.subscriptions)
        wiring.attach_answer_expiry(s, self.ops, self.insights)
        context = ChannelContext(settings=s, service=self.service, stores=self.stores, metrics=self.metrics,
                                 search=self.search)
        off: dict[type[Channel], str] = {}
        for kind in channels.CHANNELS:
            reason = kind.why_not(s)
            if reason is None:
                self.channels.append(kind(context))
            else:
                logger.info("%s skipped: %s", kind.name, reason)
                off[kind] = reason
        await self._start_http(off)
        for channel in self.channels:
            await channel.start()
        if self.ops is not None:
            await self.ops.start(schedule=self.start_scheduler)
            if self.start_scheduler and self.index_ready is not None and not self.index_ready():
                # a first deploy (or the demo) should not wait for the night: build the first index now
                logger.info("no index yet: building the first one from %s in the background",
                            "the bundled demo site" if wiring.uses_demo_site(s) else "SITE_SEEDS")
                self.ops.coordinator.start("cli")
        logger.info("serving: %s on http://%s:%s", ", ".join(filter(None, (c.describe() for c in self.channels))),
                    s.channels.http_host, self.port)

    def channel(self, name: str) -> Channel | None:
        """The running channel called ``name`` (``"telegram"``, ``"whatsapp"``, ``"web"``), or None."""
        return next((c for c in self.channels if c.name == name), None)

    async def _admin_answer(self, question: str, answer: str, author: str) -> int:
        """``/jawab`` from a Telegram admin: store the answer and rebuild the index (in the executor)."""
        insights = self.insights
        saved = await asyncio.get_running_loop().run_in_executor(
            None, lambda: insights.save_answer(question=question, answer=answer, author=author))
        return saved.id

    async def _start_http(self, off: dict[type[Channel], str]) -> None:
        s = self.settings
        assert self.service is not None and self.stores is not None
        stores = self.stores
        checks: dict[str, Callable[[], Any]] = {}
        if self.index_ready is not None:
            checks["index"] = self.index_ready
        if stores.client is not None:
            checks["redis"] = stores.ping
        parts = ServerParts(
            channel_routes=self._channel_routes(off),
            admin_token=s.channels.admin_token.get_secret_value() if s.channels.admin_token else None,
            admin_session_minutes=s.channels.admin_session_minutes,
            trusted_proxies=proxy_networks(s.channels.trusted_proxies),
            admin_status=self.status_provider,
            feedback_counts=stores.feedback.counts,
            reindex=(lambda: self.reindex_trigger(None)) if self.reindex_trigger else None,
            admin_runs=wiring.build_run_views(s, self.ops, announcements=self.subscriptions),
            admin_insights=self.insights,
            announcements=self.announcement_desk,
            site_url=wiring.site_base_url(s),
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

    def _channel_routes(self, off: dict[type[Channel], str]) -> list[tuple[str, str, Any]]:
        """The running channels' routes; a channel that is off answers its routes with 404 and the reason."""
        routes = [(method, path, getattr(channel, handler))
                  for channel in self.channels for method, path, handler in channel.routes]
        for kind, reason in off.items():
            async def refuse(request: web.Request, name: str = kind.name, reason: str = reason) -> web.Response:
                return json_error(404, f"the {name} channel is off: {reason}")

            routes += [(method, path, refuse) for method, path, _ in kind.routes]
        return routes

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
        if self.runner is not None:
            try:
                await self.runner.cleanup()
            except Exception:  # boundary: shutdown; every step runs even when an earlier one fails
                logger.warning("closing the HTTP server failed", exc_info=True)
            self.runner = None
        started, self.channels = self.channels, []
        for channel in reversed(started):
            try:
                await channel.stop()
            except Exception:  # boundary: shutdown; every step runs even when an earlier one fails
                logger.warning("stopping the %s channel failed", channel.name, exc_info=True)
        closers, self._closers = self._closers, []
        for close in reversed(closers):
            try:
                await resolve(close())
            except Exception:  # boundary: shutdown; every step runs even when an earlier one fails
                logger.warning("shutdown step failed", exc_info=True)

    async def run_forever(self, stop_event: asyncio.Event | None = None) -> None:
        """Start, wait for ``stop_event`` (or cancellation), stop."""
        stop_event = stop_event or asyncio.Event()
        await self.start()
        try:
            await stop_event.wait()
        finally:
            await self.stop()
