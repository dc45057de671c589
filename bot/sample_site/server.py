"""Serve the bundled sample prodi website (a static WordPress-like export) over HTTP.

The site lives in ``bot/sample_site/site/``: one ``<slug>/index.html`` per pretty URL, plus ``_site.json`` with the
server-side behaviour a real WordPress install shows: aliases (one page at two URLs), 301 redirects, pages stored
in a legacy charset, and text files whose ``{{BASE_URL}}`` placeholder is replaced with the request's host (so the
sitemap and robots.txt work on any port).

``SampleSite`` runs the server on loopback in a background thread with its own event loop; tests and the
``sample-site`` command use it. ``public_url`` fills the placeholder with a fixed public origin instead (the demo
crawl stores the same URLs whatever port the process picked), and ``mount="/informatika/"`` serves the prodi under
that path of a small university site with other faculties' pages next to it (to test path-scoped crawling).
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import logging
import mimetypes
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from aiohttp import web

__all__ = ["SampleSite", "bundled_site_root", "create_app"]

logger = logging.getLogger(__name__)

MANIFEST = "_site.json"
PLACEHOLDER = b"{{BASE_URL}}"
TEMPLATED_SUFFIXES = (".xml", ".txt")
_CONTENT_TYPES = {
    ".html": "text/html",
    ".xml": "application/xml",
    ".txt": "text/plain",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".css": "text/css",
    ".js": "text/javascript",
}
_TEXT_TYPES = ("text/", "application/xml", "application/json")


def bundled_site_root() -> Path:
    """The directory of the bundled sample site (package data)."""
    return Path(__file__).resolve().parent / "site"


@dataclass(frozen=True)
class SiteManifest:
    aliases: dict[str, str] = field(default_factory=dict)  # extra URL path -> canonical URL path (same content)
    redirects: dict[str, str] = field(default_factory=dict)  # URL path -> 301 target path
    charsets: dict[str, str] = field(default_factory=dict)  # URL path -> charset of its stored file
    forbidden: tuple[str, ...] = ()  # path prefixes answered with 403

    @classmethod
    def load(cls, root: Path) -> SiteManifest:
        path = root / MANIFEST
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            aliases=dict(data.get("aliases", {})),
            redirects=dict(data.get("redirects", {})),
            charsets=dict(data.get("charsets", {})),
            forbidden=tuple(data.get("forbidden", ())),
        )


@dataclass(frozen=True)
class _Resource:
    body: bytes
    content_type: str
    mtime: float


class _Site:
    """Maps URL paths to files under ``root`` and builds responses (no caching, so edits show at once)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not (self.root / "index.html").is_file():
            raise FileNotFoundError(
                f"{self.root} is not a sample site (no index.html); pass --root a copy of {bundled_site_root()}"
            )
        self.down = False

    def manifest(self) -> SiteManifest:
        return SiteManifest.load(self.root)

    def file_for(self, url_path: str) -> Path | None:
        parts = [p for p in PurePosixPath(url_path).parts if p not in ("/", "")]
        if any(p in (".", "..") or p.startswith(".") or p == MANIFEST for p in parts):
            return None
        candidate = self.root.joinpath(*parts) if parts else self.root
        if url_path.endswith("/"):
            candidate = candidate / "index.html"
        try:
            candidate = candidate.resolve()
        except OSError:
            return None
        if self.root not in candidate.parents and candidate != self.root:
            return None
        return candidate if candidate.is_file() else None

    def read(self, path: Path, url_path: str, base_url: str, manifest: SiteManifest) -> _Resource:
        body = path.read_bytes()
        mtime = path.stat().st_mtime
        suffix = path.suffix.lower()
        content_type = _CONTENT_TYPES.get(suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if suffix in TEMPLATED_SUFFIXES:
            body = body.replace(PLACEHOLDER, base_url.encode("ascii"))
        if content_type.startswith(_TEXT_TYPES):
            charset = manifest.charsets.get(url_path, "utf-8")
            content_type = f"{content_type}; charset={charset}"
        return _Resource(body=body, content_type=content_type, mtime=mtime)


def _not_modified(request: web.Request, etag: str, mtime: float) -> bool:
    inm = request.headers.get("If-None-Match")
    if inm is not None:  # RFC 9110: If-None-Match wins over If-Modified-Since
        tags = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return etag in tags or "*" in tags
    ims = request.headers.get("If-Modified-Since")
    if ims:
        try:
            since = email.utils.parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError):
            return False
        return int(mtime) <= int(since)
    return False


def _error_page(site: _Site, status: int, base_url: str, manifest: SiteManifest) -> web.Response:
    page = site.root / f"{status}.html"
    if page.is_file():
        res = site.read(page, f"/{status}.html", base_url, manifest)
        return web.Response(status=status, body=res.body, content_type="text/html", charset="utf-8")
    return web.Response(status=status, text=f"{status}", content_type="text/plain")


