"""Replies quoted from the page around the reader's span: the sentence, or the "Label: value" row as the page shows it,
with the span marked; and, for a question over a table's column, each row's name with that column.

Only the page's structure decides here (line breaks, sentence ends, "Label: value; Label: value" rows); no word lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from generation.compose import list_item, list_start
from generation.text import holds, normalize, sentences, told_apart

__all__ = ["Quote", "Rest", "column_rows", "item_listing", "list_lines", "other_rows", "quote_span", "row_fields",
           "table_listing"]

# a table row as the extractor writes it: "Label: value; Label: value" (sync_jobs/html_blocks.py)
_FIELD_SEP = "; "
_T = TypeVar("_T")
_LEAD = re.compile(r"^[\s\-–—•·*>]+")  # bullets and dashes that open a line fragment


@dataclass(frozen=True, slots=True)
class Quote:
    text: str  # what the reply shows
    highlights: tuple[str, ...]  # substrings of ``text`` to mark (the reader's span)


def row_fields(line: str) -> list[tuple[str, str]] | None:
    """The fields of a "Label: value; Label: value" row, or None when the line is not such a row."""
    parts = line.split(_FIELD_SEP)
    if len(parts) < 2:
        return None
    fields = []
    for part in parts:
        label, sep, value = part.partition(": ")
        # a label inside an open parenthesis is prose ("Kromosom (Greek: chroma; …)")
        if not sep or not label.strip() or len(label) > 40 or not value.strip() or label.count("(") != label.count(")"):
            return None
        fields.append((label.strip(), value.strip()))
    return fields


def _line_at(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, len(text) if end < 0 else end


def _clean(text: str) -> str:
    return " ".join(_LEAD.sub("", text).split())


def quote_span(passage: str, start: int, end: int) -> Quote:
    """The unit of ``passage`` that holds the span [start, end): its table row whole, else its sentence(s)."""
    span = _clean(passage[start:end]).strip(" ,;:")
    a, b = _line_at(passage, start)
    line = passage[a:b]
    if row_fields(line) is not None:
        return Quote(_clean(line), (span,) if span else ())
    # the sentences of the line that the span touches (sentences() keeps the line's words and their order)
    chosen = []
    rel_a, rel_b = start - a, end - a
    for at, stop, piece in _sentence_spans(line):
        if at < rel_b and stop > rel_a:
            chosen.append(piece)
        elif chosen:
            break
    text = _clean(" ".join(chosen) if chosen else line)
    if span and span not in text:
        text = _clean(line)
    return Quote(text, (span,) if span and span in text else ())


def column_rows(passage: str, start: int) -> list[str] | None:
    """For a span inside a table row: every row of the same table (rows sharing the first label) as
    "first value — Label: value" of the span's column; None when the span is not in a row or the table has one row."""
    a, b = _line_at(passage, start)
    fields = row_fields(passage[a:b])
    if fields is None:
        return None
    offset = start - a
    column, pos = None, 0
    for label, value in fields:
        chunk = f"{label}: {value}"
        at = passage[a:b].find(chunk, pos)
        if at <= offset < at + len(chunk):
            column = label
            break
        pos = at + len(chunk)
    if column is None:
        return None
    key = fields[0][0]
    out = []
    for line in passage.splitlines():
        row = row_fields(line)
        if not row or row[0][0] != key:
            continue
        values = dict(row)
        if column == key:
            out.append(row[0][1])
        elif column in values:
            out.append(_with_column(row, column))
    return out if len(out) >= 2 else None


@dataclass(frozen=True, slots=True)
class Rest:
    named: tuple[str, ...]  # the names of the rows already named
    rows: tuple[str, ...]  # the other rows, as the reply shows them


def other_rows(passage: str, names: Sequence[str]) -> Rest | None:
    """For "ada lagi yang lain?": in the list of ``passage`` (a run of at least two item lines: table rows or
    "Name: description" lines) that has an item one of ``names`` names, the items none of them names: a table row
    as "name — second label: value", any other item line as the page shows it. A name is matched as whole words of
    one item's name only: a word that several items' names share names none of them. None when no item is named or
    none is left."""
    wanted = [n for n in (normalize(x) for x in names) if n]
    if not wanted:
        return None
    lines = [line.strip() for line in passage.splitlines()]
    items = [_item_name(line) for line in lines]
    for run in _item_runs(items):
        if len(run) < 2:
            continue
        keys = {i: normalize(str(items[i])) for i in run}
        named: set[int] = set()
        for name in wanted:
            hits = [i for i in run if holds(keys[i], name)]
            if len(hits) == 1:
                named.update(hits)
        if not named or len(named) == len(run):
            continue
        shown = []
        for i in run:
            if i in named:
                continue
            row = row_fields(lines[i])
            shown.append(_with_column(row, row[1][0]) if row else _clean(lines[i]))
        return Rest(named=tuple(str(items[i]) for i in sorted(named)), rows=tuple(shown))
    return None


