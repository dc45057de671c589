"""The learned reader's two stages: it reads the top chunks and its chunk selector decides whether to answer
(``ReadStage``), then the reply quotes the page around the span (``QuoteStage``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generation.config import MAX_LIST_LINES, StopReason
from generation.guards import is_template_leak
from generation.quote import column_rows, item_listing, list_lines, other_rows, quote_span, table_listing
from generation.stages.base import Abstain, StageContext, Turn
from generation.subjects import Entity, Inventory
from generation.types import Reply, Source
from retrieval.types import Hit

if TYPE_CHECKING:
    from generation.reader import Span

__all__ = ["QuoteStage", "ReadStage", "RestOfListStage"]


class RestOfListStage:
    """ "ada lagi yang lain?" after a reply that named an item of a list (a scholarship's row, a community's line):
    the reply lists the list's other items (``quote.other_rows``) from the first chunk the reader would read that
    holds it. Any other turn goes on to the reader."""

    name = "rest_of_list"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        if not turn.exclude:
            return "not_asked"
        for hit in turn.hits[: max(1, self.ctx.config.reader_chunks)]:
            rest = other_rows(str(hit.text), turn.exclude)
            if rest is None:
                continue
            turn.trace.add("rest_of_list", chunk_id=hit.chunk_id, named=list(rest.named), rows=len(rest.rows))
            return _list_reply(turn, hit, rest.rows, confidence=1.0)
        return "no_table_names_them"


class ReadStage:
    """The reader reads the top chunks; its best span (by calibrated probability) answers when that probability
    reaches the model's operating threshold, else the reply is a refusal."""

    name = "read"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        hits = turn.hits[: max(1, self.ctx.config.reader_chunks)]
        passages = [str(h.text) for h in hits]  # the chunk as the page says it (a record names its person)
        reader = await self.ctx.run(lambda: self.ctx.reader)
        question = turn.anchor_text or turn.normalized
        # the chunks read are the reply's context, as the previous pipeline's choose stage names its own
        turn.trace.add("context", chunk_ids=[h.chunk_id for h in hits])
        # a question that names a row of a table (a scholarship, a laboratory) is answered from that row of the
        # passage that holds it, not from the row of another one beside it
        rows = await self.ctx.run(_named_rows, turn.index, question)
        within = [_row_ranges(p, rows) for p in passages]
        # "ada lagi yang lain?": a span that names what the previous reply named is no answer (FollowUp.exclude)
        spans = await self.ctx.run(reader.read, question, passages, turn.exclude, within)
        # which chunk's span answers, and how likely it is right: the reader's chunk selector (the span's margin
        # with the chunk's retrieval score)
        chosen = [None if sp is None else reader.chunk_probability(sp, float(h.score))
                  for h, sp in zip(hits, spans, strict=True)]
        turn.trace.add("read", question=turn.anchor_text, avoid=list(turn.exclude), rows=[e.name for e in rows],
                       spans=[
            None if sp is None else {"chunk_id": h.chunk_id, "rank": k, "retrieval": round(float(h.score), 4),
                                     "span": sp.text, "start": sp.start, "end": sp.end, "score": round(sp.score, 3),
                                     "null": round(sp.null, 3), "p_span": round(sp.p, 4), "p": round(pc or 0.0, 4)}
            for k, (h, sp, pc) in enumerate(zip(hits, spans, chosen, strict=True))])
        ranked = [(pc, -k, k) for k, (sp, pc) in enumerate(zip(spans, chosen, strict=True))
                  if sp is not None and pc is not None and sp.text.strip()]
        if not ranked:
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        p, _, k = max(ranked)
        threshold = self.ctx.config.reader_threshold
        if threshold is None:
            threshold = reader.config.threshold
        answer = self.ctx.config.abstention == "off" or p >= threshold
        listing = self.ctx.config.list_columns and turn.list_q
        if answer and listing:
            k, p, turn.read_rows = _column_chunk(passages, spans, chosen, threshold, k, p)
        turn.read_hit, turn.read_passage, turn.read_span = hits[k], passages[k], spans[k]
        turn.p_correct = p
        turn.trace.add("reader_gate", p=round(p, 4), threshold=round(threshold, 4),
                       decision="answer" if answer else "abstain", chunk=k)
        if not answer:
            if listing and turn.index is not None:
                # (not when the question names a row of a table: it asks about that one)
                listed = None if rows else await self.ctx.run(_table_list, turn, hits, passages, spans, p)
                if listed is not None:
                    return listed
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        return f"answer p={p:.2f}"


