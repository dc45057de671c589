"""Editing a mutable copy of the sample site the way its admins would: publish news posts (the whole site is
rebuilt by its own generator, so the post appears in the listings, every page's "Berita Terbaru" sidebar and the
sitemap, as on WordPress), change the footer on every page, edit one page."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from unittest import mock

from bot.sample_site import build_site
from bot.sample_site import content as C


def news_post(slug: str, title: str, *paragraphs: str, day: date | None = None,
              category: str = "pengumuman") -> C.NewsPost:
    return C.NewsPost(slug, title, (day or date.today()).isoformat(), category, tuple(paragraphs))


def publish(root: Path, *posts: C.NewsPost) -> None:
    """Rebuild the site under ``root`` with ``posts`` added to the news."""
    with mock.patch.object(C, "NEWS", tuple(posts) + tuple(C.NEWS)):
        build_site.build(Path(root))


def edit(root: Path, path: str, old: str, new: str) -> None:
    target = Path(root).joinpath(*[p for p in path.split("/") if p], "index.html")
    text = target.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not on {path}"
    target.write_text(text.replace(old, new), encoding="utf-8")


def change_footer_everywhere(root: Path, old: str = "Copyright &copy; 2025",
                             new: str = "Copyright &copy; 2026") -> int:
    """Change the footer of every page; returns how many pages changed."""
    changed = 0
    for page in Path(root).rglob("index.html"):
        raw = page.read_bytes()
        if old.encode() in raw:
            page.write_bytes(raw.replace(old.encode(), new.encode()))
            changed += 1
    return changed
