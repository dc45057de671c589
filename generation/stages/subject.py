"""The subject of a follow-up that names none (generation/subjects.py): the entity the last reply named, an
ask-back between two or three, or the study program itself; and the student's pick after an ask-back."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generation.answer_type import is_list_question, one_answer_form
from generation.config import StopReason
from generation.refine import rewrite_followup
from generation.stages.base import StageContext
from generation.subjects import (
    MAX_CHOICES,
    Entity,
    Inventory,
    is_ask_back,
    is_refusal,
    listed_items,
    pick,
    refer,
)
from generation.text import strip_clitics, words
from generation.types import Reply, Source, Trace
from retrieval.language import ALL_OF_THEM, COORDINATORS, EACH_OF_THEM

if TYPE_CHECKING:
    from retrieval.search import SearchIndex

__all__ = ["Subject", "SubjectResolver"]


@dataclass(frozen=True, slots=True)
class Subject:
    """A follow-up resolved to its subject: the standalone question(s) to answer, or the entities to ask back
    between (``ask``, with the follow-up ``asked``); ``note`` goes before the answer (the prodi instead)."""

    queries: list[str]  # with ``ask``: the question about each candidate, in the same order
    ask: tuple[Entity, ...] = ()
    asked: str = ""
    note: str = ""
    result: Reply | None = None  # settled already (the prodi's field from its contact page)
    labels: tuple[str, ...] = ()  # per query, what it is about: shown before an answer that does not name it
    # the message only looked like a follow-up (it is short) and shares nothing with what the last reply named:
    # it is answered on its own, without the window ("lab ada berapa?" after a reply about the PKL page)
    standalone: bool = False


def _exchanges(history: Sequence[Any]) -> list[tuple[str, str]]:
    """(user message, the reply to it) pairs of the window, oldest first."""
    pairs: list[tuple[str, str]] = []
    pending: str | None = None
    for m in history:
        role, text = getattr(m, "role", ""), str(getattr(m, "text", ""))
        if role == "user":
            pending = text
        elif role == "assistant" and pending is not None:
            pairs.append((pending, text))
            pending = None
    return pairs


def _last_answered(pairs: list[tuple[str, str]]) -> int:
    """Which exchange a follow-up's subject comes from: the last one, or, past refused requests for another one of
    the same ("ada lagi yang lain?" → refusal), the answer they asked past. Such a request keeps the subject and its
    refusal names nothing new; any other refused question is where the subject stays (nothing older is carried
    past it: a refused "who is X?" then "emailnya?" asks for X's)."""
    from storage.models import Message

    k = len(pairs) - 1
    while k > 0 and is_refusal(pairs[k][1]):
        before = [Message(role=role, text=text) for q, r in pairs[:k] for role, text in (("user", q), ("assistant", r))]
        follow = rewrite_followup(pairs[k][0], before)
        if not follow.rewritten or not (follow.rule == "again" or follow.rule.endswith("alternative")):
            break
        k -= 1
    return k


# at most this many items are asked about one by one ("masing-masing"); a longer list is no set of subjects
MAX_EACH = 6


def _without_each(question: str) -> str:
    return " ".join(EACH_OF_THEM.sub(" ", question).split())


def _may_join(question: str) -> bool:
    """Whether ``question`` has a coordinator, "&" or a comma: it may join two subjects (``_joined``)."""
    return "&" in question or "," in question or bool(COORDINATORS & set(words(question)))


def _joined(question: str, inventory: Inventory) -> tuple[str, list[Entity]] | None:
    """The question without its subjects, and the subjects, when it names two to ``MAX_EACH`` of the site's entities
    one after another with nothing but coordinators between them ("klub A sama klub B", "A, B dan C"); else None."""
    entities = inventory.named_in(question)
    if not 2 <= len(entities) <= MAX_EACH:
        return None
    low = question.lower()
    found: list[tuple[int, int, Entity]] = []
    for e in entities:
        spots = [(m.start(), m.end()) for f in sorted(e.forms, key=len, reverse=True)
                 for m in [re.search(rf"(?<!\w){re.escape(f.lower())}(?!\w)", low)] if m]
        if not spots:
            return None
        found.append((*spots[0], e))
    found.sort(key=lambda x: x[0])
    for (_, end, _), (start, _, _) in zip(found, found[1:], strict=False):
        between = low[end:start].replace(",", " ").replace("&", " dan ").split()
        if start < end or not between and low[end:start].strip() != "," or any(w not in COORDINATORS for w in between):
            return None
    rest = " ".join(f"{question[: found[0][0]]} {question[found[-1][1] :]}".split())
    return rest, [e for _, _, e in found]


def _about(question: str, entity: Entity) -> str:
    """The follow-up with its subject named: "email apa" + Supriyono → "email apa Supriyono?"."""
    return f"{question.strip().rstrip('?').strip()} {entity.plain}?"


def _chain_subject(asked: str, before: tuple[str, str], attribute: frozenset[str], inventory: Inventory,
                   formal: Callable[[str], str], expanded: Callable[[str], str]) -> Entity | None:
    """The entity the previous question ``asked`` was itself a follow-up about (resolved against the exchange
    ``before`` it), when that entity's record holds part of ``attribute``; else None."""
    earlier = refer(asked, *before, inventory, formal, expanded)
    if earlier.kind != "carry":
        return None
    entity = earlier.entities[0]
    return entity if attribute & inventory.stems(entity.record) else None


class SubjectResolver:
    """Resolves a follow-up's subject from the conversation window (no state between turns)."""

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def resolve(self, question: str, history: list[Any], trace: Trace) -> Subject | None:
        """What a follow-up that names no subject refers to, from the entities the last reply named; None when
        the message stands alone, or the word-level rewrite in the rewrite stage should resolve it."""
        index = await self.ctx.run(self.ctx.retriever)
        if index is None or not callable(getattr(index, "normalize_query", None)):
            return None
        pairs = _exchanges(history)
        if not pairs and not _may_join(question):
            return None  # a first message naming no two things: nothing to resolve (and no inventory to build)
        inventory = await self.ctx.run(Inventory.of, index)

        def formal(text: str) -> str:
            return str(index.normalize_query(text, expand=False))

        def expanded(text: str) -> str:
            return str(index.normalize_query(text))

        stated = formal(question)  # the follow-up in the site's formal words, once
        # "pembina klub A sama klub B siapa?": two subjects joined in one question, each asked about (with or without
        # a conversation before it)
        joined = _joined(stated, inventory)
        if joined is not None:
            rest, entities = joined
            trace.add("subject", decision="each", items=[e.name for e in entities], joined=True)
            return Subject([_about(rest, e) for e in entities], labels=tuple(e.name for e in entities))
        if not pairs:
            return None

        asked, reply = pairs[-1]
        each = bool(EACH_OF_THEM.search(question))
        if is_ask_back(reply):  # the student answers our ask-back: which one they chose
            offered, context = await self._offered(index, inventory, pairs, expanded, formal)
            if each and offered:  # "… masing-masing?": the question, about every one offered
                trace.add("subject", decision="each", items=[e.name for e in offered])
                return Subject([_about(formal(_without_each(question)), e) for e in offered],
                               labels=tuple(e.name for e in offered))
            chosen = pick(question, offered, context, inventory, expanded, both=ALL_OF_THEM) if offered else ()
            trace.add("subject", decision="pick", chosen=[e.name for e in chosen], offered=[e.name for e in offered])
            if not chosen:
                return None
            return Subject([_about(formal(asked), e) for e in chosen], labels=tuple(e.name for e in chosen))
        follow = rewrite_followup(question, history)
        about = follow.about_subject
        # "ruangannya masing-masing di mana?", or a plural question about them ("penanggung jawabnya siapa saja?"):
        # about every item the last reply listed, each asked in its singular form
        plural = about and is_list_question(stated)
        if (each or plural) and not is_refusal(reply):
            items = [e.plain for e in inventory.named_in(reply)]
            items = items if len(items) >= 2 else listed_items(reply)
            if 2 <= len(items) <= MAX_EACH:
                trace.add("subject", decision="each", items=items, plural=bool(plural and not each))
                bare = one_answer_form(formal(_without_each(question))).strip().rstrip("?").strip()
                return Subject([f"{bare} {item}?" for item in items], labels=tuple(items))
        if not about:
            return None
        k = _last_answered(pairs)
        asked, reply = pairs[k]
        ref = refer(question, asked, reply, inventory, formal, expanded)
        attribute = frozenset(ref.attribute)
        if ref.why in ("none_has_it", "unknown_attribute") and k > 0 and not ref.partly:
            # none of what the last reply named holds any of the attribute: the entity the chain is about may
            # ("pembinanya siapa?" → "Dosen pembina: <person>" → "jadwal kegiatannya?" is the community's)
            kept = _chain_subject(asked, pairs[k - 1], attribute, inventory, formal, expanded)
            if kept is not None:
                trace.add("subject", decision="refer", kind="carry", why="chain_subject", attribute=list(ref.attribute),
                          entities=[kept.name])
                return Subject([_about(stated, kept)])
        if ref.why == "unknown_attribute" and not ref.partly and follow.cue == "short" and follow.rule == "same_subject":
            # nothing but its length made it a follow-up, and no record the reply named holds a word of it
            trace.add("subject", decision="standalone", why=ref.why, attribute=list(ref.attribute),
                      entities=[e.name for e in ref.entities])
            return Subject([], standalone=True)
        trace.add("subject", decision="refer", kind=ref.kind, why=ref.why, attribute=list(ref.attribute),
                  entities=[e.name for e in ref.entities])
        if ref.kind == "carry":
            return Subject([_about(stated, ref.entities[0])])
        if ref.kind == "ask":  # each candidate's question too: when all get the same answer there is nothing to ask
            return Subject([_about(stated, e) for e in ref.entities], ask=ref.entities, asked=question)
        if ref.kind == "prodi":
            names = ", ".join(e.name for e in ref.entities[:MAX_CHOICES])
            note = f"Informasi itu tidak tercantum untuk {names}. Untuk program studi:"
            contact = await self.ctx.contact_url(index)
            page = inventory.page(contact) if contact else None
            line = inventory.field(page, frozenset(ref.attribute)) if page is not None else None
            if page is not None and line:  # the prodi's own record: its contact page's field
                trace.add("final", stop_reason=StopReason.STOP_CONFIDENT, abstained=False, sources=[page.url])
                return Subject([], result=Reply(answer=f"{note}\n{line} [1]", abstained=False,
                                                sources=(Source(url=page.url, title=page.name),), confidence=1.0,
                                                iterations=0, stop_reason=StopReason.STOP_CONFIDENT))
            return Subject([f"{stated.rstrip(' ?')} program studi?"], note=note)
        return None

    async def _offered(self, index: SearchIndex, inventory: Inventory, pairs: list[tuple[str, str]],
                       expanded: Callable[[str], str], formal: Callable[[str], str]) -> tuple[tuple[Entity, ...], str]:
        """The candidates the last ask-back offered, found again the way they were found (the pipeline keeps no
        state between turns), and the text to match a typed pick against: the follow-up's reply before it, or,
        for a role word several people's roles share (an e-mail of "the coordinator"), the ask-back's own lines."""
        asked, reply = pairs[-1]
        if len(pairs) >= 2:
            before, before_reply = pairs[-2]
            ref = refer(asked, before, before_reply, inventory, formal, expanded)
            if ref.kind == "ask":
                return ref.entities, before_reply
        facts = getattr(index, "facts", None)
        if facts is None or not hasattr(facts, "lookup"):
            return (), reply
        found = await self.ctx.run(facts.lookup, strip_clitics(expanded(asked)))
        if not {"ask_role", "ask_person"} & set(getattr(found, "constraints", {}) or {}):
            return (), reply
        pages = [inventory.page(str(r.get("url", ""))) for r in getattr(found, "rows", ()) or ()]
        return tuple(p for p in pages if p is not None), reply