SITE_KEY: web.AppKey[_Site] = web.AppKey("sample_site", _Site)


def create_app(root: Path | None = None) -> web.Application:
    """An aiohttp application serving the sample site from ``root`` (default: the bundled copy)."""
    return _make_app(_Site(Path(root) if root is not None else bundled_site_root()))


# The university around a prodi mounted under a path (``SampleSite(mount=...)``): its home page, robots.txt, a
# university-wide sitemap and other faculties' pages. ``/informatika-terapan/`` shares the mount's first letters
# but is another programme: path scoping must match whole path segments.
_UNIVERSITY_PAGES = {
    "/": ("Universitas Contoh", "Selamat datang di Universitas Contoh. Fakultas dan program studi kami tercantum "
          "di bawah ini."),
    "/syariah/": ("Fakultas Syariah", "Fakultas Syariah menyelenggarakan program studi Hukum Keluarga Islam dan "
                  "Hukum Ekonomi Syariah. Dekan Fakultas Syariah adalah Dr. Ahmad Syafi'i, M.H.I."),
    "/syariah/dosen/": ("Dosen Fakultas Syariah", "Daftar dosen Fakultas Syariah: Dr. Ahmad Syafi'i, M.H.I., "
                        "Dr. Umi Kulsum, M.Ag."),
    "/informatika-terapan/": ("Informatika Terapan (D4)", "Program Sarjana Terapan Informatika Terapan berada di "
                              "bawah Sekolah Vokasi. Ketua program: Budi Hartono, M.T."),
    "/ekonomi/": ("Fakultas Ekonomi", "Fakultas Ekonomi membuka program studi Manajemen dan Akuntansi."),
}
_UNIVERSITY_REDIRECT = ("pindah/", "/syariah/")  # <mount>pindah/ -> 301 to another faculty


def _university_html(path: str, mount: str) -> bytes:
    title, text = _UNIVERSITY_PAGES[path]
    links = "".join(f'<li><a href="{p}">{t}</a></li>' for p, (t, _) in _UNIVERSITY_PAGES.items() if p != path)
    return (f"<!DOCTYPE html><html lang=\"id\"><head><meta charset=\"utf-8\"><title>{title}</title></head><body>"
            f"<main><article><h1>{title}</h1><div class=\"entry-content\"><p>{text}</p></div></article></main>"
            f"<nav><ul>{links}<li><a href=\"{mount}\">Teknik Informatika</a></li></ul></nav></body></html>"
            ).encode()


def _university_text(path: str, base_url: str, mount: str) -> bytes | None:
    if path == "/robots.txt":
        return f"User-agent: *\nDisallow: /wp-admin/\n\nSitemap: {base_url}/sitemap.xml\n".encode()
    if path == "/sitemap.xml":
        locs = [*_UNIVERSITY_PAGES, mount, mount + "curriculum/"]
        body = "".join(f"<url><loc>{base_url}{p}</loc></url>" for p in locs)
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"{body}</urlset>").encode()
    return None


def _mounted(body: bytes, mount: str) -> bytes:
    """A prodi page as it looks under ``mount``: root-relative links moved under it, plus a footer that links out
    to the university's home, other faculties and a redirect that leaves the mount."""
    prefix = mount.rstrip("/").encode()
    for attr in (b'href="/', b'src="/', b'action="/'):
        body = body.replace(attr, attr[:-1] + prefix + b"/")
    footer = ('<footer class="university"><a href="/">Universitas Contoh</a> <a href="/syariah/">Fakultas Syariah'
              '</a> <a href="/informatika-terapan/">Informatika Terapan</a> '
              f'<a href="{mount}{_UNIVERSITY_REDIRECT[0]}">Halaman lama</a></footer>').encode()
    return body.replace(b"</body>", footer + b"</body>", 1)


