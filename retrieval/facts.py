"""Structured facts: lecturer fields and curriculum rows in SQLite, answering constraint questions.

At build time, documents of kind ``lecturer`` (title = name, lines ``Field: value``) and ``curriculum`` (lines
``KODE – Nama – N SKS – Semester S – Wajib|Pilihan``) are loaded into two tables of ``facts.sqlite3`` in the index
version directory. :meth:`FactsTable.lookup` parses constraints from a question ("mata kuliah semester 5 yang
3 SKS", "dosen bidang Intelligent System", "email Prof. Suhartono"), returns the rows that satisfy all of them,
the parsed constraints, a short Indonesian rendering with the source URLs, and the matched document ids, which
the search fuses with the semantic hits (docs/answers.md, "Structured facts fused with semantic hits"). A lecturer
field asked of no one ("sinta id bu") returns the lecturers who have it under ``ask_person``, to ask between (no
document ids); :func:`record_lines` reads the study program's own record, its contact page, for a question that
names no one ("email prodi"; docs/answers.md, "A field asked of no one").
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.aliases import HONORIFICS
from retrieval.analyzer import clipped_compounds, stem
from retrieval.language import CARDINALS, INDEX_STOPWORDS, ORDINALS, PERSON_ASKED_WORDS, formal_vocabulary
from storage.models import Document

__all__ = ["FactsResult", "FactsTable", "build_facts", "course_filter_label", "has_record_question", "parse_course_line",
           "record_lines"]

_DASHES = re.compile(r"\s+[–—-]\s+")
_FIELD_LINE = re.compile(r"^\s*([^:\n]{2,40}?)\s*:\s*(.+?)\s*$")
_WORD = re.compile(r"[^\W_]+(?:[-.@][^\W_]+)*")
# "semester lima", "semester kelima": the cardinals and ordinals one to eight, each with its value
_NUMBER_WORDS = {w: n for n, pair in enumerate(zip(CARDINALS[:8], ORDINALS[:8], strict=True), 1) for w in pair}
_NUM = r"(\d{1,2}|" + "|".join(_NUMBER_WORDS) + r")"
_SEMESTER = re.compile(r"\bsemester\s+" + _NUM + r"\b")
_SKS = re.compile(r"\b" + _NUM + r"\s*sks\b")
_CODE_IN_QUERY = re.compile(r"\b([a-z]{2,6})[-\s]?(\d{3,4})\b")
_FIELD_KEYWORDS = ("bidang", "keahlian", "kepakaran", "minat", "riset", "penelitian", "fokus")
_COURSE_WORDS = {"mata", "kuliah", "matkul", "mk", "kurikulum", "sks", "semester", "wajib", "pilihan"}
_GENERIC = {"prodi", "program", "studi", "jurusan", "kampus", "informatika", "teknik", "fakultas", "uin", "apa", "saja"}
_LECTURER_WORDS = {"dosen", "pengajar", "lektor", "profesor", "guru"}
# "who teaches course X": a teaching verb of the stems ajar / ampu (mengajar, ngajar, diajar, mengajarkan, mengampu,
# pengampu, diampu; never belajar / pelajaran, whose stem is also ajar) and a word asking for a person
# (retrieval.language.PERSON_ASKED_WORDS)
_TEACH_VERB = re.compile(r"(?:meng|men|peng|ng|di|ter)?(?:ajar|ampu)(?:kan|i)?")
# a lecturer field whose name says it lists courses
_COURSE_FIELD = re.compile(r"mata\s*kuliah|matkul|course|pengampu|ajar|kuliah", re.IGNORECASE)
_ITEM_SPLIT = re.compile(r"[;\n]|,\s+(?=[A-Za-z]{2,6}[-\s]?\d{3,4}\b)")
# Academic titles and degrees that never identify a person.
_TITLE_WORDS = {
    "prof", "dr", "drs", "dra", "ir", "h", "hj", "m", "s", "st", "mt", "msc", "m.sc", "m.kom", "s.kom", "m.t",
    "s.t", "ph.d", "phd", "m.si", "s.si", "mm", "m.m", "m.pd", "s.pd", "mcs", "m.cs", "ma", "m.a", "m.eng",
    "m.ag", "lc", "se", "sh", "mh", "m.h", "kom", "si", "pd", "eng", "cs", "sc", "ag", "ph",
}


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _words(text: str) -> list[str]:
    return _WORD.findall(_norm(text))


def _content(words: Iterable[str]) -> list[str]:
    return [w for w in words if w not in INDEX_STOPWORDS]


def _without_nya(word: str) -> str:
    """A question word without its possessive "-nya" ("jabfungnya" → "jabfung"); short words keep theirs."""
    return word[:-3] if word.endswith("nya") and len(word) > 6 else word


def _is_name_field(field_name: str) -> bool:
    return _norm(field_name).strip() in {"nama", "name"}


def _attribute_fields(fields: Iterable[str]) -> list[str]:
    """Of the fields a question names, those that can be asked of a lecturer: neither the name nor a field that
    lists courses."""
    return [f for f in fields if not _COURSE_FIELD.search(f) and not _is_name_field(f)]


def _names_field(field_name: str, words: set[str]) -> bool:
    """Whether the question's ``words`` name a field: each of its content words, as written or inflected
    ("ruangannya" → Ruang, "pendidikannya" → Pendidikan), or a clipped compound of two of its words, the way
    students shorten them ("jabfung" → Jabatan Fungsional, "matkul" → Mata Kuliah)."""
    ft = _content(_words(field_name))
    if not ft:
        return False
    bare = words | {_without_nya(w) for w in words}  # "jabfungnya"
    if clipped_compounds(field_name) & bare:
        return True
    stems = {stem(w) for w in words if w.isalpha() and len(w) > 3}
    return all(t in words or (t.isalpha() and stem(t) in stems) for t in ft)


def _of_field(word: str, field_name: str) -> bool:
    """Whether ``word`` is part of how a question names the field: one of its words, inflected or not, or a clipped
    compound of two of them ("sinta" and "id" for Sinta ID, "jabfung" for Jabatan Fungsional)."""
    ft = _content(_words(field_name))
    bare = _without_nya(word)
    if bare in ft or bare in clipped_compounds(field_name):
        return True
    return bare.isalpha() and len(bare) > 3 and stem(bare) in {stem(t) for t in ft if t.isalpha()}


def _asked_words(query: str) -> list[str]:
    """A question's content words that neither name the study program ("prodi", "jurusan") nor only ask."""
    return [w for w in _content(_words(query)) if w not in _GENERIC]


