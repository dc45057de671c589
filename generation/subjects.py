"""What a follow-up refers to: the entities the previous reply named, and asking back when it named several.

"emailnya apa?" cannot be understood alone. Its subject is what the conversation was about: the lecturer the last
reply named, one of the two it named (then the student is asked which), or, when the thing the reply named has no
e-mail at all (a scholarship), the study program itself (issue 29).

The site says what its entities are, so nothing here is a word list:

- a page is about what its title names: a lecturer's profile, a community, a laboratory. A person is also named
  without academic titles, and an organisation by its acronym in the title's parentheses;
- a row of a table, which the chunker renders ``Label: value; Label: value; …``, is about its first value;
- an entity's *record* is what the site says about it (its page, or its row), and a follow-up's attribute exists for
  it when the attribute's stems occur in the record. An attribute the site uses as a field label somewhere ("Email:")
  but not in any candidate's record is asked of the study program.

Everything is decided on the stems of the index's own analyzer, so "pendaftarannya" meets "Pendaftaran:" and
"ruangannya" meets "Ruang:".
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.answer_type import is_list_question
from generation.compose import ABSTAIN_MESSAGE
from generation.text import strip_citations, strip_clitics, told_apart
from retrieval.analyzer import Analyzer
from retrieval.language import RELATIVE

__all__ = ["ASK_BACK_LEAD", "MAX_CHOICES", "Entity", "Inventory", "Reference", "ask_back_person", "ask_back_roles",
           "ask_back_text",
           "is_ask_back", "listed_items", "pick", "refer"]

# WhatsApp shows at most three reply buttons; more candidates than this is a list to answer, not a choice to ask
MAX_CHOICES = 3
# the first words of every ask-back the pipeline writes: the next turn knows its previous reply asked back
ASK_BACK_LEAD = "Maksud Anda yang mana"

_ROW = re.compile(r"^\s*([^:;\n]{1,40}):\s*([^;\n]+?)\s*;\s*[^:;\n]{1,40}:")  # "Beasiswa: KIP Kuliah; Penyelenggara: …"
_LABEL = re.compile(r"(?:^|[;\n])\s*([^:;\n]{1,40}?)\s*:", re.MULTILINE)
_PARENS = re.compile(r"\s*\(([^()]{2,60})\)\s*")
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")  # a word as spellings are matched: "al-qur'an" → al, qur'an


@dataclass(frozen=True, slots=True)
class Entity:
    """Something the site has a page or a row about. ``name`` is the site's own spelling, ``forms`` the spellings a
    reply may use, ``record`` what the site says about it."""

    name: str
    forms: tuple[str, ...]
    record: str
    url: str = ""
    row: bool = False  # a table row (its record is the row), not a page
    # what sort of thing it is, as far as the site tells: "row:<the table's page>", "lecturer" (a profile the facts
    # table read) or "page"; two candidates of one sort are alternatives to ask between
    sort: str = "page"

    @property
    def plain(self) -> str:
        """Its shortest spelling: a name without academic titles, an acronym ("Budi Santoso", "UKM"), which
        a question can carry without a title's full stops reading as the end of a sentence."""
        return min(self.forms, key=len) if self.forms else self.name


@dataclass(frozen=True, slots=True)
class Reference:
    """What a follow-up refers to. ``kind``: ``none`` (nothing to resolve: the question stands as it is or the
    older resolver handles it), ``carry`` (one entity is the subject), ``ask`` (two or three are: ask back),
    ``prodi`` (the attribute exists for none of them but for the study program)."""

    kind: str
    entities: tuple[Entity, ...] = ()
    attribute: tuple[str, ...] = ()  # the attribute's stems
    why: str = ""
    # with none that has the whole attribute: whether any candidate's record holds part of it ("jam latihan" against
    # "Jadwal kegiatan"); without that the follow-up shares nothing with what the reply named
    partly: bool = False


