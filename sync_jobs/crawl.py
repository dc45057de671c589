"""The crawler: seeds and sitemaps → fetch (politely, safely, incrementally) → extract → site-wide clean-up →
chunk → one atomic commit to the document store.

Incremental rules: a page answering 304, or the same bytes, or the same extracted documents, changes nothing
downstream. A page that is gone (404/410, noindex, moved away) at two consecutive crawls is removed; a transient
error (timeout, 5xx, 403) removes nothing. A site that is down (no page answered at all) fails the crawl and leaves
the store untouched.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from storage.docstore import DocChanges, DocumentStore, PageState
from storage.models import Chunk, Document
from sync_jobs.chunking import chunk_document
from sync_jobs.extract import HTML_TYPES, PDF_TYPES, PageExtract, parse_page
from sync_jobs.fetch import Fetcher, FetchResult
from sync_jobs.postprocess import postprocess
from sync_jobs.sitemaps import parse_robots, parse_sitemap, sitemap_candidates
from sync_jobs.urls import (
    HostSet,
    PathScope,
    clean_url,
    excluded_reason,
    host_key,
    is_listing,
    normalize_url,
    resolve_link,
)

__all__ = ["CrawlConfig", "CrawlReport", "crawl_site"]

logger = logging.getLogger(__name__)

_MAX_SITEMAPS = 60
_EXTRACT_TIMEOUT = 120.0
_SOFT_404 = re.compile(r"^(?:error\s*)?404\b|\bnot found\b|tidak ditemukan|\bhalaman tidak ada\b|"
                       r"page (?:does not|doesn't) exist", re.IGNORECASE)
_DOWN_AFTER = 5  # failed requests in a row (with no answer yet) before the site counts as down
_ROBOTS_DISALLOWED = "disallowed by robots.txt"


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    """Everything one crawl needs (built from Settings by ``bot.wiring.build_crawl_config``)."""

    seeds: tuple[str, ...]
    allowed_domains: tuple[str, ...] = ()  # hosts besides the seeds': host (ports 80/443 only) or host:port
    allowed_path_prefixes: tuple[str, ...] = ()  # URL path prefixes; empty = the seeds' own paths
    allow_private: bool = False
    delay: float = 0.5
    max_pages: int = 2000
    max_depth: int = 8
    concurrency: int = 4
    timeout: float = 20.0
    deadline: float = 1800.0
    max_bytes: int = 15_000_000
    retries: int = 2
    max_redirects: int = 5  # redirects followed in a row from one URL, counted across the re-queued hops
    user_agent: str = "prodi-bot/0.1 (+https://github.com/prodi-bot/prodi-bot)"
    chunk_target_tokens: int = 200
    chunk_overlap: float = 0.2
    chunk_max_tokens: int = 300
    backoff_base: float = 0.5
    use_sitemaps: bool = True
    misses_to_remove: int = 2
    robots_5xx: str = "disallow"  # RFC 9309: a robots.txt answering 5xx means "disallow everything"; or "allow"
    # public origin -> origin actually connected to: only for the bundled demo site that this process serves on
    # loopback under a fake public name (stored URLs keep the public origin; see bot.wiring.crawl_target)
    origin_overrides: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("a crawl needs at least one seed URL (SITE_SEEDS or --seed)")
        for seed in self.seeds:
            if urlsplit(seed).scheme not in ("http", "https") or not urlsplit(seed).hostname:
                raise ValueError(f"seed {seed!r} is not an http(s) URL; write it like https://prodi.example.ac.id/")
        if self.robots_5xx not in ("disallow", "allow"):
            raise ValueError(f"CRAWL_ROBOTS_5XX must be 'disallow' or 'allow', not {self.robots_5xx!r}")
        for prefix in self.allowed_path_prefixes:
            if not prefix.strip().startswith("/"):
                raise ValueError(f"SITE_ALLOWED_PATH_PREFIXES: {prefix!r} is not a URL path; write it like "
                                 "/informatika/")

    @property
    def hosts(self) -> HostSet:
        """The seeds' own hosts and SITE_ALLOWED_DOMAINS. A seed's host carries its port only when the seed names a
        port that is not the default (a bare host allows 80 and 443, so an http seed that redirects to https stays
        on the site); a seed on ``127.0.0.1:8123`` allows that port alone."""
        return HostSet([_seed_host(s) for s in self.seeds] + list(self.allowed_domains))

    @property
    def paths(self) -> PathScope:
        """SITE_ALLOWED_PATH_PREFIXES, or each seed's own directory (``/informatika/`` for
        ``https://uin.ac.id/informatika/``, ``…/informatika`` or ``…/informatika/index.php``); ``/`` allows the
        whole host."""
        return PathScope(list(self.allowed_path_prefixes) or [_seed_dir(s) for s in self.seeds])


@dataclass
class CrawlReport:
    """Counts per page and what happened to each URL. ``as_json()`` is the CLI contract."""

    fetched: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    removed: int = 0
    skipped: int = 0
    duration_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    skipped_urls: dict[str, str] = field(default_factory=dict)
    failed_urls: dict[str, str] = field(default_factory=dict)
    changed_urls: list[str] = field(default_factory=list)
    unchanged_urls: list[str] = field(default_factory=list)
    removed_urls: list[str] = field(default_factory=list)
    added_urls: list[str] = field(default_factory=list)  # the changed pages that were not in the store before
    failed_pages: list[dict] = field(default_factory=list)  # {url, status, error, retries} of each failed page
    site_down: bool = False
    robots_5xx: str = ""  # "<robots.txt URL> answered HTTP 5xx" when that stopped the crawl (RFC 9309)
    truncated: bool = False
    changes: DocChanges | None = None
    documents: int = 0
    chunks: int = 0

    @property
    def ok(self) -> bool:
        """False when the site was down (or its robots.txt answered 5xx) and nothing was committed."""
        return not self.site_down and not self.robots_5xx

    def as_json(self) -> dict:
        return {
            "pages": {"fetched": self.fetched, "changed": self.changed, "unchanged": self.unchanged,
                      "failed": self.failed, "removed": self.removed, "skipped": self.skipped},
            "duration_s": round(self.duration_s, 3),
            "errors": list(self.errors),
        }


@dataclass(frozen=True, slots=True)
class _Outcome:
    kind: str  # changed | unchanged | failed | skipped | gone | alias
    url: str
    state: PageState | None = None
    target: str = ""
    reason: str = ""
    responded: bool = False  # the server answered (any HTTP status)
    status: int = 0  # the last HTTP status (0: no answer)
    attempts: int = 0  # requests made for it (1 + retries)


def _seed_host(seed: str) -> str:
    parts = urlsplit(seed)
    try:
        explicit = parts.port
    except ValueError:
        explicit = None
    default = explicit is None or (parts.scheme, explicit) in (("http", 80), ("https", 443))
    return str(parts.hostname) if default else f"{parts.hostname}:{explicit}"


def _seed_dir(seed: str) -> str:
    """The directory a seed stands for: ``/informatika/`` for ``…/informatika/``, ``…/informatika`` (a pretty URL
    without its slash) and ``…/informatika/index.php`` (a file)."""
    path = urlsplit(seed).path or "/"
    if path.endswith("/"):
        return path
    head, _, last = path.rpartition("/")
    return head + "/" if "." in last else path + "/"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _signature(docs: tuple[Document, ...]) -> list[tuple[str, str]]:
    return sorted((d.doc_id, d.content_hash) for d in docs)


class _Crawl:
    def __init__(self, config: CrawlConfig, states: dict[str, PageState]) -> None:
        self.config = config
        self.states = states
        self.hosts = config.hosts
        self.paths = config.paths
        # (depth, order, url, redirects followed in a row to reach url)
        self.queue: asyncio.PriorityQueue[tuple[int, int, str, int]] = asyncio.PriorityQueue()
        self.counter = itertools.count()
        self.seen: set[str] = set()
        self.outcomes: dict[str, _Outcome] = {}
        self.skipped: dict[str, str] = {}
        self.robots: dict[str, RobotFileParser | None] = {}
        self.robots_locks: dict[str, asyncio.Lock] = {}
        self.sitemaps: list[str] = []
        self.fetches = 0
        self.queued = 0  # URLs put on the queue: the pages known so far (for progress)
        self.progress: Callable[[int, int], None] | None = None
        self.truncated = False
        self.errors: list[str] = []
        self.fetcher: Fetcher | None = None
        self.aborted = False
        self.failures_in_a_row = 0
        self.answered = 0
        self.unreachable: set[str] = set()  # origins whose robots.txt got no answer at all
        self.robots_5xx: dict[str, str] = {}  # origin -> "robots.txt URL answered HTTP 5xx" (RFC 9309: disallow all)

    def in_scope(self, url: str) -> bool:
        """On an allowed host and under an allowed path prefix (links, sitemap entries and redirects)."""
        return self.hosts.allows(url) and self.paths.allows(url)

    # --- frontier ---------------------------------------------------------------------------------------------
    def enqueue(self, url: str, depth: int, hops: int = 0) -> None:
        key = normalize_url(url)
        if key in self.seen:
            return
        self.seen.add(key)
        if not self.hosts.allows(url):
            self.skipped[url] = "external host"
            return
        if not self.paths.allows(url):
            self.skipped[url] = "outside SITE_ALLOWED_PATH_PREFIXES"
            return
        reason = excluded_reason(url)
        if reason:
            self.skipped[url] = reason
            return
        if depth > self.config.max_depth:
            self.skipped[url] = "deeper than CRAWL_MAX_DEPTH"
            return
        self.queue.put_nowait((depth, next(self.counter), url, hops))
        self.queued += 1

    # --- robots.txt and sitemaps -----------------------------------------------------------------------------
    async def robots_for(self, url: str) -> RobotFileParser | None:
        origin = _origin(url)
        lock = self.robots_locks.setdefault(origin, asyncio.Lock())
        async with lock:
            if origin in self.robots:
                return self.robots[origin]
            assert self.fetcher is not None
            result, chain = await self.fetcher.follow(origin + "/robots.txt", self.hosts.allows, accept_any=True,
                                                      retries=min(self.config.retries, 1))
            parser = None
            if result.status >= 500 and self.config.robots_5xx == "disallow":
                # RFC 9309 §2.3.1.4: a robots.txt that is unreachable because of a server error means "complete
                # disallow". The run fails and the old index keeps serving.
                self.robots_5xx[origin] = f"{chain[-1]} answered HTTP {result.status}"
                parser = RobotFileParser(chain[-1])
                parser.disallow_all = True
                self.robots[origin] = parser
                return parser
            if result.kind == "failed":
                self.unreachable.add(origin)
            if result.kind == "ok":
                parser = parse_robots(chain[-1], result.body, result.content_type)
                delay = parser.crawl_delay(self.config.user_agent)
                if delay:
                    self.fetcher.host_delays[host_key(url)] = min(float(delay), 10.0)
                self.sitemaps.extend(parser.site_maps() or [])
            self.robots[origin] = parser
            return parser

    async def robots_allow(self, url: str) -> bool:
        """robots.txt of ``url``'s origin (read once) lets our user agent fetch it; no robots.txt allows all."""
        robots = await self.robots_for(url)
        return robots is None or robots.can_fetch(self.config.user_agent, url)

    def robots_allow_cached(self, url: str) -> bool:
        """Like :meth:`robots_allow` without a request: for a redirect met inside ``Fetcher.follow`` (an origin
        whose robots.txt was not read yet passes)."""
        robots = self.robots.get(_origin(url))
        return robots is None or robots.can_fetch(self.config.user_agent, url)

    async def discover_sitemaps(self) -> None:
        origins = sorted({_origin(s) for s in self.config.seeds})
        queue: list[str] = []
        for origin in origins:
            await self.robots_for(origin + "/")
            if origin not in self.unreachable and origin not in self.robots_5xx:
                # a site that does not answer (or forbids everything) has no sitemap to read either
                queue.extend(sitemap_candidates(origin, self.paths.prefixes))
        queue = list(dict.fromkeys(self.sitemaps + queue))
        done: set[str] = set()
        assert self.fetcher is not None
        while queue and len(done) < _MAX_SITEMAPS:
            url = queue.pop(0)
            if url in done or not self.hosts.allows(url):
                continue
            done.add(url)
            if not await self.robots_allow(url):  # the sitemap itself, like any page (a 5xx robots.txt: all)
                logger.info("crawl: sitemap %s not read: %s", url,
                            self.robots_5xx.get(_origin(url), _ROBOTS_DISALLOWED))
                continue
            if _origin(url) in self.unreachable:
                continue
            result, _ = await self.fetcher.follow(url, lambda t: self.hosts.allows(t) and self.robots_allow_cached(t),
                                                  accept_any=True, retries=0)
            if result.kind != "ok":
                continue
            pages, subs = await asyncio.get_running_loop().run_in_executor(None, parse_sitemap, result.body)
            queue.extend(s for s in subs if s not in done)
            for page in pages:
                link = resolve_link(url, page)
                if link:  # a university-wide sitemap lists other faculties too: enqueue() keeps to the scope
                    self.enqueue(link, 1)

    # --- one URL ----------------------------------------------------------------------------------------------
    async def worker(self) -> None:
        while True:
            depth, _, url, hops = await self.queue.get()
            try:
                if self.fetches >= self.config.max_pages or self.aborted:
                    self.truncated = True
                    continue
                await self.process(url, depth, hops)
                outcome = self.outcomes.get(normalize_url(url))
                if outcome is not None and outcome.kind == "failed" and not outcome.responded:
                    self.failures_in_a_row += 1
                elif outcome is not None:
                    self.failures_in_a_row = 0
                    self.answered += int(outcome.responded)
                limit = _DOWN_AFTER if not self.answered else _DOWN_AFTER * 4
                if self.failures_in_a_row >= limit and not self.aborted:
                    self.aborted = True
                    self.errors.append(f"stopped after {self.failures_in_a_row} failed requests in a row: "
                                       "the site looks down")
            except Exception as error:  # boundary: the crawl worker loop, one bad page must not end the crawl
                logger.exception("crawl: unexpected error on %s", url)
                self.outcomes[normalize_url(url)] = _Outcome("failed", url, reason=f"{type(error).__name__}: {error}")
            finally:
                self.queue.task_done()
                if self.progress is not None:
                    self.progress(len(self.outcomes), min(self.queued, self.config.max_pages))

    async def process(self, url: str, depth: int, hops: int = 0) -> None:
        """Fetch ``url`` and record its outcome. ``hops``: redirects followed in a row to reach it (a redirect to
        another URL puts that URL on the queue at the same depth, so the chain is bounded here, not by depth)."""
        key = normalize_url(url)
        if not await self.robots_allow(url):
            why = self.robots_5xx.get(_origin(url))
            self.outcomes[key] = _Outcome("skipped", url, reason=(
                f"not fetched: {why} (RFC 9309: assume complete disallow)" if why else _ROBOTS_DISALLOWED))
            return
        old = self.states.get(key)
        conditional = old is not None and old.status in ("ok", "links")
        assert self.fetcher is not None
        self.fetches += 1
        result = await self.fetcher.get(url, etag=old.etag if conditional else "",
                                        last_modified=old.last_modified if conditional else "")
        while result.kind == "redirect":
            target = resolve_link(url, result.location)
            if not target:
                self.outcomes[key] = _Outcome("failed", url, reason="redirect without a usable Location",
                                              responded=True)
                return
            if not self.hosts.allows(target):
                self.outcomes[key] = _Outcome("skipped", url, reason=f"redirect outside the allowed hosts: {target}",
                                              responded=True)
                return
            if not self.paths.allows(target):
                self.outcomes[key] = _Outcome("skipped", url, reason=f"redirect outside SITE_ALLOWED_PATH_PREFIXES: "
                                              f"{target}", responded=True)
                return
            reason = excluded_reason(target)
            if reason:
                self.outcomes[key] = _Outcome("skipped", url, reason=f"redirect to {reason}", responded=True)
                return
            hops += 1
            if hops > self.config.max_redirects:
                self.outcomes[key] = _Outcome("failed", url, reason=f"too many redirects (more than "
                                              f"{self.config.max_redirects} in a row); not following {target}",
                                              responded=True, status=result.status)
                return
            if normalize_url(target) != key:
                self.outcomes[key] = _Outcome("alias", url, target=normalize_url(target),
                                              reason=f"redirected to {target}", responded=True)
                self.enqueue(target, depth, hops)
                return
            url = target
            result = await self.fetcher.get(url, etag=old.etag if conditional else "",
                                            last_modified=old.last_modified if conditional else "")
        await self.handle(key, url, depth, old, result)

    async def handle(self, key: str, url: str, depth: int, old: PageState | None, result: FetchResult) -> None:
        now = _now()
        if result.kind == "not_modified" and old is not None and old.status == "links":
            self.outcomes[key] = _Outcome("skipped", url, dataclasses.replace(
                old, last_seen=now, depth=min(depth, old.depth)), reason=old.reason, responded=True)
            self.follow_links(old.links, depth)
            return
        if result.kind == "not_modified" and old is not None:
            self.outcomes[key] = _Outcome("unchanged", url, dataclasses.replace(
                old, last_seen=now, misses=0, depth=min(depth, old.depth)), responded=True)
            self.follow_links(old.links, depth)
            return
        if result.kind in ("gone", "skipped", "http_error", "not_modified"):
            kind = "gone" if result.kind == "gone" else "skipped"
            if result.kind == "http_error":
                kind = "failed"  # 401/403/… may be a firewall's mood: never a reason to delete
            self.outcomes[key] = _Outcome(kind, url, reason=result.reason or f"HTTP {result.status}",
                                          responded=result.status > 0, status=result.status,
                                          attempts=result.attempts)
            return
        if result.kind == "failed":
            self.outcomes[key] = _Outcome("failed", url, reason=result.reason, status=result.status,
                                          attempts=result.attempts)
            return
        body_hash = hashlib.sha1(result.body).hexdigest()
        if old is not None and old.status == "links" and old.body_hash == body_hash:
            self.outcomes[key] = _Outcome("skipped", url, dataclasses.replace(
                old, last_seen=now, etag=result.etag, last_modified=result.last_modified,
                depth=min(depth, old.depth)), reason=old.reason, responded=True)
            self.follow_links(old.links, depth)
            return
        if old is not None and old.status == "ok" and old.body_hash == body_hash:
            self.outcomes[key] = _Outcome("unchanged", url, dataclasses.replace(
                old, last_seen=now, misses=0, etag=result.etag, last_modified=result.last_modified,
                depth=min(depth, old.depth)), responded=True)
            self.follow_links(old.links, depth)
            return
        loop = asyncio.get_running_loop()
        final_url = clean_url(url)
        try:
            page: PageExtract = await asyncio.wait_for(
                loop.run_in_executor(None, parse_page, final_url, result.body, result.content_type, now),
                _EXTRACT_TIMEOUT,
            )
        except (ValueError, TimeoutError) as error:
            self.outcomes[key] = _Outcome("skipped", url, reason=str(error) or "extraction timed out",
                                          responded=True)
            return
        if _SOFT_404.search(page.title):
            # "Page not found" served with 200: treat as gone (and do not follow its menu links from here).
            self.outcomes[key] = _Outcome("gone", url, reason="soft 404 (error page served with 200)",
                                          responded=True)
            return
        links = list(page.links)
        if page.canonical and normalize_url(page.canonical) != key:
            links.insert(0, page.canonical)
        self.follow_links(links, depth)
        if page.noindex or is_listing(url) or not page.documents:
            reason = ("noindex" if page.noindex else "listing page (links only)" if is_listing(url)
                      else "no text content")
            if old is not None and old.status == "ok":
                self.outcomes[key] = _Outcome("gone", url, reason=reason, responded=True)
                return
            # Remembered for its links, so the next crawl can ask "not modified?" instead of parsing it again.
            links_only = PageState(
                url=key, fetch_url=url, final_url=final_url, status="links", http_status=result.status,
                etag=result.etag, last_modified=result.last_modified, body_hash=body_hash,
                content_type=result.content_type, first_seen=old.first_seen if old else now, last_seen=now,
                fetched_at=now, depth=min(depth, old.depth) if old else depth, links=tuple(links), reason=reason,
            )
            self.outcomes[key] = _Outcome("skipped", url, links_only, reason=reason, responded=True)
            return
        state = PageState(
            url=key, fetch_url=url, final_url=page.documents[0].url, status="ok", http_status=result.status,
            etag=result.etag, last_modified=result.last_modified, body_hash=body_hash,
            content_type=result.content_type, misses=0, first_seen=old.first_seen if old else now, last_seen=now,
            fetched_at=now, depth=min(depth, old.depth) if old else depth, links=tuple(links),
            extract=page.documents,
        )
        same = old is not None and old.status == "ok" and _signature(old.extract) == _signature(page.documents)
        if same:
            # Same documents: keep their old fetched_at so nothing downstream changes.
            state = dataclasses.replace(state, extract=old.extract, first_seen=old.first_seen)
        self.outcomes[key] = _Outcome("unchanged" if same else "changed", url, state, responded=True)

    def follow_links(self, links: tuple[str, ...] | list[str], depth: int) -> None:
        for link in links:
            self.enqueue(link, depth + 1)

    async def run(self) -> None:
        async with Fetcher(user_agent=self.config.user_agent, timeout=self.config.timeout,
                           max_bytes=self.config.max_bytes, retries=self.config.retries, delay=self.config.delay,
                           concurrency=self.config.concurrency, allow_private=self.config.allow_private,
                           allowed_types=HTML_TYPES | PDF_TYPES, backoff_base=self.config.backoff_base,
                           max_redirects=self.config.max_redirects,
                           origin_overrides=dict(self.config.origin_overrides)) as fetcher:
            self.fetcher = fetcher
            for seed in self.config.seeds:
                self.enqueue(clean_url(seed), 0)
            if self.config.use_sitemaps:
                await self.discover_sitemaps()
            for state in sorted(self.states.values(), key=lambda s: (s.depth, s.url)):
                if state.status in ("ok", "links") and self.in_scope(state.fetch_url):
                    self.enqueue(state.fetch_url, state.depth)
            workers = [asyncio.create_task(self.worker()) for _ in range(self.config.concurrency)]
            try:
                await self.queue.join()
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)


