"""Bytes to text for web pages: HTTP charset, BOM, <meta charset>, then charset-normalizer."""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

__all__ = ["decode_body", "media_type"]

_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def media_type(content_type: str) -> str:
    """``text/html; charset=x`` → ``text/html``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def _declared(content_type: str) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return None


def _try(body: bytes, encoding: str | None) -> str | None:
    if not encoding:
        return None
    try:
        codecs.lookup(encoding)
        return body.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        return None


def decode_body(body: bytes, content_type: str = "") -> str:
    """Decode a page. A wrong declared charset falls through to detection instead of producing mojibake."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body.decode(encoding, errors="replace")
    # Valid UTF-8 with non-ASCII bytes is almost never another encoding, whatever the header claims.
    if not body.isascii():
        text = _try(body, "utf-8")
        if text is not None:
            return text
    text = _try(body, _declared(content_type))
    if text is not None:
        return text
    match = _META.search(body[:4096])
    text = _try(body, match.group(1).decode("ascii", "ignore") if match else None)
    if text is not None:
        return text
    text = _try(body, "utf-8")
    if text is not None:
        return text
    best = from_bytes(body[:200_000]).best()
    if best is not None and best.encoding:
        return body.decode(best.encoding, errors="replace")
    return body.decode("cp1252", errors="replace")
