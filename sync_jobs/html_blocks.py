"""HTML structure with BeautifulSoup: boilerplate elements removed, and a walker that turns an element into
ordered blocks (headings, paragraphs, list items, table rows)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from sync_jobs.normalize import normalize_inline

__all__ = ["Block", "blocks_of", "clean_soup", "main_element", "parse_html", "table_rows"]

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCK_TAGS = {
    "p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd", "blockquote", "pre", "figure",
    "figcaption", "address", "tr", "table", "thead", "tbody", "tfoot", "form", "fieldset", "details", "summary",
    "header", "footer", "aside", "nav", "center", "hr", "caption",
} | HEADINGS
_DROP_TAGS = ["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "video",
              "audio", "map", "button", "select", "input", "textarea", "link", "meta"]
_STRUCTURAL_BOILERPLATE = ["nav", "footer", "aside", "dialog"]
_BOILERPLATE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog",
                      "menu", "menubar"}
# One class or id matching this is boilerplate: navigation, footers, sidebars, cookie banners, share widgets.
_BOILERPLATE_NAME = re.compile(
    r"^(?:widget|widgets|widget-area|sidebar.*|.*-sidebar|secondary|site-footer|entry-footer|post-footer|"
    r"colophon|site-header|masthead|.*-location-header|.*-location-footer|comments-.*|post-author|top-?bar|navbar.*|.*-navbar|nav|navigation|.*-navigation|menu|.*-menu|menu-.*|"
    r"breadcrumbs?|.*breadcrumb.*|.*cookie.*|.*consent.*|.*gdpr.*|cmplz.*|.*share.*|.*sharing.*|.*social.*|"
    r"related.*|.*-related|comments?|comment-.*|.*-comments|respond|popup.*|.*-popup|modal.*|newsletter.*|"
    r"skip-link|screen-reader-text|sr-only|visually-hidden|post-navigation|nav-links|pagination|page-links|"
    r"entry-meta|post-meta|tags-links|cat-links|author-box|jp-relatedposts|search-form|searchform|"
    r"back-to-top|scroll-to-top|wpml-ls.*|lang-switcher|language-switcher|announcement-bar|marquee|ticker)$",
    re.IGNORECASE,
)
# "« Kembali ke daftar", "Baca selengkapnya »": navigation, not content.
# View counters change on every visit and would make unchanged pages look changed; breadcrumbs repeat the menu.
_NAV_LINE = re.compile(r"^(?:[«‹←]\s*.{0,60}|.{0,60}\s*[»›→]|(?:dilihat|dibaca|views?|hits|pengunjung)\s*:?\s*"
                       r"[\d.,]+\s*(?:kali|x|times)?|(?:home|beranda|halaman utama|homepage)\s*[»›>/|]"
                       r"(?:[^»›>/|]{1,60}[»›>/|]){0,6}[^»›>/|]{0,80})$", re.IGNORECASE)
# Header- and footer-ish names are boilerplate only outside the content (a lecturer card may have its own
# "card-header" or "card-footer" holding the name or the e-mail).
_HEADERISH = re.compile(r"^(?:header|top-header|header-top|header-wrap.*|site-branding|site-title|site-description|"
                        r"footer|footer-.*|.*-footer)$", re.IGNORECASE)
_INVISIBLE_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_MAIN_SELECTORS = ["main", "[role=main]", "article", "#content", "#main", ".entry-content", ".post-content",
                   ".page-content", ".site-content", ".content"]


@dataclass(frozen=True, slots=True)
class Block:
    """A heading (``level`` 1–6) or a body line (``level`` 0) in page order."""

    level: int
    text: str
    row: bool = False  # a table row or a definition-list entry: a fact that must not be lost


def parse_html(html: str) -> BeautifulSoup:
    """Parse leniently (lxml copes with malformed markup)."""
    return BeautifulSoup(html, "lxml")


def _is_boilerplate(tag: Tag) -> bool:
    if tag.name in _STRUCTURAL_BOILERPLATE:
        return True
    attrs = tag.attrs or {}
    if str(attrs.get("role", "")).lower() in _BOILERPLATE_ROLES:
        return True
    # Inline display:none and the hidden attribute are kept on purpose: collapsed tabs and accordions (FAQ
    # answers) use them, and a lost fact costs more than a stray line.
    if str(attrs.get("aria-hidden", "")).lower() == "true" and tag.name not in ("main", "article", "section"):
        return True
    if tag.name == "header" and tag.find_parent(["article", "main"]) is None:
        return True
    names = list(attrs.get("class", []) or [])
    if attrs.get("id"):
        names.append(str(attrs["id"]))
    if any(_BOILERPLATE_NAME.match(name) for name in names):
        return True
    return any(_HEADERISH.match(name) for name in names) and tag.find_parent(["main", "article"]) is None


def clean_soup(soup: BeautifulSoup) -> BeautifulSoup:
    """Remove scripts, comments and boilerplate regions in place; returns the same soup."""
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    root = soup.body or soup
    for tag in list(root.find_all(True)):
        if getattr(tag, "decomposed", False) or tag.parent is None:
            continue
        if tag.name not in ("body", "html", "main") and _is_boilerplate(tag):
            tag.decompose()
    # Collapsed content (tabs, accordions) is content: make it visible for trafilatura too.
    for tag in root.find_all(True):
        if "hidden" in tag.attrs:
            del tag.attrs["hidden"]
        style = str(tag.attrs.get("style", ""))
        if style and _INVISIBLE_STYLE.search(style):
            del tag.attrs["style"]
    return soup


def main_element(soup: BeautifulSoup) -> Tag:
    """The element that holds the page's own content (``<main>``, ``<article>``, ``.entry-content``…), or body."""
    body = soup.body or soup
    total = len(body.get_text(" ", strip=True))
    for selector in _MAIN_SELECTORS:
        found = soup.select(selector)
        if not found:
            continue
        best = max(found, key=lambda t: len(t.get_text(" ", strip=True)))
        if total and len(best.get_text(" ", strip=True)) >= 0.3 * total:
            return best
    return body


