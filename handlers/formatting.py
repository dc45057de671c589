"""Text helpers shared by the channel adapters: splitting at sentence boundaries, HTML escaping, source lists."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from generation.types import Source

__all__ = ["format_sources_html", "format_sources_plain", "mark", "split_message"]

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


def mark(text: str, highlights: Sequence[str], left: str, right: str) -> str:
    """``text`` with the first occurrence of each highlight (the reader's answer span) wrapped in ``left`` … ``right``
    (``<b>``/``</b>`` on escaped Telegram HTML, ``*``/``*`` on WhatsApp). A highlight not in the text, or one that
    overlaps a highlight already marked, is left as it is: marking never changes the words."""
    taken: list[tuple[int, int]] = []
    for h in highlights:
        h = h.strip()
        if not h:
            continue
        at = text.find(h)
        if at < 0 or any(a < at + len(h) and at < b for a, b in taken):
            continue
        taken.append((at, at + len(h)))
    out, pos = [], 0
    for a, b in sorted(taken):
        out += [text[pos:a], left, text[a:b], right]
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _hard_split(piece: str, limit: int) -> list[str]:
    """Split a piece with no sentence boundary under ``limit``: at the last space, else at the limit."""
    out = []
    while len(piece) > limit:
        cut = piece.rfind(" ", 0, limit)
        if cut <= limit // 2:
            cut = limit
        out.append(piece[:cut].rstrip())
        piece = piece[cut:].lstrip()
    if piece:
        out.append(piece)
    return out


def split_message(text: str, limit: int) -> list[str]:
    """Split ``text`` into parts of at most ``limit`` characters, preferring paragraph and sentence ends.

    Never returns an empty part; an empty text gives an empty list. Newlines inside a part are kept.
    """
    if limit < 16:
        raise ValueError("split_message limit must be at least 16 characters")
    text = text.strip()
    if not text:
        return []
    if len(text) <= limit:
        return [text]
    # Tokens keep their trailing separator so joining them back restores the text.
    pieces: list[str] = []
    last = 0
    for match in _SENTENCE_END.finditer(text):
        pieces.append(text[last : match.end()])
        last = match.end()
    pieces.append(text[last:])
    parts: list[str] = []
    current = ""
    for piece in pieces:
        if len(current) + len(piece.rstrip()) <= limit:
            current += piece
            continue
        if current.strip():
            parts.append(current.strip())
        current = ""
        if len(piece.rstrip()) > limit:
            chunks = _hard_split(piece.strip(), limit)
            parts.extend(chunks[:-1])
            current = chunks[-1] + " "
        else:
            current = piece
    if current.strip():
        parts.append(current.strip())
    return parts


def _unique(sources: Iterable[Source]) -> list[Source]:
    seen: set[str] = set()
    out = []
    for source in sources:
        if source.url and source.url not in seen:
            seen.add(source.url)
            out.append(source)
    return out


def format_sources_html(sources: Sequence[Source], header: str = "Sumber:") -> str:
    """Telegram HTML: a numbered list of ``<a href>`` links, every value escaped."""
    items = _unique(sources)
    if not items:
        return ""
    lines = [html.escape(header)]
    for i, source in enumerate(items, 1):
        title = html.escape(source.title or source.url)
        href = html.escape(source.url, quote=True)
        lines.append(f'{i}. <a href="{href}">{title}</a>')
    return "\n".join(lines)


def format_sources_plain(sources: Sequence[Source], header: str = "Sumber:") -> str:
    """Plain text (WhatsApp): title then the bare URL, which the app turns into a link."""
    items = _unique(sources)
    if not items:
        return ""
    lines = [header]
    for i, source in enumerate(items, 1):
        title = source.title.strip() if source.title else ""
        lines.append(f"{i}. {title} - {source.url}" if title and title != source.url else f"{i}. {source.url}")
    return "\n".join(lines)