def _failed_page(outcome: _Outcome) -> dict:
    return {"url": outcome.url, "status": outcome.status or None, "error": outcome.reason,
            "retries": max(0, outcome.attempts - 1)}


def _assemble(crawl: _Crawl, report: CrawlReport) -> tuple[list[PageState], list[str], dict[str, tuple[Document, ...]]]:
    """New page states, removed page keys, and the raw extracts of every live page."""
    config = crawl.config
    states = dict(crawl.states)
    removed: list[str] = []
    for key, outcome in crawl.outcomes.items():
        old = states.get(key)
        if outcome.kind in ("changed", "unchanged"):
            assert outcome.state is not None
            states[key] = outcome.state
            getattr(report, f"{outcome.kind}_urls").append(outcome.url)
            if outcome.kind == "changed" and (old is None or old.status != "ok"):
                report.added_urls.append(outcome.url)
            continue
        if outcome.kind == "failed":
            report.failed_urls[outcome.url] = outcome.reason
            report.failed_pages.append(_failed_page(outcome))
            continue
        report.skipped_urls[outcome.url] = outcome.reason
        if outcome.kind == "skipped" and outcome.state is not None:
            states[key] = outcome.state  # a links-only page
            continue
        if old is not None and old.status == "ok" and outcome.kind in ("gone", "skipped", "alias"):
            misses = old.misses + 1
            if misses >= config.misses_to_remove:
                removed.append(key)
                report.removed_urls.append(old.fetch_url)
                del states[key]
            else:
                states[key] = dataclasses.replace(old, misses=misses)
    raw = {key: st.extract for key, st in states.items() if st.status == "ok" and st.extract}
    for key, outcome in crawl.outcomes.items():
        if outcome.kind == "alias" and outcome.target in raw and key not in raw:
            alias = clean_url(outcome.url)
            raw[outcome.target] = tuple(
                dataclasses.replace(d, urls=tuple(dict.fromkeys((*d.urls, alias)))) for d in raw[outcome.target]
            )
    return [st for key, st in states.items() if key in crawl.outcomes], removed, raw