@dataclass
class Inventory:
    """The entities of one index version and the field labels its pages use (as stems)."""

    entities: list[Entity]
    labels: frozenset[str]
    analyzer: Analyzer
    _stems: dict[str, frozenset[str]] = field(default_factory=dict)
    # first word of a spelling → (its words, the entity), longest first: a reply is scanned word by word, so the
    # cost grows with the reply, not with the site ("Beasiswa Bank Nusantara" is named before "Bank Nusantara")
    _starts: dict[str, list[tuple[tuple[str, ...], Entity]]] = field(default_factory=dict)
    # the spellings of names that hold a word that otherwise cuts a reply into lines ("Laboratorium X dan Y")
    joined_names: tuple[str, ...] = ()
    _weights: dict[str, float] | None = None  # stem → its rarity among the entities' records (``weight``)
    # the rows of each table that has several, in table order (``rows_told_by``)
    _tables: tuple[tuple[Entity, ...], ...] = ()

    def __post_init__(self) -> None:
        self.joined_names = tuple(sorted({f for e in self.entities for f in e.forms if _CUT.search(f)},
                                         key=len, reverse=True))
        tables: dict[str, list[Entity]] = {}
        for e in self.entities:
            if e.row:
                tables.setdefault(e.sort, []).append(e)
        self._tables = tuple(tuple(rows) for rows in tables.values() if len(rows) >= 2)
        for e in self.entities:
            for form in e.forms:
                tokens = tuple(m.group(0) for m in _TOKEN.finditer(form.lower()))
                if tokens:
                    self._starts.setdefault(tokens[0], []).append((tokens, e))
        for spellings in self._starts.values():
            spellings.sort(key=lambda p: -len(p[0]))

    @classmethod
    def of(cls, index: Any) -> Inventory:
        """The inventory of ``index`` (built once per index object)."""
        with _LOCK:
            found = _CACHE.get(index)
            if found is None:
                facts = getattr(index, "facts", None)
                people = {str(p.url) for p in getattr(facts, "lecturers", ()) or ()}
                found = cls.build(index.chunks, getattr(index, "aliases", None), people)
                _CACHE[index] = found
            return found

    @classmethod
    def build(cls, chunks: Sequence[Any], aliases: Any = None, people: set[str] | frozenset[str] = frozenset()
              ) -> Inventory:
        analyzer = Analyzer(stemming=True)
        pages: dict[str, tuple[str, list[str]]] = {}  # url → (title, texts)
        rows: dict[str, Entity] = {}
        labels: set[str] = set()
        for c in chunks:
            title, texts = pages.setdefault(c.url, (str(c.title or "").strip(), []))
            texts.append(c.text)
            for line in c.text.splitlines():
                m = _ROW.match(line)
                if m and m.group(2).strip() and m.group(2).strip() not in rows:
                    name = m.group(2).strip()
                    rows[name] = Entity(name, (name,), line.strip(), c.url, row=True, sort=f"row:{c.url}")
                for label in _LABEL.findall(line):
                    labels.update(analyzer(label))
        bare_of = {str(t).lower(): str(b) for b, t in (getattr(aliases, "titled", None) or {}).items()}
        entities: list[Entity] = []
        seen: set[str] = set()
        for url, (title, texts) in pages.items():
            if not title or title in seen:
                continue
            seen.add(title)
            row = rows.pop(title, None)  # a laboratory is a row of the list and has a page: one entity, both texts
            forms = {title}
            inner = _PARENS.findall(title)
            outer = _PARENS.sub(" ", title).strip()
            forms.update(f for f in (outer, *inner) if f)
            bare = bare_of.get(title.lower())
            if bare:
                forms.add(bare)
            record = "\n".join(texts + ([row.record] if row is not None else []))
            sort = row.sort if row is not None else ("lecturer" if url in people else "page")
            entities.append(Entity(title, tuple(sorted(forms, key=len, reverse=True)), record, url, sort=sort))
        entities.extend(rows.values())
        return cls(entities, frozenset(labels), analyzer)

    def weight(self, stem: str) -> float:
        """How rare ``stem`` is among the site's entities: ln(1 + (N − n + 0.5) / (n + 0.5)) for N entities, n of
        whose records hold it (the records are stemmed once, on first use)."""
        if self._weights is None:
            with _WEIGHTS_LOCK:
                if self._weights is None:
                    held = Counter(w for e in self.entities for w in self.analyzer(strip_clitics(e.record)))
                    n = len(self.entities)
                    self._weights = {w: math.log1p((n - k + 0.5) / (k + 0.5)) for w, k in held.items()}
        return self._weights.get(stem, math.log1p((len(self.entities) + 0.5) / 0.5))

    def stems(self, text: str) -> frozenset[str]:
        found = self._stems.get(text)
        if found is None:
            found = frozenset(self.analyzer(strip_clitics(text)))
            if len(self._stems) < 4096:
                self._stems[text] = found
        return found

    def named_in(self, text: str) -> list[Entity]:
        """The entities ``text`` names, in order of first mention. The longest spelling wins where two overlap, and
        a spelling used as a field label ("Beasiswa: …") names nothing."""
        lowered = text.lower()
        words = list(_TOKEN.finditer(lowered))
        found: list[Entity] = []
        i = 0
        while i < len(words):
            match = None
            for tokens, entity in self._starts.get(words[i].group(0), ()):
                n = len(tokens)
                if tuple(w.group(0) for w in words[i:i + n]) == tokens:
                    match = (n, entity)
                    break
            if match is None:
                i += 1
                continue
            n, entity = match
            end = words[i + n - 1].end()
            if lowered[end:].lstrip(".").startswith(":"):  # a field label ("Beasiswa: …") names nothing
                i += n
                continue
            if all(e is not entity for e in found):
                found.append(entity)
            i += n
        named = found
        # a page that lists rows (a list of laboratories, of scholarships) is their container: with one of its rows named, the
        # row is what the text is about, and the page's title is only where it was found
        tables = {e.sort[4:] for e in named if e.sort.startswith("row:")}
        return [e for e in named if e.sort.startswith("row:") or e.url not in tables]

    def rows_told_by(self, text: str) -> list[Entity]:
        """The table rows ``text`` names by a word that only that row's name holds among its table's rows ("klub
        robotika" over rows "Klub Robotika", "Klub Musik": "robotika"), in table order; a word several rows' names
        share names none of them."""
        asked = self.stems(text)
        if not asked:
            return []
        told: list[Entity] = []
        for rows in self._tables:
            told.extend(rows[k] for k in told_apart([self.stems(e.name) for e in rows], asked))
        return told

    def page(self, url: str) -> Entity | None:
        return next((e for e in self.entities if e.url == url and e.record.count("\n") >= 1), None) \
            or next((e for e in self.entities if e.url == url), None)

    def field(self, entity: Entity, attribute: frozenset[str]) -> str | None:
        """The line of ``entity``'s record whose label is the attribute ("Email: informatika@…" for {email})."""
        for line in entity.record.splitlines():
            label, colon, value = line.partition(":")
            if colon and value.strip() and attribute <= self.stems(label):
                return line.strip()
        return None

    def has(self, entity: Entity, attribute: frozenset[str]) -> bool:
        return bool(attribute) and attribute <= self.stems(entity.record)

    def is_label(self, attribute: frozenset[str]) -> bool:
        return bool(attribute) and attribute <= self.labels


