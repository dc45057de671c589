"""The crawl target hangs (every response slower than the crawl timeout): the crawl reports the failure, commits
nothing and removes nothing; the next crawl after the site recovers works. (5xx and "down" are covered by
tests/sync_jobs/test_incremental.py::test_site_down_fails_and_leaves_store_untouched, marked ``faults``.)"""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from storage.docstore import DocumentStore
from sync_jobs.crawl import CrawlConfig, crawl_site
from tests.auxil.loopback import LoopbackApp

pytestmark = pytest.mark.faults

_PARA = ("Program Studi Informatika menyelenggarakan perkuliahan pada semester ganjil dan genap. Mahasiswa "
         "wajib mengisi KRS sebelum perkuliahan dimulai dan berkonsultasi dengan dosen wali masing-masing. ")


def _page(title: str, links: list[str]) -> str:
    nav = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    body = "".join(f"<p>{title}: {_PARA * 3}</p>" for _ in range(3))
    return (f"<!doctype html><html lang='id'><head><title>{title}</title></head><body><nav><ul>{nav}</ul></nav>"
            f"<main><article><h1>{title}</h1>{body}</article></main></body></html>")


class HangingSite:
    """Three pages on loopback; ``slow = True`` makes every response wait until released (a hung upstream)."""

    PAGES = {"/": ("Beranda Prodi", ["/akademik/", "/kontak/"]), "/akademik/": ("Informasi Akademik", ["/"]),
             "/kontak/": ("Kontak Sekretariat", ["/"])}

    def __init__(self) -> None:
        self.slow = False
        self.release = asyncio.Event()
        self.requests = 0
        self.http = LoopbackApp()
        self.base_url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.requests += 1
        if self.slow:
            try:
                await asyncio.wait_for(self.release.wait(), timeout=30)
            except TimeoutError:
                pass
        page = self.PAGES.get(request.path)
        if page is None:
            return web.Response(status=404, text="tidak ditemukan")
        return web.Response(text=_page(*page), content_type="text/html", charset="utf-8")

    async def start(self) -> HangingSite:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        await self.http.serve(app)
        self.base_url = self.http.base_url
        return self

    async def close(self) -> None:
        self.release.set()
        await self.http.close()


@pytest.fixture
async def site():
    s = await HangingSite().start()
    yield s
    await s.close()


@pytest.fixture
def store(data_dir):
    s = DocumentStore(data_dir / "prodi.sqlite3")
    yield s
    s.close()


def _snapshot(store: DocumentStore) -> tuple[dict, dict]:
    return ({d.doc_id: d.content_hash for d in store.documents()}, {c.chunk_id: c.doc_id for c in store.chunks()})


async def test_a_hanging_site_times_out_and_changes_nothing(site, store):
    config = CrawlConfig(seeds=(site.base_url + "/",), allow_private=True, delay=0.0, retries=1, backoff_base=0.01,
                         timeout=0.5, use_sitemaps=False)
    first = await crawl_site(config, store)
    assert first.ok and first.changed == 3
    before = _snapshot(store)
    crawl_id = store.last_crawl_id()

    site.slow = True
    hung = await crawl_site(config, store)
    assert not hung.ok and hung.site_down  # the documented degraded behaviour: the run fails, loudly
    assert hung.failed >= 1 and hung.removed == 0 and hung.changed == 0
    assert hung.errors, "the report says what went wrong"
    assert _snapshot(store) == before and store.last_crawl_id() == crawl_id  # nothing lost, nothing committed

    site.slow = False
    site.release.set()
    again = await crawl_site(config, store)
    assert again.ok and again.unchanged == 3 and again.removed == 0
    assert _snapshot(store) == before
