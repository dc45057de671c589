"""``SubprocessReindex``: runs the reindex job in a spawned child process at a lower CPU priority (``nice``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from storage.runs import JobRun, utc_now

__all__ = ["ChildEntry", "SubprocessReindex"]

logger = logging.getLogger(__name__)

# entry(trigger, requested_by, log_stdout) -> JobRun.as_json(): runs in the child, so it must be picklable (a
# module-level function, or functools.partial of one): ``functools.partial(bot.wiring.reindex_in_child, settings)``
ChildEntry = Callable[[str, "str | None", bool], dict[str, Any]]


def _child_init(nice: int) -> None:
    """Lower the reindex child's CPU priority: user questions in the parent come first."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(nice)


class SubprocessReindex:
    """Runs ``ReindexJob.run`` in a spawned child process at a lower CPU priority (``nice``).

    Crawling (HTML parsing), embedding and index building are CPU-bound Python; in the serving process they would
    compete with user questions for the GIL. The child shares nothing but files and Redis with the parent, which is
    exactly what the job's locks, run records and atomic pointer are built for. ``status``, ``recover`` and ``runs``
    come from the in-process ``job`` (cheap reads). ``entry`` builds and runs the job in the child.
    """

    def __init__(self, entry: ChildEntry, job: Any, *, nice: int = 10) -> None:
        self.entry = entry
        self.job = job
        self.nice = nice
        self.runs = job.runs
        self.index_manager = job.index_manager

    async def run(self, trigger: str, requested_by: str | None = None) -> JobRun:
        loop = asyncio.get_running_loop()
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_child_init, initargs=(self.nice,))
        try:
            spawned_at = utc_now()
            log_stdout = any(getattr(h, "stream", None) is sys.stdout for h in logging.getLogger().handlers)
            data = await loop.run_in_executor(pool, self.entry, trigger, requested_by, log_stdout)
            return JobRun(**data)
        except BrokenProcessPool:
            logger.error("the reindex child process died (killed or out of memory); cleaning up what it left")
            return await self._after_child_died(trigger, spawned_at)
        finally:
            await loop.run_in_executor(None, pool.shutdown)

    async def _after_child_died(self, trigger: str, spawned_at: str) -> JobRun:
        """Close the dead child's run as ABORTED and clean its leftovers (staging store, half-built version)."""
        loop = asyncio.get_running_loop()
        recent = await loop.run_in_executor(None, self.runs.recent, 10)
        mine = [r for r in recent if r.status == "RUNNING" and r.trigger == trigger and r.started_at >= spawned_at]
        for run in mine:
            await loop.run_in_executor(None, lambda r=run: self.runs.finish(
                r.run_id, "ABORTED", error="the reindex child process died (killed or out of memory)"))
        # the kernel frees the child's file lock a moment after its death; a Redis lock waits for its TTL, and
        # then the next run or the next start-up finishes the clean-up
        for _ in range(10):
            result = await self.job.recover()
            if result.get("recovered"):
                break
            await asyncio.sleep(0.5)
        if mine:
            found = await loop.run_in_executor(None, self.runs.get, mine[0].run_id)
            if found is not None:
                return found
        latest = await loop.run_in_executor(None, self.runs.recent, 1)
        if not latest:
            raise RuntimeError("the reindex child process died before it recorded its run")
        return latest[0]

    async def status(self) -> dict[str, Any]:
        return await self.job.status()

    async def recover(self) -> dict[str, Any]:
        return await self.job.recover()