def _item_runs(items: Sequence[str | None]) -> list[range]:
    """The runs of consecutive item lines (``items``: each line's ``_item_name``, None for a line that is no item),
    as ranges of line indexes, in page order."""
    runs, k = [], 0
    while k < len(items):
        if items[k] is None:
            k += 1
            continue
        end = k
        while end + 1 < len(items) and items[end + 1] is not None:
            end += 1
        runs.append(range(k, end + 1))
        k = end + 1
    return runs


def table_listing(passage: str, asked: frozenset[str], stems: Callable[[str], frozenset[str]],
                  at: int) -> list[str] | None:
    """For a list question whose reader span (at ``at``) names an item of a table, the item's name in its first
    column ("Laboratorium: <span>; Lokasi: …"), and whose words (``asked``, as ``stems`` gives them) name that first
    column ("lab apa aja?"): each row as "name — Label: value" of one other column, the one whose label or values
    share the most of the question's other words (twice for the label), else the second. A word of the question
    that some rows hold and others not keeps only those rows ("lab di lantai 3"). None otherwise: the span is
    not in a table's first column, the question does not ask for that column's items, or it names one item by a
    word of its name only that item holds ("lab multimedia ada alat apa aja?" is about that laboratory)."""
    a, b = _line_at(passage, at)
    found = row_fields(passage[a:b].strip())
    if not found:
        return None
    key, name = found[0]
    offset = passage[a:b].find(f"{key}: {name}")
    if offset < 0 or not (a + offset + len(key) + 2 <= at < a + offset + len(key) + 2 + len(name)):
        return None  # the span is in another column of the row: the row itself answers, not the list
    key_stems = stems(key)
    rows = [row for row in (row_fields(line.strip()) for line in passage.splitlines()) if row and row[0][0] == key]
    if len(rows) < 2 or not key_stems & asked:
        return None
    rest = asked - key_stems
    if told_apart([stems(row[0][1]) for row in rows], rest):
        return None  # a word only one item's name holds ("lab multimedia …"): the question is about that item
    labels = list(dict.fromkeys(label for row in rows for label, _ in row[1:]))
    if not labels:
        return [row[0][1] for row in rows]
    scores = {label: _column_score(rows, label, rest, stems) for label in labels}
    column = max(labels, key=lambda label: (scores[label], -labels.index(label)))
    # a word of the question that some rows hold and others not ("lantai 3") keeps those rows; not a word of the
    # column's label: it chose the column, and rows whose values repeat it are no narrower answer
    rest -= stems(column)
    rows = _narrowed(rows, [stems(" ".join(v for _, v in row[1:])) for row in rows], rest)
    return [_with_column(row, column) for row in rows]


def item_listing(passage: str, asked: frozenset[str], stems: Callable[[str], frozenset[str]],
                 at: int) -> list[str] | None:
    """For a list question whose reader span (at ``at``) is the name of an item in a run of at least three item
    lines ("Name: description", or table rows among them: ``_item_name``), and whose words (``asked``) hold a word
    that at least half the names share ("komunitas apa aja …?" over "Komunitas X: …" lines): the run's lines as the
    page gives them, only those holding a word of the question that some lines hold and others not ("… yang belajar
    flutter"). None otherwise: the span's line is a table row (``table_listing`` decides), or the question names one
    item by a word of its name only that item holds."""
    a, _ = _line_at(passage, at)
    lines = passage.split("\n")
    k = passage.count("\n", 0, a)
    if row_fields(lines[k].strip()):
        return None  # a table row: ``table_listing`` decides for tables
    items = [_item_name(line.strip()) for line in lines]
    name = items[k]
    offset = lines[k].find(name) if name else -1
    if name is None or offset < 0 or not (a + offset <= at < a + offset + len(name)):
        return None  # the span is in an item's description: that line answers, not the list
    within = next(r for r in _item_runs(items) if k in r)
    run = [lines[i].strip() for i in within]
    if len(run) < 3:
        return None
    names = [stems(items[i] or "") for i in within]
    shared = {w for w in frozenset().union(*names) if 2 * sum(w in n for n in names) >= len(names)}
    if not shared & asked:
        return None
    rest = asked - shared
    if told_apart(names, rest):
        return None  # a word only one item's name holds: the question is about that item
    return _narrowed(run, [stems(line) for line in run], rest)


