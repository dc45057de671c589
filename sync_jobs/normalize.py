"""Text normalisation shared by extraction and chunking (character level;
docs/answers.md, "Text normalisation").

NFKC, invisible characters removed, dashes unified, whitespace collapsed (at most one space inside a line and at
most one blank line between paragraphs). Proper names are never case-folded: the text keeps its meaning.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["normalize_inline", "normalize_text", "sha1_hex", "word_count"]

# Zero-width and bidi controls, soft hyphen, BOM, and the like: they split tokens without being visible.
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F,
     0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2066, 0x2067, 0x2068,
     0x2069, 0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0x3164, 0xFEFF, 0xFFA0, 0xFFFC],
    None,
)
# Every hyphen-like mark becomes "-", every long dash "–" (the curriculum lines use the en dash).
_DASHES = {0x2010: "-", 0x2011: "-", 0x2012: "–", 0x2013: "–", 0x2014: "–", 0x2015: "–", 0x2212: "-",
           0xFE58: "–", 0xFE63: "-", 0xFF0D: "-", 0x2E3A: "–", 0x2E3B: "–"}
_TABLE = {**_INVISIBLE, **_DASHES}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"[ \t\f\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_BLANKS = re.compile(r"\n{3,}")


def normalize_inline(text: str) -> str:
    """Normalise one line: NFKC, no invisible characters, unified dashes, single spaces, stripped."""
    text = unicodedata.normalize("NFKC", text).translate(_TABLE)
    text = _CONTROL.sub(" ", text.replace("\r", " ").replace("\n", " "))
    return _SPACES.sub(" ", text).strip()


def normalize_text(text: str) -> str:
    """Normalise a block of text, keeping paragraph breaks (at most one blank line in a row)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [normalize_inline(line) for line in text.split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def word_count(text: str) -> int:
    """Tokens as the chunker counts them: whitespace-separated words."""
    return len(text.split())


def sha1_hex(*parts: str) -> str:
    digest = hashlib.sha1()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()
