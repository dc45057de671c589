"""The bundled sample prodi website: static files (package data) and a small aiohttp server for them."""

from bot.sample_site.server import SampleSite, bundled_site_root, create_app

__all__ = ["SampleSite", "bundled_site_root", "create_app"]
