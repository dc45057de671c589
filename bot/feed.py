"""``/feed.xml``: the announcements as an Atom feed (RFC 4287), for reading them without a chat app (issue 32).

Only announcements an admin sent (or ``ANNOUNCE_MODE=auto`` sent) are in it, newest first, at most 50; pending and
discarded ones are not public. ``?topik=beasiswa`` keeps those about a topic, matched as subscriptions are
(``retrieval.topics``: "bsw" is "beasiswa"). Each entry: title, the page as its link, the summary, published (the
announcement's date) and updated; ids are ``tag:`` URIs of the site's host, stable across restarts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape, quoteattr

from retrieval.topics import MAX_TOPIC_CHARS, normalize_topic, topic_matches
from storage.errors import ProdiBotError

__all__ = ["FeedError", "atom_feed"]

FEED_TITLE = "Pengumuman Program Studi"
MAX_ENTRIES = 50


class FeedError(ProdiBotError, ValueError):
    """A ``topik`` that cannot be used; the message is polite Indonesian, for the reader (unlike the rest of the
    error tree, whose messages are English for the logs)."""


def _time(value: str, fallback: str) -> str:
    """An RFC 3339 date-time from an ISO date or date-time (UTC when it has no zone)."""
    for text in (value, fallback):
        try:
            moment = datetime.fromisoformat(text) if "T" in text else datetime.fromisoformat(f"{text}T00:00:00")
        except (TypeError, ValueError):
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def atom_feed(announcements: list[Any], *, site_url: str, self_url: str, topic: str = "") -> str:
    """The Atom document for ``announcements`` (any status: only ``sent`` ones are kept)."""
    wanted = ""
    if topic.strip():
        if len(topic) > MAX_TOPIC_CHARS:
            raise FeedError(f"Mohon maaf, topik terlalu panjang (maksimal {MAX_TOPIC_CHARS} karakter).")
        wanted = normalize_topic(topic)
        if not wanted:
            raise FeedError("Mohon maaf, topik itu tidak dapat dikenali. Contoh: /feed.xml?topik=beasiswa")
    entries = [a for a in announcements if a.status == "sent"
               and (not wanted or topic_matches(wanted, a.topic_text or f"{a.title}\n{a.summary}"))][:MAX_ENTRIES]
    host = urlsplit(site_url).hostname or "localhost"
    updated = max((_time(a.updated_at, a.date) for a in entries), default=_time("", ""))
    title = FEED_TITLE + (f": {wanted}" if wanted else "")
    parts = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="id">',
        f"  <id>{escape(self_url)}</id>",
        f"  <title>{escape(title)}</title>",
        f"  <updated>{updated}</updated>",
        f"  <link rel=\"self\" type=\"application/atom+xml\" href={quoteattr(self_url)}/>",
        f"  <link rel=\"alternate\" type=\"text/html\" href={quoteattr(site_url)}/>",
        "  <author><name>Program Studi</name></author>",
        "  <generator>prodi-bot</generator>",
    ]
    for a in entries:
        day = (a.date or a.created_at or "")[:10] or "2000-01-01"
        parts += [
            "  <entry>",
            f"    <id>tag:{escape(host)},{escape(day)}:announcement/{int(a.id)}</id>",
            f"    <title>{escape(a.title)}</title>",
            f"    <link rel=\"alternate\" type=\"text/html\" href={quoteattr(a.url)}/>",
            f"    <published>{_time(a.date, a.created_at)}</published>",
            f"    <updated>{_time(a.updated_at, a.date)}</updated>",
            f"    <summary type=\"text\">{escape(a.summary)}</summary>",
            "  </entry>",
        ]
    parts.append("</feed>")
    return "\n".join(parts) + "\n"