_CACHE: weakref.WeakKeyDictionary[Any, Inventory] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_WEIGHTS_LOCK = threading.Lock()


def attribute_of(question: str, inventory: Inventory, normalize: Callable[[str], str] | None = None) -> frozenset[str]:
    """The stems a follow-up asks about ("jdwal kumpulnya kapan?" → {jadwal, kumpul}): its words in the site's
    spelling, without question words, particles or clitics."""
    text = normalize(question) if normalize is not None else question
    return inventory.stems(text)


def is_refusal(reply: str) -> bool:
    return reply.strip().startswith(ABSTAIN_MESSAGE[:40])


def refer(question: str, previous_question: str, reply: str, inventory: Inventory,
          normalize: Callable[[str], str] | None = None, expand: Callable[[str], str] | None = None) -> Reference:
    """What ``question``, a follow-up that names no subject of its own, refers to after ``previous_question`` got
    ``reply``. The candidates are the entities the reply named that the previous question did not (the reply's
    new information: "pembina ETH0 siapa?" → the lecturer, not ETH0), or all it named when it named only those;
    of these, the ones that match the previous question best (``focus``: a reply that listed five scholarships for
    "which ones need an IPK of 3?" was about the two that do). ``expand`` spells the previous question out in the
    site's words ("sekprodi" → "sekretaris program studi") for that match."""
    attribute = attribute_of(question, inventory, normalize)
    if not attribute:
        return Reference("none", why="no_attribute")
    if not reply.strip() or is_refusal(reply) or is_ask_back(reply):
        return Reference("none", attribute=tuple(sorted(attribute)), why="no_answer_before")
    if inventory.named_in(question):
        return Reference("none", attribute=tuple(sorted(attribute)), why="names_its_own_subject")
    named = inventory.named_in(reply)
    asked = {id(e) for e in inventory.named_in(previous_question)}
    fresh = [e for e in named if id(e) not in asked] or named
    attr = tuple(sorted(attribute))
    if not fresh:
        return Reference("none", attribute=attr, why="reply_named_nothing")
    fresh = focus(fresh, _what_tells_apart((expand or normalize or str)(previous_question)), reply, inventory)
    having = [e for e in fresh if inventory.has(e, attribute)]
    if len(having) >= 2:  # "Koordinator X: <person>" gave the person as the attribute's value: no subject of it
        having = [e for e in having if not _given_as(e, attribute, reply, inventory)] or having
    if len(having) == 1:
        return Reference("carry", (having[0],), attr, "one_has_it")
    if 2 <= len(having) <= MAX_CHOICES:
        return Reference("ask", tuple(having), attr, "several_have_it")
    if len(having) > MAX_CHOICES:
        return Reference("none", tuple(having), attr, "a_list_has_it")
    partly = [e for e in fresh if attribute & inventory.stems(e.record)]
    if inventory.is_label(attribute):
        return Reference("prodi", tuple(fresh), attr, "none_has_it", partly=bool(partly))
    # an attribute in the student's words, not the site's ("jam latihan" for "Jadwal kegiatan", "syarat" for
    # "Sasaran"): two or three that have part of it, or two or three of one sort (rows of one table) or listed as
    # items of our reply, are asked between; one is no evidence enough to carry, and a lab beside its head are no
    # alternatives (the rewrite decides)
    if 2 <= len(partly) <= MAX_CHOICES:
        return Reference("ask", tuple(partly), attr, "several_have_part")
    if 2 <= len(fresh) <= MAX_CHOICES and (len({e.sort for e in fresh}) == 1 or _listed_apart(fresh, reply)):
        return Reference("ask", tuple(fresh), attr, "several_alike")
    return Reference("none", tuple(partly or fresh), attr, "unknown_attribute", partly=bool(partly))


