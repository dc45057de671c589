"""URL normalisation, same-site checks and address safety for the crawler."""

from __future__ import annotations

import functools
import ipaddress
import posixpath
import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit, urlunsplit

__all__ = [
    "HostSet",
    "PathScope",
    "clean_url",
    "excluded_reason",
    "host_key",
    "ip_literal",
    "is_listing",
    "is_public_ip",
    "looks_binary",
    "normalize_url",
    "resolve_link",
]

_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_", "_hs")
_TRACKING = {
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid", "igshid", "_ga", "_gl",
    "ref_src", "spm", "scid", "twclid", "ttclid", "amp", "s_kwcid", "trk", "si", "_hsenc", "_hsmi", "mkt_tok",
}
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Keep characters that are safe in a path; everything else is percent-encoded once.
_PATH_SAFE = "/:@!$&'()*+,;=-._~%"

_BINARY_EXT = {
    "jpg", "jpeg", "png", "gif", "webp", "svg", "bmp", "ico", "tif", "tiff", "avif", "heic", "mp3", "mp4", "m4a",
    "wav", "ogg", "webm", "avi", "mov", "mkv", "flv", "wmv", "zip", "rar", "7z", "gz", "tgz", "bz2", "xz", "tar",
    "exe", "msi", "dmg", "apk", "iso", "bin", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp",
    "rtf", "csv", "css", "js", "json", "xml", "rss", "atom", "woff", "woff2", "ttf", "otf", "eot", "txt", "psd",
    "ai", "eps", "swf", "jar", "deb", "rpm",
}
# WordPress and CMS machinery that never holds content worth indexing (or changes on every request).
_EXCLUDED_PATH = re.compile(
    r"(^|/)(wp-admin|wp-login\.php|wp-json|xmlrpc\.php|wp-cron\.php|feed|comments/feed|trackback|embed|"
    r"cgi-bin|cart|checkout|my-account|login|logout|signin|signup|register|attachment|amp)(/|$)",
    re.IGNORECASE,
)
_EXCLUDED_QUERY = {"replytocom", "share", "action", "s", "print", "format", "ical", "outlook-ical", "tribe-bar-date",
                   "attachment_id", "like_comment", "unapproved", "moderation-hash",
                   "redirect_to", "preview", "doing_wp_cron", "add-to-cart", "wc-ajax", "nocache"}


def _clean_path(path: str) -> str:
    path = re.sub(r"/{2,}", "/", path or "/")
    trailing = path.endswith("/")
    path = posixpath.normpath(unquote(path))
    if path in (".", ""):
        path = "/"
    if not path.startswith("/"):
        path = "/" + path
    if trailing and path != "/":
        path += "/"
    return quote(path, safe=_PATH_SAFE)


@functools.lru_cache(maxsize=65536)
def normalize_url(url: str) -> str:
    """A stable key for a URL: lower-case scheme and host, no default port, no fragment, no tracking parameters,
    sorted query, dot segments resolved, and no trailing slash (``/profil/`` and ``/profil`` are one page)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        host = host.encode("idna").decode("ascii") if host and not host.isascii() else host
    except UnicodeError:
        pass
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if ":" not in host else f"[{host}]"
    if port and port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{port}"
    path = _clean_path(parts.path)
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key.lower() not in _TRACKING and not key.lower().startswith(_TRACKING_PREFIXES)
    ]
    return urlunsplit((scheme, netloc, path, urlencode(sorted(query)), ""))


@functools.lru_cache(maxsize=65536)
def clean_url(url: str) -> str:
    """The URL to fetch and show: like :func:`normalize_url` but keeping the site's own trailing slash."""
    parts = urlsplit(normalize_url(url))
    original = urlsplit(url.strip())
    path = parts.path
    if original.path.endswith("/") and not path.endswith("/"):
        path += "/"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@functools.lru_cache(maxsize=65536)
def resolve_link(base: str, href: str) -> str | None:
    """An absolute http(s) URL for a link on ``base``, without fragment, or None for mailto:, javascript: etc."""
    href = (href or "").strip()
    if not href or href.startswith(("#", "mailto:", "tel:", "javascript:", "data:", "whatsapp:", "sms:")):
        return None
    try:
        absolute = urljoin(base, href)
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return clean_url(absolute)


