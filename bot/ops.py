"""Bot-side operations glue: who triggers the reindex job, who hears about it, and who reloads the index.

- ``ReindexCoordinator``: the one entry point for the schedule, ``/reindex``, the admin page's button and tests.
  Concurrent triggers in one process coalesce into the run in progress; a schedule tick runs on exactly one replica
  (a claim per tick in Redis); admins get a summary in Indonesian when a run they asked for ends, and every admin
  hears about a failed run.
- ``TelegramNotifier``: sends those summaries through the Bot API's ``sendMessage`` (a loopback stand-in in tests).
- ``IndexWatcher``: reloads the serving index when another process published a new version on Redis pub/sub
  (``prodibot:index``), with a periodic pointer check as the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import multiprocessing
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from typing import Any

import aiohttp

from storage.locks import Claims
from storage.runs import JobRun, utc_now

__all__ = [
    "IndexWatcher",
    "Notifier",
    "ReindexCoordinator",
    "SubprocessReindex",
    "TelegramNotifier",
    "format_run_summary",
]

logger = logging.getLogger(__name__)

# notify(text, chat_ids): send ``text`` to those admins (None = every admin). Returns how many got it.
Notifier = Callable[[str, Sequence[str] | None], Awaitable[int]]


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


# --- notifications ------------------------------------------------------------------------------------------

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


def _num(value: float) -> str:
    return f"{value:.1f}".replace(".", ",")


def format_run_summary(run: JobRun) -> str:
    """A short Indonesian summary of a finished run for admins."""
    title = {
        "SUCCESS": "✅ Pembaruan indeks selesai.",
        "FAILED": "❌ Pembaruan indeks GAGAL. Indeks lama tetap dipakai untuk menjawab.",
        "ABORTED": "⚠️ Pembaruan indeks terhenti sebelum selesai. Indeks lama tetap dipakai.",
        "SKIPPED": "ℹ️ Pembaruan indeks dilewati.",
    }.get(run.status, f"Pembaruan indeks: {run.status}")
    lines = [title, f"Proses: {run.run_id} (pemicu: {run.trigger})"]
    if run.status != "SKIPPED":
        lines.append(
            f"Halaman: {run.pages_fetched} diambil, {run.pages_changed} berubah, {run.pages_unchanged} tetap, "
            f"{run.pages_failed} gagal, {run.pages_removed} dihapus"
        )
        lines.append(
            f"Potongan teks: {run.chunks_added} ditambah, {run.chunks_removed} dihapus, "
            f"{run.chunks_embedded} di-embed ({_num(run.embed_seconds)} detik); total {run.chunks_total}"
        )
        lines.append(f"Durasi: {_num(run.duration_seconds)} detik")
    if run.index_version and run.status == "SUCCESS":
        lines.append(f"Versi indeks: {run.index_version}")
    if run.error:
        lines.append(f"Keterangan: {run.error[:600]}")
    return "\n".join(lines)


# --- the coordinator ----------------------------------------------------------------------------------------

def _log_task_failure(task: asyncio.Task[Any]) -> None:
    """Retrieve a background run's exception so it is logged once (runs normally end as FAILED records)."""
    if not task.cancelled() and task.exception() is not None:
        logger.error("the reindex run crashed: %r", task.exception())


