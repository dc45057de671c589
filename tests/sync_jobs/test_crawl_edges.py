"""Crawler edge cases against small loopback servers (issue 33, item 6): an endless redirect chain, a robots.txt
that forbids everything (sitemaps included), and an allowed host named without its port."""

from __future__ import annotations

from aiohttp import web

from sync_jobs.crawl import CrawlConfig, crawl_site
from sync_jobs.urls import HostSet
from tests.sync_jobs.test_crawl_safety import Server, cfg, page


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


def _urlset(*urls: str) -> web.Response:
    locs = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return web.Response(text=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                             f"{locs}</urlset>", content_type="application/xml")


async def test_robots_disallow_all_keeps_the_crawler_off_the_sitemaps_and_every_page(server, store) -> None:
    async def robots(request):
        return web.Response(text=f"User-agent: *\nDisallow: /\nSitemap: {server.base}/peta.xml\n")

    async def sitemap(request):
        return _urlset(f"{server.base}/a/")

    server.app.router.add_get("/robots.txt", robots)
    server.app.router.add_get("/sitemap.xml", sitemap)  # where sitemaps usually live
    server.app.router.add_get("/peta.xml", sitemap)  # where robots.txt says it is
    server.html("/", page("Beranda", links=["/a/"]))
    server.html("/a/", page("Halaman A"))
    await server.start()
    report = await crawl_site(cfg(server.base), store)
    assert set(server.hits) == {"/robots.txt"}  # no sitemap, no page
    assert not report.ok and store.documents() == []
    assert report.skipped_urls == {server.base + "/": "disallowed by robots.txt"}
    assert report.errors[0].startswith("robots.txt disallows every seed for our user agent")


async def test_a_sitemap_under_a_disallowed_path_is_not_read(server, store) -> None:
    async def robots(request):
        return web.Response(text=f"User-agent: *\nDisallow: /rahasia/\nSitemap: {server.base}/rahasia/peta.xml\n")

    async def sitemap(request):
        return _urlset(f"{server.base}/yatim/")

    server.app.router.add_get("/robots.txt", robots)
    server.app.router.add_get("/rahasia/peta.xml", sitemap)
    server.html("/", page("Beranda"))
    server.html("/yatim/", page("Halaman Yatim"))  # linked from nowhere: only the disallowed sitemap lists it
    await server.start()
    report = await crawl_site(cfg(server.base), store)
    assert server.hits["/rahasia/peta.xml"] == 0 and server.hits["/yatim/"] == 0
    assert report.ok and {d.title for d in store.documents()} == {"Beranda"}


def test_a_host_without_a_port_means_its_default_ports_only() -> None:
    bare = HostSet(["127.0.0.1", "prodi.example"])
    assert bare.allows("http://127.0.0.1/") and bare.allows("https://127.0.0.1/x") and bare.allows("http://127.0.0.1:80/")
    assert not bare.allows("http://127.0.0.1:8000/") and not bare.allows("http://127.0.0.1:443/")
    assert bare.allows("https://www.prodi.example/") and not bare.allows("https://prodi.example:8443/")
    exact = HostSet(["127.0.0.1:8000"])
    assert exact.allows("http://127.0.0.1:8000/") and not exact.allows("http://127.0.0.1/")
    # the seeds' own host:port is always allowed, next to SITE_ALLOWED_DOMAINS
    hosts = CrawlConfig(seeds=("http://127.0.0.1:8123/",), allowed_domains=("kampus.example",)).hosts
    assert hosts.allows("http://127.0.0.1:8123/x") and hosts.allows("https://kampus.example/")
    assert not hosts.allows("http://127.0.0.1:9999/x") and not hosts.allows("http://127.0.0.1/")


async def test_allowed_domain_without_a_port_does_not_open_other_ports_of_the_host(server, store) -> None:
    other = Server()
    other.html("/", page("Layanan lain di mesin yang sama"))
    await other.start()
    try:
        server.html("/", page("Beranda", links=[other.base + "/"]))
        await server.start()
        report = await crawl_site(cfg(server.base, allowed_domains=("127.0.0.1",)), store)
    finally:
        await other.close()
    assert sum(other.hits.values()) == 0
    assert report.skipped_urls[other.base + "/"] == "external host"
    assert report.ok and {d.title for d in store.documents()} == {"Beranda"}  # the seed's own port still crawled
