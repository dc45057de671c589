"""Locks that keep one reindex running at a time, across processes.

- ``RedisLock``: ``SET key token NX PX ttl``; a background task renews the TTL while the lock is held; release
  and renewal are token-checked in Lua, so a process whose lock expired can never delete someone else's lock.
  The token names its holder (host, pid, the process's start time). A holder that dies (kill -9, out of memory) on
  *this* machine is seen dead and its lock taken over at once (``taken_over_from`` says whose); a holder on another
  machine cannot be checked, and its lock expires after its TTL.
- ``FileLock``: ``flock`` on a file under DATA_DIR, for a single machine without Redis. The kernel drops it when
  the process dies, so it can never go stale.
- ``RedisClaims`` / ``FileClaims``: "first one wins" markers (one run per schedule tick across replicas).

All of them share the small ``Lock`` / ``Claims`` interfaces below; ``make_lock`` and ``make_claims`` pick one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import json
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

from storage import keys

__all__ = [
    "Claims", "FileClaims", "FileLock", "Lock", "RedisClaims", "RedisLock", "holding", "make_claims", "make_lock",
]

logger = logging.getLogger(__name__)

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
# take over a dead holder's lock: only if it still holds exactly the value that was checked, so of two processes
# that both found the holder dead, one wins
_TAKE_OVER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _machine() -> dict[str, str | None]:
    """What tells this machine, and this pid namespace (a container), from another: pids are only comparable
    within one. ``boot`` and ``pidns`` are None where /proc does not have them."""
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = None
    return {"host": socket.gethostname(), "boot": _read("/proc/sys/kernel/random/boot_id"), "pidns": pidns}


def _process(pid: int) -> tuple[str, int] | None:
    """``(state, start time in clock ticks since boot)`` of ``pid`` from /proc/<pid>/stat, or None."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    fields = stat.rpartition(")")[2].split()  # the command name, in parentheses, may hold spaces
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def _holder(pid: int) -> dict[str, Any]:
    found = _process(pid)
    return {**_machine(), "pid": pid, "started": found[1] if found else None}


def _dead_holder(value: Any) -> str | None:
    """``"process <pid> on <host>"`` when the lock ``value`` was written by a process of this machine that is no
    longer alive; None when it lives, or cannot be checked (another machine or container, an unknown format)."""
    text = value.decode() if isinstance(value, bytes) else str(value)
    try:
        holder = json.loads(text)
        pid = int(holder["pid"])
        same_machine = all(holder.get(key) == mine for key, mine in _machine().items())
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not same_machine or pid <= 0:
        return None
    who = f"process {pid} on {holder['host']}"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return who
    except PermissionError:  # alive, another user's
        pass
    now = _process(pid)
    if now is None:
        return None
    state, started = now
    if state in ("Z", "X"):  # exited, not yet reaped by its parent
        return who
    if holder.get("started") is not None and started != holder["started"]:
        return who  # the pid was reused by a newer process
    return None


class Lock(Protocol):
    """A non-blocking, process-wide mutual exclusion."""

    name: str
    taken_over_from: str | None  # set by ``acquire`` when it took over the lock of a dead holder: whose it was

    @property
    def held(self) -> bool: ...

    async def acquire(self) -> bool: ...

    async def release(self) -> bool: ...

    async def owner(self) -> str | None: ...


class Claims(Protocol):
    """Markers that only the first caller can set (per key), e.g. one run per schedule tick."""

    async def claim(self, key: str, *, ttl_seconds: float) -> bool: ...