_COUNTED_LIST = re.compile(r"\(\d+\):\s*(.+)$")  # "Mata kuliah semester 7 (2): A; B." as the facts table writes it


def _bullets(text: str) -> list[str]:
    """The item lines ("- …") of a reply of ours (citations stripped), without their dash."""
    return [ln[2:].strip() for ln in text.splitlines() if ln.startswith("- ")]


def _listed_apart(entities: Sequence[Entity], reply: str) -> bool:
    """Each of ``entities`` is named on its own item line ("- …") of ``reply``: our reply listed them as items of one
    list, so they are alike whether the site gives each its own page or a line of one page."""
    bullets = [ln.lower() for ln in _bullets(strip_citations(reply))]
    first = [next((i for i, ln in enumerate(bullets) if any(f.lower() in ln for f in e.forms)), None)
             for e in entities]
    return None not in first and len(set(first)) == len(first)


def listed_items(reply: str) -> list[str]:
    """The items a reply of ours listed, in order: its "- item — …" lines, or the "; "-separated items after a
    counted label ("… (2): IF-704 Deep Learning; IF-705 Forensik Digital."); [] when it lists nothing."""
    text = strip_citations(reply)
    bullets = _bullets(text)
    if len(bullets) >= 2:
        return [re.split(r" — |: ", b, maxsplit=1)[0].strip() for b in bullets]
    m = _COUNTED_LIST.search(text.splitlines()[0] if text else "")
    if not m:
        return []
    items = [re.sub(r"\s*\([^()]*\)$", "", part.strip().rstrip(".")) for part in m.group(1).split("; ")]
    return [i for i in items if i]