def host_key(url: str) -> str:
    """``host:port`` with the scheme's default port filled in."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    except ValueError:
        port = 0
    return f"{host}:{port}"


class HostSet:
    """Allowed hosts. An entry ``host:port`` allows exactly that port; a bare ``host`` only the scheme's default port
    (80 for http, 443 for https), so ``127.0.0.1`` does not open every other service on that machine. ``www.`` is
    ignored on both sides."""

    def __init__(self, entries: list[str] | tuple[str, ...]) -> None:
        self.hosts: set[str] = set()
        self.host_ports: set[str] = set()
        for raw in entries:
            entry = raw.strip().lower()
            if "//" in entry:
                entry = urlsplit(entry).netloc
            entry = entry.strip("/")
            if not entry:
                continue
            host, _, port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
            host = host.removeprefix("www.")
            if port.isdigit():
                self.host_ports.add(f"{host}:{int(port)}")
            else:
                self.hosts.add(host)

    def __bool__(self) -> bool:
        return bool(self.hosts or self.host_ports)

    def allows(self, url: str) -> bool:
        key = host_key(url)
        host, _, port = key.rpartition(":")
        host = host.removeprefix("www.")
        if f"{host}:{port}" in self.host_ports:
            return True
        return host in self.hosts and port == str(_DEFAULT_PORTS.get(urlsplit(url).scheme.lower()))


class PathScope:
    """Allowed URL path prefixes, matched by whole segments: ``/informatika/`` allows ``/informatika`` and
    ``/informatika/dosen/`` but not ``/informatika-terapan/``. ``/`` (or no prefix) allows every path."""

    def __init__(self, prefixes: list[str] | tuple[str, ...]) -> None:
        cleaned = []
        for raw in prefixes:
            path = raw.strip()
            if "//" in path:
                path = urlsplit(path).path
            path = _clean_path(path or "/")
            cleaned.append(path if path.endswith("/") else path + "/")
        self.prefixes: tuple[str, ...] = tuple(dict.fromkeys(cleaned)) or ("/",)

    @property
    def everything(self) -> bool:
        return "/" in self.prefixes

    def allows(self, url: str) -> bool:
        if self.everything:
            return True
        path = _clean_path(urlsplit(url).path or "/")
        return any(path.startswith(prefix) or path == prefix[:-1] for prefix in self.prefixes)


def is_public_ip(address: str) -> bool:
    """True for a globally routable address; False for private, loopback, link-local, reserved, CGNAT, …"""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_global) and not ip.is_multicast


def ip_literal(url: str) -> str | None:
    host = urlsplit(url).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return None
    return host


def looks_binary(url: str) -> bool:
    """The path ends in an extension that is neither a web page nor a PDF."""
    path = urlsplit(url).path.lower().rstrip("/")
    last = path.rsplit("/", 1)[-1]
    return "." in last and last.rsplit(".", 1)[-1] in _BINARY_EXT


def excluded_reason(url: str) -> str | None:
    """Why a same-site URL is not worth fetching (CMS machinery, feeds, search, share links), or None."""
    parts = urlsplit(url)
    if _EXCLUDED_PATH.search(parts.path):
        return "excluded: CMS/feed URL"
    keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if keys & _EXCLUDED_QUERY:
        return "excluded: search/share/action URL"
    if looks_binary(url):
        return "binary file"
    return None


_LISTING_PATH = re.compile(
    r"/(?:author|category|tag|kategori|label|topics?)/|/page/\d+/?$|^/\d{4}/(?:\d{2}/)?(?:\d{2}/)?$",
    re.IGNORECASE,
)
_LISTING_QUERY = {"paged", "cat", "tag", "author", "m", "page"}


def is_listing(url: str) -> bool:
    """Archive pages (category, tag, author, date, page/N) only repeat excerpts: fetched for links, not stored."""
    parts = urlsplit(url)
    if _LISTING_PATH.search(parts.path):
        return True
    keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    return bool(keys & _LISTING_QUERY)