# a question that asks for one of a record's fields is short: the field's name and little else
_RECORD_QUESTION_WORDS = 4


def has_record_question(query: str) -> bool:
    """Whether ``query`` could ask for a field of the study program's own record (``record_lines``): one to a few
    content words besides those naming the program. A cheap test before the record is looked up."""
    return 0 < len(_asked_words(query)) <= _RECORD_QUESTION_WORDS


def record_lines(query: str, record: str, title: str = "") -> list[str]:
    """The "Label: value" lines of the study program's own record (its contact page, titled ``title``) that a
    question naming no one asks for: every content word of the question besides those naming the program is part of
    the line's label ("email prodi" → "Email: …", "jam layanan prodi" → "Jam layanan: …"), or of the page's title
    ("kontak prodi": every line). [] when the question says anything more ("jam layanan perpustakaan")."""
    rest = _asked_words(query)
    if not rest:
        return []
    lines = [(label, line.strip()) for line in record.splitlines()
             for label, colon, value in [line.partition(":")]
             if colon and value.strip() and 0 < len(_words(label)) <= _RECORD_QUESTION_WORDS]
    if title and all(_of_field(w, title) for w in rest):
        return list(dict.fromkeys(line for _, line in lines))
    return list(dict.fromkeys(line for label, line in lines if all(_of_field(w, label) for w in rest)))


def _code_key(code: object) -> str:
    return re.sub(r"[-\s]", "", _norm(str(code)))


def _phrase_in(phrase: str, text: str) -> bool:
    return re.search(r"(?<![^\W_])" + re.escape(phrase) + r"(?![^\W_])", text) is not None


def _asks_teacher(words: Sequence[str]) -> bool:
    """A question asking who teaches: a teaching verb (ajar / ampu) and a word asking for a person. "pengampu"
    is both."""
    return bool(set(words) & PERSON_ASKED_WORDS) and any(_TEACH_VERB.fullmatch(w) for w in words)


def _number(token: str) -> int:
    return int(token) if token.isdigit() else _NUMBER_WORDS[token]


