"""A reindex killed with `kill -9` holds the Redis lock no longer than its life on this host: the next run takes
the lock over, closes the dead run as interrupted and runs. A live holder, or one on another host, is waited for."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot import wiring
from storage import keys
from storage.redis_guard import connect_redis
from storage.runs import RunStore
from tests.auxil.reindex_site import ops_settings

pytestmark = pytest.mark.slow  # real reindex runs and a killed child process

ROOT = Path(__file__).resolve().parents[2]

# what a reindex process has done by the time it crawls: its run is RUNNING and it holds the lock (the settings'
# TTL, 5 minutes); then it waits to be killed
RUNNING_REINDEX = textwrap.dedent(
    """
    import asyncio, sys
    import redis.asyncio as r
    from storage.locks import RedisLock
    from storage.runs import RunStore

    async def main():
        run = RunStore(sys.argv[3]).start("schedule")
        client = r.Redis.from_url(sys.argv[1], socket_timeout=5)
        assert await RedisLock(client, sys.argv[2], ttl_seconds=300).acquire()
        print(run.run_id, flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
    """
)


@pytest.fixture
async def reindexing(redis_url, warm_data_dir):
    """``start()`` → (a live process in the middle of a reindex, its run id); all are killed at the end."""
    procs: list[asyncio.subprocess.Process] = []

    async def start() -> tuple[asyncio.subprocess.Process, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", RUNNING_REINDEX, redis_url, keys.REINDEX_LOCK, str(warm_data_dir / "runs.sqlite3"),
            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        procs.append(proc)
        run_id = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode().strip()
        assert run_id
        return proc, run_id

    yield start
    for proc in procs:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), 30)


@pytest.fixture
async def redis_client(redis_url):
    client = connect_redis(redis_url)
    yield client
    await client.aclose()


def _settings(data_dir, sample_site, redis_url):
    settings = ops_settings(data_dir, sample_site, redis_url=redis_url)
    assert settings.ops.lock_ttl_seconds >= 300  # an expired TTL cannot be what lets the next run in
    return settings


async def test_the_next_reindex_takes_over_the_lock_of_a_killed_one_and_runs(
    sample_site, warm_data_dir, redis_url, redis_client, reindexing
) -> None:
    settings = _settings(warm_data_dir, sample_site, redis_url)
    proc, dead_run = await reindexing()
    os.kill(proc.pid, signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), 30)
    assert await redis_client.get(keys.REINDEX_LOCK) is not None

    run = await wiring.build_reindex_job(settings, redis=redis_client).run("admin")
    assert run.status == "SUCCESS", run.error
    dead = RunStore(settings.data_dir / "runs.sqlite3").get(dead_run)
    assert dead.status == "ABORTED" and dead.ended_at
    assert dead.error.startswith(f"interrupted: process {proc.pid} on {socket.gethostname()} died"), dead.error
    assert await redis_client.get(keys.REINDEX_LOCK) is None  # released by the run that took it over


async def test_start_up_recovery_closes_a_killed_run_at_once(
    sample_site, warm_data_dir, redis_url, redis_client, reindexing
) -> None:
    settings = _settings(warm_data_dir, sample_site, redis_url)
    proc, dead_run = await reindexing()
    os.kill(proc.pid, signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), 30)

    result = await wiring.build_reindex_job(settings, redis=redis_client).recover()
    assert result["recovered"] and result["aborted_runs"] == [dead_run]
    dead = RunStore(settings.data_dir / "runs.sqlite3").get(dead_run)
    assert dead.status == "ABORTED" and f"process {proc.pid}" in dead.error


async def test_a_live_reindex_keeps_the_lock_and_the_next_one_is_skipped(
    sample_site, warm_data_dir, redis_url, redis_client, reindexing
) -> None:
    settings = _settings(warm_data_dir, sample_site, redis_url)
    proc, live_run = await reindexing()
    run = await wiring.build_reindex_job(settings, redis=redis_client).run("admin")
    assert run.status == "SKIPPED" and f"{socket.gethostname()}:{proc.pid}" in run.error, run.error
    assert RunStore(settings.data_dir / "runs.sqlite3").get(live_run).status == "RUNNING"


async def test_a_reindex_on_another_host_keeps_the_lock_until_its_ttl(
    sample_site, warm_data_dir, redis_url, redis_client, reindexing
) -> None:
    settings = _settings(warm_data_dir, sample_site, redis_url)
    proc, remote_run = await reindexing()
    os.kill(proc.pid, signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), 30)
    # as if it had run on another replica's machine: whether its pid lives cannot be checked from here
    value = json.loads(await redis_client.get(keys.REINDEX_LOCK))
    remote = json.dumps({**value, "host": "replica-elsewhere"})
    await redis_client.set(keys.REINDEX_LOCK, remote, px=300_000)

    run = await wiring.build_reindex_job(settings, redis=redis_client).run("admin")
    assert run.status == "SKIPPED", run.error
    assert await redis_client.get(keys.REINDEX_LOCK) == remote
    assert RunStore(settings.data_dir / "runs.sqlite3").get(remote_run).status == "RUNNING"
