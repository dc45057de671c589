"""Locks and claims on a real Redis and on real files."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest
import redis.asyncio as aioredis

from storage.locks import FileClaims, FileLock, RedisClaims, RedisLock, holding, make_lock


@pytest.fixture
async def client(redis_url):
    c = aioredis.Redis.from_url(redis_url, socket_timeout=5)
    yield c
    await c.aclose()


async def test_redis_lock_is_exclusive_and_token_checked(client) -> None:
    a = RedisLock(client, "t:lock", ttl_seconds=5)
    b = RedisLock(client, "t:lock", ttl_seconds=5)
    assert await a.acquire()
    assert not await b.acquire()
    assert await b.owner() is not None
    # b never held it: its release must not delete a's lock
    assert not await b.release()
    assert await client.get("t:lock") is not None
    assert await a.release()
    assert await client.get("t:lock") is None
    assert await b.acquire()
    await b.release()


async def test_redis_lock_is_renewed_while_held(client) -> None:
    lock = RedisLock(client, "t:renew", ttl_seconds=0.6, renew_every_seconds=0.1)
    assert await lock.acquire()
    await asyncio.sleep(1.5)  # longer than the TTL: only the renewal keeps it alive
    assert await client.get("t:renew") is not None
    assert lock.held
    await lock.release()


async def test_an_expired_lock_taken_over_is_not_released_by_the_old_holder(client) -> None:
    old = RedisLock(client, "t:expire", ttl_seconds=0.3, renew_every_seconds=0.1)
    assert await old.acquire()
    # simulate a frozen holder: its renewal stops, the TTL runs out, someone else takes the lock
    old._renewer.cancel()
    await asyncio.sleep(0.5)
    new = RedisLock(client, "t:expire", ttl_seconds=5)
    assert await new.acquire()
    assert not await old.release()
    assert await client.get("t:expire") is not None
    await new.release()


async def test_renewal_notices_a_lost_lock(client) -> None:
    lock = RedisLock(client, "t:lost", ttl_seconds=5, renew_every_seconds=0.05)
    assert await lock.acquire()
    await client.set("t:lost", "someone-else")
    await asyncio.wait_for(lock.lost.wait(), 2)
    assert not lock.held
    assert not await lock.release()
    assert await client.get("t:lost") == b"someone-else"


async def test_a_killed_holder_on_another_host_leaves_a_lock_that_expires(redis_url, client) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, os, redis.asyncio as r
        from storage.locks import RedisLock
        async def main():
            c = r.Redis.from_url({redis_url!r})
            lock = RedisLock(c, "t:killed", ttl_seconds=1)
            assert await lock.acquire()
            os._exit(0)  # dies without releasing, like kill -9
        asyncio.run(main())
        """
    )
    await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script], check=True, timeout=60)
    # written on another machine, whose pids cannot be checked from here (this host's: tests/storage/test_lock_takeover)
    value = json.loads(await client.get("t:killed"))
    await client.set("t:killed", json.dumps({**value, "host": "replica-elsewhere"}), px=1000)
    contender = RedisLock(client, "t:killed", ttl_seconds=5)
    assert not await contender.acquire()
    await asyncio.sleep(1.2)
    assert await contender.acquire()
    await contender.release()


async def test_redis_claims_first_caller_wins(client) -> None:
    a, b = RedisClaims(client, "t:tick:"), RedisClaims(client, "t:tick:")
    results = await asyncio.gather(*[c.claim("2026-01-01T02:00", ttl_seconds=60) for c in (a, b, a, b)])
    assert sorted(results) == [False, False, False, True]
    assert await a.claim("2026-01-02T02:00", ttl_seconds=60)


async def test_file_lock_excludes_other_holders_and_dies_with_the_process(tmp_path) -> None:
    path = tmp_path / "locks" / "reindex.lock"
    a, b = FileLock(path), FileLock(path)
    assert await a.acquire()
    assert not await b.acquire()
    assert await b.owner() is not None
    await a.release()
    assert await b.owner() is None
    async with holding(b) as acquired:
        assert acquired
        assert not await FileLock(path).acquire()
    # a process that holds the lock and is killed frees it
    script = (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script, stdout=subprocess.PIPE)
    try:
        assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"held"
        assert not await FileLock(path).acquire()
    finally:
        proc.kill()
        await proc.wait()
    c = FileLock(path)
    assert await c.acquire()
    await c.release()


async def test_file_claims_first_caller_wins(tmp_path) -> None:
    claims = FileClaims(tmp_path / "ticks")
    assert await claims.claim("2026-01-01T02:00:00+07:00", ttl_seconds=60)
    assert not await claims.claim("2026-01-01T02:00:00+07:00", ttl_seconds=60)
    assert not await FileClaims(tmp_path / "ticks").claim("2026-01-01T02:00:00+07:00", ttl_seconds=60)


def test_make_lock_names_the_choices(tmp_path) -> None:
    with pytest.raises(ValueError, match="redis, file"):
        make_lock("zookeeper")
    with pytest.raises(ValueError, match="REDIS_URL"):
        make_lock("redis")
    assert isinstance(make_lock("file", path=tmp_path / "x.lock"), FileLock)