def _given_as(entity: Entity, attribute: frozenset[str], reply: str, inventory: Inventory) -> bool:
    """``reply`` gives ``entity`` as the value of a label that holds ``attribute`` ("Koordinator PKL: <person>")."""
    for line in reply.splitlines():
        label, colon, value = line.partition(":")
        if colon and attribute <= inventory.stems(label) \
                and any(f.lower() in value.lower() for f in entity.forms):
            return True
    return False


_DEGREE_END = re.compile(r"(?:\b[A-Z][A-Za-z]{0,3}\.)+$")  # "M.Kom.", "M.T.", "Dr.": an abbreviation, not a sentence end


_JOINS = r"\s+-\s+|\s+(?:dan|serta)\s+"  # a dash or a coordinator between two statements
_CUT = re.compile(_JOINS, re.IGNORECASE)
_SPLIT = re.compile(r"\n|;\s*|" + _JOINS)
_KEPT = "\x00"  # a space inside a name that must not cut a line


def _lines(text: str, names: Sequence[str] = ()) -> list[str]:
    """A reply cut where one entity's statement ends: rows, list items, "dan" between two people, and sentences
    (a name's degree, "Supriyono, M.Kom. — Jabatan: …", does not end one). A name of ``names`` ("Laboratorium X
    dan Y") is not cut."""
    for name in names:
        text = re.sub(re.escape(name), lambda m: m.group(0).replace(" ", _KEPT), text, flags=re.IGNORECASE)
    out: list[str] = []
    for raw in _SPLIT.split(text):
        piece = raw.replace(_KEPT, " ")
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\[])", piece)
        merged: list[str] = []
        for sentence in sentences:
            if merged and _DEGREE_END.search(merged[-1]):
                merged[-1] = f"{merged[-1]} {sentence}"
            else:
                merged.append(sentence)
        out.extend(m for m in merged if m.strip())
    return out


def _reply_lines(text: str, inventory: Inventory) -> list[str]:
    """``_lines`` of a reply, the site's names that hold a coordinator kept whole."""
    lowered = text.lower()
    return _lines(text, [n for n in inventory.joined_names if n.lower() in lowered])


def _near(entity: Entity, lines: Sequence[str], inventory: Inventory) -> frozenset[str]:
    """The stems of the reply's lines that name ``entity``, and of its names."""
    mine = [ln for ln in lines if any(f.lower() in ln.lower() for f in entity.forms)]
    return inventory.stems(" ".join(mine)) | inventory.stems(" ".join(entity.forms))


def _without_shared_labels(reply: str, entities: Sequence[Entity]) -> str:
    """The reply without a label that heads several of ``entities`` ("Dosen bidang Data Science (2): A; B"): it
    describes them all, so it tells none of them apart."""
    out = []
    for line in reply.splitlines():
        head, colon, rest = line.partition(":")
        named = sum(any(f.lower() in rest.lower() for f in e.forms) for e in entities)
        # a list after it, not more labelled statements ("Ketua …: A [1]; Sekretaris …: B [2]" labels each its own)
        heads_a_list = colon and named >= 2 and ":" not in rest
        out.append(rest if heads_a_list and not any(f.lower() in head.lower() for e in entities
                                                    for f in e.forms) else line)
    return "\n".join(out)


def _what_tells_apart(question: str) -> str:
    """The words of ``question`` that may tell the items of its reply apart: all of them for a question about one
    thing, and for a list question only what it asks its items to be, its relative clause ("klub yang latihannya
    hari Sabtu apa saja" → "latihannya hari Sabtu apa saja"); "" for a list question without one ("ketua klubnya
    siapa saja"): every item its reply listed answered it."""
    if not is_list_question(question):
        return question
    parts = RELATIVE.split(question, maxsplit=1)
    return parts[1] if len(parts) == 2 else ""