def parse_course_line(line: str) -> dict[str, object] | None:
    """``IF-301 – Basis Data – 3 SKS – Semester 5 – Wajib`` → a row dict, or None for any other line."""
    parts = [p.strip() for p in _DASHES.split(line.strip())]
    if len(parts) != 5:
        return None
    code, name, sks, semester, kind = parts
    sks_m = re.fullmatch(r"(\d{1,2})\s*sks", sks, re.IGNORECASE)
    sem_m = re.fullmatch(r"semester\s*(\d{1,2})", semester, re.IGNORECASE)
    kind_l = kind.lower()
    if not (sks_m and sem_m and kind_l in ("wajib", "pilihan") and code and name):
        return None
    return {"code": code, "name": name, "sks": int(sks_m.group(1)), "semester": int(sem_m.group(1)), "kind": kind_l}


def build_facts(documents: Sequence[Document], path: Path) -> dict[str, int]:
    """Write ``facts.sqlite3`` at ``path`` from the lecturer and curriculum documents; return row counts."""
    lecturers: list[tuple[str, str, str, str, str]] = []
    courses: list[tuple[str, str, int, int, str, str, str]] = []
    for doc in documents:
        if doc.kind == "lecturer":
            for line in doc.text.splitlines():
                m = _FIELD_LINE.match(line)
                if m and not m.group(1).strip().startswith("http"):
                    lecturers.append((doc.doc_id, doc.title.strip(), doc.url, m.group(1).strip(), m.group(2).strip()))
        elif doc.kind == "curriculum":
            for line in doc.text.splitlines():
                row = parse_course_line(line)
                if row:
                    courses.append((str(row["code"]), str(row["name"]), int(row["sks"]), int(row["semester"]),  # type: ignore[call-overload]
                                    str(row["kind"]), doc.doc_id, doc.url))
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE lecturer_fields (doc_id TEXT, name TEXT, url TEXT, field TEXT, value TEXT)")
        db.execute(
            "CREATE TABLE courses (code TEXT, name TEXT, sks INTEGER, semester INTEGER, kind TEXT, doc_id TEXT, url TEXT)"
        )
        db.executemany("INSERT INTO lecturer_fields VALUES (?, ?, ?, ?, ?)", lecturers)
        db.executemany("INSERT INTO courses VALUES (?, ?, ?, ?, ?, ?, ?)", courses)
    return {"lecturer_fields": len(lecturers), "lecturers": len({r[0] for r in lecturers}), "courses": len(courses)}


@dataclass(frozen=True, slots=True)
class FactsResult:
    """What a constraint lookup found. Empty ``constraints`` means the question is not a facts question."""

    rows: tuple[dict[str, object], ...] = ()
    constraints: dict[str, object] = field(default_factory=dict)
    text: str = ""
    doc_ids: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    # the rule that left a course lookup empty, for the trace: "no_constraints", "no_course_word", "only_kind"
    # (Wajib/Pilihan alone), "only_name" (a course name without "mata kuliah"); "" when none did
    rule: str = ""

    def __bool__(self) -> bool:
        return bool(self.rows)

    def as_json(self) -> dict[str, object]:
        return {"rows": list(self.rows), "constraints": self.constraints, "text": self.text, "urls": list(self.urls)}


@dataclass(frozen=True, slots=True)
class _Lecturer:
    doc_id: str
    name: str
    url: str
    fields: tuple[tuple[str, str], ...]
    name_tokens: frozenset[str]


def _lecturer_row(lec: _Lecturer, field_name: str, value: str) -> dict[str, object]:
    """One lecturer field as a result row."""
    return {"table": "lecturers", "doc_id": lec.doc_id, "name": lec.name, "url": lec.url, "field": field_name,
            "value": value}


def _area_terms(words: list[str]) -> list[str]:
    """The area a question asks about after its first area keyword ("bidang X", "keahlian X", ...): its content
    words that are no area keyword, lecturer word or generic word; empty without an area keyword."""
    for i, w in enumerate(words):
        if w in _FIELD_KEYWORDS:
            return [t for t in _content(words[i + 1 :])
                    if t not in _FIELD_KEYWORDS and t not in _LECTURER_WORDS and t not in _GENERIC]
    return []


