"""Sync jobs: crawl, extract, normalise, chunk, and the incremental (re)index job."""

__all__: list[str] = []
