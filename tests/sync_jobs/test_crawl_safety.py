"""Crawler safety and robustness against small loopback servers: private addresses, redirects off-site, retries,
timeouts, size and type limits, URL normalisation, sitemaps."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from aiohttp import web

from sync_jobs.crawl import CrawlConfig, crawl_site
from sync_jobs.fetch import BlockedAddress, SafeResolver
from sync_jobs.urls import HostSet, is_public_ip, normalize_url
from tests.auxil.loopback import LoopbackApp

TEXT = "<p>Program studi ini menyelenggarakan perkuliahan informatika dengan kurikulum terbaru dan dosen ahli.</p>"


def page(title: str, body: str = "", links: list[str] | None = None) -> str:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links or [])
    return (f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>{TEXT}{body}"
            f"<p>{title} dijelaskan lebih lanjut di halaman ini dengan contoh yang lengkap.</p>{anchors}</main></body></html>")


class Server:
    """A tiny aiohttp site on 127.0.0.1 with scripted routes and a request counter."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.hits: Counter[str] = Counter()
        self.http = LoopbackApp()
        self.port = 0

        @web.middleware
        async def count(request, handler):
            self.hits[request.path_qs] += 1
            return await handler(request)

        self.app.middlewares.append(count)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def html(self, path: str, body: str) -> None:
        async def handler(request):
            return web.Response(text=body, content_type="text/html")

        self.app.router.add_get(path, handler)

    async def start(self) -> Server:
        self.port = await self.http.serve(self.app, shutdown_timeout=0.5)
        return self

    async def close(self) -> None:
        await self.http.close()




def cfg(base: str, **kw) -> CrawlConfig:
    values = dict(seeds=(base + "/",), allow_private=True, delay=0.0, retries=2, backoff_base=0.01, timeout=2.0,
                  concurrency=2)
    values.update(kw)
    return CrawlConfig(**values)


def test_url_normalisation() -> None:
    assert normalize_url("HTTP://Prodi.Example:80/a/b/../c/?utm_source=x&b=2&a=1&fbclid=z#top") == \
        "http://prodi.example/a/c?a=1&b=2"
    assert normalize_url("https://prodi.example/profil/") == normalize_url("https://prodi.example/profil")
    assert normalize_url("https://prodi.example") == "https://prodi.example/"
    hosts = HostSet(["prodi.example", "127.0.0.1:8000"])
    assert hosts.allows("https://www.prodi.example/x") and hosts.allows("http://127.0.0.1:8000/")
    assert not hosts.allows("http://127.0.0.1:9000/") and not hosts.allows("https://evil.example/")
    assert not is_public_ip("10.1.2.3") and not is_public_ip("127.0.0.1") and not is_public_ip("169.254.169.254")
    assert not is_public_ip("::ffff:192.168.1.1") and not is_public_ip("100.64.0.1") and is_public_ip("8.8.8.8")


async def test_resolver_refuses_loopback_names() -> None:
    with pytest.raises(BlockedAddress, match="CRAWL_ALLOW_PRIVATE_NETWORKS"):
        await SafeResolver(allow_private=False).resolve("localhost", 80)
    assert await SafeResolver(allow_private=True).resolve("localhost", 80)


async def test_private_address_is_never_contacted_unless_allowed(server, store) -> None:
    server.html("/", page("Beranda"))
    await server.start()
    report = await crawl_site(cfg(server.base, allow_private=False), store)
    assert not report.ok and sum(server.hits.values()) == 0
    assert "private address" in report.skipped_urls[server.base + "/"]
    assert store.documents() == []


async def test_redirect_outside_allowed_hosts_is_not_followed(server, store) -> None:
    other = Server()
    other.html("/target/", page("Di luar"))
    await other.start()
    try:
        server.html("/", page("Beranda", links=["/pergi/", "/pindah/"]))

        async def off_site(request):
            raise web.HTTPFound(f"http://localhost:{other.port}/target/")

        async def in_site(request):
            raise web.HTTPMovedPermanently("/tujuan/")

        server.app.router.add_get("/pergi/", off_site)
        server.app.router.add_get("/pindah/", in_site)
        server.html("/tujuan/", page("Tujuan"))
        await server.start()
        report = await crawl_site(cfg(server.base), store)
    finally:
        await other.close()
    assert sum(other.hits.values()) == 0
    assert report.skipped_urls[server.base + "/pergi/"].startswith("redirect outside the allowed hosts")
    urls = {d.url for d in store.documents()}
    assert server.base + "/tujuan/" in urls and server.base + "/pindah/" not in urls


@pytest.mark.faults
async def test_retries_5xx_and_timeouts_then_counts_failures(server, store) -> None:
    calls = Counter()

    async def flaky(request):
        calls["flaky"] += 1
        if calls["flaky"] < 3:
            return web.Response(status=503, text="sibuk")
        return web.Response(text=page("Flaky"), content_type="text/html")

    async def slow(request):
        await asyncio.sleep(5)
        return web.Response(text=page("Lambat"), content_type="text/html")

    async def broken(request):
        return web.Response(status=500, text="error")

    server.html("/", page("Beranda", links=["/flaky/", "/lambat/", "/rusak/"]))
    server.app.router.add_get("/flaky/", flaky)
    server.app.router.add_get("/lambat/", slow)
    server.app.router.add_get("/rusak/", broken)
    await server.start()
    report = await crawl_site(cfg(server.base, timeout=0.5, retries=2), store)
    assert calls["flaky"] == 3 and server.base + "/flaky/" in report.changed_urls
    assert "timed out" in report.failed_urls[server.base + "/lambat/"]
    assert report.failed_urls[server.base + "/rusak/"] == "HTTP 500" and server.hits["/rusak/"] == 3
    assert report.failed == 2 and report.ok