class _RoleMatcher:
    """Finds the lecturers a question names by a role they hold ("siapa ketua program studi?", "email kaprodi"):
    the field values ("Jabatan: Ketua Program Studi") whose words the question uses."""

    def __init__(self, lecturers: Sequence[_Lecturer], value_words: frozenset[str]) -> None:
        self.lecturers = lecturers
        # every word some lecturer field's value uses: a question word outside it names no role ("mau", "dong")
        self.value_words = value_words

    def role_fields(self, words: list[str], wanted: Sequence[str]
                    ) -> tuple[set[str], list[tuple[_Lecturer, str, str, set[str]]]]:
        """The question's distinctive words (:meth:`distinctive`) and every lecturer field that could name a role
        (not the name, not a field the question asks for), with its value's content words; nothing when the
        question neither asks who nor asks for a field."""
        distinctive = set(self.distinctive(words, wanted))
        if not distinctive or not (set(words) & PERSON_ASKED_WORDS or wanted):
            return set(), []
        fields = [(lec, f, v, set(_content(_words(v)))) for lec in self.lecturers for f, v in lec.fields
                  if not _is_name_field(f) and f not in wanted]
        return distinctive, [x for x in fields if x[3]]

    def by_role(self, words: list[str], wanted: Sequence[str]) -> list[dict[str, object]]:
        """The field values that name a role the question asks about: every word of the value is in the question
        ("Jabatan: Ketua Program Studi" for "siapa ketua program studi"), and it shares a word with the question
        that is neither generic ("program", "studi") nor a lecturer word ("dosen", "lektor"). Each value must be
        held by one lecturer (a rank several hold is not a role), and a question may name up to three roles ("kaprodi
        sama sekprodi siapa?"). The question asks who (or for a field of the person)."""
        distinctive, fields = self.role_fields(words, wanted)
        wset = set(words)
        found = [_lecturer_row(lec, f, v) for lec, f, v, value in fields if value <= wset and value & distinctive]
        holders: dict[str, set[object]] = {}
        for r in found:
            holders.setdefault(_norm(str(r["value"])), set()).add(r["doc_id"])
        if not found or len(holders) > 3 or any(len(ids) > 1 for ids in holders.values()):
            return []
        return found

    def distinctive(self, words: list[str], wanted: Sequence[str]) -> list[str]:
        """The question's words that may name a role: content words some field value uses that are neither
        generic, a lecturer word, a word asking for a person, nor the name of a field it asks for."""
        return list(dict.fromkeys(w for w in _content(words) if w in self.value_words and w not in _GENERIC
                                  and w not in _LECTURER_WORDS and w not in PERSON_ASKED_WORDS
                                  and not any(w in _words(f) for f in wanted)))

    def roles_within(self, words: list[str], wanted: Sequence[str]) -> list[dict[str, object]]:
        """The role values that hold every distinctive word of the question and say more ("koordinator" →
        "Koordinator Skripsi", "Koordinator Kerja Praktik"), when two or three people hold them: the candidates of
        an ask-back. More are a list, one is no ambiguity (:meth:`by_role` takes an exact one). A value of more than
        six words is prose, not a role. Only for a question that asks for a field of the person ("email
        koordinator"): "ketua hmj siapa?" shares "ketua" with lecturers' roles but asks about someone the table
        does not hold, and a wrong ask-back there is worse than no answer."""
        if not wanted:
            return []
        distinctive, fields = self.role_fields(words, wanted)
        wset = set(words)
        found: list[dict[str, object]] = []
        for lec, f, v, value in fields:
            if distinctive <= value and not value <= wset and len(value) <= 6 and \
                    all(r["doc_id"] != lec.doc_id for r in found):
                found.append(_lecturer_row(lec, f, v))
        return found if 2 <= len(found) <= 3 else []


# --- rendering -----------------------------------------------------------------------------------------------------
def _result(rows: list[dict[str, object]], constraints: dict[str, object], text: str) -> FactsResult:
    doc_ids = tuple(dict.fromkeys(str(r["doc_id"]) for r in rows))
    urls = tuple(dict.fromkeys(str(r["url"]) for r in rows if r.get("url")))
    return FactsResult(tuple(rows), constraints, text, doc_ids, urls)


def _sources(rows: Sequence[dict[str, object]]) -> str:
    urls = list(dict.fromkeys(str(r["url"]) for r in rows if r.get("url")))
    return f" Sumber: {', '.join(urls[:5])}" if urls else ""


def _render_role(rows: Sequence[dict[str, object]]) -> str:
    return "; ".join(f"{r['value']}: {r['name']}" for r in rows) + "."


def course_filter_label(constraints: Mapping[str, object]) -> list[str]:
    """How a course lookup's semester, SKS and Wajib/Pilihan constraints read in a reply, in that order."""
    parts = []
    if "semester" in constraints:
        parts.append(f"semester {constraints['semester']}")
    if "sks" in constraints:
        parts.append(f"{constraints['sks']} SKS")
    if "kind" in constraints:
        parts.append(str(constraints["kind"]))
    return parts