class RedisLock:
    """A Redis lock with a TTL, automatic renewal and a token-checked release.

    ``client`` is a ``redis.asyncio.Redis``. The renewal task extends the TTL every ``ttl/3`` seconds; when a
    renewal finds the lock gone or owned by someone else, ``lost`` is set and ``held`` turns false.

    The token is JSON naming the holder: ``{"owner", "host", "boot", "pidns", "pid", "started", "token"}``. When
    ``acquire`` finds the lock held by a process of this machine (same host, boot and pid namespace) that is dead
    (no such pid, a zombie, or a pid since reused by a process that started later), it takes the lock over in one
    compare-and-set and sets ``taken_over_from`` (``"process <pid> on <host>"``) for the caller to close that
    holder's run.
    """

    def __init__(
        self,
        client: Any,
        key: str,
        *,
        ttl_seconds: float = 300.0,
        renew_every_seconds: float | None = None,
        owner_label: str | None = None,
        timeout_seconds: float = 5.0,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self.client = client
        self.name = key
        self.ttl_ms = int(ttl_seconds * 1000)
        self.renew_every = renew_every_seconds or max(0.05, ttl_seconds / 3)
        self.owner_label = owner_label or f"{socket.gethostname()}:{os.getpid()}"
        self.timeout = timeout_seconds
        self.token: str | None = None
        self.taken_over_from: str | None = None
        self.lost = asyncio.Event()
        self._renewer: asyncio.Task[None] | None = None

    @property
    def held(self) -> bool:
        return self.token is not None and not self.lost.is_set()

    async def acquire(self) -> bool:
        """Try once; True when this instance now holds the lock (renewed in the background)."""
        if self.token is not None:
            return self.held
        token = json.dumps({"owner": self.owner_label, **_holder(os.getpid()), "token": uuid.uuid4().hex},
                           separators=(",", ":"))
        ok = await asyncio.wait_for(self.client.set(self.name, token, nx=True, px=self.ttl_ms), self.timeout)
        dead = None
        if not ok:
            value = await asyncio.wait_for(self.client.get(self.name), self.timeout)
            dead = None if value is None else _dead_holder(value)
            if dead is None:
                return False
            ok = await asyncio.wait_for(
                self.client.eval(_TAKE_OVER, 1, self.name, value, token, self.ttl_ms), self.timeout)
            if not ok:
                return False
            logger.warning("lock %s was held by %s, which died; taken over", self.name, dead)
        self.token = token
        self.taken_over_from = dead
        self.lost.clear()
        self._renewer = asyncio.create_task(self._renew_loop(), name=f"renew {self.name}")
        logger.debug("acquired lock %s", self.name)
        return True

    async def extend(self) -> bool:
        """Reset the TTL if this instance still owns the lock."""
        if self.token is None:
            return False
        result = await asyncio.wait_for(
            self.client.eval(_RENEW, 1, self.name, self.token, self.ttl_ms), self.timeout
        )
        return bool(result)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.renew_every)
            try:
                if not await self.extend():
                    logger.warning("lock %s was lost (expired or taken over); stopping renewal", self.name)
                    self.lost.set()
                    return
            except asyncio.CancelledError:
                raise
            except Exception as error:  # boundary: the renewal loop keeps trying through a Redis hiccup until the TTL runs out
                logger.warning("could not renew lock %s: %s", self.name, error)

    async def release(self) -> bool:
        """Delete the lock only if it is still ours. Returns whether it was ours."""
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        token, self.token = self.token, None
        if token is None:
            return False
        try:
            result = await asyncio.wait_for(self.client.eval(_RELEASE, 1, self.name, token), self.timeout)
        except Exception as error:  # boundary: release runs in finally blocks and must not mask their outcome; the lock expires by itself
            logger.warning("could not release lock %s (it expires by itself): %s", self.name, error)
            return False
        return bool(result)

    async def owner(self) -> str | None:
        value = await asyncio.wait_for(self.client.get(self.name), self.timeout)
        if value is None:
            return None
        text = value.decode() if isinstance(value, bytes) else str(value)
        try:
            return str(json.loads(text)["owner"])
        except (ValueError, TypeError, KeyError):
            return text.rsplit(":", 1)[0]  # a token written by an older version: "host:pid:uuid"


