"""The reindex schedule: APScheduler's AsyncIOScheduler running ``REINDEX_CRON`` in ``TIMEZONE``.

The job runs at most one instance at a time, missed firings coalesce into one, and a firing that is late by less
than the misfire grace still runs. Each firing is identified by its *scheduled* time (the latest cron time not after
now), so every replica that fires for the same tick names it the same way and only one of them runs it (see
``bot.ops.coordinator.ReindexCoordinator.scheduled``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger

__all__ = ["ReindexSchedule", "latest_fire_time", "parse_cron"]

logger = logging.getLogger(__name__)

JOB_ID = "reindex"


_WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _crontab_weekdays(expression: str) -> str:
    """Crontab counts weekdays from Sunday (0 or 7 = Sunday, 1 = Monday); APScheduler's from_crontab reads the
    numbers as its own (0 = Monday), so '0 7 * * 1' would fire on Tuesdays. Numbers become names, which both
    read the same way."""
    fields = expression.split()
    if len(fields) != 5:
        return expression
    day = fields[4]
    if day in ("0-6", "0-7", "1-7"):
        day = "*"
    else:
        day = re.sub(r"(?<![/\d])([0-7])(?!\d)", lambda m: _WEEKDAY_NAMES[int(m.group(1))], day)
    return " ".join(fields[:4] + [day])


def parse_cron(expression: str, timezone: str) -> CronTrigger:
    """A CronTrigger from crontab syntax; errors name the setting to fix."""
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"TIMEZONE={timezone!r} is not a known time zone; use e.g. Asia/Jakarta") from None
    try:
        return CronTrigger.from_crontab(_crontab_weekdays(expression), timezone=zone)
    except ValueError as error:
        raise ValueError(
            f"REINDEX_CRON={expression!r} is not valid crontab syntax ({error}); "
            "use five fields 'minute hour day month weekday', e.g. '0 2 * * *' for 02:00 daily"
        ) from None


def latest_fire_time(trigger: CronTrigger, now: datetime) -> datetime:
    """The latest time ``trigger`` fires at that is not after ``now`` (the tick being served)."""
    for window in (timedelta(minutes=2), timedelta(hours=2), timedelta(days=2), timedelta(days=40),
                   timedelta(days=800)):
        candidate = trigger.get_next_fire_time(None, now - window)
        if candidate is None or candidate > now:
            continue
        while True:
            following = trigger.get_next_fire_time(candidate, candidate + timedelta(microseconds=1))
            if following is None or following > now or following <= candidate:
                return candidate
            candidate = following
    return now.replace(second=0, microsecond=0)


class ReindexSchedule:
    """Owns the AsyncIOScheduler. ``on_tick(fire_time)`` is awaited at every firing.

    ``start()`` needs a running event loop. ``fire()`` is exactly what the scheduler calls, so tests and the
    admin page can run a tick without waiting for the clock.
    """

    def __init__(
        self,
        on_tick: Callable[[datetime], Awaitable[Any]],
        *,
        cron: str,
        timezone: str,
        misfire_grace_seconds: int = 3600,
    ) -> None:
        self.trigger = parse_cron(cron, timezone)
        self.cron = cron
        self.timezone = timezone
        self.misfire_grace_seconds = misfire_grace_seconds
        self._on_tick = on_tick
        self._scheduler: AsyncIOScheduler | None = None
        self._extra: list[tuple[str, str, CronTrigger, Callable[[datetime], Awaitable[Any]]]] = []

    def add_cron(self, job_id: str, name: str, cron: str, on_tick: Callable[[datetime], Awaitable[Any]],
                 setting: str = "DIGEST_CRON") -> None:
        """Another job on the same scheduler (the weekly digest): ``on_tick(scheduled time)`` at ``cron`` in
        TIMEZONE. ValueError naming ``setting`` when the expression is not valid crontab syntax."""
        try:
            trigger = parse_cron(cron, self.timezone)
        except ValueError as error:
            raise ValueError(str(error).replace("REINDEX_CRON", setting)) from None

        async def fire() -> Any:
            tick = latest_fire_time(trigger, datetime.now(trigger.timezone))
            logger.info("%s fired for tick %s", job_id, tick.isoformat())
            return await on_tick(tick)

        self._extra.append((job_id, name, trigger, fire))
        if self._scheduler is not None:
            self._add_extra(self._scheduler, self._extra[-1])

    def _add_extra(self, scheduler: AsyncIOScheduler, job: tuple) -> None:
        job_id, name, trigger, fire = job
        scheduler.add_job(fire, trigger, id=job_id, name=name, max_instances=1, coalesce=True,
                          misfire_grace_time=self.misfire_grace_seconds, replace_existing=True)

    async def fire(self, now: datetime | None = None) -> Any:
        """Run one tick: the scheduled time is the latest cron time not after ``now``."""
        now = now or datetime.now(self.trigger.timezone)
        tick = latest_fire_time(self.trigger, now)
        logger.info("reindex schedule fired for tick %s", tick.isoformat())
        return await self._on_tick(tick)

    def start(self) -> None:
        if self._scheduler is not None:
            return
        scheduler = AsyncIOScheduler(timezone=self.trigger.timezone)
        scheduler.add_job(
            self.fire,
            self.trigger,
            id=JOB_ID,
            name="reindex (crawl, index, validate, swap)",
            max_instances=1,
            coalesce=True,
            misfire_grace_time=self.misfire_grace_seconds,
            replace_existing=True,
        )
        for job in self._extra:
            self._add_extra(scheduler, job)
        scheduler.start()
        self._scheduler = scheduler
        logger.info("reindex scheduled with cron %r in %s; next run %s", self.cron, self.timezone,
                    self.next_run_time())

    @property
    def running(self) -> bool:
        return self._scheduler is not None and self._scheduler.running

    def job(self) -> Any:
        return self._scheduler.get_job(JOB_ID) if self._scheduler else None

    def next_run_time(self) -> datetime | None:
        job = self.job()
        if job is not None:
            return job.next_run_time
        return self.trigger.get_next_fire_time(None, datetime.now(self.trigger.timezone))

    def shutdown(self) -> None:
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None and scheduler.running:
            scheduler.shutdown(wait=False)
