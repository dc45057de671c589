"""HTTP for the crawler: a resolver that refuses private addresses, per-host politeness, retries with backoff,
conditional GET, manual redirects, body size and content-type limits. Every request has a timeout."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import ResolveResult
from aiohttp.resolver import ThreadedResolver

from sync_jobs.decode import media_type
from sync_jobs.errors import CrawlError
from sync_jobs.urls import host_key, ip_literal, is_public_ip, resolve_link

__all__ = ["BlockedAddress", "FetchResult", "Fetcher", "SafeResolver"]

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 520, 521, 522, 523, 524})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class BlockedAddress(CrawlError, OSError):
    """The host resolves only to private, loopback or otherwise non-public addresses (still an OSError: aiohttp's
    resolver and the callers that catch OSError see it as one)."""


class SafeResolver(ThreadedResolver):
    """Resolves through the system resolver and drops non-public addresses unless private networks are allowed.
    aiohttp uses it for every connection, so redirects cannot reach a private address either."""

    def __init__(self, allow_private: bool) -> None:
        super().__init__()
        self.allow_private = allow_private

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        results = await super().resolve(host, port, family)
        if self.allow_private:
            return results
        public = [r for r in results if is_public_ip(r["host"])]
        if not public:
            raise BlockedAddress(f"{host} resolves to a private or local address; set "
                                 "CRAWL_ALLOW_PRIVATE_NETWORKS=true only if you really mean to crawl it")
        return public


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One URL's outcome. ``kind``: ok, not_modified, redirect, gone, http_error, failed, skipped."""

    url: str
    kind: str
    status: int = 0
    final_url: str = ""
    body: bytes = b""
    content_type: str = ""
    etag: str = ""
    last_modified: str = ""
    location: str = ""
    reason: str = ""
    attempts: int = 1