def _make_app(site: _Site, public_url: str | None = None, mount: str = "/") -> web.Application:
    app = web.Application(middlewares=[_down_middleware])
    app[SITE_KEY] = site
    mount = "/" + mount.strip("/") + "/" if mount.strip("/") else "/"
    prefix = mount.rstrip("/")

    async def handle(request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        origin = public_url or f"{request.scheme}://{request.host}"
        if mount != "/" and not (request.path + "/").startswith(mount):
            return await university(request, origin)
        url_path = request.path[len(prefix):] or "/"
        base_url = origin + prefix
        manifest = await loop.run_in_executor(None, site.manifest)
        if any(url_path.startswith(p) for p in manifest.forbidden):
            return await loop.run_in_executor(None, _error_page, site, 403, base_url, manifest)
        target = manifest.redirects.get(url_path)
        if mount != "/" and url_path == "/" + _UNIVERSITY_REDIRECT[0]:
            raise web.HTTPMovedPermanently(location=_UNIVERSITY_REDIRECT[1])
        if target is not None:
            raise web.HTTPMovedPermanently(location=prefix + target)
        lookup = manifest.aliases.get(url_path, url_path)
        path = await loop.run_in_executor(None, site.file_for, lookup)
        if path is None and not url_path.endswith("/"):
            # WordPress adds the trailing slash to pretty URLs with a 301.
            if await loop.run_in_executor(None, site.file_for, lookup + "/") is not None:
                location = prefix + url_path + "/" + (f"?{request.query_string}" if request.query_string else "")
                raise web.HTTPMovedPermanently(location=location)
        if path is None:
            return await loop.run_in_executor(None, _error_page, site, 404, base_url, manifest)
        res = await loop.run_in_executor(None, site.read, path, lookup, base_url, manifest)
        if mount != "/" and res.content_type.startswith("text/html"):
            res = _Resource(_mounted(res.body, mount), res.content_type, res.mtime)
        etag = '"' + hashlib.sha1(res.body).hexdigest()[:20] + '"'
        headers = {
            "ETag": etag,
            "Last-Modified": email.utils.formatdate(res.mtime, usegmt=True),
            "Cache-Control": "no-cache",
        }
        if _not_modified(request, etag, res.mtime):
            return web.Response(status=304, headers=headers)
        headers["Content-Type"] = res.content_type
        return web.Response(body=res.body, headers=headers)

    async def university(request: web.Request, origin: str) -> web.StreamResponse:
        path = request.path
        text = _university_text(path, origin, mount)
        if text is not None:
            kind = "text/plain" if path.endswith(".txt") else "application/xml"
            return web.Response(body=text, content_type=kind, charset="utf-8")
        if path not in _UNIVERSITY_PAGES and path + "/" in _UNIVERSITY_PAGES:
            raise web.HTTPMovedPermanently(location=path + "/")
        if path not in _UNIVERSITY_PAGES:
            return web.Response(status=404, text="404", content_type="text/plain")
        return web.Response(body=_university_html(path, mount), content_type="text/html", charset="utf-8")

    app.router.add_get("/{tail:.*}", handle)
    return app


@web.middleware
async def _down_middleware(request: web.Request, handler) -> web.StreamResponse:
    if request.app[SITE_KEY].down:
        return web.Response(status=503, text="Situs sedang dalam pemeliharaan.", headers={"Retry-After": "60"})
    return await handler(request)


class SampleSite:
    """The sample site on 127.0.0.1 in a background thread with its own event loop (a context manager).

    ``mutable=True`` serves a temporary copy (``.root``) that a test may edit; changes show on the next request.
    ``set_down(True)`` makes every request fail with 503 until ``set_down(False)``.
    """

    def __init__(self, root: Path | None = None, port: int = 0, mutable: bool = False, host: str = "127.0.0.1",
                 *, public_url: str | None = None, mount: str = "/"):
        source = Path(root) if root is not None else bundled_site_root()
        self._tmp: str | None = None
        if mutable:
            self._tmp = tempfile.mkdtemp(prefix="sample-site-")
            self.root = Path(self._tmp) / "site"
            shutil.copytree(source, self.root)
        else:
            self.root = source.resolve()
        self._host = host
        self.public_url = public_url.rstrip("/") if public_url else None
        self.mount = mount
        self._requested_port = port
        self.port: int | None = None
        self._site = _Site(self.root)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (stays the same across stop() and start())."""
        if self.port is None:
            raise RuntimeError("the sample site is not running; use it as a context manager or call start()")
        return f"http://{self._host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def set_down(self, down: bool = True) -> None:
        """Answer every request with 503 (True) or serve normally again (False)."""
        self._site.down = down

    def start(self) -> SampleSite:
        if self._thread is not None:
            return self
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve())
            except BaseException as error:  # reported to the starting thread
                errors.append(error)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._cleanup())
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
                loop.close()

        self._thread = threading.Thread(target=run, name="sample-site", daemon=True)
        self._thread.start()
        if not ready.wait(timeout=30):
            raise RuntimeError("the sample site did not start within 30 s")
        if errors:
            self._thread.join(timeout=5)
            self._thread = None
            self._remove_tmp()
            raise errors[0]
        return self

    async def _serve(self) -> None:
        self._runner = web.AppRunner(
            _make_app(self._site, self.public_url, self.mount), access_log=None, handle_signals=False,
            shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._requested_port)
        await site.start()
        server = site._server  # aiohttp exposes no public accessor for the bound port
        self.port = server.sockets[0].getsockname()[1] if server and server.sockets else self._requested_port
        self._requested_port = self.port  # a restart after stop() comes back on the same URL

    async def _cleanup(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        """Stop the server; ``start()`` brings it back on the same port (connections are refused meanwhile)."""
        if self._thread is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        self._thread = None
        self._loop = None

    def close(self) -> None:
        """Stop the server and remove the temporary copy of a mutable site."""
        self.stop()
        self.port = None
        self._remove_tmp()

    def _remove_tmp(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> SampleSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
