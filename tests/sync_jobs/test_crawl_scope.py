"""Path scoping (a prodi under a path of a university host) and robots.txt answering 5xx (RFC 9309)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest
from aiohttp import web

from bot.sample_site import SampleSite
from storage.docstore import DocumentStore
from sync_jobs.crawl import CrawlConfig, crawl_site
from sync_jobs.sitemaps import sitemap_candidates
from sync_jobs.urls import PathScope
from tests.sync_jobs.test_crawl_safety import Server, cfg, page

pytestmark = pytest.mark.slow  # crawls loopback sites


@pytest.fixture
async def server():
    srv = Server()
    yield srv
    await srv.close()


def test_path_prefixes_match_whole_segments() -> None:
    scope = PathScope(["/informatika"])
    assert scope.prefixes == ("/informatika/",)
    assert scope.allows("https://uin.ac.id/informatika/")
    assert scope.allows("https://uin.ac.id/informatika")
    assert scope.allows("https://uin.ac.id/informatika/dosen/supriyono/")
    assert not scope.allows("https://uin.ac.id/informatika-terapan/")
    assert not scope.allows("https://uin.ac.id/")
    assert not scope.allows("https://uin.ac.id/syariah/informatika/")
    assert PathScope(["/"]).allows("https://uin.ac.id/anything") and PathScope([]).everything


def test_default_prefixes_are_the_seeds_own_directories() -> None:
    config = CrawlConfig(seeds=("https://uin.ac.id/informatika/", "https://uin.ac.id/saintek/index.php",
                                "https://uin.ac.id/syariah"))
    assert config.paths.prefixes == ("/informatika/", "/saintek/", "/syariah/")  # a seed without its slash too
    assert CrawlConfig(seeds=("https://prodi.ac.id/",)).paths.everything
    assert CrawlConfig(seeds=("https://uin.ac.id/informatika/",), allowed_path_prefixes=("/",)).paths.everything
    with pytest.raises(ValueError, match="SITE_ALLOWED_PATH_PREFIXES"):
        CrawlConfig(seeds=("https://uin.ac.id/",), allowed_path_prefixes=("informatika",))
    # the prodi's own sitemap (a WordPress installed under the path) is looked for before the host's
    assert sitemap_candidates("https://uin.ac.id", ("/informatika/",))[0] == "https://uin.ac.id/informatika/wp-sitemap.xml"


@pytest.fixture(scope="module")
def university() -> str:
    """The sample prodi mounted at /informatika/ of a university host with other faculties next to it."""
    with SampleSite(mount="/informatika/") as site:
        yield site.base_url


def _crawl(tmp_path, base: str, **kw):
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = DocumentStore(tmp_path / "prodi.sqlite3")
    try:
        config = CrawlConfig(seeds=(base + "/informatika/",), allow_private=True, delay=0.0, concurrency=4,
                             retries=1, backoff_base=0.01, timeout=3.0, **kw)
        report = asyncio.run(crawl_site(config, store))
        return report, store.documents()
    finally:
        store.close()


def test_a_path_scoped_crawl_stores_only_the_prodis_pages(university: str, sample_site: str, tmp_path) -> None:
    report, docs = _crawl(tmp_path / "mounted", university)
    assert report.ok
    paths = {urlsplit(url).path for doc in docs for url in doc.urls}
    assert paths and all(p.startswith("/informatika/") for p in paths), sorted(paths)
    titles = " ".join(d.title + " " + d.text for d in docs)
    assert "Supriyono" in titles and "Fakultas Syariah" not in titles and "Budi Hartono" not in titles
    # exactly the documents of the same prodi served at the root of its own host
    store = DocumentStore(tmp_path / "plain.sqlite3")
    try:
        asyncio.run(crawl_site(CrawlConfig(seeds=(sample_site + "/",), allow_private=True, delay=0.0, concurrency=4,
                                           retries=1, backoff_base=0.01, timeout=3.0), store))
        plain = {d.url.removeprefix(sample_site) for d in store.documents()}
    finally:
        store.close()
    assert {d.url.removeprefix(university + "/informatika") for d in docs} == plain
    skipped = report.skipped_urls
    # links, the university-wide sitemap and a redirect all tried to leave the prefix
    assert skipped[university + "/syariah/"] == "outside SITE_ALLOWED_PATH_PREFIXES"
    assert skipped[university + "/informatika-terapan/"] == "outside SITE_ALLOWED_PATH_PREFIXES"
    assert skipped[university + "/ekonomi/"] == "outside SITE_ALLOWED_PATH_PREFIXES"  # only in the sitemap
    assert skipped[university + "/informatika/pindah/"].startswith("redirect outside SITE_ALLOWED_PATH_PREFIXES")


def test_without_the_scope_the_whole_university_host_is_crawled(university: str, tmp_path) -> None:
    report, docs = _crawl(tmp_path, university, allowed_path_prefixes=("/",))
    text = " ".join(d.text for d in docs)
    assert report.ok and "Fakultas Syariah" in text and "Budi Hartono" in text


# --- robots.txt answering 5xx ---------------------------------------------------------------------------------


async def test_robots_5xx_means_complete_disallow_and_leaves_the_store_untouched(server, data_dir) -> None:
    server.html("/", page("Beranda", links=["/a/"]))
    server.html("/a/", page("Halaman A"))
    robots_code = {"status": 200}

    async def robots(request):
        if robots_code["status"] != 200:
            return web.Response(status=robots_code["status"], text="maintenance")
        return web.Response(text="User-agent: *\nAllow: /\n")

    server.app.router.add_get("/robots.txt", robots)
    await server.start()
    store = DocumentStore(data_dir / "prodi.sqlite3")
    try:
        first = await crawl_site(cfg(server.base), store)
        assert first.ok and first.fetched == 2
        before = {d.doc_id: d.content_hash for d in store.documents()}
        server.hits.clear()
        robots_code["status"] = 503
        report = await crawl_site(cfg(server.base, retries=0), store)
        assert not report.ok and report.robots_5xx.endswith("robots.txt answered HTTP 503")
        assert report.errors[0].startswith("robots.txt returned HTTP 5xx") and "RFC 9309" in report.errors[0]
        assert "CRAWL_ROBOTS_5XX=allow" in report.errors[0]
        assert set(server.hits) == {"/robots.txt"}  # not a single page was asked for
        assert {d.doc_id: d.content_hash for d in store.documents()} == before
        # the site's own admin may choose the old behaviour
        allowed = await crawl_site(cfg(server.base, retries=0, robots_5xx="allow"), store)
        assert allowed.ok and allowed.fetched == 2
    finally:
        store.close()
