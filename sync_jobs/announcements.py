"""What counts as an announcement (issue 32, stage 2): from the pages a reindex found new or changed, the ones that
look like news, each with a title, its date, one or two lead sentences taken verbatim from the page, and the link.

A document is an announcement when all hold:

1. It is **new** since the last run, or its **main text changed**: the extracted text the index uses
   (``Document.text``, after the site-wide clean-up that drops menus, sidebars, footers, share bars, view counters
   and cookie banners), compared line by line; a change that only touches a "dilihat 123 kali" / "terakhir
   diperbarui …" line is not one. A footer-only change never reaches the text at all.
2. It lies in a **news section**: under one of ``ANNOUNCE_PATH_PREFIXES`` when set; by default in a section the site
   itself marks as news, read from its own navigation: the breadcrumb the page carries (``meta["trail"]``, e.g.
   "Beranda » Berita »", recorded at extraction) names a news section (:data:`NEWS_WORDS`: Berita, News,
   Pengumuman, Agenda, …) or links to one (``/news/``, ``/berita/``), or the page's own path lies under such a
   path (``/berita/<slug>/``). Listing pages themselves (``/news/``, ``/category/…``, ``…/page/2/``) are not.
   **Or** it carries a publication date (``meta["published"]``) within the last ``ANNOUNCE_MAX_AGE_DAYS`` days.
3. It is a page (not a lecturer profile or curriculum entity split from one, nor a PDF without a date).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from urllib.parse import urlsplit

from storage.models import Document

__all__ = ["NEWS_WORDS", "AnnounceRules", "Draft", "detect", "in_news_section", "lead_sentences",
           "main_text_changed", "published_on"]

# the words a site uses for its news sections (menu labels, breadcrumb names, path segments)
NEWS_WORDS = frozenset({
    "berita", "news", "pengumuman", "announcement", "announcements", "kabar", "warta", "agenda", "artikel",
    "article", "articles", "blog", "info-terkini", "berita-terkini", "kabar-prodi", "events", "event",
})
_LISTING_SEGMENTS = frozenset({"category", "kategori", "tag", "tags", "page", "author", "archive", "arsip"})
_WORD = re.compile(r"[\w-]+")
# a line that only counts or stamps: views, last update; a change to it alone is no news
_STAMP_LINE = re.compile(
    r"^\W*(?:dilihat|dibaca|views?|hits|terakhir diperbarui|diperbarui|last updated|updated|diposting|posted)\b"
    r"[\s:\d.,/\w-]{0,60}$", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATIONS = ("Dr.", "Prof.", "M.Kom.", "M.T.", "M.Sc.", "S.Kom.", "S.T.", "No.", "Jl.", "Lt.", "dll.", "dsb.",
                  "a.n.", "M.Cs.", "Ir.", "H.", "Hj.", "Tel.", "Telp.")


@dataclass(frozen=True, slots=True)
class AnnounceRules:
    """``prefixes``: ANNOUNCE_PATH_PREFIXES (empty: the site's own news sections); ``max_age_days``:
    ANNOUNCE_MAX_AGE_DAYS (0: the publication date alone never makes a page news); ``today``: the local date."""

    prefixes: tuple[str, ...] = ()
    max_age_days: int = 30
    today: date = field(default_factory=date.today)


@dataclass(frozen=True, slots=True)
class Draft:
    """One announcement as found: ``key`` identifies the page version (doc id + content hash), so a second run, a
    restart or another replica finding the same version records it once."""

    key: str
    doc_id: str
    url: str
    title: str
    date: str  # YYYY-MM-DD: the page's publication date, else the day it was found
    summary: str  # one or two sentences of the page, verbatim
    text: str  # title + the page's text, for the topic match (not stored)
    reason: str  # "new" or "changed"


def _segments(path: str) -> list[str]:
    return [s for s in path.lower().split("/") if s]


def _is_news_word(text: str) -> bool:
    words = [w.lower() for w in _WORD.findall(text or "")]
    return any(w in NEWS_WORDS for w in words) or "-".join(words) in NEWS_WORDS


def published_on(doc: Document) -> date | None:
    value = str((doc.meta or {}).get("published", ""))
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def _listing(path: str, section_paths: set[str]) -> bool:
    segments = _segments(path)
    return (path.rstrip("/") + "/" in section_paths or not segments or any(s in _LISTING_SEGMENTS for s in segments)
            or all(s in NEWS_WORDS for s in segments))


def in_news_section(doc: Document, rules: AnnounceRules, section_paths: set[str] = frozenset()) -> bool:
    """Whether ``doc`` lies in a news section (configured prefixes, else the site's own), not being a listing."""
    path = urlsplit(doc.url).path or "/"
    if _listing(path, set(section_paths)):
        return False
    if rules.prefixes:
        return any(path.startswith(p) and path.rstrip("/") != p.rstrip("/") for p in rules.prefixes)
    meta = doc.meta or {}
    if any(_is_news_word(name) for name in str(meta.get("trail", "")).split(" | ")):
        return True
    if any(_is_news_word(seg) for p in str(meta.get("trail_paths", "")).split() for seg in _segments(p)):
        return True
    segments = _segments(path)
    return len(segments) > 1 and any(s in NEWS_WORDS for s in segments[:-1])


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in (text or "").splitlines() if line.strip()]


def main_text_changed(old: Document | None, new: Document) -> bool:
    """True when ``new`` is new, or its title or main text differ from ``old`` by more than stamp/counter lines."""
    if old is None:
        return True
    if old.title.strip() != new.title.strip():
        return True
    before, after = _lines(old.text), _lines(new.text)
    if before == after:
        return False
    gone = [line for line in before if line not in after]
    came = [line for line in after if line not in before]
    return not all(_STAMP_LINE.match(line) for line in gone + came)


def lead_sentences(doc: Document, count: int = 2, max_chars: int = 400) -> str:
    """The first ``count`` sentences of the page's first section with text, verbatim (whitespace collapsed; the
    page title is left out when the extracted text starts with it), cut to at most ``max_chars`` by dropping whole
    sentences (the first one is cut at a word with "…" only when it alone is longer)."""
    bodies = [body for _, body in (doc.sections or ())] or [doc.text]
    body = next((b for b in bodies if b and len(b.split()) >= 4), bodies[0] if bodies else "")
    paragraph = " ".join(next((line for line in body.splitlines() if len(line.split()) >= 4), body).split())
    title = " ".join((doc.title or "").split())
    rest = paragraph[len(title) + 1:] if title else ""
    # a heading the extraction ran into the text ("<title> Program studi mengadakan …"), not a sentence that opens
    # with the title's words ("<title> dibuka mulai …")
    if (len(title.split()) >= 3 and paragraph.casefold().startswith(title.casefold() + " ") and rest[:1].isupper()):
        paragraph = rest
    protected = paragraph
    for i, abbreviation in enumerate(_ABBREVIATIONS):
        protected = protected.replace(abbreviation, abbreviation.replace(".", f"\x00{i}\x00"))
    pieces = _SENTENCE_END.split(protected)
    sentences = [re.sub(r"\x00\d+\x00", ".", p).strip() for p in pieces if p.strip()]
    out: list[str] = []
    for sentence in sentences[:count]:
        if out and len(" ".join([*out, sentence])) > max_chars:
            break
        out.append(sentence)
    lead = " ".join(out)
    if len(lead) > max_chars:
        lead = lead[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return lead


def detect(added: Iterable[str], changed: Iterable[str], new_docs: Mapping[str, Document],
           old_docs: Mapping[str, Document | None], rules: AnnounceRules) -> list[Draft]:
    """The announcements among the documents a crawl ``added`` and ``changed`` (ids), in that order.
    ``new_docs``: every document after the crawl (for the section paths); ``old_docs``: the changed ones before."""
    section_paths = {p.rstrip("/") + "/" for d in new_docs.values()
                     for p in str((d.meta or {}).get("trail_paths", "")).split()}
    oldest = rules.today - timedelta(days=rules.max_age_days)
    drafts: list[Draft] = []
    seen: set[str] = set()
    for reason, ids in (("new", list(added)), ("changed", list(changed))):
        for doc_id in ids:
            doc = new_docs.get(doc_id)
            if doc is None or doc_id in seen or doc.kind not in ("page", "pdf"):
                continue
            seen.add(doc_id)
            if reason == "changed" and not main_text_changed(old_docs.get(doc_id), doc):
                continue
            published = published_on(doc)
            recent = published is not None and rules.max_age_days > 0 and oldest <= published <= rules.today
            if not (recent or (doc.kind == "page" and in_news_section(doc, rules, section_paths))):
                continue
            summary = lead_sentences(doc)
            if not summary:
                continue
            key = f"{doc.doc_id}:{doc.content_hash}"
            drafts.append(Draft(key=hashlib.sha1(key.encode()).hexdigest()[:24], doc_id=doc.doc_id, url=doc.url,
                                title=doc.title, date=(published or rules.today).isoformat(), summary=summary,
                                text=f"{doc.title}\n{doc.text}", reason=reason))
    return drafts


def prefixes_from(value: str | Sequence[str]) -> tuple[str, ...]:
    """ANNOUNCE_PATH_PREFIXES ("/berita/, /pengumuman/") as paths starting and ending with "/"."""
    items = value.split(",") if isinstance(value, str) else list(value)
    out = []
    for item in items:
        item = item.strip()
        if item:
            path = urlsplit(item).path if "://" in item else item
            out.append("/" + path.strip("/") + "/" if path.strip("/") else "/")
    return tuple(out)