def focus(entities: Sequence[Entity], question: str, reply: str, inventory: Inventory) -> list[Entity]:
    """The entities that match ``question`` best, on their lines in ``reply`` and a row's own cells (a page is too
    long to tell two apart); all of them when none matches better than another."""
    stems = inventory.stems(question)
    if len(entities) < 2 or not stems:
        return list(entities)
    lines = _reply_lines(_without_shared_labels(reply, entities), inventory)
    scores = [len(stems & (_near(e, lines, inventory) | (inventory.stems(e.record) if e.row else frozenset())))
              for e in entities]
    best = max(scores)
    return [e for e, s in zip(entities, scores, strict=True) if s == best] if best > 0 else list(entities)


def ask_back_text(question: str, entities: Sequence[Entity]) -> str:
    """"Maksud Anda yang mana: Supriyono, M.Kom. atau Shoffin Nahwa Utama, M.T.?" (the channels add the buttons)."""
    return f"{ASK_BACK_LEAD}: {_either([e.name for e in entities])}?"


def _either(names: Sequence[str]) -> str:
    """"A, B atau C" (one name alone as it is)."""
    return ", ".join(names[:-1]) + f" atau {names[-1]}" if len(names) > 1 else names[0]


def ask_back_roles(rows: Sequence[dict[str, Any]]) -> str:
    """The ask-back for a role several people hold, one line each ("- Koordinator Skripsi: Dr. …"), so that a
    typed pick of the role's own word meets its line."""
    return f"{ASK_BACK_LEAD}?\n" + "\n".join(f"- {r.get('value')}: {r.get('name')}" for r in rows)


def ask_back_person(fields: Sequence[str], names: Sequence[str]) -> str:
    """The ask-back for a lecturer field asked of no one ("sinta id bu"): two or three holders by name (the
    channels add the buttons), more as a request for the name with the first one as the example."""
    if len(names) <= MAX_CHOICES:
        return f"{ASK_BACK_LEAD}: {_either(names)}?"
    example = names[0].split(",")[0].strip()  # the name without the degrees after it
    return (f"{ASK_BACK_LEAD}? {fields[0]} tercantum di {len(names)} profil. Tuliskan namanya, "
            f"misalnya \"{fields[0]} {example}\".")


def is_ask_back(reply: str) -> bool:
    return reply.strip().startswith(ASK_BACK_LEAD)


def pick(message: str, candidates: Sequence[Entity], context: str, inventory: Inventory,
         normalize: Callable[[str], str] | None = None, *, both: frozenset[str] = frozenset()) -> tuple[Entity, ...]:
    """The candidates a reply to an ask-back chooses: the one it names (a button sends the name itself; an honorific
    and a first name name part of it), the one whose record and whose line in ``context`` (the reply that named
    them) share the most of its words (a role word: the line that gives that role to a person), or all of them when
    it says so (``both``, ``retrieval.language.ALL_OF_THEM``). () when it chooses none of them or cannot tell two apart."""
    named = inventory.named_in(message)
    if named:  # a button's text, or the student typed a name: one of the candidates or none of them
        return tuple(e for e in named if any(e is c for c in candidates))
    text = normalize(message) if normalize is not None else message
    # part of a candidate's name, which the normaliser spells out in full (an honorific and a first name → the
    # alias table's full name)
    spelled = tuple(e for e in inventory.named_in(text) if any(e is c for c in candidates))
    if spelled:
        return spelled
    stems = inventory.stems(text)
    if not stems:
        return ()
    if stems <= both:
        return tuple(candidates)
    lines = _reply_lines(context, inventory)
    near = [stems & _near(c, lines, inventory) for c in candidates]
    if not any(near):
        return ()  # the record alone: a word it shares ("lab") is no choice
    # each word of the message that the candidate's lines hold, weighed by its rarity on the site (a word many pages
    # hold, "klub", tells less than one few hold, "robotika"); the record only breaks a tie
    scores = [sum(inventory.weight(w) for w in held) + 0.01 * len(stems & inventory.stems(c.record))
              for c, held in zip(candidates, near, strict=True)]
    best = max(scores)
    if scores.count(best) > 1:
        return ()
    return (candidates[scores.index(best)],)
