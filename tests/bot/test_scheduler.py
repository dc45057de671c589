"""The reindex schedule: cron in the configured time zone, one instance, coalescing, tick naming."""

from __future__ import annotations

import asyncio
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.scheduler import ReindexSchedule, latest_fire_time, parse_cron

JAKARTA = ZoneInfo("Asia/Jakarta")


def test_default_cron_is_02_00_jakarta_and_ticks_are_named_by_schedule_time() -> None:
    trigger = parse_cron("0 2 * * *", "Asia/Jakarta")
    late = datetime(2026, 3, 5, 2, 7, 31, tzinfo=JAKARTA)  # fired 7 minutes late
    assert latest_fire_time(trigger, late) == datetime(2026, 3, 5, 2, 0, tzinfo=JAKARTA)
    early = datetime(2026, 3, 5, 1, 59, tzinfo=JAKARTA)
    assert latest_fire_time(trigger, early) == datetime(2026, 3, 4, 2, 0, tzinfo=JAKARTA)
    assert trigger.get_next_fire_time(None, early).utcoffset().total_seconds() == 7 * 3600
    every5 = parse_cron("*/5 * * * *", "UTC")
    assert latest_fire_time(every5, datetime(2026, 3, 5, 2, 14, 59, tzinfo=ZoneInfo("UTC"))).minute == 10


def test_bad_cron_and_zone_say_how_to_fix() -> None:
    with pytest.raises(ValueError, match="REINDEX_CRON='every night'.*'0 2 \\* \\* \\*'"):
        parse_cron("every night", "Asia/Jakarta")
    with pytest.raises(ValueError, match="TIMEZONE='Mars/Base'"):
        parse_cron("0 2 * * *", "Mars/Base")


async def test_the_registered_job_has_the_safety_options_and_fires_the_tick() -> None:
    ticks: list[datetime] = []

    async def on_tick(tick: datetime) -> str:
        ticks.append(tick)
        return "ran"

    schedule = ReindexSchedule(on_tick, cron="0 2 * * *", timezone="Asia/Jakarta", misfire_grace_seconds=900)
    schedule.start()
    try:
        job = schedule.job()
        assert job.max_instances == 1 and job.coalesce is True and job.misfire_grace_time == 900
        nxt = schedule.next_run_time()
        assert (nxt.hour, nxt.minute) == (2, 0) and nxt.utcoffset().total_seconds() == 7 * 3600
        # trigger the scheduler's own job function instead of waiting for 02:00
        assert await job.func() == "ran"
        assert len(ticks) == 1 and ticks[0].hour == 2 and ticks[0] <= datetime.now(JAKARTA)
    finally:
        schedule.shutdown()
    assert not schedule.running


async def test_the_scheduler_really_fires_on_its_own() -> None:
    fired = asyncio.Event()

    async def on_tick(tick: datetime) -> None:
        fired.set()

    schedule = ReindexSchedule(on_tick, cron="* * * * *", timezone="UTC")
    schedule.start()
    try:
        job = schedule.job()
        job.modify(next_run_time=datetime.now(ZoneInfo("UTC")))  # due now
        schedule._scheduler.wakeup()
        await asyncio.wait_for(fired.wait(), 10)
    finally:
        schedule.shutdown()