async def test_size_type_and_tracking_limits(server, store) -> None:
    big = page("Besar", body="<p>" + "kata " * 3000 + "</p>")

    async def image(request):
        return web.Response(body=b"\x89PNG" + b"0" * 100, content_type="image/png")

    server.html("/", page("Beranda", links=["/besar/", "/gambar", "/a/?utm_source=x&fbclid=1#atas", "/a", "/a/",
                                            "/foto.jpg", "mailto:x@y.z", "/wp-admin/", "/?s=cari"]))
    server.html("/besar/", big)
    server.html("/a/", page("Halaman A"))
    server.html("/a", page("Halaman A"))
    server.app.router.add_get("/gambar", image)
    await server.start()
    report = await crawl_site(cfg(server.base, max_bytes=4096), store)
    assert report.skipped_urls[server.base + "/besar/"].startswith("too large")
    assert report.skipped_urls[server.base + "/gambar"] == "content type image/png"
    assert report.skipped_urls[server.base + "/foto.jpg"] == "binary file"
    assert server.hits["/foto.jpg"] == 0 and server.hits["/wp-admin/"] == 0 and server.hits["/?s=cari"] == 0
    assert server.hits["/a/?utm_source=x&fbclid=1"] + server.hits["/a"] + server.hits["/a/"] == 1
    assert len([d for d in store.documents() if d.title == "Halaman A"]) == 1


async def test_sitemaps_from_robots_and_wp_sitemap_index(server, store) -> None:
    async def robots(request):
        return web.Response(text=f"User-agent: *\nDisallow: /rahasia/\nSitemap: {server.base}/peta.xml\n")

    async def index(request):
        return web.Response(text=f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                 f"<sitemap><loc>{server.base}/peta-halaman.xml</loc></sitemap></sitemapindex>",
                            content_type="application/xml")

    async def urlset(request):
        return web.Response(text=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                 f"<url><loc>{server.base}/yatim/</loc></url><url><loc>{server.base}/rahasia/</loc></url>"
                                 f"<url><loc>https://elsewhere.example/x</loc></url></urlset>",
                            content_type="application/xml")

    server.app.router.add_get("/robots.txt", robots)
    server.app.router.add_get("/peta.xml", index)
    server.app.router.add_get("/peta-halaman.xml", urlset)
    server.html("/", page("Beranda"))
    server.html("/yatim/", page("Halaman Yatim"))
    server.html("/rahasia/", page("Rahasia"))
    await server.start()
    report = await crawl_site(cfg(server.base), store)
    titles = {d.title for d in store.documents()}
    assert "Halaman Yatim" in titles and "Rahasia" not in titles
    assert report.skipped_urls[server.base + "/rahasia/"] == "disallowed by robots.txt"
    assert server.hits["/rahasia/"] == 0


def test_allowed_hosts_default_to_the_seeds() -> None:
    hosts = CrawlConfig(seeds=("http://prodi.example/",)).hosts
    assert hosts.allows("https://prodi.example/profil/") and hosts.allows("https://www.prodi.example/")
    assert not hosts.allows("https://kampus.example/")
    local = CrawlConfig(seeds=("http://127.0.0.1:8123/",)).hosts
    assert local.allows("http://127.0.0.1:8123/x") and not local.allows("http://127.0.0.1:9999/x")
    with pytest.raises(ValueError, match="seed"):
        CrawlConfig(seeds=("prodi.example",))


@pytest.mark.faults
async def test_deadline_cuts_the_crawl_short_and_removes_nothing(server, store) -> None:
    async def slow(request):
        await asyncio.sleep(3)
        return web.Response(text=page("Lambat"), content_type="text/html")

    server.html("/", page("Beranda", links=["/lambat/"]))
    server.app.router.add_get("/lambat/", slow)
    await server.start()
    first = await crawl_site(cfg(server.base, timeout=5.0), store)
    assert first.ok and {d.title for d in store.documents()} == {"Beranda", "Lambat"}
    report = await crawl_site(cfg(server.base, timeout=5.0, deadline=1.0), store)
    assert report.truncated and "CRAWL_DEADLINE_SECONDS" in report.errors[0]
    assert report.removed == 0 and {d.title for d in store.documents()} == {"Beranda", "Lambat"}


async def test_soft_404_pages_are_not_stored(server, store) -> None:
    server.html("/", page("Beranda", links=["/hilang/"]))
    server.html("/hilang/", page("Halaman tidak ditemukan"))
    await server.start()
    report = await crawl_site(cfg(server.base), store)
    assert report.skipped_urls[server.base + "/hilang/"].startswith("soft 404")
    assert {d.title for d in store.documents()} == {"Beranda"}