def _finish(crawl: _Crawl, store: DocumentStore, report: CrawlReport, started_at: str) -> None:
    """Site-wide clean-up, chunking of new or changed documents, and the atomic commit (runs in a thread)."""
    config = crawl.config
    pages, removed, raw = _assemble(crawl, report)
    documents = postprocess(raw)
    old_hashes = store.doc_hashes()
    chunks: dict[str, list[Chunk]] = {}
    for doc in documents:
        if old_hashes.get(doc.doc_id) != doc.content_hash:
            chunks[doc.doc_id] = chunk_document(doc, target_tokens=config.chunk_target_tokens,
                                                overlap=config.chunk_overlap, max_tokens=config.chunk_max_tokens)
    report.fetched = len(report.changed_urls) + len(report.unchanged_urls)
    report.changed = len(report.changed_urls)
    report.unchanged = len(report.unchanged_urls)
    report.failed = len(report.failed_urls)
    report.removed = len(report.removed_urls)
    report.skipped = len(report.skipped_urls)
    report.changes = store.commit_crawl(pages=pages, removed_pages=removed, documents=documents, chunks=chunks,
                                        report=report.as_json(), started_at=started_at)
    counts = store.counts()
    report.documents, report.chunks = counts["documents"], counts["chunks"]


async def crawl_site(config: CrawlConfig, store: DocumentStore,
                     progress: Callable[[int, int], None] | None = None) -> CrawlReport:
    """Crawl the site into ``store`` and report what happened. Never raises for network trouble: a site that is
    down gives ``report.site_down`` (and ``report.ok`` False) with the store untouched.

    ``progress(done, known)`` is called after each page: pages handled out of the pages found so far."""
    started = time.monotonic()
    started_at = _now()
    loop = asyncio.get_running_loop()
    states = await loop.run_in_executor(None, store.page_states)
    crawl = _Crawl(config, states)
    crawl.progress = progress
    report = CrawlReport()
    try:
        async with asyncio.timeout(config.deadline):
            await crawl.run()
    except TimeoutError:
        crawl.truncated = True
        report.errors.append(f"deadline of {config.deadline:g}s reached (CRAWL_DEADLINE_SECONDS); "
                             "the crawl is partial and removed nothing")
    report.truncated = crawl.truncated
    report.errors.extend(crawl.errors)
    for url, reason in crawl.skipped.items():
        report.skipped_urls[url] = reason
    blocked = [why for origin, why in crawl.robots_5xx.items() if origin in {_origin(s) for s in config.seeds}]
    if blocked:
        report.robots_5xx = blocked[0]
        report.site_down = True  # no page may be fetched: for this run the site is as good as down
        report.errors.insert(0, f"robots.txt returned HTTP 5xx ({blocked[0]}): RFC 9309 means disallow "
                             "everything, so nothing was crawled and the store is untouched; fix robots.txt or set "
                             "CRAWL_ROBOTS_5XX=allow")
        report.skipped_urls.update({o.url: o.reason for o in crawl.outcomes.values()})
        report.skipped = len(report.skipped_urls)
        report.duration_s = time.monotonic() - started
        logger.warning("crawl failed: %s", json.dumps(report.as_json(), ensure_ascii=False))
        return report
    responded = any(o.responded for o in crawl.outcomes.values())
    if not responded:
        report.site_down = True
        failures = [f"{o.url}: {o.reason}" for o in crawl.outcomes.values() if o.kind in ("failed", "skipped")]
        report.failed_urls = {o.url: o.reason for o in crawl.outcomes.values() if o.kind == "failed"}
        report.failed_pages = [_failed_page(o) for o in crawl.outcomes.values() if o.kind == "failed"]
        report.skipped_urls.update({o.url: o.reason for o in crawl.outcomes.values() if o.kind != "failed"})
        report.failed = len(report.failed_urls)
        report.skipped = len(report.skipped_urls)
        seeds = [crawl.outcomes.get(normalize_url(s)) for s in config.seeds]
        if all(o is not None and o.reason == _ROBOTS_DISALLOWED for o in seeds):
            report.errors.insert(0, f"robots.txt disallows every seed for our user agent ({config.user_agent!r}, "
                                 "CRAWL_USER_AGENT): nothing was fetched, sitemaps included; the document store was "
                                 "left untouched")
        else:
            report.errors.insert(0, "site unreachable: no page answered; the document store was left untouched"
                                 + (f" ({failures[0]})" if failures else ""))
        report.duration_s = time.monotonic() - started
        logger.warning("crawl failed: %s", json.dumps(report.as_json(), ensure_ascii=False))
        return report
    if crawl.truncated and not report.errors:
        report.errors.append(f"page cap of {config.max_pages} reached (CRAWL_MAX_PAGES); nothing was removed "
                             "for pages not reached")
    await loop.run_in_executor(None, _finish, crawl, store, report, started_at)
    for url, reason in list(report.failed_urls.items())[:20]:
        report.errors.append(f"{url}: {reason}")
    report.duration_s = time.monotonic() - started
    logger.info("crawl finished: %s", json.dumps({**report.as_json(), "documents": report.documents,
                                                  "chunks": report.chunks}, ensure_ascii=False))
    return report
