"""What a user types, made safe to keep: invisible characters out and personal data masked.

``clean_incoming`` runs once, where a question enters (``handlers.chat.ChatService``), before the answer pipeline,
the conversation history, the question log, the telemetry or a log line sees it. The question log and the
telemetry writer mask again with the same ``mask_personal`` (defence in depth: an answer quoting a page's phone
number, a caller that bypasses the service).

Masked: e-mail addresses (also ``nama [at] domain [dot] com`` and ``nama(at)domain.com``) → ``[email]``; phone
numbers → ``[nomor telepon]``: international ones with ``+`` (``+1 415 555 0100``, ``+44 20 7946 0958``), Indonesian
mobiles and landlines (``0812-3456-7891``, ``62 812 3456 7890``, ``(031) 555-0192``, a bare ``8123456789``); a NIK
or any other 16 digits (``3174012345678901``, also in groups ``3174 0123 4567 8901`` / ``3174.0123.4567.8901``)
→ ``[NIK]``; any other run of 9 or more digits (a NIM, an account number) → ``[nomor]``.
Kept: years, dates, times, prices (``Rp 620.000.000``, ``Rp 620000000``, ``… rupiah``), SKS counts, course codes
(``IF2201``) and other short numbers.

Stripped by ``strip_controls``: C0 and C1 control characters (NUL included) and DEL; tab, vertical tab and form
feed become a space, CR/CRLF, NEL and the Unicode line/paragraph separators a newline; the bidi embeddings,
overrides, isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C); the invisible zero-width
space, word joiner, invisible operators, BOM and soft hyphen (which could also hide a number from the masking:
``0812\\u200b3456…``). Kept: the zero-width (non-)joiners U+200C/U+200D, which emoji sequences and some scripts need.
"""

from __future__ import annotations

import re

__all__ = ["EMAIL_MASK", "ID_MASK", "NUMBER_MASK", "PHONE_MASK", "clean_incoming", "mask_personal",
           "strip_controls"]

PHONE_MASK = "[nomor telepon]"
EMAIL_MASK = "[email]"
ID_MASK = "[NIK]"
NUMBER_MASK = "[nomor]"

# --- control and invisible characters -------------------------------------------------------------------------

_NEWLINE = "\n"
_SPACE = " "
_CONTROLS: dict[int, str | None] = {}
for _code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)):
    _CONTROLS[_code] = None
for _code in (0x09, 0x0B, 0x0C):  # tab, vertical tab, form feed
    _CONTROLS[_code] = _SPACE
for _code in (0x0A, 0x0D, 0x85, 0x2028, 0x2029):  # LF, CR, NEL, line and paragraph separators
    _CONTROLS[_code] = _NEWLINE
for _code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)):  # bidi controls
    _CONTROLS[_code] = None
for _code in (0x00AD, 0x200B, *range(0x2060, 0x2065), 0xFEFF):  # soft hyphen, zero-width space, word joiner, …
    _CONTROLS[_code] = None


def strip_controls(text: str) -> str:
    """``text`` without control, bidi and invisible characters (module docstring); whitespace ones become a space
    or a newline."""
    return (text or "").replace("\r\n", "\n").translate(_CONTROLS)


# --- personal data ----------------------------------------------------------------------------------------------

_SEP = r"[\s.\-()]{0,2}"  # between the digits of a phone number: a space, dot, hyphen or bracket (two at most)
_PERSONAL = re.compile(
    r"""
    (?P<email>[\w.+\-]+\ ?@\ ?[\w\-]+(?:\.[\w\-]+)+)
  | (?P<email_obf>[\w.+\-]+\s?[(\[{]\s?at\s?[)\]}]\s?[\w\-]+(?:(?:\s?[(\[{]\s?dot\s?[)\]}]\s?|\.)[\w\-]+)+)
  | (?<![\w+])(?<!\d[.,])(?P<nik>\d(?:[\s.\-]?\d){15})(?![\w])
  | (?<![\w+])(?P<intl>\+\s?\d(?:""" + _SEP + r"""\d){7,14})(?![\w])
  | (?<![\w+])(?<!\d[.,])(?P<local>(?:62[\s.\-]{0,2}[2-9]|\(0\d{1,3}\)|0\d{2})(?:""" + _SEP + r"""\d){6,12})(?![\w])
  | (?<![\w+])(?<!\d[.,])(?P<bare>\d{9,})(?![\w])
    """,
    re.VERBOSE | re.IGNORECASE,
)
_CURRENCY_BEFORE = re.compile(r"(?:\brp|\bidr|\busd|\$|€)\.?\s*$", re.IGNORECASE)
_CURRENCY_AFTER = re.compile(r"\s*(?:rupiah\b|,-|\.-)", re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)\d\d")


def _mask(match: re.Match[str]) -> str:
    kind, found = match.lastgroup, match.group(0)
    if kind in ("email", "email_obf"):
        return EMAIL_MASK
    text, start, end = match.string, match.start(), match.end()
    if _CURRENCY_BEFORE.search(text[max(0, start - 6):start]) or _CURRENCY_AFTER.match(text, end):
        return found  # a price written without thousands separators ("Rp 620000000")
    if kind == "nik":
        groups = re.split(r"[\s.\-]", found)
        if len(groups) > 1 and all(_YEAR.fullmatch(g) for g in groups):
            return found  # "kurikulum 2020 2021 2022 2023": four years, not a NIK
        return ID_MASK
    if kind == "bare":
        return PHONE_MASK if found.startswith("8") and len(found) <= 12 else NUMBER_MASK
    return PHONE_MASK


def mask_personal(text: str) -> str:
    """``text`` with e-mail addresses, phone numbers, NIKs and other long digit runs masked (module docstring)."""
    return _PERSONAL.sub(_mask, text or "")


def clean_incoming(text: str) -> str:
    """What a user's question becomes before anything else sees it: control and invisible characters stripped,
    personal data masked, surrounding whitespace trimmed."""
    return mask_personal(strip_controls(text)).strip()
