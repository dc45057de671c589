"""Extraction: a fetched body → clean documents (HTML main content, PDFs, lecturer and curriculum entities).

``extract(url, body, content_type)`` is the public entry point; ``parse_page`` also returns what the crawler needs
(links, canonical URL, robots meta). Site-wide clean-up (boilerplate lines, duplicates) happens later, in
:mod:`sync_jobs.postprocess`, because it needs every page.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import trafilatura
from lxml import etree

from storage.models import Document
from sync_jobs.decode import decode_body, media_type
from sync_jobs.entities import course_line, find_courses, find_lecturers
from sync_jobs.html_blocks import _NAV_LINE, HEADINGS, Block, blocks_of, clean_soup, main_element, parse_html
from sync_jobs.normalize import normalize_inline, normalize_text, sha1_hex
from sync_jobs.urls import host_key, normalize_url, resolve_link

__all__ = ["HTML_TYPES", "PDF_TYPES", "PageExtract", "doc_id_for", "extract", "make_document", "parse_page"]

logger = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
_TITLE_SPLIT = re.compile(r"\s+(?:[|–—»·:]|-|::)\s+")
_PDF_MAX_PAGES = 300


@dataclass(frozen=True, slots=True)
class PageExtract:
    """Everything taken from one response."""

    documents: tuple[Document, ...]
    links: tuple[str, ...] = ()
    canonical: str | None = None
    noindex: bool = False
    nofollow: bool = False
    title: str = ""
    meta: dict[str, str] = field(default_factory=dict)


def doc_id_for(url: str, key: str = "") -> str:
    """Stable id of a document: its canonical URL (normalised) plus, for entities, a key such as the name."""
    return sha1_hex(normalize_url(url), key.lower())[:16]


def make_document(url: str, title: str, sections: list[tuple[str, str]], *, kind: str = "page", key: str = "",
                  fetched_at: str = "") -> Document | None:
    """A Document from (heading, body) sections; None when there is no text."""
    clean: list[tuple[str, str]] = []
    for heading, body in sections:
        heading, body = normalize_inline(heading), normalize_text(body)
        if body:
            clean.append((heading, body))
        elif heading and clean:
            continue
    if not clean:
        return None
    title = normalize_inline(title) or url
    text = "\n\n".join(f"{h}\n{b}" if h else b for h, b in clean)
    return Document(
        doc_id=doc_id_for(url, key),
        url=url,
        title=title,
        text=text,
        content_hash=sha1_hex(kind, title, text),
        fetched_at=fetched_at,
        kind=kind,
        urls=(url,),
        sections=tuple(clean),
    )


def _sections(blocks: list[Block], title: str) -> list[tuple[str, str]]:
    sections: list[tuple[str, list[str]]] = [("", [])]
    for block in blocks:
        if block.level:
            if block.text == title and not sections[-1][1] and len(sections) == 1:
                continue
            sections.append((block.text, []))
        else:
            sections[-1][1].append(block.text)
    # A heading with nothing under it is dropped (link-list titles, empty widgets), unless it is all there is.
    out = [(heading, "\n".join(lines)) for heading, lines in sections if lines]
    if not out:
        heads = [heading for heading, _ in sections if heading]
        return [("", "\n".join(heads))] if heads else []
    return out


def _trafilatura_blocks(html: str, url: str) -> list[Block]:
    try:
        xml = trafilatura.extract(html, url=url, output_format="xml", include_tables=True, include_comments=False,
                                  include_links=False, include_images=False, include_formatting=False,
                                  favor_recall=True, deduplicate=False, with_metadata=False)
    except Exception:  # boundary: third-party parser, trafilatura raises a variety of parser errors on broken markup; the fallback extracts
        logger.debug("trafilatura failed on %s", url, exc_info=True)
        return []
    if not xml:
        return []
    try:
        root = etree.fromstring(xml.encode("utf-8"), parser=etree.XMLParser(recover=True))
    except etree.XMLSyntaxError:
        return []
    main = root.find("main")
    if main is None:
        return []
    blocks: list[Block] = []

    def text_of(el: etree._Element) -> str:
        return normalize_inline(" ".join(el.itertext()))

    for el in main:
        tag = el.tag
        if tag == "head":
            rend = el.get("rend", "h2")
            level = int(rend[1]) if len(rend) == 2 and rend[1].isdigit() else 2
            text = text_of(el)
            if text:
                blocks.append(Block(level, text))
        elif tag == "list":
            for item in el.iter("item"):
                text = normalize_inline(" ".join(t for t in item.xpath("text()|*[not(self::list)]//text()")))
                if text:
                    blocks.append(Block(0, text))
        elif tag == "table":
            rows = [[text_of(c) for c in row.findall("cell")] for row in el.findall("row")]
            header: list[str] = []
            if rows and el.find("row") is not None and all(c.get("role") == "head" for c in el.find("row").findall("cell")):
                header = rows.pop(0)
            for cells in rows:
                if len(cells) == 2 and all(cells) and len(cells[0]) <= 60:
                    line = f"{cells[0].rstrip(':')}: {cells[1]}"
                elif header and len(header) == len(cells):
                    line = "; ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=True) if c)
                else:
                    line = " | ".join(c for c in cells if c)
                if line and not _NAV_LINE.match(line):
                    blocks.append(Block(0, line))
        else:
            text = text_of(el)
            if text and not _NAV_LINE.match(text):
                blocks.append(Block(0, text))
    return blocks


def _with_headings(chosen: list[Block], structure: list[Block]) -> list[Block]:
    """Trafilatura sometimes drops headings (page builders wrap each one in its own widget). Put the page's own
    headings back: keep the BeautifulSoup blocks whose text trafilatura kept, plus every heading, in page order,
    when that accounts for nearly all of trafilatura's text."""
    if any(b.level for b in chosen) or not any(b.level for b in structure):
        return chosen
    kept = {b.text for b in chosen if not b.level}
    glued = _glued(kept, structure)
    merged = [b for b in structure if b.level or b.text in kept or b.text in glued]
    # what the page's own blocks account for: the texts kept as they are, and those glued from blocks kept apart
    found = {b.text for b in merged if not b.level} & kept | set(glued.values())
    if sum(len(t.split()) for t in found) < 0.8 * sum(len(t.split()) for t in kept):
        return chosen
    return merged