def _render_courses(rows: list[dict[str, object]], constraints: dict[str, object]) -> str:
    parts = course_filter_label(constraints)
    if "code" in constraints or "name" in constraints:
        parts.append(str(constraints.get("name") or constraints.get("code")).upper() if "code" in constraints
                     else str(constraints["name"]))
    label = ", ".join(parts)
    if not rows:
        return f"Tidak ada mata kuliah yang cocok dengan kriteria ({label}) di data kurikulum."
    items = "; ".join(
        f"{r['code']} {r['name']} ({r['sks']} SKS, semester {r['semester']}, {r['kind']})" for r in rows[:15]
    )
    more = f" dan {len(rows) - 15} lainnya" if len(rows) > 15 else ""
    return f"Mata kuliah ({label}): {items}{more}.{_sources(rows)}"


def _render_person(people: Sequence[_Lecturer], rows: list[dict[str, object]], specific: bool) -> str:
    if not rows:
        return f"Data untuk {people[0].name} tidak memuat informasi tersebut."
    chunks = []
    for lec in people[:3]:
        mine = [r for r in rows if r["doc_id"] == lec.doc_id]
        if mine:
            chunks.append(f"{lec.name}: " + "; ".join(f"{r['field']}: {r['value']}" for r in mine[:8]))
    return ". ".join(chunks) + "." + _sources(rows)


def _render_area(area: str, rows: list[dict[str, object]]) -> str:
    if not rows:
        return f"Tidak ada dosen dengan bidang \"{area}\" di data dosen."
    names = "; ".join(f"{r['name']} ({r['value']})" for r in rows[:15])
    return f"Dosen dengan bidang \"{area}\": {names}.{_sources(rows)}"


