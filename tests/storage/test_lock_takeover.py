"""A Redis lock whose holder died on this machine is taken over at once; a live or remote holder keeps it."""

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
import redis.asyncio as aioredis

from storage.locks import RedisLock

ROOT = Path(__file__).resolve().parents[2]

# a process that takes the lock (TTL 5 minutes: only a take-over can free it within a test) and keeps living
HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    import redis.asyncio as r
    from storage.locks import RedisLock

    async def main():
        client = r.Redis.from_url(sys.argv[1], socket_timeout=5)
        assert await RedisLock(client, sys.argv[2], ttl_seconds=300).acquire()
        print("held", flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
    """
)


@pytest.fixture
async def client(redis_url):
    c = aioredis.Redis.from_url(redis_url, socket_timeout=5)
    yield c
    await c.aclose()


@pytest.fixture
async def holder(redis_url):
    """``start(key)`` → a live process holding ``key``; every one started is killed at the end."""
    procs: list[asyncio.subprocess.Process] = []

    async def start(key: str) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HOLDER, redis_url, key, stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        procs.append(proc)
        assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"held"
        return proc

    yield start
    for proc in procs:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), 30)


async def _kill_9(proc: asyncio.subprocess.Process) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), 30)


async def test_the_lock_of_a_killed_holder_on_this_host_is_taken_over_at_once(client, holder) -> None:
    proc = await holder("t:dead")
    await _kill_9(proc)
    left = await client.get("t:dead")
    assert left is not None and await client.pttl("t:dead") > 60_000  # the TTL alone would keep it for minutes

    lock = RedisLock(client, "t:dead", ttl_seconds=5)
    assert await lock.acquire()
    assert lock.held and lock.taken_over_from == f"process {proc.pid} on {socket.gethostname()}"
    assert await client.get("t:dead") == lock.token.encode()
    await lock.release()
    assert await client.get("t:dead") is None


async def test_a_live_holder_keeps_its_lock(client, holder) -> None:
    proc = await holder("t:live")
    value = await client.get("t:live")
    lock = RedisLock(client, "t:live", ttl_seconds=5)
    assert not await lock.acquire()
    assert lock.taken_over_from is None
    assert await client.get("t:live") == value
    assert await lock.owner() == f"{socket.gethostname()}:{proc.pid}"


async def test_a_holder_on_another_host_is_never_taken_over(client, holder) -> None:
    proc = await holder("t:remote")
    await _kill_9(proc)
    # the same dead pid, but written by another machine: its pids cannot be checked from here
    remote = json.dumps({**json.loads(await client.get("t:remote")), "host": "replica-elsewhere"})
    await client.set("t:remote", remote, px=60_000)
    assert not await RedisLock(client, "t:remote", ttl_seconds=5).acquire()
    assert (await client.get("t:remote")).decode() == remote


async def test_a_reused_pid_does_not_keep_a_dead_holder_s_lock(client, holder) -> None:
    proc = await holder("t:reused")
    await _kill_9(proc)
    # the dead holder's pid now belongs to a live process that started at another time (here: this test's own)
    value = json.loads(await client.get("t:reused"))
    value["pid"] = os.getpid()
    await client.set("t:reused", json.dumps(value), px=60_000)
    lock = RedisLock(client, "t:reused", ttl_seconds=5)
    assert await lock.acquire()
    assert lock.taken_over_from == f"process {os.getpid()} on {socket.gethostname()}"
    await lock.release()


async def test_of_two_processes_that_find_the_holder_dead_one_takes_the_lock(client, holder) -> None:
    await _kill_9(await holder("t:race"))
    contenders = [RedisLock(client, "t:race", ttl_seconds=5) for _ in range(4)]
    won = await asyncio.gather(*(c.acquire() for c in contenders))
    assert sorted(won) == [False, False, False, True]
    winner = contenders[won.index(True)]
    assert await client.get("t:race") == winner.token.encode()
    await winner.release()