def _narrowed(items: Sequence[_T], words: Sequence[frozenset[str]], asked: frozenset[str]) -> list[_T]:
    """The ``items`` (each with its ``words``) that hold a word of ``asked`` some items hold and others not ("lab
    di lantai 3"); all of them when no word of ``asked`` tells items apart that way."""
    held = [w & asked for w in words]
    telling = {w for w in asked if 0 < sum(w in h for h in held) < len(items)}
    return [item for item, h in zip(items, held, strict=True) if h & telling] if telling else list(items)


def _with_column(row: Sequence[tuple[str, str]], label: str) -> str:
    """A table row as a list line: its name (first value) with the ``label`` column, "name — Label: value"; the
    name alone when the row has no such column."""
    value = dict(row[1:]).get(label)
    return row[0][1] if value is None else f"{row[0][1]} — {label}: {value}"


def _column_score(rows: Sequence[Sequence[tuple[str, str]]], label: str, asked: frozenset[str],
                  stems: Callable[[str], frozenset[str]]) -> int:
    """How much of ``asked`` a column shares: its label's words count twice, its values' words once."""
    values = frozenset().union(*(stems(v) for row in rows for lab, v in row[1:] if lab == label))
    return 2 * len(stems(label) & asked) + len(values & asked)


def _item_name(line: str) -> str | None:
    """The name an item line gives its item: a table row's first value, or the label of "Name: description"
    (a short label, not a clause: balanced parentheses, no comma); None for any other line."""
    row = row_fields(line)
    if row:
        return row[0][1]
    label, sep, rest = line.partition(": ")
    label = label.strip()
    if not sep or not rest.strip() or not label or len(label) > 80 or "," in label \
            or label.count("(") != label.count(")"):
        return None
    return label


def _sentence_spans(passage: str) -> list[tuple[int, int, str]]:
    """The passage's sentences (generation.text.sentences: also split at line breaks) with their character ranges."""
    out, cursor = [], 0
    for piece in sentences(passage):
        first = piece.split()[0] if piece.split() else piece
        at = passage.find(first, cursor)
        if at < 0:
            continue
        out.append((at, at + len(piece), piece))
        cursor = at + 1
    return out


def _item_names(texts: Sequence[str]) -> list[str | None]:
    """Each line's item name (``compose.list_item``); a line between two items that is shaped like one is one, though
    its description opens with a capital ("Komunitas UINUX: Linux dan …")."""
    items = [list_item(t) for t in texts]
    for k in range(1, len(texts) - 1):
        if items[k] is None and items[k - 1] is not None and items[k + 1] is not None:
            items[k] = list_item(texts[k], loose=True)
    return items


def list_lines(passage: str, start: int, max_lines: int, max_chars: int) -> list[str] | None:
    """For a list question: the lines of the passage from the span's sentence on, as the previous pipeline's list
    answers take them (compose.list_start moves an item in the middle of a run to the run's start, or to the sentence
    introducing it; the list stops at the page's next question, ``max_lines`` or ``max_chars``). Item lines show the
    name they give their item (compose.list_item) when at least two do. None when the span's sentence is the last."""
    spans = _sentence_spans(passage)
    best = next((k for k, (a, b, _) in enumerate(spans) if a <= start < b), None)
    if best is None or best == len(spans) - 1:
        return None
    texts = [t for _, _, t in spans]
    all_items = _item_names(texts)
    first = list_start(texts, best, all_items)
    chosen: list[str] = []
    used = 0
    for k, text in enumerate(texts[first:], first):
        if len(chosen) >= max_lines or (chosen and text.rstrip().endswith("?")):
            break
        size = len(all_items[k] or text)
        if chosen and used + size > max_chars:
            break
        chosen.append(text)
        used += size
    if len(chosen) < 2:
        return None
    items = all_items[first:first + len(chosen)]
    if sum(item is not None for item in items) < 2:  # prose lines stay whole
        return [_clean(t) for t in chosen]
    return [f"- {item}" if item is not None else _clean(t) for t, item in zip(chosen, items, strict=True)]