def _glued(texts: set[str], structure: list[Block]) -> dict[str, str]:
    """The page blocks that trafilatura glued into one of ``texts`` (block text → that text): a run of consecutive
    blocks whose texts, joined by a space, are that text ("Tenaga Kependidikan Layanan administrasi …" is the page's
    heading and the paragraph under it, once a table between them became records)."""
    found: dict[str, str] = {}
    longest = max(map(len, texts), default=0)
    for i in range(len(structure)):
        joined = structure[i].text
        for j in range(i + 1, len(structure)):
            joined = f"{joined} {structure[j].text}"
            if len(joined) > longest:
                break
            if joined in texts:
                found.update((b.text, joined) for b in structure[i:j + 1] if not b.level)
    return found


def _words(blocks: list[Block]) -> int:
    return sum(len(b.text.split()) for b in blocks)


def _first_part(title: str) -> str:
    parts = [p for p in _TITLE_SPLIT.split(title) if p.strip()]
    return parts[0] if parts else title


def _page_title(soup, main) -> str:
    """The page's own title: its <h1> when the <title>/og:title agree with it, else og:title or <title> without
    the site-name suffix (posts often use <h1> inside the text for a sub-heading)."""
    h1_tag = main.find("h1") if main is not None else None
    h1 = normalize_inline(h1_tag.get_text(" ", strip=True)) if h1_tag is not None else ""
    og_tag = soup.find("meta", attrs={"property": "og:title"})
    og = normalize_inline(str(og_tag["content"])) if og_tag is not None and og_tag.get("content") else ""
    head = normalize_inline(soup.title.get_text()) if soup.title is not None else ""
    first_heading = main.find(list(HEADINGS)) if main is not None else None
    leads = h1_tag is not None and first_heading is h1_tag
    if h1 and len(h1.split()) <= 25 and (leads or not (og or head) or h1.lower() in f"{og} {head}".lower()):
        return h1
    if og:
        return _first_part(og)
    if head:
        return _first_part(head)
    return h1


