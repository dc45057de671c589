"""The first two stages of both answerers: the question cleaned and normalised (a follow-up resolved with the
conversation window), then the structured facts table, which answers constraint questions directly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from generation.answer_type import is_list_question
from generation.config import StopReason
from generation.facts_render import facts_verdict, render_facts
from generation.prompts import strip_injection
from generation.refine import rewrite_followup
from generation.stages.base import Abstain, StageContext, Turn, logger
from generation.subjects import MAX_CHOICES, Inventory, ask_back_person, ask_back_roles
from generation.text import split_aside, strip_clitics
from generation.types import Reply, Source, Trace
from retrieval.facts import FactsResult, has_record_question, record_lines
from retrieval.normalize import FiredRule

__all__ = ["FactsStage", "RewriteStage", "facts_reply"]


def _as_typed(text: str, *, expand: bool = True) -> tuple[str, list[FiredRule]]:
    """The normaliser's stand-in when normalisation is off (or the index has none): the text as typed, no rule."""
    return text.strip(), []


def _normalizer(index: object) -> Callable[..., tuple[str, list[FiredRule]]]:
    """The index's query normaliser, returning the normalised text and the rules that fired ({"rule", "from", "to"}
    records; none from an index that does not report them); :func:`_as_typed` when the index has none or its
    config turns normalisation off."""
    if not getattr(getattr(index, "config", None), "query_normalization", True):
        return _as_typed
    traced = getattr(index, "normalize_query_with_rules", None)
    if callable(traced):
        return cast("Callable[..., tuple[str, list[FiredRule]]]", traced)
    plain = getattr(index, "normalize_query", None)
    if callable(plain):
        return lambda text, **kw: (str(plain(text, **kw)), [])
    return _as_typed


class RewriteStage:
    """Instruction-like sentences out, student shorthand normalised, a follow-up resolved with the window."""

    name = "rewrite"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        turn.clean = strip_injection(turn.question)
        if turn.clean != turn.question.strip():
            turn.trace.add("sanitize", removed=True, kept=turn.clean)
        if not turn.clean or not any(ch.isalnum() for ch in turn.clean):
            return Abstain(StopReason.ABSTAIN_EMPTY_QUERY)
        question, aside = split_aside(turn.clean)
        if aside:  # who the student is or why they ask: not words the page must hold, nor what to search for
            turn.trace.add("aside", removed=aside, question=question)
            turn.clean = question
        turn.index = await self.ctx.run(self.ctx.retriever)  # IndexManager.current() may reload from disk
        if turn.index is None:
            return Abstain(StopReason.ABSTAIN_NO_INDEX)
        # the follow-up is resolved on the words as typed ("-nya" points back), then normalised as a whole
        follow = rewrite_followup(turn.clean, turn.history)
        normalize = _normalizer(turn.index)
        resolved = follow.query if follow.rewritten else turn.clean
        turn.normalized, _ = normalize(turn.clean)  # the question alone, in the site's words
        turn.followup = follow.rewritten
        turn.exclude = follow.exclude
        # … with the long forms of abbreviations added, for retrieval
        turn.query, rules = normalize(resolved)
        # the anchors the evidence must contain: formal words only, so an added long form is not "missing"
        turn.anchor_text, anchor_rules = normalize(resolved, expand=False)
        # a list question asks for several items; a follow-up resolved into the previous question ("kalau yang
        # hari Sabtu?" after "klub yang latihan hari Jumat apa saja?") asks in that question's form
        turn.list_q = is_list_question(turn.normalized) or (follow.rewritten and is_list_question(turn.anchor_text))
        # which rules fired: the follow-up rewrite's (FollowUp.rule) and the normaliser's on the query, plus those
        # that applied to the anchor form only (its colloquial_anchor / morphology_anchor readings)
        turn.trace.add("rewrite", followup=follow.rewritten, query=turn.query, normalized=turn.normalized,
                       followup_rule=follow.rule, rules=rules,
                       anchor_rules=[r for r in anchor_rules if r not in rules])
        return "followup" if follow.rewritten else ("normalized" if turn.normalized != turn.clean else "as_typed")


