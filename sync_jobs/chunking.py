"""Sentence- and paragraph-aware chunking with overlap (tokens are whitespace-separated words).

Each section is cut at sentence boundaries into chunks of about ``target_tokens`` words, never more than
``max_tokens`` (heading included). Consecutive chunks of a section share up to ``overlap × target_tokens`` words,
taken as whole trailing sentences when they fit. Every chunk of a section starts with the section heading, so a
continuation chunk still says what it is about. Small neighbouring sections share one chunk. A chunk id is a hash
of (doc_id, position, content hash): unchanged text keeps its ids.
"""

from __future__ import annotations

import re

from storage.models import Chunk, Document
from sync_jobs.normalize import sha1_hex

__all__ = ["chunk_document", "split_sentences"]

# Words before a full stop that do not end a sentence (titles, degrees, common Indonesian abbreviations).
_ABBREVIATIONS = {
    "dr", "drs", "dra", "prof", "ir", "h", "hj", "st", "mt", "kom", "si", "pd", "ag", "hum", "sos", "e", "t", "m",
    "s", "a", "b", "c", "d", "no", "nomor", "jl", "jln", "tel", "telp", "hp", "fax", "dll", "dsb", "dst", "dkk",
    "a.n", "u.p", "yth", "bpk", "ibu", "sdr", "sdri", "kec", "kab", "kel", "prov", "tgl", "thn", "hal", "vol",
    "mr", "mrs", "ms", "phd", "eng", "sc", "ed", "etc", "vs", "fig", "approx", "min", "maks", "max", "ket", "lamp",
    "ref", "p", "pp", "ca", "cf", "eg", "ie", "ph", "ak", "se", "sh", "kh", "mm", "mba", "msi", "mkom", "skom",
    "sst", "ssi", "spd", "mpd", "sag", "mag", "lc", "ma",
}
_END = re.compile(r"[.!?…]+[\"'”’)\]]*$")
_OPENER = re.compile(r"^[\"'“‘(\[]*[A-Z0-9À-Þ]")

Token = tuple[str, bool]  # (word, starts a new line)


def _is_sentence_end(word: str, following: str | None) -> bool:
    if following is None or not _END.search(word):
        return following is None
    if not _OPENER.match(following):
        return False
    if word.endswith(("!", "?", "…")):
        return True
    stem = re.sub(r"[.\"'”’)\]]+$", "", word)
    if "." in stem or stem.lower() in _ABBREVIATIONS or len(stem) == 1:
        return False
    return True


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph, keeping titles such as ``Dr.`` and ``M.Kom.`` inside their sentence."""
    words = text.split()
    sentences: list[str] = []
    current: list[str] = []
    for i, word in enumerate(words):
        current.append(word)
        following = words[i + 1] if i + 1 < len(words) else None
        if following is None or _is_sentence_end(word, following):
            sentences.append(" ".join(current))
            current = []
    return sentences


def _units(body: str, size: int) -> list[list[Token]]:
    """Sentences as token lists (a line break before the first word of a paragraph), split to at most ``size``."""
    units: list[list[Token]] = []
    for paragraph in body.split("\n"):
        first = True
        for sentence in split_sentences(paragraph):
            words = sentence.split()
            for start in range(0, len(words), size):
                piece = words[start:start + size]
                units.append([(w, first and j == 0) for j, w in enumerate(piece)])
                first = False
    return units


def _render(tokens: list[Token]) -> str:
    out: list[str] = []
    for word, newline in tokens:
        if out:
            out.append("\n" if newline else " ")
        out.append(word)
    return "".join(out)


def _pack(units: list[list[Token]], target: int, limit: int, overlap: int) -> list[list[Token]]:
    """Greedy packing of units into bodies of about ``target`` tokens (never over ``limit``), with overlap."""
    bodies: list[list[Token]] = []
    i = 0
    carry_units: list[list[Token]] = []
    while i < len(units):
        first = units[i]
        carry = [tok for unit in carry_units for tok in unit]
        room = min(overlap, limit - len(first))
        if len(carry) > room:
            carry = carry[len(carry) - room:] if room > 0 else []
        body_units: list[list[Token]] = [first]
        size = len(carry) + len(first)
        i += 1
        while i < len(units) and size + len(units[i]) <= target:
            body_units.append(units[i])
            size += len(units[i])
            i += 1
        remaining = sum(len(u) for u in units[i:])
        if 0 < remaining <= max(1, target // 4) and size + remaining <= limit:
            body_units.extend(units[i:])
            size += remaining
            i = len(units)
        bodies.append(carry + [tok for unit in body_units for tok in unit])
        # Overlap for the next chunk: whole trailing sentences if they fit, else the last words.
        carry_units = []
        taken = 0
        for unit in reversed(body_units):
            if taken + len(unit) > overlap:
                break
            carry_units.insert(0, unit)
            taken += len(unit)
        if not carry_units and overlap > 0 and body_units:
            carry_units = [body_units[-1][-overlap:]]
    return bodies


def _heading_tokens(heading: str, budget: int) -> list[str]:
    words = heading.split()
    return words[:budget]


def chunk_document(doc: Document, *, target_tokens: int = 200, overlap: float = 0.2,
                   max_tokens: int = 300) -> list[Chunk]:
    """Chunks of ``doc`` in order. ``overlap`` is a fraction of ``target_tokens``; ``max_tokens`` is a hard cap."""
    if target_tokens < 1 or max_tokens < target_tokens:
        raise ValueError("chunk sizes need 1 <= target_tokens <= max_tokens")
    if not 0 <= overlap < 1:
        raise ValueError("overlap is a fraction of the target in [0, 1)")
    sections = list(doc.sections) or [("", doc.text)]
    heading_budget = max(1, target_tokens // 4)
    overlap_tokens = int(round(overlap * target_tokens))

    # Pieces: (heading, rendered body) per chunk, with the section heading the chunk belongs to.
    pieces: list[tuple[str, str]] = []
    pending: list[tuple[str, str]] = []  # small whole sections waiting to share one chunk
    pending_size = 0

    def flush_pending() -> None:
        nonlocal pending_size
        if pending:
            text = "\n\n".join(f"{h}\n{b}" if h else b for h, b in pending)
            pieces.append((pending[0][0], text))
            pending.clear()
            pending_size = 0

    for heading, body in sections:
        if not body.split():
            continue
        head = _heading_tokens(heading, heading_budget)
        head_text = " ".join(head)
        size = len(head) + len(body.split())
        if size <= target_tokens:
            if pending_size + size > target_tokens:
                flush_pending()
            pending.append((head_text, body.strip()))
            pending_size += size
            continue
        flush_pending()
        budget_target = max(1, target_tokens - len(head))
        budget_limit = max_tokens - len(head)
        section_overlap = min(overlap_tokens, budget_target - 1) if budget_target > 1 else 0
        for tokens in _pack(_units(body, budget_target), budget_target, budget_limit, section_overlap):
            text = _render(tokens)
            pieces.append((head_text, f"{head_text}\n{text}" if head_text else text))
    flush_pending()

    chunks = []
    for position, (section, text) in enumerate(pieces):
        content_hash = sha1_hex(text)
        chunks.append(Chunk(
            chunk_id=sha1_hex(doc.doc_id, str(position), content_hash)[:20],
            doc_id=doc.doc_id,
            url=doc.url,
            title=doc.title,
            section=section,
            position=position,
            text=text,
            content_hash=content_hash,
            fetched_at=doc.fetched_at,
        ))
    return chunks