class FactsTable:
    """The facts of one index version, loaded into memory from its SQLite file (small: hundreds of rows)."""

    def __init__(self, lecturers: Sequence[_Lecturer] = (), courses: Sequence[dict[str, object]] = ()) -> None:
        self.lecturers = tuple(lecturers)
        self.courses = tuple(courses)
        self.field_names = sorted({f for lec in self.lecturers for f, _ in lec.fields}, key=str.lower)
        self._name_stop = _LECTURER_WORDS | _COURSE_WORDS | set(_FIELD_KEYWORDS)
        # every word some lecturer field's value uses: a question word outside it names no role ("mau", "dong")
        self._value_words = frozenset(w for lec in self.lecturers for f, v in lec.fields
                                      if not _is_name_field(f) for w in _words(v))
        self._roles = _RoleMatcher(self.lecturers, self._value_words)

    @classmethod
    def load(cls, path: Path) -> FactsTable:
        if not path.exists():
            return cls()
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            fields = db.execute("SELECT doc_id, name, url, field, value FROM lecturer_fields ORDER BY rowid").fetchall()
            course_rows = db.execute(
                "SELECT code, name, sks, semester, kind, doc_id, url FROM courses ORDER BY rowid"
            ).fetchall()
        grouped: dict[str, list[tuple[str, str, str, str, str]]] = {}
        for row in fields:
            grouped.setdefault(row[0], []).append(row)
        lecturers = []
        for doc_id, rows in grouped.items():
            name = rows[0][1]
            tokens = frozenset(t for t in _words(name) if t not in _TITLE_WORDS and len(t) >= 3 and not t.isdigit())
            lecturers.append(_Lecturer(doc_id, name, rows[0][2], tuple((r[3], r[4]) for r in rows), tokens))
        courses = [
            {"code": c, "name": n, "sks": s, "semester": sem, "kind": k, "doc_id": d, "url": u}
            for c, n, s, sem, k, d, u in course_rows
        ]
        return cls(lecturers, courses)

    def __len__(self) -> int:
        return len(self.lecturers) + len(self.courses)

    # --- lookup ------------------------------------------------------------------------------------------------
    def lookup(self, query: str) -> FactsResult:
        """Answer a constraint question from the tables; an empty result when the question has no constraints
        the tables understand."""
        q = _norm(query)
        words = _words(q)
        if self.courses and self.lecturers and _asks_teacher(words):
            course = self._course_named(q)
            if course is not None:
                # who teaches a named course; nobody listing it is no answer (retrieval takes it), never "tidak ada".
                # A field the question names ("email dosen yang mengajar X") is asked of those lecturers; the fields
                # that list courses, the area fields and the name are no such attribute
                wanted = _attribute_fields(self._fields_named(set(words)))
                return self._lookup_teachers(course, wanted)
        result = self._lookup_courses(q, words) if self.courses else FactsResult()
        if result.constraints:
            return result
        found = self._lookup_lecturers(q, words) if self.lecturers else FactsResult()
        if not found.constraints and result.rule and not found.rule:
            return dataclasses.replace(found, rule=result.rule)  # why the course side said nothing
        return found

    def _lookup_courses(self, q: str, words: list[str]) -> FactsResult:
        constraints: dict[str, object] = {}
        if m := _SEMESTER.search(q):
            constraints["semester"] = _number(m.group(1))
        if m := _SKS.search(q):
            constraints["sks"] = _number(m.group(1))
        wset = set(words)
        if "wajib" in wset:
            constraints["kind"] = "wajib"
        elif "pilihan" in wset:
            constraints["kind"] = "pilihan"
        constraints.update(self._course_reference(q))
        explicit = bool(wset & {"matkul", "mk", "kode"}) or "mata kuliah" in q
        course_intent = bool(wset & _COURSE_WORDS) or "code" in constraints
        only_kind = set(constraints) == {"kind"} and not explicit
        # a course name alone ("skripsi", "jaringan komputer") is also a topic of other pages: only a question
        # that names it as a course ("mata kuliah Skripsi", "kode mata kuliah ...") is a facts question
        only_name = set(constraints) <= {"name", "kind"} and "name" in constraints and not explicit
        if not constraints or not course_intent and "name" not in constraints or only_kind or only_name:
            rule = ("no_constraints" if not constraints else "only_kind" if only_kind else "only_name" if only_name
                    else "no_course_word")
            return FactsResult(rule=rule)
        rows = []
        for c in self.courses:
            if "semester" in constraints and c["semester"] != constraints["semester"]:
                continue
            if "sks" in constraints and c["sks"] != constraints["sks"]:
                continue
            if "kind" in constraints and c["kind"] != constraints["kind"]:
                continue
            if "code" in constraints and _code_key(c["code"]) != constraints["code"]:
                continue
            if "name" in constraints and _norm(str(c["name"])) != _norm(str(constraints["name"])):
                continue
            rows.append({"table": "courses", **c})
        return _result(rows, constraints, _render_courses(rows, constraints))

    def _course_reference(self, q: str) -> dict[str, object]:
        """The course a question names: ``{"code": "if301"}`` for a known code, else ``{"name": ...}`` for the
        longest known course name in it, else ``{}``."""
        codes = {_code_key(c["code"]) for c in self.courses}
        found: dict[str, object] = {}
        for m in _CODE_IN_QUERY.finditer(q):
            code = m.group(1) + m.group(2)
            if code in codes:
                found["code"] = code
        if "code" not in found:
            names = [str(c["name"]) for c in self.courses if _norm(str(c["name"])) in q and len(str(c["name"])) > 3]
            if names:
                found["name"] = max(names, key=len)
        return found

    def _course_named(self, q: str) -> dict[str, object] | None:
        """The course row a question names, by code or by name (as :meth:`_lookup_courses` finds them)."""
        ref = self._course_reference(q)
        for c in self.courses:
            if "code" in ref and _code_key(c["code"]) == ref["code"]:
                return c
            if "name" in ref and _norm(str(c["name"])) == _norm(str(ref["name"])):
                return c
        return None

    def _lists_course(self, value: str, course: dict[str, object]) -> bool:
        """Whether a field value ("TX-211 Kimia Dasar; TX-212 Praktikum Kimia Dasar") lists ``course``: an item with
        its code, or an item whose longest known course name is its name ("Kimia Dasar" is not "Praktikum Kimia
        Dasar")."""
        code, name = _code_key(course["code"]), _norm(str(course["name"]))
        known = {_code_key(c["code"]) for c in self.courses}
        for item in _ITEM_SPLIT.split(_norm(value)):
            item_codes = {m.group(1) + m.group(2) for m in _CODE_IN_QUERY.finditer(item)} & known
            if item_codes:
                if code in item_codes:
                    return True
                continue
            named = [n for n in (_norm(str(c["name"])) for c in self.courses) if _phrase_in(n, item)]
            if named and max(named, key=len) == name:
                return True
        return False

    def _lookup_teachers(self, course: dict[str, object], wanted: Sequence[str] = ()) -> FactsResult:
        """The lecturers whose course-listing field lists ``course``. A field whose name says it lists courses
        ("Mata Kuliah", "Pengampu", ...) is preferred; when no lecturer has one, any field but the area fields
        (bidang, keahlian, riset, ...) whose value lists the course. With ``wanted`` fields, each lecturer's rows
        of those fields follow the teaching rows (constraint ``field``)."""
        has_course_field = any(_COURSE_FIELD.search(f) for f in self.field_names)
        rows: list[dict[str, object]] = []
        teaching: list[_Lecturer] = []
        for lec in self.lecturers:
            for f, v in lec.fields:
                if has_course_field and not _COURSE_FIELD.search(f):
                    continue
                if any(k in _norm(f) for k in _FIELD_KEYWORDS) and not _COURSE_FIELD.search(f):
                    continue
                if self._lists_course(v, course):
                    rows.append(_lecturer_row(lec, f, v))
                    teaching.append(lec)
                    break
        if not rows:
            return FactsResult()
        constraints: dict[str, object] = {"teaches": str(course["name"])}
        names = "; ".join(str(r["name"]) for r in rows[:15])
        end = "" if names.endswith(".") else "."
        text = f"Dosen pengampu {course['name']}: {names}{end}"
        if wanted:
            constraints["field"] = list(wanted)
            asked = [_lecturer_row(lec, f, v) for lec in teaching for f, v in lec.fields if f in wanted]
            rows += asked
            text += " " + " ".join(f"{r['field']} {r['name']}: {r['value']}." for r in asked)
        return _result(rows, constraints, text + _sources(rows))

    def _lookup_lecturers(self, q: str, words: list[str]) -> FactsResult:
        wset = set(words)
        people = self._people_named(wset)
        wanted = self._fields_named(wset)
        area_terms = _area_terms(words)  # an area: "bidang X", "keahlian X", ...
        if not people and not area_terms:  # named by their role ("siapa ketua program studi?", "email kaprodi")
            by_role = self._lookup_by_role(words, wanted)
            if by_role is not None:
                return by_role
        if not people and not area_terms and wanted:  # "sinta id bu", "email dosen": whose?
            asked = self._ask_person(words, wanted)
            if asked is not None:
                return asked
        if people and not wanted:
            keys = [k for k in _FIELD_KEYWORDS if k in wset]
            wanted = [f for f in self.field_names if any(k in _norm(f) for k in keys) or _names_field(f, wset)]
        if people and not wanted:
            wanted = self._fields_by_value(people, wset)
        constraints: dict[str, object] = {}
        if people:
            constraints["name"] = [p.name for p in people]
        if wanted:
            constraints["field"] = wanted
        if area_terms and not people:
            constraints["bidang"] = " ".join(area_terms)
        if not constraints or (set(constraints) == {"field"}):
            return FactsResult()
        if people:
            rows = [_lecturer_row(lec, f, v) for lec in people for f, v in lec.fields if not wanted or f in wanted]
            return _result(rows, constraints, _render_person(people, rows, bool(wanted)))
        rows = self._in_area(set(area_terms))
        return _result(rows, constraints, _render_area(str(constraints["bidang"]), rows))

    def _ask_person(self, words: list[str], wanted: list[str]) -> FactsResult | None:
        """A lecturer field asked of no one in particular: every content word of the question is part of the
        field's name, a person word ("bu", "dosen", "siapa") or a word naming the study program. Two or more
        lecturers have the field: the result offers them (its rows, one per lecturer, and their pages; no ``doc_ids``:
        retrieval boosts none of them) under ``ask_person`` (the fields), with ``person`` saying whether a person word was
        used (without one, "email prodi" may be the study program's own). None when fewer than two have it (the
        lookup goes on as before), or the question says more, or asks for the name or a course field."""
        wanted = _attribute_fields(wanted)
        # the most specific field named: a question naming a two-word field names a one-word field within it too,
        # but asks for the two-word one
        wanted = [f for f in wanted if not any(set(_words(f)) < set(_words(g)) for g in wanted)]
        persons = HONORIFICS | _LECTURER_WORDS | PERSON_ASKED_WORDS
        if not wanted or any(w not in persons and w not in _GENERIC and not any(_of_field(w, f) for f in wanted)
                             for w in _content(words)):
            return None
        rows = [row for lec in self.lecturers
                for row in [next((_lecturer_row(lec, f, v) for f, v in lec.fields if f in wanted), None)] if row]
        if len(rows) < 2:
            return None  # one lecturer has it (or none): the lookup goes on as a question about that field
        return FactsResult(rows=tuple(rows), constraints={"ask_person": wanted, "person": bool(set(words) & persons)},
                           urls=tuple(dict.fromkeys(str(r["url"]) for r in rows)), rule="no_person_named")

    def _fields_named(self, wset: set[str]) -> list[str]:
        """The attributes a question asks for: the field names it mentions ("email", "NIP", "jabatan", ...), the
        area fields (bidang, keahlian, ...) aside."""
        return [f for f in self.field_names if _names_field(f, wset) and not set(_words(f)) & set(_FIELD_KEYWORDS)]

    def _people_named(self, wset: set[str]) -> list[_Lecturer]:
        """A person: the lecturers sharing the most distinctive name tokens with the question (none: empty)."""
        best: list[_Lecturer] = []
        best_overlap = 0
        honorific = bool(wset & HONORIFICS)
        for lec in self.lecturers:
            shared = lec.name_tokens & wset - self._name_stop
            if shared and not honorific and shared <= formal_vocabulary():
                continue  # an adjective that is also his first name is no name alone (after "pak" it is)
            overlap = len(shared)
            if overlap > best_overlap:
                best, best_overlap = [lec], overlap
            elif overlap and overlap == best_overlap:
                best.append(lec)
        return best if best_overlap else []

    def _lookup_by_role(self, words: list[str], wanted: list[str]) -> FactsResult | None:
        """The answer for a question that names lecturers by the roles they hold: the role holders, their
        ``wanted`` fields, or an ask-back among two or three roles that hold the question's role word; None when
        no role matches."""
        held = self._roles.by_role(words, wanted)
        if not held:
            within = self._roles.roles_within(words, wanted)
            if within:  # two or three roles hold the question's role word: asked which
                return _result(within, {"ask_role": " ".join(self._roles.distinctive(words, wanted)),
                                        "field": list(wanted)}, _render_role(within))
        if held and not wanted:
            return _result(held, {"role": "; ".join(str(r["value"]) for r in held)}, _render_role(held))
        people = list(dict.fromkeys(p for p in self.lecturers for r in held if r["doc_id"] == p.doc_id))
        if not people:
            return None
        held_rows = [_lecturer_row(p, f, v) for p in people for f, v in p.fields if f in wanted]
        return _result(held_rows, {"name": [p.name for p in people], "field": wanted},
                       _render_person(people, held_rows, True))

    def _in_area(self, area: set[str]) -> list[dict[str, object]]:
        """Per lecturer, the first area field (bidang, keahlian, riset, ...) whose value holds every word of
        ``area``."""
        rows: list[dict[str, object]] = []
        for lec in self.lecturers:
            for f, v in lec.fields:
                if any(k in _norm(f) for k in _FIELD_KEYWORDS) and area <= set(_words(v)):
                    rows.append(_lecturer_row(lec, f, v))
                    break
        return rows

    def _fields_by_value(self, people: Sequence[_Lecturer], wset: set[str]) -> list[str]:
        """The field whose value holds a word of the question that is no part of the name ("pak X S2 nya dimana"
        → Pendidikan, whose value lists "S2 …"). At most two fields may match; more means the word is too common
        to point at one field. The guess needs the values to account for every such word: "nomor WhatsApp pribadi
        ketua prodi X" names the person by a value ("Ketua Program Studi", often carried over by a follow-up's
        rewrite) and asks for something no field holds, so no field is guessed."""
        names = set().union(*(p.name_tokens for p in people))
        probe = {w for w in wset - names - self._name_stop - _GENERIC - INDEX_STOPWORDS
                 if len(w) >= 2 and (any(c.isdigit() for c in w) or len(w) >= 4)}
        if not probe:
            return []
        valued = [(f, set(_words(_norm(v)))) for p in people for f, v in p.fields]
        if probe - set().union(*(words for _, words in valued)):  # the full name's titles ("prof") count as held
            return []
        held = [(f, len(probe & words)) for f, words in valued if probe & words and not _is_name_field(f)]
        # of the fields the words point at, those whose values hold the most of them: a word a role and a rank
        # share points at both, and the question's other words at the role
        most = max((n for _, n in held), default=0)
        found = list(dict.fromkeys(f for f, n in held if n == most))
        return found if len(found) <= 2 else []
