"""Readiness (``/readyz``), as opposed to liveness (``/healthz``): can this process answer students now?

Ready means an index is loaded and the LLM has answered a one-token warm-up. Redis only degrades (conversation
memory falls back to nothing) and the last reindex is reported, never a reason to take the bot out of rotation:
a failed run leaves the old index serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from handlers.awaitables import resolve

__all__ = ["Readiness"]

logger = logging.getLogger(__name__)


class Readiness:
    """Warms the LLM up once at start (again at most every ``retry_seconds`` after a failure, when asked) and
    reports each component for ``/readyz``."""

    def __init__(
        self,
        *,
        index_info: Callable[[], dict[str, Any] | None],
        warm_up: Callable[[], Awaitable[Any]] | None,
        redis_ping: Callable[[], Awaitable[bool]] | None = None,
        last_run: Callable[[], Awaitable[dict[str, Any] | None] | dict[str, Any] | None] | None = None,
        retry_seconds: float = 30.0,
    ) -> None:
        self.index_info = index_info
        self.warm_up = warm_up
        self.redis_ping = redis_ping
        self.last_run = last_run
        self.retry_seconds = retry_seconds
        self.llm_state = "warming up" if warm_up is not None else "absent"
        self.llm_detail = "" if warm_up is not None else "no LLM in this process"
        self._task: asyncio.Task[None] | None = None
        self._failed_at = 0.0

    def start(self) -> None:
        """Start the warm-up in the background (needs a running loop)."""
        if self.warm_up is not None and (self._task is None or self._task.done()):
            self.llm_state = "warming up"
            self._task = asyncio.create_task(self._warm(), name="llm warm-up")

    async def _warm(self) -> None:
        assert self.warm_up is not None
        started = time.perf_counter()
        try:
            await self.warm_up()
        except Exception as error:  # boundary: the warm-up task (a missing model file, the inference server down, a timeout …) becomes a 503 state
            self.llm_state, self._failed_at = "failed", time.monotonic()
            self.llm_detail = f"{type(error).__name__}: {error}"[:300]
            logger.error("LLM warm-up failed: %s; /readyz stays 503 until it answers", self.llm_detail)
            return
        self.llm_state = "ready"
        self.llm_detail = f"answered a one-token warm-up in {time.perf_counter() - started:.1f} s"
        logger.info("LLM ready (%s)", self.llm_detail)

    async def wait(self) -> None:
        """Until the current warm-up attempt has finished (tests, start-up scripts)."""
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def report(self) -> tuple[bool, dict[str, Any]]:
        """(ready, body) for ``/readyz``."""
        if self.llm_state == "failed" and time.monotonic() - self._failed_at >= self.retry_seconds:
            self.start()  # the inference server may be back: try again in the background
        try:
            info = self.index_info()
        except Exception as error:  # boundary: the /readyz probe reports the index as not ok rather than fail
            info, index_error = None, f"{type(error).__name__}: {error}"[:300]
        else:
            index_error = ""
        index = {"ok": info is not None, "version": (info or {}).get("version"),
                 "chunks": (info or {}).get("chunks")}
        if info is None:
            index["detail"] = index_error or "no index loaded yet: run `python -m bot reindex`"
        llm = {"ok": self.llm_state == "ready", "state": self.llm_state, "detail": self.llm_detail}
        redis: str = "not configured"
        if self.redis_ping is not None:
            try:
                redis = "ok" if await self.redis_ping() else "degraded"
            except Exception:  # boundary: the /readyz probe reports Redis as degraded rather than fail
                redis = "degraded"
        last: dict[str, Any] | None = None
        if self.last_run is not None:
            try:
                run = await resolve(self.last_run())
            except Exception as error:  # boundary: the /readyz probe reports the run history as unknown rather than fail
                run = {"status": "unknown", "error": f"run history unavailable: {error}"[:300]}
            if run:
                last = {key: run.get(key) for key in ("run_id", "status", "trigger", "started_at", "ended_at", "error")
                        if key in run}
        ready = index["ok"] and llm["ok"]
        body = {"status": "ready" if ready else "not ready",
                "components": {"index": index, "llm": llm, "redis": redis, "last_reindex": last}}
        return ready, body
