"""``SubprocessReindex``: runs the reindex job in a spawned child process at a lower CPU priority (``nice``).

The child does not outlive the process that started it: when that process dies (``kill -9``, out of memory) the
child cancels its run, which records it ABORTED and releases the reindex lock, and exits (``_watch_parent``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
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


_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_PARENT_POLL_SECONDS = 1.0  # the portable check: how often the child looks whether its parent is still there
_PARENT_GONE_WAIT_SECONDS = 5.0  # after a SIGTERM: how long to watch for the parent's death before taking it as ours
_CLEANUP_GRACE_SECONDS = 30.0  # how long an orphaned child may take to record its run and release the lock

_parent_pid: int | None = None  # in the child: the pid of the process that started it
_leaving = False


def _child_init(nice: int, parent_pid: int | None = None) -> None:
    """In the child, before the job: lower its CPU priority (user questions in the parent come first) and make it
    follow its parent out."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(nice)
    if parent_pid is not None:
        _watch_parent(parent_pid)


def _watch_parent(parent_pid: int) -> None:
    """Make this child leave when ``parent_pid`` dies: without this a ``kill -9`` of ``serve`` leaves the child
    running on, parented to PID 1, and then blocked for ever on the pool's pipe.

    Two ways to notice, one way out: on Linux the kernel sends SIGTERM when the parent dies (``PR_SET_PDEATHSIG``;
    the kernel's "parent" is the thread that spawned the child, the parent's event-loop thread); everywhere a daemon
    thread checks ``os.getppid()`` every second and sends the same SIGTERM. ``_on_sigterm`` takes it from there.
    """
    global _parent_pid
    _parent_pid = parent_pid
    signal.signal(signal.SIGTERM, _on_sigterm)
    with contextlib.suppress(OSError, AttributeError):  # Linux only; the thread below covers the rest
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:  # it died before the line above took effect: there is no run to clean up yet
        os._exit(1)
    threading.Thread(target=_poll_parent, name="parent watchdog", daemon=True).start()


def _poll_parent() -> None:
    while os.getppid() == _parent_pid:
        time.sleep(_PARENT_POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in the main thread, which owns the event loop
    time.sleep(_PARENT_GONE_WAIT_SECONDS + _CLEANUP_GRACE_SECONDS + 5)
    os._exit(1)  # the main thread never ran the handler (stuck in C code): leave anyway


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM in the child (main thread): note the event loop of the run in progress and let ``_leave`` decide."""
    global _leaving
    if _leaving:
        return
    _leaving = True
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:  # no run in progress (starting, or idle after it)
        loop = None
    threading.Thread(target=_leave, args=(loop,), name="leave", daemon=True).start()


def _leave(loop: asyncio.AbstractEventLoop | None) -> None:
    """After a SIGTERM. The parent died: cancel the run (the job records it ABORTED and releases its lock), then
    exit. The parent lives (the pool ending a broken child, an operator, a service manager stopping everything):
    the signal was for this child, which dies as SIGTERM always made it, and the parent cleans up after it.

    Which of the two shows only a moment later: a parent killed with ``kill -9`` may still be tearing down its other
    threads when the kernel sends the signal, and ``os.getppid()`` changes only once it is gone.
    """
    deadline = time.monotonic() + _PARENT_GONE_WAIT_SECONDS
    while os.getppid() == _parent_pid:
        if time.monotonic() > deadline:
            os._exit(128 + signal.SIGTERM)
        time.sleep(0.05)
    if loop is None or not loop.is_running():
        os._exit(1)  # nothing to clean up
    reason = f"interrupted: the process that started this reindex (pid {_parent_pid}) died"
    finished = threading.Event()

    def cancel() -> None:  # in the event loop
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        logger.error("%s; cancelling the run and exiting", reason)
        left = len(tasks)

        def one_done(_: Any) -> None:
            nonlocal left
            left -= 1
            if left == 0:
                finished.set()

        for task in tasks:
            task.add_done_callback(one_done)
            task.cancel(reason)
        if not tasks:
            finished.set()

    try:
        loop.call_soon_threadsafe(cancel)
    except RuntimeError:  # the loop closed meanwhile
        os._exit(1)
    # then exit, not through asyncio.run's own shutdown: that would wait for the executor's threads (an embedding
    # batch, an index build) that no one will use, and a build that finished must not switch the index of an
    # abandoned run
    finished.wait(_CLEANUP_GRACE_SECONDS)
    os._exit(1)


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
                                   initializer=_child_init, initargs=(self.nice, os.getpid()))
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
        # the kernel frees the child's file lock a moment after its death, and the dead child's Redis lock is taken
        # over (storage.locks: same host, dead pid); should neither happen in time, the next run or start-up cleans up
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