def _column_chunk(passages: Sequence[str], spans: Sequence[Span | None], chosen: Sequence[float | None],
                  threshold: float, k: int, p: float) -> tuple[int, float, list[str] | None]:
    """For a list question, the chunk whose span is a table column (``quote.column_rows``: the list's answer is
    that column, row by row) when the chosen span is not one: the first in reading order whose own probability
    reaches the gate's threshold, with its column's rows. Otherwise the chosen chunk (``k``, ``p``) and its rows
    (None when its span is in no table column)."""
    span = spans[k]
    rows = None if span is None else column_rows(passages[k], span.start)
    if rows:
        return k, p, rows
    for j, (passage, sp, pc) in enumerate(zip(passages, spans, chosen, strict=True)):
        if j != k and sp is not None and pc is not None and pc >= threshold:
            other = column_rows(passage, sp.start)
            if other:
                return j, pc, other
    return k, p, rows


def _table_list(turn: Turn, hits: Sequence[Hit], passages: Sequence[str], spans: Sequence[Span | None],
                p: float) -> str | None:
    """A list question whose answer is no one span ("lab apa aja?"): the first chunk read where the reader's span is
    an item's name in a table whose first column the question names lists the rows (``quote.table_listing``), or
    an item's name in a run of "Name: description" lines whose names the question names lists those lines
    (``quote.item_listing``); None when none is."""
    inventory = Inventory.of(turn.index)
    asked = inventory.stems(turn.query or turn.normalized)
    for hit, passage, span in zip(hits, passages, spans, strict=True):
        rows = None if span is None else (table_listing(passage, asked, inventory.stems, span.start)
                                          or item_listing(passage, asked, inventory.stems, span.start))
        if not rows:
            continue
        turn.trace.add("table_list", chunk_id=hit.chunk_id, rows=len(rows))
        return _list_reply(turn, hit, rows, confidence=round(p, 4))
    return None


def _list_reply(turn: Turn, hit: Hit, lines: Sequence[str], *, confidence: float) -> str:
    """Settle the turn with a list the page gives (at most ``MAX_LIST_LINES`` lines), citing its chunk."""
    turn.trace.add("final", stop_reason=StopReason.FACTS_LOOKUP, abstained=False, sources=[hit.url])
    turn.result = Reply(answer="\n".join(f"- {line}" for line in lines[:MAX_LIST_LINES]) + " [1]", abstained=False,
                        sources=(Source(url=hit.url, title=hit.title or hit.url),), confidence=confidence,
                        iterations=0, stop_reason=StopReason.FACTS_LOOKUP)
    return StopReason.FACTS_LOOKUP


def _named_rows(index: object, question: str) -> list[Entity]:
    """The table rows (``subjects.Entity`` with ``row``) that ``question`` names: by their full name, else by a word
    only that row's name holds in its table (``Inventory.rows_told_by``)."""
    if index is None or not hasattr(index, "chunks"):
        return []
    inventory = Inventory.of(index)
    return [e for e in inventory.named_in(question) if e.row] or inventory.rows_told_by(question)


def _row_ranges(passage: str, rows: Sequence[Entity]) -> list[tuple[int, int]] | None:
    """Where in ``passage`` the named rows stand (each occurrence of a row's line), or None when it holds none of
    them: that passage is read whole."""
    ranges = []
    for e in rows:
        at = passage.find(e.record)
        while at >= 0:
            ranges.append((at, at + len(e.record)))
            at = passage.find(e.record, at + 1)
    return ranges or None


class QuoteStage:
    """The reply quotes the page around the span (its sentence, or its table row whole) with the span marked. A
    list question gets the page's list: each table row's name with the span's column, or the lines from the
    span's sentence on (generation.quote)."""

    name = "finalize"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        hit, span, passage = turn.read_hit, turn.read_span, turn.read_passage
        assert hit is not None and span is not None  # the read stage abstains without a span
        listing = self.ctx.config.list_columns and turn.list_q
        rows = turn.read_rows if listing else None  # the read stage found them when it chose the chunk
        lines = None if rows or not listing else list_lines(passage, span.start, MAX_LIST_LINES,
                                                             self.ctx.config.max_answer_chars)
        highlights: tuple[str, ...] = ()
        if rows:
            text = "\n".join(f"- {line}" for line in rows[:MAX_LIST_LINES])
            turn.trace.add("quote", kind="column", rows=len(rows))
        elif lines:
            text = "\n".join(lines)
            marked = " ".join(span.text.split())
            highlights = (marked,) if marked and marked in text else ()
            turn.trace.add("quote", kind="list", lines=len(lines))
        else:
            quote = quote_span(passage, span.start, span.end)
            text, highlights = quote.text, quote.highlights
            turn.trace.add("quote", kind="span", span=span.text, quote=text)
        if is_template_leak(text) or not any(ch.isalnum() for ch in text):
            turn.trace.add("final_guard", reason="template_leak")
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        text = f"{text} [1]"
        sources = (Source(url=hit.url, title=hit.title or hit.url),)
        turn.trace.add("final", stop_reason=StopReason.READER_SPAN, abstained=False, sources=[hit.url])
        turn.result = Reply(answer=text, abstained=False, sources=sources,
                            confidence=round(float(turn.p_correct or 0.0), 4), iterations=0,
                            stop_reason=StopReason.READER_SPAN, highlights=highlights)
        return StopReason.READER_SPAN