_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def _page_facts(soup, url: str) -> dict[str, str]:
    """What a page says about itself, read before the clean-up removes it (kept in the page document's ``meta``;
    not part of the text nor its hash): ``published``, its publication date (``article:published_time``, JSON-LD
    ``datePublished``, ``<time class="published" datetime>``) as YYYY-MM-DD, and ``trail`` / ``trail_paths``, its
    breadcrumb (JSON-LD ``BreadcrumbList`` or a breadcrumb ``<nav>``) without the home page and the page itself, as
    names joined by " | " and the same-host paths joined by spaces. Announcements (issue 32) use them."""
    import json

    facts: dict[str, str] = {}
    dates: list[str] = []
    tag = soup.find("meta", attrs={"property": "article:published_time"})
    if tag is not None:
        dates.append(str(tag.get("content", "")))
    crumbs: list[tuple[str, str]] = []
    for script in soup.find_all("script", attrs={"type": "application/ld+json"}):
        try:
            data = json.loads(script.string or "")
        except ValueError:
            continue
        items = data.get("@graph", [data]) if isinstance(data, dict) else data if isinstance(data, list) else []
        for item in items:
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("datePublished"), str):
                dates.append(item["datePublished"])
            if item.get("@type") == "BreadcrumbList" and not crumbs:
                for entry in item.get("itemListElement") or []:
                    if isinstance(entry, dict):
                        target = entry.get("item")
                        target = target.get("@id", "") if isinstance(target, dict) else target
                        crumbs.append((normalize_inline(str(entry.get("name", ""))), str(target or "")))
    for time_tag in soup.find_all("time", attrs={"datetime": True}):
        if "published" in " ".join(time_tag.get("class") or []):
            dates.append(str(time_tag["datetime"]))
    if not crumbs:
        nav = soup.find(attrs={"aria-label": re.compile("breadcrumb", re.I)}) or soup.find(
            class_=re.compile("breadcrumb", re.I))
        if nav is not None:
            crumbs = [(normalize_inline(a.get_text(" ")), str(a["href"])) for a in nav.find_all("a", href=True)]
    for value in dates:
        match = _ISO_DATE.match(value.strip())
        if match:
            facts["published"] = match.group(1)
            break
    own = normalize_url(url)
    trail = []
    for name, target in crumbs:
        resolved = resolve_link(url, target) if target else None
        if not name or resolved is None or host_key(resolved) != host_key(url) or normalize_url(resolved) == own:
            continue
        path = urlsplit(resolved).path or "/"
        if path != "/":
            trail.append((name, path))
    if trail:
        facts["trail"] = " | ".join(n for n, _ in trail)
        facts["trail_paths"] = " ".join(p for _, p in trail)
    return facts


def _robots_meta(soup) -> tuple[bool, bool]:
    noindex = nofollow = False
    for meta in soup.find_all("meta", attrs={"name": re.compile(r"^(robots|prodi-bot)$", re.I)}):
        content = str(meta.get("content", "")).lower()
        noindex = noindex or "noindex" in content or "none" in content
        nofollow = nofollow or "nofollow" in content or "none" in content
    return noindex, nofollow


def _links(soup, base: str) -> list[str]:
    base_tag = soup.find("base", href=True)
    if base_tag is not None:
        base = resolve_link(base, str(base_tag["href"])) or base
    seen: dict[str, None] = {}
    for a in soup.find_all(["a", "area"], href=True):
        rel = " ".join(a.get("rel", []) if isinstance(a.get("rel"), list) else [str(a.get("rel", ""))]).lower()
        if "nofollow" in rel:
            continue
        link = resolve_link(base, str(a["href"]))
        if link:
            seen.setdefault(link, None)
    return list(seen)


