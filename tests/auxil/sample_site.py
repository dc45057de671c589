"""Helpers for tests that read the sample site over real HTTP: fetch, link extraction, BFS, visible text."""

from __future__ import annotations

import io
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urldefrag, urljoin, urlsplit

from bs4 import BeautifulSoup


@dataclass(frozen=True)
class Fetched:
    url: str  # final URL after redirects
    status: int
    headers: Message
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get_content_type()

    @property
    def charset(self) -> str:
        return self.headers.get_content_charset() or "utf-8"

    def text(self) -> str:
        return self.body.decode(self.charset)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401 - urllib signature
        return None


def fetch(url: str, headers: dict[str, str] | None = None, follow: bool = True, timeout: float = 10) -> Fetched:
    """GET ``url`` (loopback only); HTTP errors come back as a Fetched with their status, not as exceptions."""
    request = urllib.request.Request(url, headers=headers or {})
    opener = urllib.request.build_opener() if follow else urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            return Fetched(response.geturl(), response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        with error:
            return Fetched(url, error.code, error.headers, error.read())


def links(base_url: str, html: str) -> list[str]:
    """Absolute URLs of every ``<a href>`` in ``html``, fragments removed."""
    soup = BeautifulSoup(html, "html.parser")
    out = []
    for a in soup.find_all("a", href=True):
        href = a["href"].strip()
        if href.startswith(("mailto:", "tel:", "javascript:")):
            continue
        url, _ = urldefrag(urljoin(base_url, href))
        if url:
            out.append(url)
    return out


def main_text(html: str) -> str:
    """The visible text of a page's main content (WordPress ``.entry-content`` plus the title)."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style"]):
        tag.decompose()
    title = soup.find("h1")
    content = soup.select_one(".entry-content") or soup.body or soup
    return " ".join(((title.get_text(" ") if title else "") + " " + content.get_text(" ")).split())


def pdf_text(data: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    return " ".join(" ".join((page.extract_text() or "") for page in reader.pages).split())


@dataclass(frozen=True)
class Crawl:
    html: dict[str, Fetched]  # final path -> response, for every HTML page reached
    other: dict[str, Fetched]  # final path -> response, non-HTML same-host resources (PDF, ZIP, ...)
    broken: dict[str, int]  # path -> status for same-host links that failed
    external: set[str]  # links to other hosts (never fetched)
    redirected: dict[str, str]  # requested path -> final path


def bfs(base_url: str, start: str = "/", limit: int = 500) -> Crawl:
    """Follow every same-host link from ``start`` over real HTTP (no robots, no politeness: loopback test only)."""
    host = urlsplit(base_url).netloc
    queue: deque[str] = deque([urljoin(base_url, start)])
    seen = {queue[0]}
    html: dict[str, Fetched] = {}
    other: dict[str, Fetched] = {}
    broken: dict[str, int] = {}
    external: set[str] = set()
    redirected: dict[str, str] = {}
    while queue and len(seen) <= limit:
        url = queue.popleft()
        res = fetch(url)
        path = urlsplit(url).path
        final = urlsplit(res.url).path
        if final != path:
            redirected[path] = final
        if res.status != 200:
            broken[path] = res.status
            continue
        if res.content_type != "text/html":
            other[final] = res
            continue
        html[final] = res
        for link in links(res.url, res.text()):
            parts = urlsplit(link)
            if parts.netloc != host:
                external.add(link)
                continue
            link = parts._replace(query="").geturl()
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return Crawl(html, other, broken, external, redirected)