def _cells(row: Tag) -> list[str]:
    return [normalize_inline(cell.get_text(" ", strip=True)) for cell in row.find_all(["th", "td"], recursive=False)]


def table_rows(table: Tag) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a table; the header is the first row made of <th> (or the <thead>), else empty."""
    rows = [row for row in table.find_all("tr") if row.find_parent("table") is table]
    header: list[str] = []
    body: list[list[str]] = []
    for row in rows:
        cells = _cells(row)
        if not any(cells):
            continue
        is_head = row.find_parent("thead") is not None or (
            row.find("td", recursive=False) is None and row.find("th", recursive=False) is not None
        )
        if is_head and not header and not body:
            header = cells
        else:
            body.append(cells)
    if not header and len(body) >= 3 and len(body[0]) >= 3 and _looks_like_header(body[0], body[1:]):
        header, body = body[0], body[1:]  # a header row typed as ordinary cells (common in CMS editors)
    return header, body


def _looks_like_header(first: list[str], rest: list[list[str]]) -> bool:
    if not all(first) or any(re.search(r"\d", c) or len(c.split()) > 4 for c in first):
        return False
    # the rows below carry numbers where the first row has words (SKS, NIDN, semester …)
    return any(any(re.search(r"\d", c) for c in row) for row in rest[:3])


def _row_line(header: list[str], cells: list[str]) -> str:
    if len(cells) == 2 and cells[0] and cells[1] and len(cells[0]) <= 60:
        return f"{cells[0].rstrip(':')}: {cells[1]}"
    if header and len(header) == len(cells):
        parts = [f"{h}: {c}" if h and c else c for h, c in zip(header, cells, strict=True) if c]
        return "; ".join(parts)
    if len(cells) == 2 and cells[0] and cells[1] and len(cells[0]) <= 60:
        return f"{cells[0].rstrip(':')}: {cells[1]}"
    return " | ".join(c for c in cells if c)


def blocks_of(element: Tag) -> list[Block]:
    """Headings and text lines of ``element`` in document order (tables become one line per row)."""
    out: list[Block] = []
    line: list[str] = []

    def flush() -> None:
        if line:
            text = normalize_inline(" ".join(line))
            if text and not _NAV_LINE.match(text):
                out.append(Block(0, text))
            line.clear()

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, Comment):
                continue
            if isinstance(child, NavigableString):
                if str(child).strip():
                    line.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in HEADINGS:
                flush()
                text = normalize_inline(child.get_text(" ", strip=True))
                if text:
                    out.append(Block(int(name[1]), text))
            elif name == "table":
                flush()
                header, rows = table_rows(child)
                if header and not rows:
                    out.append(Block(0, " | ".join(h for h in header if h)))
                for cells in rows:
                    text = _row_line(header, cells)
                    if text:
                        out.append(Block(0, text, row=True))
            elif name == "dl":
                flush()
                label = ""
                for item in child.find_all(["dt", "dd"]):
                    if item.find_parent("dl") is not child:
                        continue
                    if item.name == "dt":
                        if label:
                            out.append(Block(0, label))
                        label = normalize_inline(item.get_text(" ", strip=True))
                        continue
                    value = "; ".join(
                        normalize_inline(part) for part in item.get_text("\n", strip=True).split("\n") if part.strip()
                    )
                    if value:
                        out.append(Block(0, f"{label.rstrip(':：')}: {value}" if label else value, row=True))
                    label = ""
                if label:
                    out.append(Block(0, label))
            elif name == "br":
                flush()
            elif name in _BLOCK_TAGS:
                flush()
                walk(child)
                flush()
            else:
                walk(child)

    walk(element)
    flush()
    return out
