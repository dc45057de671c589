"""Query rewriting: follow-ups from the conversation window, and RQ refinement with its validators (docs/answers.md, "Refinement validators").

Refinement is deterministic (no LLM): student shorthand is expanded and fillers are dropped. A candidate is kept
only when it stays close to the original (cosine ≥ threshold, unless it is a follow-up rewrite), keeps the main
entities, and its retrieval does not degrade (top-distance margin, source Jaccard).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from generation.text import anchors, attach_clitics, split_aside, strip_clitics, words
from retrieval.aliases import HONORIFICS
from retrieval.language import (
    ATTRIBUTE_WORDS,
    FOLLOWUP_CONNECTORS,
    GLOSSARY,
    QUESTION_WORDS,
    REFINEMENT_FILLERS,
    SWITCH_WORDS,
    TYPE_QUESTION_WORDS,
    WHO_WORDS,
)
from retrieval.normalize import full_academic_years

__all__ = ["FOLLOWUP_RULES", "FollowUp", "Validation", "expand_query", "jaccard", "rewrite_followup", "validate_refinement"]

_FOLLOWUP_MARKERS = re.compile(
    r"^(yang|yg|kalau|kalo|bagaimana dengan|gimana dengan|terus|lalu|trus|dan|selain itu|ada lagi|ada yang lain|"
    r"yang lain|lainnya|itu|tersebut|dia|beliau)\b|\b(lainnya|yang lain|tersebut|itu saja|saja\?*$|beliau|dia)\b|"
    r"\b\w{3,}nya\s*\?*\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class FollowUp:
    query: str
    rewritten: bool
    previous: str = ""
    # what the previous reply named, for a follow-up that asks for something else ("ada lagi?", "yang lain?",
    # "selain itu?"): the answer should name something other than these
    exclude: tuple[str, ...] = ()
    # it keeps the previous subject ("emailnya?", "beliau ngajar apa?", "jam latihannya kapan?"): neither narrows a
    # list ("yang 3 SKS saja?") nor switches with "kalau …?"; generation.subjects resolves which subject that is
    about_subject: bool = False
    # the rule that decided (FOLLOWUP_RULES), for the answer trace; it changes nothing
    rule: str = ""
    # why the message was read as a follow-up at all: "marker", "possessive" or "short" (``_followup_cue``); only
    # "short" is no sign of its own, so generation.subjects may find such a message stands alone
    cue: str = ""


# The follow-up rules by name, as FollowUp.rule gives them: no previous question; not a follow-up; "ada yang lain?"
# (the previous question again); an alternative asked for ("ada lagi?", "yang lain?", "selain itu?": what the
# previous reply named is excluded; "<rule>+alternative" after the rule that resolved it); "kalau X?" fitted into the
# previous question (a repeated word's new tail, or a new subject in the old one's place: _what_about) or, when it
# cannot be, a new subject with the old attribute; "dia"/"beliau" for the person the previous reply named; a
# narrowing ("yang 3 SKS saja?"); a possessive "-nya" or a pronoun that keeps the previous subject ("emailnya?");
# other words about the previous subject, its words carried.
FOLLOWUP_RULES = ("no_history", "not_followup", "again", "alternative", "switch", "switch_new_subject",
                  "pronoun_person", "narrowing", "possessive", "same_subject")


_NARROWING = re.compile(r"^(?:(?:kalau|kalo|klo|kl|terus|trus|lalu|dan)\s+)?(?:yang|yg)\b", re.IGNORECASE)
# "kalau X?" / "bagaimana dengan X?" is Indonesian for "what about X?": with a subject in X, the topic switches
_SWITCH = re.compile(r"^(?:(?:terus|trus|lalu|nah)\s+)?(?:kalau|kalo|klo|kl|bagaimana dengan|gimana dengan|gmn dengan)\b",
                     re.IGNORECASE)
_MAX_CHAIN = 4  # how many earlier follow-ups a chain may resolve through


def rewrite_followup(question: str, history: Sequence[object], _depth: int = 0) -> FollowUp:
    """Resolve a follow-up with the conversation (``_resolve``); one that asks for an alternative ("ada lagi yang
    …?", "yang lain?", "selain itu?") also says what the previous reply named (``FollowUp.exclude``)."""
    out = _resolve(question, history, _depth)
    if not out.rewritten or not _ALTERNATIVE.search(question):
        return out
    # another one, not more about the one named
    out = replace(out, about_subject=False, rule="alternative" if out.rule == "again" else f"{out.rule}+alternative")
    reply = _last_reply(history)
    if not reply or reply.startswith("Maaf"):
        return out
    replies = [reply]
    # when the previous question was itself a follow-up ("pembinanya siapa?"), the reply before it named what the
    # chain is about ("klub X …"): that one is left out too
    previous, _, earlier = _previous_turn(question, list(history))
    if previous and _resolve(previous, earlier, _depth + 1).rewritten:
        before = _last_reply(earlier)
        if before and not before.startswith("Maaf"):
            replies.append(before)
    asked = {w.lower() for w in words(f"{question} {out.query}")}
    named = [n for r in replies for n in _named(r) if n.lower() not in asked and n.lower() not in ATTRIBUTE_WORDS]
    return replace(out, exclude=tuple(dict.fromkeys(named)))


def _last_reply(history: Sequence[object]) -> str:
    for m in reversed(list(history)):
        if getattr(m, "role", "") == "assistant":
            return str(getattr(m, "text", "")).strip()
        if getattr(m, "role", "") == "user":
            return ""
    return ""


# the words that ask for more of the same ("lain", "lagi"): with nothing else to resolve, the previous question again
_MORE = frozenset({"lain", "lainnya", "lagi"})
_ALTERNATIVE = re.compile(r"\b(?:ada lagi|ada yang lain|ada yg lain|yang lain|yg lain|lainnya|selain)\b", re.IGNORECASE)
# a name as a reply gives one: an acronym ("MOCAP", "ETH0") or a person
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{2,}\b")


def _named(reply: str) -> list[str]:
    """The acronyms and the person the first line of ``reply`` names, in order, without repeats."""
    first = reply.splitlines()[0] if reply else ""
    out = list(dict.fromkeys(_ACRONYM.findall(first)))
    person = " ".join(_person(reply))
    return out + ([person] if person else [])


def _resolve(question: str, history: Sequence[object], _depth: int = 0) -> FollowUp:
    """Resolve a follow-up ("ada yang lain?", "yang 3 SKS saja?", "emailnya?", "kalau ketua prodinya siapa?")
    with the previous user question, itself resolved first (chains of follow-ups). A follow-up that names a new
    subject replaces the carried-over one (and carries only the previous attribute, when it asks none of its
    own); one that asks a new attribute keeps the subject. The person the previous reply named is carried only
    when the previous question asked "siapa" and the reply named someone ("dia"/"beliau" then stand for that
    person alone)."""
    previous, reply, earlier = _previous_turn(question, list(history))
    if not previous:
        return FollowUp(question, False, rule="no_history")
    own = anchors(question)
    cue = _followup_cue(question, own)
    if not cue:
        return FollowUp(question, False, rule="not_followup")
    if _depth < _MAX_CHAIN:  # "siapa dosen IS?" → "emailnya?" → "kalau kaprodi?": resolve the middle one first
        previous_resolved = _resolve(previous, earlier, _depth + 1).query
    else:
        previous_resolved = previous
    prev_core = full_academic_years(previous_resolved.rstrip(" ?!."))
    extra = [w for w in own if w not in _MORE and w != "saja"]
    if not extra:  # "ada yang lain?": the previous question again; a message that asks for nothing more is no follow-up
        if not _ALTERNATIVE.search(question) and not set(words(question)) & _MORE:
            return FollowUp(question, False, rule="nothing_to_resolve")
        return FollowUp(prev_core + "?", True, previous, rule="again", cue=cue)
    f = _Reading.of(question, own, extra, previous, previous_resolved, prev_core)
    return replace(_switched(f) or _same_subject(f, reply), cue=cue)


def _previous_turn(question: str, msgs: list[object]) -> tuple[str, str, list[object]]:
    """The previous user question other than ``question`` (without its aside), the reply that followed it (the
    latest assistant message after it), and the messages before it; ("", …) when there is none."""
    previous, reply, earlier = "", "", []
    for i in range(len(msgs) - 1, -1, -1):
        role, text = getattr(msgs[i], "role", ""), str(getattr(msgs[i], "text", "")).strip()
        if role == "assistant" and not previous and not reply:
            reply = text
        if role == "user":  # its "-nya" joined as the pipeline joins the current question's
            text = attach_clitics(text)
        if role == "user" and text and text != question.strip():
            previous, earlier = split_aside(text)[0], msgs[:i]  # the earlier question without its aside
            break
    return previous, reply, earlier


def _followup_cue(question: str, own: list[str]) -> str:
    """Why ``question`` (whose anchors are ``own``) leans on the previous one (``FollowUp.cue``): a follow-up marker
    with few anchors of its own ("marker"), a possessive "-nya" with few anchors ("possessive"), or only that it is
    short, at most one anchor ("short"); "" when it stands alone."""
    if bool(_FOLLOWUP_MARKERS.search(question.strip())) and len(own) <= 4:
        return "marker"
    # a possessive "-nya" points back at the previous subject ("jam bukanya kapan?")
    if len(own) <= 3 and bool(re.search(r"\b\w{3,}-?nya\b", question, re.IGNORECASE)):
        return "possessive"
    return "short" if len(own) <= 1 and len(words(question)) <= 4 else ""


@dataclass(frozen=True, slots=True)
class _Reading:
    """A follow-up read against the previous question, what ``_switched`` and ``_same_subject`` decide on."""

    question: str
    previous: str  # the previous user question as typed (without its aside)
    previous_resolved: str  # … resolved itself, when it was a follow-up
    prev_core: str  # … without its final punctuation, academic years in full
    extra: list[str]  # the follow-up's anchors other than "lain", "lainnya", "saja", "lagi"
    own_words: set[str]
    prev_words: list[str]  # the previous question's anchors (numbers protected), question words left out
    numbers: dict[str, str]  # a protected number → as the previous question wrote it
    narrowing: bool
    possessed: set[str]
    new_subject: list[str]
    asks: bool
    text: str  # the follow-up as the resolved query starts

    @classmethod
    def of(cls, question: str, own: list[str], extra: list[str], previous: str, previous_resolved: str,
           prev_core: str) -> _Reading:
        prev_keys = {_key(w) for w in words(prev_core)}
        # "ipnya" after "ip …": the clitic on a word of the previous question, however short
        bare = {w: _bare(w, prev_keys) for w in words(question)}
        own_words = set(words(question)) | set(own) | set(bare.values())
        # a number typed as "3,2" or "24/25" is one number: protected from the word split, restored in the output
        protected, numbers = _protect_numbers(prev_core)
        prev_words = [w for w in anchors(protected) if w not in QUESTION_WORDS]
        # a number narrows ("yang 3 SKS?"), unless the previous question had it too: then it restates the value
        narrowing = bool(_NARROWING.search(question.strip())) or any(
            _is_number(w) and w not in prev_keys for w in extra)
        # what the follow-up asks *about* the previous subject: attribute words, and a possessive "-nya" word after
        # one ("jadwal latihannya", "jam bukanya": its practice schedule, its opening hours)
        possessed = _possessed(question)
        new_subject = [w for w in extra if w not in ATTRIBUTE_WORDS and w not in FOLLOWUP_CONNECTORS and not _is_number(w)
                       and w not in possessed]
        asks = bool(set(extra) & ATTRIBUTE_WORDS) or bool(own_words & TYPE_QUESTION_WORDS) or bool(possessed)
        text = full_academic_years(_without_connectives(question, bare))
        return cls(question, previous, previous_resolved, prev_core, extra, own_words, prev_words, numbers, narrowing,
                   possessed, new_subject, asks, text)


def _switched(f: _Reading) -> FollowUp | None:
    """A "kalau X?" follow-up aligned with the previous question (``_what_about``), or one that names a new
    subject; None when the topic does not switch."""
    if not _SWITCH.search(f.question.strip()):
        return None
    aligned = _what_about(f.question, f.prev_core,
                          subject_may_change=bool(f.new_subject) and not f.narrowing and not f.asks, asks=f.asks)
    if aligned:
        return FollowUp(full_academic_years(aligned), True, f.previous, rule="switch")
    if f.new_subject and not f.narrowing:
        # a new subject replaces the old one; the old attribute carries over only when none is asked
        carry = [] if f.asks else [w for w in f.prev_words if w in ATTRIBUTE_WORDS and w not in f.own_words]
        query = f"{f.text} {' '.join(carry)}".strip()
        return FollowUp(query + "?", True, f.previous, rule="switch_new_subject")
    return None


def _same_subject(f: _Reading, reply: str) -> FollowUp:
    """The follow-up about the previous subject: the person the previous reply named, for "dia"/"beliau" after a
    who-question, or the previous question's words the follow-up leaves implicit."""
    # the person the previous reply named, when the previous question asked who ("siapa pembinanya?" → "Rina …")
    # … or whoever the reply named for "beliau", which is said of a person only ("dia" may be said of a thing)
    said_of_person = _asks_who(f.previous) or bool(_HONORIFIC_PRONOUN.search(f.question))
    person = _person(reply) if said_of_person and reply and not reply.startswith("Maaf") else []
    if person and _PERSONAL_PRONOUN.search(f.question):
        # "dia"/"beliau" stand for that person: the description the previous question gave is not carried
        return FollowUp(f"{f.text} {' '.join(person)}".strip() + "?", True, f.previous, about_subject=True,
                        rule="pronoun_person")
    topic = _topic(f)
    # names only for a pronoun-like reference ("emailnya?", "beliau"), not for a narrowing ("yang 3 SKS saja?")
    refers = re.search(r"\w{3,}-?nya\b|\b(dia|beliau)\b", f.question, re.IGNORECASE)
    names = [n for n in person if n.lower() not in {*topic, *f.own_words}] if refers and not f.narrowing else []
    query = f"{f.text} {' '.join(topic + names)}".strip()
    rule = "narrowing" if f.narrowing else "possessive" if refers else "same_subject"
    return FollowUp(query + "?", True, f.previous, about_subject=not f.narrowing, rule=rule)


def _topic(f: _Reading) -> list[str]:
    """Same subject: the previous words the new question leaves implicit; a value it restates replaces the old one
    ("kalo yang semester 6?" after "… semester 5 …" drops the 5), a new attribute replaces the old one."""
    restated = {w for w in f.own_words if w not in QUESTION_WORDS}
    replaced = _replaced_numbers(f.prev_words, restated, f.question)
    # a "-nya" word the previous question did not have asks a new attribute of the same subject ("marginnya?")
    new_attribute = bool(set(f.extra) & ATTRIBUTE_WORDS) or bool(f.possessed) \
        or bool(_possessed_words(f.question) - set(f.prev_words))
    # in a chain, what the previous follow-up asked with "-nya" ("penasihatnya siapa?") was its attribute; in a first
    # question "-nya" may mark the subject itself ("beasiswanya apa aja?")
    prev_attributes = _possessed_words(f.previous) if f.previous_resolved.strip() != f.previous.strip() else set()
    topic: list[str] = []
    for k, w in enumerate(f.prev_words):
        if w in f.own_words and not _is_number(w):
            continue
        if k in replaced or _other_facet_value(w, f.own_words):
            continue  # "kalo yang semester 6?" drops the 5; "yg pilihan?" drops "wajib"
        if new_attribute and (w in ATTRIBUTE_WORDS or w in prev_attributes) and w not in f.own_words \
                and not (k > 0 and _is_number(f.prev_words[k - 1])):
            continue  # a new attribute replaces the old one ("emailnya?" after "… ruangannya?"); "3 SKS" is a value
        topic.append(f.numbers.get(w, w))
    return topic


_LEADING_CONNECTIVES = re.compile(r"^(?:(?:kalau|kalo|klo|kl|terus|trus|lalu|nah|dan)\s+)+", re.IGNORECASE)
_PERSONAL_PRONOUN = re.compile(r"\b(?:dia|beliau)\b", re.IGNORECASE)
_HONORIFIC_PRONOUN = re.compile(r"\bbeliau\b", re.IGNORECASE)
# the previous question asked who: a who-word, or its chat spelling "sapa" (retrieval.language.CHAT_SUPPLEMENT)
_WHO = WHO_WORDS | {"sapa"}
_NUMBER = re.compile(r"\b\d+(?:[.,/]\d+)+\b")


def _is_number(word: str) -> bool:
    return bool(re.fullmatch(r"\d+(?:[-.,/]\d+)*", word))


def _protect_numbers(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with each decimal or range ("3,2", "2024/2025") written as one word, and the way back."""
    back: dict[str, str] = {}

    def one(m: re.Match[str]) -> str:
        joined = re.sub(r"[,/]", "-", m.group(0))
        back[joined] = m.group(0)
        return joined
    return _NUMBER.sub(one, text), back


def _bare(word: str, prev_keys: set[str]) -> str:
    """``word`` without a possessive "-nya" when what remains is a word of the previous question ("ipnya" after
    "ip semester …"); otherwise its usual matching form."""
    w = word.lower()
    for suffix in ("-nya", "nya"):
        if w.endswith(suffix) and w[: -len(suffix)] in prev_keys:
            return w[: -len(suffix)]
    return _key(w)


def _without_connectives(question: str, bare: dict[str, str]) -> str:
    """The follow-up as the resolved query starts: leading connectives ("terus", "kalau") off, and a word the
    previous question used written bare ("ipnya" → "ip")."""
    text = _LEADING_CONNECTIVES.sub("", question.strip().rstrip("?!. ")).strip()
    out = []
    for raw in text.split():
        core = raw.strip("?!.,;:")
        low, b = core.lower(), bare.get(core.lower(), "")
        clitic = b and low != b and low.startswith(b) and low[len(b) :] in {"nya", "-nya"}
        out.append(raw.replace(core, core[: len(b)]) if clitic else raw)
    return " ".join(out)


def _possessed(question: str) -> set[str]:
    """Words with a possessive "-nya" that follow an attribute word ("jadwal latihannya" → {"latihan"}): what is
    asked about the previous subject, not a new subject."""
    ws = words(question)
    return {strip_clitics(w) for k, w in enumerate(ws)
            if k > 0 and _key(ws[k - 1]) in ATTRIBUTE_WORDS and re.search(r"\w-?nya$", w) and strip_clitics(w) != w}


def _possessed_words(question: str) -> set[str]:
    """Every word with a possessive "-nya" in ``question`` ("penasihatnya siapa" → {"penasihat"})."""
    return {strip_clitics(w) for w in words(question) if re.search(r"\w-?nya$", w) and strip_clitics(w) != w}


def _asks_who(question: str) -> bool:
    return bool(set(words(question)) & _WHO)


def _replaced_numbers(prev_words: list[str], restated: set[str], question: str) -> set[int]:
    """Positions in ``prev_words`` of the old values a follow-up restates: the first number within three words
    after a word the follow-up repeats with a number of its own ("kalo yang semester 6?" drops the 5 of
    "semester 5"; "kalo ipnya 2,9?" drops the 3,2 of "ip semester ku 3,2")."""
    out: set[int] = set()
    typed = {_key(q): q for q in words(question)}
    for k, w in enumerate(prev_words):
        if _is_number(w) or _key(w) not in {_key(r) for r in restated}:
            continue
        if _number_after(question, w) or _number_after(question, typed.get(_key(w), w)):
            for j in range(k + 1, min(k + 4, len(prev_words))):
                if _is_number(prev_words[j]):
                    out.add(j)
                    break
    return out


# Facets whose values exclude one another: a follow-up that names one value ("yg pilihan?") replaces the value the
# previous question named ("matkul wajib …"). Academic facets written for this project.
FACETS: tuple[frozenset[str], ...] = tuple(frozenset(f.split()) for f in (
    "wajib pilihan", "ganjil genap", "pagi siang sore malam", "d3 s1 s2 s3", "daring luring online offline",
    "reguler internasional", "teori praktikum", "negeri swasta",
))


def _facet_value_of(word: str, named: Iterable[str]) -> str:
    """``word``, or the value of its facet that ``named`` gives instead ("wajib" → "pilihan")."""
    w = _key(word)
    for facet in FACETS:
        if w in facet:
            other = next((o for o in named if _key(o) in facet - {w}), None)
            if other is not None:
                return other
    return word


def _other_facet_value(word: str, own_words: set[str]) -> bool:
    """``word`` is a facet value and the follow-up names another value of the same facet."""
    return _facet_value_of(word, own_words) != word


def _key(word: str) -> str:
    """A word for matching a follow-up against the previous question: lower case, clitic off, shorthand spelled
    out when it is one word ("smt" → "semester")."""
    w = strip_clitics(word.lower())
    long = GLOSSARY.get(w, w)
    return long if " " not in long else w


def _what_about(question: str, previous: str, *, subject_may_change: bool, asks: bool = False) -> str | None:
    """"kalau X?" against the previous question P, or None when neither rule applies.

    - X repeats a word of P and adds what follows it ("kalau semester genap?" after "jadwal UAS semester ganjil
      kapan?"): P with the words after that head replaced by X's ("jadwal UAS semester genap kapan").
    - X shares nothing with P (a new subject, when ``subject_may_change``): P's subject, its leading words up to
      the first attribute or question word (after an honorific: the name), is replaced by X ("kalau KKN?" after
      "magang berapa SKS?" → "KKN berapa SKS"; "kalau bu Sari?" after "pak Budi lulusan S3 mana?" → "bu Sari S3
      mana").

    X that ``asks`` something of its own ("gimana", "kapan") and names a subject before the word it shares with P
    ("kalo mau pindah kelas gimana?" after "jadwal kelas …") is a question of its own: no head."""
    raw_x = [w for w in question.strip().rstrip("?!. ").split()]
    x = [w for w in raw_x if w.lower().strip(",.") not in SWITCH_WORDS and w.lower() not in QUESTION_WORDS]
    p = previous.strip().rstrip("?!. ").split()
    if not x or not p:
        return None
    p_keys = [_key(w) for w in p]
    x = [_bare(w, set(p_keys)) if _bare(w, set(p_keys)) in p_keys else w for w in x]
    heads = [i for i, w in enumerate(x) if _key(w) in p_keys and w.isalpha() and _key(w) not in QUESTION_WORDS]
    if heads:
        i = heads[-1]
        tail = x[i + 1 :]
        if not tail or asks and _names_before(x[:i], set(p_keys)):
            return None
        j = p_keys.index(_key(x[i]))
        if all(_is_number(w) for w in tail):  # a new value: it replaces the old one ("ipk ku 3,6" → "ipk ku 3,1")
            at = next((k for k in range(j + 1, min(j + 4, len(p))) if _is_number(p[k].strip(",.;:"))), None)
            out = p[: j + 1] + tail + p[j + 1 :] if at is None else p[:at] + tail + p[at + 1 :]
        else:  # the tail replaces the old value after the head, up to the next attribute or question word
            out = p[: j + 1] + tail + p[j + 1 + (_value_length(p[j + 1 :]) or len(tail)) :]
        # a facet value named before the head replaces the previous question's other value ("kalo yg pilihan di smt
        # 3?" after "matkul wajib smt 3 …": pilihan, not wajib)
        return " ".join(_facet_value_of(w, x[:i]) for w in out) + "?"
    if not subject_may_change:
        return None
    start = 1 if _key(p[0]) in HONORIFICS else 0
    end = start + _before_stop(p[start:])
    rest = p[end:]
    if end == start or not any(_key(w) not in QUESTION_WORDS for w in rest):
        return None
    return " ".join(x + rest) + "?"


# what ends a subject or a value in a question: what one asks about it, or a question word
_STOPS = ATTRIBUTE_WORDS | QUESTION_WORDS | TYPE_QUESTION_WORDS


def _before_stop(tokens: list[str], *, numbers_stop: bool = False) -> int:
    """How many of ``tokens`` come before the first attribute or question word (``_STOPS``), or number too."""
    n = 0
    while n < len(tokens) and _key(tokens[n]) not in _STOPS and tokens[n].lower().strip(",.") not in _STOPS \
            and not (numbers_stop and _is_number(tokens[n].strip(",.;:"))):
        n += 1
    return n


def _value_length(words_after: list[str]) -> int:
    """How many of the previous question's words after a head are its value: those before the first attribute or
    question word or number ("panjat tebing" of "klub panjat tebing kumpulnya kapan", "ganjil" of "semester ganjil
    kapan")."""
    return _before_stop(words_after, numbers_stop=True)


def _names_before(lead: list[str], p_keys: set[str]) -> bool:
    """The words of "kalau X?" before the word X shares with the previous question hold an anchor that is neither a
    word of the previous question nor a facet value ("kalo mau pindah kelas …" after "jadwal kelas …": "pindah"; not
    "kalo yg pilihan di smt 5?" after "matkul wajib smt 5 …", whose "pilihan" replaces "wajib")."""
    return any(_key(w) not in p_keys and not any(_key(w) in facet for facet in FACETS)
               for w in anchors(" ".join(lead)) if not _is_number(w))


def _number_after(text: str, word: str) -> bool:
    """``text`` gives ``word`` a number of its own ("semester 6")."""
    return bool(re.search(rf"\b{re.escape(word)}(?:-?nya)?\s+\d", text, re.IGNORECASE))


_NAME = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,3}")
_NOT_NAMES = frozenset(
    "Program Studi Teknik Informatika Universitas Fakultas Maaf Sumber Mata Kuliah Menurut Kom Eng Pd Ag".split()
)


def _names(reply: str, exclude: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Capitalised name-like words of the first line of the previous answer (at most four), other than the
    words in ``exclude`` (lower case)."""
    first = reply.splitlines()[0] if reply else ""
    out: list[str] = []
    for m in _NAME.finditer(first):
        for w in m.group(0).split():
            if w not in _NOT_NAMES and len(w) > 2 and w not in out and w.lower() not in exclude:
                out.append(w)
    return out[:4]


# a person as a reply names one: a capitalised name before an academic title ("Rina Wulandari, M.T."), or after
# "adalah"/"oleh"/an honorific ("… adalah Rina Wulandari.")
_TITLED = re.compile(r"((?:[A-Z][a-z]+\s+){0,4}[A-Z][a-z]+),\s*(?:[A-Z][A-Za-z]{0,3}\.){1,3}")
_INTRODUCED = re.compile(r"\b(?:adalah|ialah|oleh|yaitu|Bapak|Ibu|Pak|Bu)\s+((?:[A-Z][a-z]+\s+){0,4}[A-Z][a-z]+)")


def _person(reply: str) -> list[str]:
    """The words of the first person the previous answer names (at most four), or [] when it names no one;
    field labels before the name ("Ruang", "Email") are not part of it."""
    first = reply.splitlines()[0] if reply else ""
    # a name with an academic title is a person for certain; a capitalised phrase after "oleh" may be a role
    # ("oleh Ketua Program Studi, Rina …"), so it counts only when no titled name is given
    found = list(_TITLED.finditer(first)) or list(_INTRODUCED.finditer(first))
    if not found:
        return []
    m = min(found, key=lambda m: m.start(1))
    out = [w for w in m.group(1).split()
           if w.lower() not in ATTRIBUTE_WORDS and w not in _NOT_NAMES and w.lower() not in QUESTION_WORDS]
    return out[:4]


def expand_query(query: str) -> str:
    """The refinement candidate: shorthand expanded, polite fillers removed; same language, same entities."""
    out = []
    low = f" {' '.join(words(query))} "
    for raw in re.findall(r"\S+", query):
        core = raw.strip("?!.,;:()\"'").lower()
        if core in GLOSSARY and f" {GLOSSARY[core]} " in low:
            continue  # the normaliser already put the long form next to it
        if core in GLOSSARY:
            out.append(GLOSSARY[core])
        elif core in REFINEMENT_FILLERS:
            continue
        else:
            out.append(raw)
    text = " ".join(out).strip()
    if query.strip().endswith("?") and not text.endswith("?"):
        text += "?"
    return text


def main_entities(query: str) -> set[str]:
    """The words that name what is asked about (anchors with shorthand expanded)."""
    return set(anchors(expand_query(query))) - QUESTION_WORDS


def jaccard(a: set[str], b: set[str]) -> float:
    """Seed 004 eq. 14."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class Validation:
    accepted: bool
    reason: str
    cosine: float = 0.0
    jaccard: float = 0.0
    top_distance_orig: float | None = None
    top_distance_cand: float | None = None


class _Measures(TypedDict):
    """The measured fields every :class:`Validation` of one refinement carries."""

    cosine: float
    jaccard: float
    top_distance_orig: float | None
    top_distance_cand: float | None


def validate_refinement(
    original: str,
    candidate: str,
    cosine: float,
    *,
    followup: bool,
    orig_sources: set[str],
    cand_sources: set[str],
    orig_top_distance: float | None,
    cand_top_distance: float | None,
    sim_threshold: float = 0.9,
    margin: float = 0.15,
    jaccard_min: float = 0.2,
) -> Validation:
    """Seed 004 §3: BLOCK on low cosine (not for follow-up rewrites), changed entities, a worse top distance by
    more than ``margin``, or a source Jaccard below ``jaccard_min``; otherwise ACCEPT."""
    j = jaccard(orig_sources, cand_sources)
    base: _Measures = {"cosine": cosine, "jaccard": j, "top_distance_orig": orig_top_distance,
                       "top_distance_cand": cand_top_distance}
    if not followup and cosine < sim_threshold:
        return Validation(False, "low_similarity", **base)
    if not main_entities(original) <= main_entities(candidate):
        return Validation(False, "entities_changed", **base)
    if orig_top_distance is not None and cand_top_distance is not None and cand_top_distance > orig_top_distance + margin:
        return Validation(False, "top_distance_worse", **base)
    if not followup and j < jaccard_min:
        return Validation(False, "low_jaccard", **base)
    return Validation(True, "accepted", **base)