class ReindexCoordinator:
    """Runs the reindex job for every trigger and coalesces concurrent ones.

    ``job`` has ``async run(trigger, requested_by=None) -> JobRun`` (``sync_jobs.reindex.ReindexJob``).
    ``claims`` (Redis or files) makes one replica run each schedule tick. ``notify`` reaches the admins.
    ``status_extra`` adds fields (queue depth, next run) to ``status()``.
    """

    def __init__(
        self,
        job: Any,
        *,
        claims: Claims | None = None,
        notify: Notifier | None = None,
        metrics: Any = None,
        tick_claim_ttl_seconds: float = 2 * 86400,
        status_extra: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.job = job
        self.claims = claims
        self.notify = notify
        self.metrics = metrics
        self.tick_claim_ttl_seconds = tick_claim_ttl_seconds
        self.status_extra = status_extra
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

    async def _recover(self) -> Any:
        try:
            return await self.job.recover()
        except Exception:
            logger.exception("start-up recovery of the reindex job failed; the next run retries it")
            return None

    async def scheduled(self, tick: datetime) -> JobRun | None:
        """What the schedule calls: run once per tick across all replicas (None when another one has it)."""
        if self.claims is not None:
            try:
                won = await self.claims.claim(tick.isoformat(), ttl_seconds=self.tick_claim_ttl_seconds)
            except Exception as error:  # Redis down: do not run N copies blindly; the next tick will retry
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
            run: JobRun = await self.job.run(trigger, requested_by=requested_by)
        except Exception:
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
        except Exception:
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
        if self.status_extra is not None:
            with contextlib.suppress(Exception):
                data.update(self.status_extra())
        return data

    async def close(self) -> None:
        """Wait for the recovery and a run in progress (it finishes its swap or fails cleanly)."""
        if self._recovery is not None:
            with contextlib.suppress(Exception):
                await self._recovery
        await self.wait_idle()


# --- running the job in a child process ---------------------------------------------------------------------

def _child_init(nice: int) -> None:
    """Lower the reindex child's CPU priority: user questions in the parent come first."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(nice)


def _run_job_in_child(settings: Any, trigger: str, requested_by: str | None,
                      log_stdout: bool = False) -> dict[str, Any]:
    """Entry point of the child process: build the job from Settings and run it once.

    A spawned child starts with no logging configured: it logs like ``serve`` (the JSON log file, and stdout when
    the parent logs there), so the job's stage lines reach the same log stack as the parent's."""
    from bot import wiring
    from bot.logging_setup import configure_logging

    configure_logging(settings, quiet=not log_stdout, command="serve")

    async def main() -> dict[str, Any]:
        redis = None
        if settings.redis_url:
            from storage.redis_guard import connect_redis

            redis = connect_redis(settings.redis_url, timeout=5.0)
        try:
            job = wiring.build_reindex_job(settings, redis=redis)
            run = await job.run(trigger, requested_by=requested_by)
            return run.as_json()
        finally:
            if redis is not None:
                await redis.aclose()

    return asyncio.run(main())


class SubprocessReindex:
    """Runs ``ReindexJob.run`` in a spawned child process at a lower CPU priority (``nice``).

    Crawling (HTML parsing), embedding and index building are CPU-bound Python; in the serving process they would
    compete with user questions for the GIL. The child shares nothing but files and Redis with the parent, which is
    exactly what the job's locks, run records and atomic pointer are built for. ``status``, ``recover`` and ``runs``
    come from the in-process ``job`` (cheap reads).
    """

    def __init__(self, settings: Any, job: Any, *, nice: int = 10) -> None:
        self.settings = settings
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
            data = await loop.run_in_executor(pool, _run_job_in_child, self.settings, trigger, requested_by,
                                              log_stdout)
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


# --- reload across processes --------------------------------------------------------------------------------

class IndexWatcher:
    """Reloads the serving index when it changed: on a Redis pub/sub message and every ``interval`` seconds.

    ``reload`` is blocking (it may load HNSW files) and returns truthy when a new version was loaded; it runs in the
    default executor. ``redis`` is a ``redis.asyncio.Redis`` or None (pointer checks only).
    """

    def __init__(
        self,
        reload: Callable[[], Any],
        *,
        redis: Any = None,
        channel: str = "prodibot:index",
        interval_seconds: float = 30.0,
        on_reload: Callable[[], Any] | None = None,
    ) -> None:
        self._reload = reload
        self.redis = redis
        self.channel = channel
        self.interval = interval_seconds
        self.on_reload = on_reload
        self.reloads = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._subscribed = asyncio.Event()

    async def check(self) -> bool:
        """Reload now if the pointer moved. Returns whether a new version was loaded."""
        async with self._lock:
            changed = await asyncio.get_running_loop().run_in_executor(None, self._reload)
        if changed:
            self.reloads += 1
            logger.info("loaded a new index version")
            if self.on_reload is not None:
                with contextlib.suppress(Exception):
                    await _maybe_await(self.on_reload())
        return bool(changed)

    async def start(self) -> None:
        if self._tasks:
            return
        if self.redis is not None:
            self._tasks.append(asyncio.create_task(self._listen(), name="index watcher (pub/sub)"))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._subscribed.wait(), 5)
        if self.interval > 0:
            self._tasks.append(asyncio.create_task(self._poll(), name="index watcher (poll)"))

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.check()
            except Exception:
                logger.exception("index pointer check failed")

    async def _listen(self) -> None:
        backoff = 1.0
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                self._subscribed.set()
                backoff = 1.0
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                    if message is None:
                        continue
                    try:
                        payload = json.loads(message.get("data") or b"{}")
                    except (TypeError, ValueError):
                        payload = {}
                    logger.info("index update announced: version %s", payload.get("version"))
                    await self.check()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                logger.warning("index pub/sub listener stopped (%s); retrying in %.0fs", error, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
