"""``ReindexCoordinator``: runs the reindex job for every trigger (the schedule, ``/reindex``, the admin page's
button, the CLI) and coalesces concurrent ones.

Concurrent triggers in one process join the run in progress; a schedule tick runs on exactly one replica (a claim
per tick in Redis); admins get a summary in Indonesian when a run they asked for ends, and every admin hears about a
failed run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from bot.ops.summary import format_run_summary
from storage.locks import Claims
from storage.runs import JobRun

__all__ = ["Notifier", "ReindexCoordinator"]

logger = logging.getLogger(__name__)

# notify(text, chat_ids): send ``text`` to those admins (None = every admin). Returns how many got it.
Notifier = Callable[[str, Sequence[str] | None], Awaitable[int]]


def _log_task_failure(task: asyncio.Task[Any]) -> None:
    """Retrieve a background run's exception so it is logged once (runs normally end as FAILED records)."""
    if not task.cancelled() and task.exception() is not None:
        logger.error("the reindex run crashed: %r", task.exception())


class ReindexCoordinator:
    """Runs the reindex job for every trigger and coalesces concurrent ones.

    ``job`` has ``async run(trigger, requested_by=None) -> JobRun`` (``sync_jobs.reindex.ReindexJob``).
    ``claims`` (Redis or files) makes one replica run each schedule tick. ``notify`` reaches the admins.
    """

    def __init__(
        self,
        job: Any,
        *,
        claims: Claims | None = None,
        notify: Notifier | None = None,
        metrics: Any = None,
        tick_claim_ttl_seconds: float = 2 * 86400,
    ) -> None:
        self.job = job
        self.claims = claims
        self.notify = notify
        self.metrics = metrics
        self.tick_claim_ttl_seconds = tick_claim_ttl_seconds
        self._task: asyncio.Task[JobRun] | None = None
        self._requesters: dict[str, None] = {}
        self._current_trigger: str | None = None
        self._recovery: asyncio.Task[Any] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start_recovery(self) -> asyncio.Task[Any] | None:
        """Clean up after a crash in the background (RUNNING runs → ABORTED, half-built versions, staging files).

        Needs a running loop; without one (a plain function call) it does nothing and the next run cleans up.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        self._recovery = loop.create_task(self._recover(), name="reindex recovery")
        return self._recovery

    async def recovered(self) -> None:
        """Wait for the start-up recovery, when one was started and has not ended. A run waits for it: the recovery
        marks every RUNNING run ABORTED, so a run recorded while it works would be aborted under it."""
        if self._recovery is not None and not self._recovery.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(self._recovery)

    async def _recover(self) -> Any:
        try:
            return await self.job.recover()
        except Exception:  # boundary: a background start-up task; the next run retries the recovery
            logger.exception("start-up recovery of the reindex job failed; the next run retries it")
            return None

    async def scheduled(self, tick: datetime) -> JobRun | None:
        """What the schedule calls: run once per tick across all replicas (None when another one has it)."""
        if self.claims is not None:
            try:
                won = await self.claims.claim(tick.isoformat(), ttl_seconds=self.tick_claim_ttl_seconds)
            except Exception as error:  # boundary: the scheduled tick (Redis down, a claims file unwritable): do not run N copies blindly; the next tick retries
                logger.error("could not claim the reindex tick %s (%s); skipping it", tick.isoformat(), error)
                return None
            if not won:
                logger.info("reindex tick %s already claimed by another instance", tick.isoformat())
                return None
        return await self.trigger("schedule")

    async def trigger(self, trigger: str = "admin", requested_by: str | None = None) -> JobRun:
        """Run the job (or join the run in progress in this process) and wait for its record."""
        return await asyncio.shield(self.start(trigger, requested_by))

    def start(self, trigger: str = "admin", requested_by: str | None = None) -> asyncio.Task[JobRun]:
        """Start the job in the background, or return the run already in progress. Needs a running loop."""
        if requested_by:
            self._requesters[str(requested_by)] = None
        if self.running:
            logger.info("reindex already running (%s); the %s trigger joins it", self._current_trigger, trigger)
            assert self._task is not None
            return self._task
        self._current_trigger = trigger
        self._task = asyncio.create_task(self._execute(trigger, requested_by), name=f"reindex ({trigger})")
        self._task.add_done_callback(_log_task_failure)
        return self._task

    async def admin_trigger(self, requested_by: str | None = None) -> str:
        """For ``/reindex`` and the admin button: start or join, answer at once with a short Indonesian detail."""
        joined = self.running
        self.start("admin", requested_by)
        if joined:
            return "bergabung dengan proses yang sedang berjalan; ringkasan dikirim setelah selesai"
        return "ringkasan akan dikirim ke admin setelah selesai"

    async def _execute(self, trigger: str, requested_by: str | None) -> JobRun:
        if self.metrics is not None:
            self.metrics.reindex_started()
        try:
            await self.recovered()
            run: JobRun = await self.job.run(trigger, requested_by=requested_by)
        except Exception:  # boundary: the job runner resets the running gauge whatever failed, then re-raises (nothing swallowed)
            if self.metrics is not None:
                self.metrics.reindex_running.set(0)
            raise
        finally:
            requesters, self._requesters = list(self._requesters), {}
        if self.metrics is not None:
            self.metrics.reindex_finished(run)
        await self._notify(run, requesters)
        return run

    async def _notify(self, run: JobRun, requesters: list[str]) -> None:
        if self.notify is None:
            return
        if run.status in ("FAILED", "ABORTED"):
            targets: Sequence[str] | None = None  # every admin
        elif requesters:
            targets = requesters
        elif run.trigger == "admin":
            targets = None
        else:
            return  # a quiet, successful nightly run
        try:
            await self.notify(format_run_summary(run), targets)
        except Exception:  # boundary: notifying admins is after the run; any channel failure is logged, the run's result stands
            logger.exception("could not notify admins about run %s", run.run_id)

    async def wait_idle(self) -> JobRun | None:
        task = self._task
        if task is None:
            return None
        with contextlib.suppress(Exception):
            return await asyncio.shield(task)
        return None

    async def status(self) -> dict[str, Any]:
        """``{"index": {...}, "runs": [...], "reindex_running": bool, …}`` for /status and the admin page."""
        data: dict[str, Any] = await self.job.status()
        data["reindex_running"] = self.running
        return data

    async def close(self) -> None:
        """Wait for the recovery and a run in progress (it finishes its swap or fails cleanly)."""
        await self.recovered()
        await self.wait_idle()