class FileLock:
    """``flock`` on ``path``: one holder per machine; released by the kernel if the process dies."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        self.taken_over_from: str | None = None  # never: the kernel frees a dead holder's flock itself
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def _try(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.uname().nodename}:{os.getpid()} {time.time():.0f}\n".encode())
        self._fd = fd
        return True

    async def acquire(self) -> bool:
        if self._fd is not None:
            return True
        return await asyncio.get_running_loop().run_in_executor(None, self._try)

    async def release(self) -> bool:
        fd, self._fd = self._fd, None
        if fd is None:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        return True

    async def owner(self) -> str | None:
        def read() -> str | None:
            probe = FileLock(self.path)
            if probe._try():
                probe._release_sync()
                return None
            try:
                return self.path.read_text(encoding="utf-8").split(" ")[0] or "unknown"
            except OSError:
                return "unknown"

        if self._fd is not None:
            return f"{os.uname().nodename}:{os.getpid()}"
        return await asyncio.get_running_loop().run_in_executor(None, read)

    def _release_sync(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class RedisClaims:
    """``SET key 1 NX EX ttl``: the first caller for a key wins, everyone else gets False."""

    def __init__(self, client: Any, prefix: str, *, timeout_seconds: float = 5.0) -> None:
        self.client = client
        self.prefix = prefix
        self.timeout = timeout_seconds

    async def claim(self, key: str, *, ttl_seconds: float) -> bool:
        owner = f"{os.uname().nodename}:{os.getpid()}"
        ok = await asyncio.wait_for(
            self.client.set(f"{self.prefix}{key}", owner, nx=True, ex=max(1, int(ttl_seconds))), self.timeout
        )
        return bool(ok)


class FileClaims:
    """Exclusive-create marker files under ``directory`` (one machine, no Redis). Old markers are pruned."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def _claim(self, key: str, ttl_seconds: float) -> bool:
        self.directory.mkdir(parents=True, exist_ok=True)
        now = time.time()
        for old in self.directory.glob("*.claim"):
            with contextlib.suppress(OSError):
                if float(old.read_text(encoding="utf-8").strip() or 0) < now:
                    old.unlink()
        path = self.directory / (re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".claim")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"{now + ttl_seconds:.0f}\n")
        return True

    async def claim(self, key: str, *, ttl_seconds: float) -> bool:
        return await asyncio.get_running_loop().run_in_executor(None, self._claim, key, ttl_seconds)


def make_lock(kind: str, *, client: Any = None, key: str = keys.REINDEX_LOCK, path: Path | None = None,
              ttl_seconds: float = 300.0) -> Lock:
    """Pick a lock: ``redis`` (needs ``client``) or ``file`` (needs ``path``)."""
    if kind == "redis":
        if client is None:
            raise ValueError("a redis lock needs a redis.asyncio client; set REDIS_URL or use the file lock")
        return RedisLock(client, key, ttl_seconds=ttl_seconds)
    if kind == "file":
        if path is None:
            raise ValueError("a file lock needs a path under DATA_DIR")
        return FileLock(path)
    raise ValueError(f"unknown lock kind {kind!r}; choose one of: redis, file")


def make_claims(kind: str, *, client: Any = None, prefix: str = keys.REINDEX_TICK_PREFIX,
                directory: Path | None = None) -> Claims:
    """Pick tick claims: ``redis`` (needs ``client``) or ``file`` (needs ``directory``)."""
    if kind == "redis":
        if client is None:
            raise ValueError("redis claims need a redis.asyncio client; set REDIS_URL or use file claims")
        return RedisClaims(client, prefix)
    if kind == "file":
        if directory is None:
            raise ValueError("file claims need a directory under DATA_DIR")
        return FileClaims(directory)
    raise ValueError(f"unknown claims kind {kind!r}; choose one of: redis, file")


@contextlib.asynccontextmanager
async def holding(lock: Lock) -> AsyncIterator[bool]:
    """``async with holding(lock) as acquired:`` — releases on exit when it was acquired."""
    acquired = await lock.acquire()
    try:
        yield acquired
    finally:
        if acquired:
            await lock.release()
