"""robots.txt and sitemaps (wp-sitemap.xml with its sub-sitemaps, sitemap.xml, robots ``Sitemap:`` lines)."""

from __future__ import annotations

import gzip
import logging
from urllib.robotparser import RobotFileParser

from lxml import etree

from sync_jobs.decode import decode_body

__all__ = ["parse_robots", "parse_sitemap", "sitemap_candidates"]

logger = logging.getLogger(__name__)


def parse_robots(url: str, body: bytes, content_type: str = "") -> RobotFileParser:
    parser = RobotFileParser(url)
    parser.parse(decode_body(body[:512_000], content_type).splitlines())
    return parser


def sitemap_candidates(origin: str, prefixes: tuple[str, ...] = ("/",)) -> list[str]:
    """Where sitemaps usually live (WordPress core, Yoast/RankMath, generic): under each allowed path prefix first
    (a prodi's WordPress installed at ``/informatika/``), then at the host's root."""
    names = ("wp-sitemap.xml", "sitemap.xml", "sitemap_index.xml")
    bases = [p for p in prefixes if p != "/"] + ["/"]
    return [f"{origin}{base}{name}" for base in bases for name in names]


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, sub-sitemap URLs) of a sitemap or sitemap index; gzip is unpacked; junk gives ([], [])."""
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)[:50_000_000]
        except (OSError, EOFError):
            return [], []
    try:
        root = etree.fromstring(body, parser=etree.XMLParser(recover=True, resolve_entities=False, no_network=True,
                                                             huge_tree=False))
    except etree.XMLSyntaxError:
        return [], []
    if root is None:
        return [], []
    locs = [el.text.strip() for el in root.iter() if isinstance(el.tag, str) and etree.QName(el).localname == "loc"
            and el.text and el.text.strip()]
    if etree.QName(root).localname == "sitemapindex":
        return [], locs
    return locs, []
