"""Crawler edge cases against small loopback servers (issue 33, item 6): an endless redirect chain, a robots.txt
that forbids everything (sitemaps included), and an allowed host named without its port."""

from __future__ import annotations

import pytest
from aiohttp import web

from storage.docstore import DocumentStore
from sync_jobs.crawl import CrawlConfig, crawl_site
from tests.sync_jobs.test_crawl_safety import Server, cfg, page


@pytest.fixture
async def server():
    srv = Server()
    yield srv
    await srv.close()


@pytest.fixture
def store(data_dir):
    s = DocumentStore(data_dir / "prodi.sqlite3")
    yield s
    s.close()


async def test_an_endless_redirect_chain_stops_after_max_redirects(server, store) -> None:
    """/a1/ → /a2/ → … forever: each hop is a new URL put back on the queue at the same depth, so only a hop count
    carried across those re-queues ends it."""

    async def onwards(request):
        n = int(request.match_info["n"])
        raise web.HTTPFound(f"/a{n + 1}/")

    server.html("/", page("Beranda", links=["/a1/"]))
    server.app.router.add_get("/a{n:\\d+}/", onwards)
    await server.start()
    limit = CrawlConfig(seeds=(server.base + "/",)).max_redirects
    report = await crawl_site(cfg(server.base, max_pages=100), store)
    chain = sum(count for path, count in server.hits.items() if path.startswith("/a"))
    assert chain == limit + 1  # /a1/ and the `limit` redirects followed from it, then no more requests
    last = f"{server.base}/a{limit + 1}/"
    assert report.failed_urls[last] == f"too many redirects (more than {limit} in a row); not following " \
                                       f"{server.base}/a{limit + 2}/"
    assert any(error.startswith(last + ": too many redirects") for error in report.errors)  # in the run's log
    assert report.ok and {d.title for d in store.documents()} == {"Beranda"}