class FactsStage:
    """The structured facts table (lecturers, courses) answers constraint questions directly."""

    name = "facts"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        facts = getattr(turn.index, "facts", None)
        if not self.ctx.config.facts_lookup or facts is None or not hasattr(facts, "lookup"):
            return "off"
        try:
            found = await self.ctx.run(facts.lookup, strip_clitics(turn.query))
        except Exception:  # boundary: the facts table is an optional shortcut; retrieval answers without it
            logger.warning("facts lookup failed", exc_info=True)
            return "error"
        rows = list(getattr(found, "rows", ()) or ()) if found else []
        constraints = dict(getattr(found, "constraints", {}) or {}) if found else {}
        names = tuple(dict.fromkeys(str(r.get("name")) for r in rows))
        if "ask_role" in constraints and rows:  # two or three roles hold the question's role word
            return _ask_back(turn, ask_back_roles(rows), names, constraints=constraints, rows=len(rows))
        if "ask_person" in constraints and rows and not turn.list_q:  # a lecturer field asked of no one: whose?
            if not constraints.get("person") and await self._program_record(turn):
                return "program_record"  # "email prodi": the study program's own
            return _ask_back(turn, ask_back_person(constraints["ask_person"], names),
                             names if len(names) <= MAX_CHOICES else (), constraints=constraints, rows=len(rows),
                             rule=getattr(found, "rule", ""))
        if not rows and not turn.followup and await self._program_record(turn):
            return "program_record"
        usable, rule = facts_verdict(constraints, rows, turn.query)
        if usable:
            if turn.followup and _said_before(facts_text(found), turn.history):
                # the table matched only what the follow-up carried over (a question about the lecturers after a
                # list of courses): the same list again answers nothing the student asked, so the pages are read
                turn.trace.add("facts", skipped="repeats_earlier_reply", rule=rule, constraints=constraints)
                return "repeats_earlier_reply"
            turn.result = facts_reply(found, turn.trace, rule)
            return "answered"
        if rows:
            turn.trace.add("facts", skipped="name_only", rule=rule, constraints=constraints)
            return "name_only"
        # which rule of the lookup left it empty ("only_name": a course named without "mata kuliah"), if one did
        turn.trace.add("facts", rows=0, rule=getattr(found, "rule", ""))
        return "no_rows"

    async def _program_record(self, turn: Turn) -> bool:
        """The study program's own record, its contact page's "Label: value" lines, where the question asks for one
        of them and names no one ("email prodi", "jam layanan prodi"; ``retrieval.facts.record_lines``): settles the
        reply with the lines, citing the page. False when the site has no contact page or the question says more."""
        index = turn.index
        if index is None or not getattr(index, "chunks", None) or not has_record_question(turn.query):
            return False
        contact = await self.ctx.contact_url(index)
        page = Inventory.of(index).page(contact) if contact else None
        lines = record_lines(turn.query, page.record, page.name) if page is not None else []
        if page is None or not lines:
            return False
        turn.trace.add("facts", rule="program_record", lines=len(lines), url=page.url)
        turn.trace.add("final", stop_reason=StopReason.FACTS_LOOKUP, abstained=False, sources=[page.url])
        values = tuple(line.partition(":")[2].strip() for line in lines)
        # in a conversation the field may have been asked of someone named before ("emailnya?" about the admin):
        # the reply says whose it is
        lead = "Untuk program studi:\n" if turn.history else ""
        turn.result = Reply(answer=lead + "\n".join(lines) + " [1]", abstained=False,
                            sources=(Source(url=page.url, title=page.name),), confidence=1.0, iterations=0,
                            stop_reason=StopReason.FACTS_LOOKUP, highlights=values)
        return True


def _ask_back(turn: Turn, text: str, choices: tuple[str, ...], **facts: Any) -> str:
    """Settle the turn with an ask-back (``choices`` are the buttons; none when the student is to type a name), the
    facts lookup that asked it in the trace."""
    turn.trace.add("facts", **facts)
    turn.trace.add("final", stop_reason=StopReason.ASK_BACK, abstained=False, choices=list(choices))
    turn.result = Reply(answer=text, abstained=False, sources=(), confidence=0.0, iterations=0,
                        stop_reason=StopReason.ASK_BACK, choices=choices)
    return "ask_back"


def _said_before(text: str, history: list[Any]) -> bool:
    """The bot sent ``text`` (spacing aside) earlier in the conversation window ``history``."""
    said = " ".join(text.split())
    return any(getattr(m, "role", "") == "assistant" and " ".join(str(getattr(m, "text", "")).split()) == said
               for m in history)


def facts_reply(found: FactsResult, trace: Trace, rule: str) -> Reply:
    """The reply a usable facts lookup gives (``found``: what ``FactsTable.lookup`` returned), its rows rendered;
    ``rule`` is the ``facts_verdict`` rule that made it usable."""
    urls = list(dict.fromkeys(getattr(found, "urls", ()) or ()))
    titles: dict[str, str] = {}
    for row in getattr(found, "rows", ()) or ():
        url = str(row.get("url", ""))
        if url and url not in titles:
            titles[url] = str(row.get("name") or "") if row.get("table") == "lecturers" else "Kurikulum"
    sources = tuple(Source(url=u, title=titles.get(u) or u) for u in urls) or (Source(url="", title="Tabel fakta"),)
    trace.add("facts", constraints=getattr(found, "constraints", {}), rows=len(getattr(found, "rows", ()) or ()),
              rule=rule)
    trace.add("final", stop_reason=StopReason.FACTS_LOOKUP, abstained=False)
    return Reply(answer=facts_text(found), abstained=False, sources=sources, confidence=1.0,
                 iterations=0, stop_reason=StopReason.FACTS_LOOKUP)


def facts_text(found: FactsResult) -> str:
    """What a usable facts lookup says: its rows rendered, else the table's own text."""
    text = render_facts(dict(getattr(found, "constraints", {}) or {}), list(getattr(found, "rows", ()) or ()))
    return text or str(found.text).strip()
