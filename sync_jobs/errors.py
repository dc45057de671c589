"""The crawl layer's base error (issue 30's error tree: ``storage.errors.ProdiBotError`` is the root)."""

from __future__ import annotations

from storage.errors import ProdiBotError

__all__ = ["CrawlError"]


class CrawlError(ProdiBotError):
    """Crawling or fetching the site could not go on as asked; the message names the URL or address."""