class Fetcher:
    """Shared HTTP session for one crawl. Use as ``async with Fetcher(...) as fetcher``."""

    def __init__(self, *, user_agent: str, timeout: float, max_bytes: int, retries: int, delay: float,
                 concurrency: int, allow_private: bool, allowed_types: frozenset[str], max_redirects: int,
                 backoff_base: float = 0.5, origin_overrides: dict[str, str] | None = None) -> None:
        self.user_agent = user_agent
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.retries = retries
        self.delay = delay
        self.concurrency = concurrency
        self.allow_private = allow_private
        self.allowed_types = allowed_types
        self.backoff_base = backoff_base
        self.max_redirects = max_redirects
        self.host_delays: dict[str, float] = {}
        # public origin -> the origin actually connected to (the bundled demo site that this process serves on
        # loopback under a fake public name). Only these origins may reach a loopback address without
        # allow_private; every URL the crawl sees and stores keeps the public origin.
        self.origin_overrides = {_origin_of(k): v.rstrip("/") for k, v in (origin_overrides or {}).items()}
        self._host_locks: dict[str, asyncio.Lock] = {}
        self._host_next: dict[str, float] = {}
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Fetcher:
        connector = aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=self.concurrency,
                                         resolver=SafeResolver(self.allow_private), ttl_dns_cache=300)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.timeout, connect=self.timeout, sock_read=self.timeout),
            headers={"User-Agent": self.user_agent, "Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,"
                     "application/xml;q=0.8,*/*;q=0.5", "Accept-Language": "id,en;q=0.8"},
            auto_decompress=True,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _polite(self, url: str) -> None:
        host = host_key(url)
        delay = max(self.delay, self.host_delays.get(host, 0.0))
        if delay <= 0:
            return
        lock = self._host_locks.setdefault(host, asyncio.Lock())
        async with lock:
            now = time.monotonic()
            wait = self._host_next.get(host, 0.0) - now
            if wait > 0:
                await asyncio.sleep(wait)
            self._host_next[host] = max(now, self._host_next.get(host, 0.0)) + delay

    def _route(self, url: str) -> str:
        """The URL to connect to: ``url`` itself, or on the overriding origin when its origin has one."""
        origin = _origin_of(url)
        target = self.origin_overrides.get(origin)
        if target is None:
            return url
        return target + url[len(origin):] if url.lower().startswith(origin) else url

    def _address_problem(self, url: str) -> str | None:
        literal = ip_literal(url)
        if literal and not self.allow_private and not is_public_ip(literal):
            return "private address (set CRAWL_ALLOW_PRIVATE_NETWORKS=true to allow)"
        return None

    async def _once(self, url: str, headers: dict[str, str], accept_any: bool) -> FetchResult:
        assert self._session is not None, "use the Fetcher as an async context manager"
        await self._polite(url)
        async with self._session.get(self._route(url), headers=headers, allow_redirects=False) as resp:
            status = resp.status
            ctype = resp.headers.get("Content-Type", "")
            common = {"status": status, "final_url": url, "content_type": ctype,
                      "etag": resp.headers.get("ETag", ""), "last_modified": resp.headers.get("Last-Modified", "")}
            if status in REDIRECT_STATUSES:
                return FetchResult(url, "redirect", location=resp.headers.get("Location", ""), **common)
            if status == 304:
                return FetchResult(url, "not_modified", **common)
            if status in (404, 410):
                return FetchResult(url, "gone", reason=f"HTTP {status}", **common)
            if status in RETRY_STATUSES:
                retry_after = resp.headers.get("Retry-After", "")
                return FetchResult(url, "failed", reason=f"HTTP {status}", location=retry_after, **common)
            if status >= 400:
                return FetchResult(url, "http_error", reason=f"HTTP {status}", **common)
            if status != 200:
                return FetchResult(url, "skipped", reason=f"HTTP {status}", **common)
            kind = media_type(ctype)
            if not accept_any and kind and kind not in self.allowed_types:
                return FetchResult(url, "skipped", reason=f"content type {kind}", **common)
            length = resp.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > self.max_bytes:
                return FetchResult(url, "skipped", reason=f"too large ({length} bytes)", **common)
            chunks: list[bytes] = []
            size = 0
            async for piece in resp.content.iter_chunked(65536):
                size += len(piece)
                if size > self.max_bytes:
                    return FetchResult(url, "skipped", reason=f"too large (over {self.max_bytes} bytes)", **common)
                chunks.append(piece)
            return FetchResult(url, "ok", body=b"".join(chunks), **common)

    def _retry_wait(self, attempt: int, retry_after: str) -> float:
        wait = self.backoff_base * (2 ** attempt)
        if retry_after:
            if retry_after.isdigit():
                wait = max(wait, float(retry_after))
            else:
                parsed = email.utils.parsedate_to_datetime(retry_after) if retry_after else None
                if parsed is not None:
                    wait = max(wait, parsed.timestamp() - time.time())
        return min(max(wait, 0.0), 30.0, self.timeout)

    async def get(self, url: str, *, etag: str = "", last_modified: str = "", accept_any: bool = False,
                  retries: int | None = None) -> FetchResult:
        """GET with retries on 5xx/429/timeouts/connection errors. Redirects are returned, not followed."""
        problem = self._address_problem(url)
        if problem:
            return FetchResult(url, "skipped", reason=problem)
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        tries = (self.retries if retries is None else retries) + 1
        result = FetchResult(url, "failed", reason="not attempted")
        for attempt in range(tries):
            try:
                result = await self._once(url, headers, accept_any)
            except BlockedAddress as error:
                return FetchResult(url, "skipped", reason=str(error))
            except aiohttp.ClientConnectorError as error:
                if isinstance(error.os_error, BlockedAddress):
                    return FetchResult(url, "skipped", reason=str(error.os_error))
                result = FetchResult(url, "failed", reason=f"connection failed: {error.os_error or error}")
            except TimeoutError:
                result = FetchResult(url, "failed", reason=f"timed out after {self.timeout:g}s")
            except (aiohttp.ClientError, OSError) as error:
                result = FetchResult(url, "failed", reason=f"{type(error).__name__}: {error}")
            if result.kind != "failed":
                return FetchResult(**{**_asdict(result), "attempts": attempt + 1})
            if attempt + 1 < tries:
                wait = self._retry_wait(attempt, result.location if result.status else "")
                logger.debug("retrying %s in %.2fs (%s)", url, wait, result.reason)
                await asyncio.sleep(wait)
        return FetchResult(**{**_asdict(result), "attempts": tries, "location": ""})

    async def follow(self, url: str, allowed: Callable[[str], bool], **kwargs: object
                     ) -> tuple[FetchResult, list[str]]:
        """GET following redirects that stay where ``allowed`` says (robots.txt, sitemaps)."""
        chain = [url]
        result = await self.get(url, **kwargs)  # type: ignore[arg-type]
        while result.kind == "redirect" and len(chain) <= self.max_redirects:
            target = resolve_link(url, result.location)
            if not target or not allowed(target):
                return FetchResult(url, "skipped", reason="redirect outside the allowed hosts"), chain
            url = target
            chain.append(url)
            result = await self.get(url, **kwargs)  # type: ignore[arg-type]
        return result, chain


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _asdict(result: FetchResult) -> dict:
    return {name: getattr(result, name) for name in FetchResult.__slots__}
