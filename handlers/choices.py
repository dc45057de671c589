"""Asking back on a channel: the ids of the buttons that offer an ask-back's choices, reading them back, and button
titles short enough for WhatsApp.

A press is the student typing the choice, so a button carries the choice itself where the channel's id allows it:
``pick:<text>``. A choice too long for the id (Telegram allows 64 bytes of callback data, WhatsApp 256 for a reply
button's id), or one that is all digits, gets ``pick:<index>`` instead; the channel then reads the text from the
user's last ask-back (``storage.dedup.UserState.last_choices``, kept by ``ChatService`` for a day), and a press
that no longer matches it gets ``texts.CHOICE_STALE``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["PICK_PREFIX", "choice_at", "parse_pick_id", "pick_ids", "short_titles"]

PICK_PREFIX = "pick:"


def pick_ids(choices: Sequence[str], *, max_bytes: int) -> list[str]:
    """One button id per choice: ``pick:<text>`` when it fits ``max_bytes`` (UTF-8) and the text is not all digits
    (it would read as an index), else ``pick:<index>``."""
    ids = []
    for index, choice in enumerate(choices):
        by_text = PICK_PREFIX + choice
        fits = len(by_text.encode()) <= max_bytes and not choice.strip().isdigit() and choice.strip()
        ids.append(by_text if fits else f"{PICK_PREFIX}{index}")
    return ids


def parse_pick_id(data: str) -> str | int | None:
    """A button id from :func:`pick_ids` → the choice's text, or its index (an int) for ``pick:<index>``; "" for an
    empty ``pick:``; None for any other id (feedback buttons included)."""
    if not isinstance(data, str) or not data.startswith(PICK_PREFIX):
        return None
    value = data[len(PICK_PREFIX):]
    stripped = value.strip()
    if stripped.isascii() and stripped.isdigit() and len(stripped) <= 3:
        return int(stripped)
    return stripped


def choice_at(choices: Sequence[str], index: int, shown: str | None = None,
              labels: Sequence[str] | None = None) -> str | None:
    """The choice a ``pick:<index>`` button stands for in the user's last ask-back ``choices``; None when the index
    is out of range, or when the button showed ``shown`` (if the channel says) and that is no longer the choice's
    label (``labels``, the choices themselves by default): a button of an older ask-back."""
    if not 0 <= index < len(choices):
        return None
    if shown is not None and shown != (labels or choices)[index]:
        return None
    return choices[index]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    name = text.split(",", 1)[0].strip()  # "Dr. Rina Wulandari, M.Kom.": the name without the degrees after it
    if 0 < len(name) <= limit:
        return name
    bare = re.sub(r"^(?:[^\s.]{1,5}\.\s+)+", "", name)  # "Prof. Dr. Ir. Bambang …": and without the titles before
    if 0 < len(bare) <= limit:
        return bare
    source = bare or text
    cut = source[: limit - 1]
    if not source[limit - 1].isspace() and " " in cut[limit // 2:]:  # end at a word
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:-(") + "…"


def _tail(text: str, limit: int) -> str:
    words = text.split()
    kept: list[str] = []
    while words and len(" ".join([words[-1], *kept])) <= limit - 1:
        kept.insert(0, words.pop())
    return ("…" if words else "") + " ".join(kept) if kept else _short(text, limit)


def short_titles(choices: Sequence[str], limit: int) -> list[str]:
    """Button titles of at most ``limit`` characters: the choice itself when it fits, else the name before a comma
    (the degrees go), else cut at a word with "…". Titles that come out alike show their ends instead ("…Jaringan
    Komputer", "…Jaringan Nirkabel"), and are numbered when those are alike too, so each stays distinct (WhatsApp
    refuses two buttons with one title)."""
    titles = [_short(c, limit) for c in choices]
    if len(set(titles)) < len(titles):
        titles = [_tail(" ".join(c.split()), limit) for c in choices]
    if len(set(titles)) < len(titles):
        titles = [_short(f"{i}. {c}", limit) for i, c in enumerate(choices, 1)]
    return titles