def _parse_html(url: str, body: bytes, content_type: str, fetched_at: str) -> PageExtract:
    html = decode_body(body, content_type)
    soup = parse_html(html)
    noindex, nofollow = _robots_meta(soup)
    links = [] if nofollow else _links(soup, url)
    canonical = None
    tag = soup.find("link", rel=lambda v: v and "canonical" in (v if isinstance(v, list) else [v]), href=True)
    if tag is not None:
        candidate = resolve_link(url, str(tag["href"]))
        if candidate and host_key(candidate) == host_key(url):
            canonical = candidate
    doc_url = canonical or url
    facts = _page_facts(soup, doc_url)
    clean_soup(soup)
    main = main_element(soup)
    title = _page_title(soup, main)
    if noindex:
        return PageExtract((), tuple(links), canonical, noindex, nofollow, title)
    documents: list[Document] = []

    courses = find_courses(main)
    if courses:
        by_semester: dict[str, list[str]] = {}
        for table, rows in courses:
            for course in rows:
                heading = f"Semester {course.semester}" if course.semester is not None else "Mata Kuliah"
                by_semester.setdefault(heading, []).append(course_line(course))
            table.decompose()
        doc = make_document(doc_url, title or "Kurikulum", [(h, "\n".join(lines)) for h, lines in by_semester.items()],
                            kind="curriculum", key="#curriculum", fetched_at=fetched_at)
        if doc:
            documents.append(doc)

    lecturers, whole_page = find_lecturers(main, title)
    for person in lecturers:
        doc = make_document(doc_url, person.name, [(person.name, "\n".join(person.lines()))], kind="lecturer",
                            key="#lecturer:" + normalize_inline(person.name), fetched_at=fetched_at)
        if doc:
            documents.append(doc)
    if not whole_page:
        blocks = _trafilatura_blocks(str(soup), url)
        fallback = blocks_of(main)
        kept = {b.text for b in blocks}
        lost_rows = any(b.row and b.text not in kept for b in fallback)
        if lost_rows or _words(blocks) < 0.4 * _words(fallback):
            blocks = fallback  # trafilatura dropped facts (table rows) or most of the page
        else:
            blocks = _with_headings(blocks, fallback)
        page = make_document(doc_url, title, _sections(blocks, title), kind="page", fetched_at=fetched_at)
        if page is not None:
            documents.append(dataclasses.replace(page, meta=facts) if facts else page)
    if canonical and normalize_url(canonical) != normalize_url(url):
        documents = [dataclasses.replace(d, urls=(d.url, url)) for d in documents]
    return PageExtract(tuple(documents), tuple(links), canonical, noindex, nofollow, title)


def _parse_pdf(url: str, body: bytes, fetched_at: str) -> PageExtract:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted:
            reader.decrypt("")
        pages = [page.extract_text() or "" for page in reader.pages[:_PDF_MAX_PAGES]]
        meta_title = ""
        if reader.metadata is not None and reader.metadata.title:
            meta_title = str(reader.metadata.title)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, AttributeError, IndexError, RecursionError,
            ZeroDivisionError, AssertionError, NotImplementedError) as error:
        raise ValueError(f"unreadable PDF: {type(error).__name__}: {error}") from None
    text = normalize_text("\n\n".join(pages))
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)  # words hyphenated across lines
    paragraphs = re.sub(r"(?<![.:;!?])\n(?!\n)", " ", text)  # lines broken inside sentences
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1]).rsplit(".", 1)[0].replace("-", " ").replace("_", " ")
    title = normalize_inline(meta_title) or normalize_inline(name) or url
    doc = make_document(url, title, [("", paragraphs)], kind="pdf", fetched_at=fetched_at)
    return PageExtract((doc,) if doc else (), (), None, False, False, title)


def _parse_flat(url: str, body: bytes, content_type: str, fetched_at: str) -> PageExtract:
    """Pathologically nested markup: trafilatura's plain text, or the tag-stripped text, as one section."""
    html = decode_body(body, content_type)
    try:
        text = trafilatura.extract(html, url=url, include_tables=True, favor_recall=True) or ""
    except Exception:  # boundary: third-party parser, trafilatura raises a variety of parser errors on broken markup; the fallback extracts
        text = ""
    if not text:
        text = re.sub(r"<[^>]+>", " ", re.sub(r"(?is)<(script|style)[^>]*>.*?</\1>", " ", html))
    doc = make_document(url, url, [("", text)], fetched_at=fetched_at)
    return PageExtract((doc,) if doc else (), (), None, False, False, url)


def parse_page(url: str, body: bytes, content_type: str, fetched_at: str = "") -> PageExtract:
    """Extract documents and links from one response. Raises ValueError for an unsupported or unreadable body."""
    kind = media_type(content_type)
    if kind in PDF_TYPES or (not kind and body[:5] == b"%PDF-"):
        return _parse_pdf(url, body, fetched_at)
    if kind in HTML_TYPES or not kind:
        try:
            return _parse_html(url, body, content_type, fetched_at)
        except RecursionError:
            return _parse_flat(url, body, content_type, fetched_at)
    raise ValueError(f"unsupported content type {kind!r}: only HTML and PDF are extracted")


def extract(url: str, body: bytes, content_type: str) -> list[Document]:
    """Documents in one response: the page's main content, its lecturers, its curriculum, or a PDF's text."""
    return list(parse_page(url, body, content_type).documents)
