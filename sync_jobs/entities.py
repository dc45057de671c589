"""Entity pages: lecturer profiles (one document each, "Field: value" lines) and curriculum tables (one line per
course, ``KODE – Nama – N SKS – Semester S – Wajib|Pilihan``). Works on the cleaned BeautifulSoup tree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bs4 import NavigableString, Tag

from sync_jobs.html_blocks import HEADINGS, Block, blocks_of, table_rows
from sync_jobs.normalize import normalize_inline

__all__ = ["Course", "Lecturer", "course_line", "find_courses", "find_lecturers", "lecturer_fields", "parse_field",
           "person_key"]

# Labels that only a person's profile has.
STRONG_LABELS = {
    "nip", "nidn", "nidk", "nuptk", "niy", "nik", "niptt", "sinta", "sinta id", "id sinta", "scopus", "scopus id",
    "id scopus", "orcid", "orcid id", "google scholar", "google scholar id", "bidang keahlian", "kepakaran",
    "keahlian", "bidang kepakaran", "jabatan fungsional", "jabatan akademik", "research fields", "research field",
    "research interests", "research interest", "expertise", "homebase", "home base", "publons", "researcher id",
    "garuda", "garuda id",
}
WEAK_LABELS = {
    "nama", "name", "nama lengkap", "nama dosen", "email", "e-mail", "e-mail address", "email address", "surel",
    "jabatan", "pangkat", "golongan", "pangkat/golongan", "pangkat / golongan", "pendidikan", "pendidikan terakhir",
    "riwayat pendidikan", "education", "telepon", "telp", "phone", "no. hp", "no hp", "kantor", "ruang", "ruangan",
    "office", "status", "status dosen", "mata kuliah", "mata kuliah yang diampu", "mata kuliah diampu", "matakuliah",
    "laboratorium", "lab", "bidang minat", "minat penelitian", "position", "functional position", "website",
    "homepage", "working days/hours", "jam kerja", "gelar", "prodi", "program studi", "fakultas", "kompetensi",
    "sertifikasi", "alamat email", "kelompok keahlian", "kk", "rumpun ilmu",
}
_ALL_LABELS = STRONG_LABELS | WEAK_LABELS
_FIELD = re.compile(r"^\s*[-•*·]?\s*([^:：]{1,40}?)\s*[:：]\s*(.*)$")
_NAME_LABELS = {"nama", "name", "nama lengkap", "nama dosen"}
_STRONG_START = re.compile(
    r"^\s*(" + "|".join(sorted((re.escape(x) for x in STRONG_LABELS), key=len, reverse=True)) + r")\s*(?:[:：]|$)",
    re.IGNORECASE,
)


def _label_key(label: str) -> str:
    return re.sub(r"\s+", " ", label.strip().strip("*-•·").strip().lower())


def parse_field(line: str) -> tuple[str, str] | None:
    """``"NIDN : 0012"`` → ``("NIDN", "0012")`` when the label is a known profile field."""
    match = _FIELD.match(line)
    if not match:
        return None
    label, value = match.group(1).strip(), match.group(2).strip()
    if _label_key(label) not in _ALL_LABELS:
        return None
    return label, value


@dataclass(frozen=True, slots=True)
class Lecturer:
    name: str
    fields: tuple[tuple[str, str], ...]
    extra: tuple[str, ...]  # other lines of the profile (biography, publications …)

    def lines(self) -> list[str]:
        out = []
        if not any(_label_key(label) in _NAME_LABELS for label, _ in self.fields):
            out.append(f"Nama: {self.name}")
        out.extend(f"{label}: {value}" for label, value in self.fields)
        out.extend(self.extra)
        return out


def lecturer_fields(blocks: list[Block]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(fields, headings, other lines) from blocks; a label alone on a line takes the next line as its value."""
    fields: list[tuple[str, str]] = []
    headings: list[str] = []
    other: list[str] = []
    pending: str | None = None
    for block in blocks:
        if block.level:
            key = _label_key(block.text.rstrip(":："))
            if key in _ALL_LABELS:
                pending = block.text.rstrip(":： ")
                continue
            headings.append(block.text)
            continue
        parsed = parse_field(block.text)
        if parsed and parsed[1]:
            pending = None
            fields.append(parsed)
            continue
        if parsed and not parsed[1]:
            pending = parsed[0]
            continue
        if _label_key(block.text.rstrip(":：")) in _ALL_LABELS:
            pending = block.text.rstrip(":： ")
            continue
        if pending:
            fields.append((pending, block.text))
            pending = None
            continue
        other.append(block.text)
    return fields, headings, other


def _strong_count(fields: list[tuple[str, str]]) -> int:
    return sum(1 for label, _ in fields if _label_key(label) in STRONG_LABELS)


def _name_from(fields: list[tuple[str, str]], headings: list[str], other: list[str], fallback: str) -> str:
    for label, value in fields:
        if _label_key(label) in _NAME_LABELS and value:
            return value
    for text in headings:
        if len(text.split()) <= 14:
            return text
    for text in other:
        if 1 <= len(text.split()) <= 12 and not parse_field(text):
            return text
    return fallback


def _lecturer_from_blocks(blocks: list[Block], fallback_name: str) -> Lecturer | None:
    fields, headings, other = lecturer_fields(blocks)
    if _strong_count(fields) < 1 or len(fields) < 2:
        return None
    name = _name_from(fields, headings, other, fallback_name)
    extra = [line for line in other if line != name]
    extra_heads = [h for h in headings if h != name]
    return Lecturer(name=name, fields=tuple(fields), extra=tuple(extra_heads + extra))


_DEGREE = re.compile(r"\b(?:Prof|Dr|Ir|Drs|Dra|S\.\s?(?:Kom|T|Si|Pd|Sos|E|H|Ag|Hum|ST)|M\.\s?(?:Kom|T|Sc|Si|Pd|Cs|Eng|"
                     r"MT|Kes|Hum|Ag|E|M)|Ph\.?\s?D|MBA|Lc|A\.Md)\b\.?")


_PREFIX_TITLES = re.compile(r"^(?:(?:prof|dr|ir|drs|dra|h|hj|kh|ust|ustadz|ustadzah|habib|rev)\.?\s+)+",
                            re.IGNORECASE)


def person_key(name: str) -> str:
    """The same person however the site writes the degrees: ``Prof. Dr. Suhartono, S.Si., M.Kom.`` and
    ``Suhartono M.Kom`` both give ``suhartono``."""
    base = name.split(",")[0]
    base = _PREFIX_TITLES.sub("", base.strip())
    base = _DEGREE.sub(" ", base)
    return re.sub(r"[^a-z]", "", base.lower())


def _looks_like_profile(person: Lecturer) -> bool:
    """A whole page is one person's profile only if it names the person (a Nama field or academic titles) or
    has several identifiers; an announcement with one contact NIP is not."""
    has_name_field = any(_label_key(label) in _NAME_LABELS for label, _ in person.fields)
    return has_name_field or bool(_DEGREE.search(person.name)) or _strong_count(list(person.fields)) >= 2


def _anchor_elements(root: Tag) -> dict[str, list[Tag]]:
    anchors: dict[str, list[Tag]] = {}
    for text in root.find_all(string=_STRONG_START):
        if not isinstance(text, NavigableString) or text.parent is None:
            continue
        match = _STRONG_START.match(str(text))
        if match:
            anchors.setdefault(_label_key(match.group(1)), []).append(text.parent)
    return anchors


def _cards(root: Tag, anchors: list[Tag]) -> list[Tag]:
    counts: dict[int, int] = {}
    for anchor in anchors:
        node: Tag | None = anchor
        while node is not None:
            counts[id(node)] = counts.get(id(node), 0) + 1
            if node is root:
                break
            node = node.parent
    cards: list[Tag] = []
    for anchor in anchors:
        card = anchor
        while card.parent is not None and card is not root and counts.get(id(card.parent), 0) == 1:
            card = card.parent
        if card is root or any(card is c for c in cards):
            continue
        cards.append(card)
    return cards


def _lecturer_tables(root: Tag) -> list[tuple[Tag, list[Lecturer]]]:
    found = []
    for table in root.find_all("table"):
        header, rows = table_rows(table)
        keys = [_label_key(h) for h in header]
        if not any(k in _NAME_LABELS or k == "dosen" for k in keys):
            continue
        if not any(k in _ALL_LABELS and k not in _NAME_LABELS for k in keys):
            continue
        name_col = next(i for i, k in enumerate(keys) if k in _NAME_LABELS or k == "dosen")
        people = []
        for cells in rows:
            if len(cells) != len(header) or not cells[name_col]:
                continue
            fields = tuple(
                (header[i], cell) for i, cell in enumerate(cells) if i != name_col and cell and header[i]
                and not re.fullmatch(r"no\.?|#", _label_key(header[i]))
            )
            people.append(Lecturer(name=cells[name_col], fields=fields, extra=()))
        if people:
            found.append((table, people))
    return found


def find_lecturers(root: Tag, page_title: str) -> tuple[list[Lecturer], bool]:
    """Lecturers on the page and whether the whole page is one profile. Matched cards and tables are removed
    from ``root`` so the rest of the page can still become a page document."""
    lecturers: list[Lecturer] = []
    for table, people in _lecturer_tables(root):
        lecturers.extend(people)
        table.decompose()
    anchors = _anchor_elements(root)
    if anchors:
        key, elements = max(anchors.items(), key=lambda item: len(item[1]))
        if len(elements) >= 2:
            found = []
            for card in _cards(root, elements):
                person = _lecturer_from_blocks(blocks_of(card), "")
                if person and person.name:
                    found.append((card, person))
            if len(found) >= 2:
                for card, person in found:
                    lecturers.append(person)
                    card.decompose()
                return lecturers, False
    if not lecturers:
        person = _lecturer_from_blocks(blocks_of(root), page_title)
        if person is not None and _looks_like_profile(person):
            return [person], True
    return lecturers, False


# --- curriculum -------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Course:
    code: str
    name: str
    sks: int
    semester: int | None
    kind: str  # "Wajib" or "Pilihan"


def course_line(course: Course) -> str:
    semester = str(course.semester) if course.semester is not None else "-"
    return f"{course.code} – {course.name} – {course.sks} SKS – Semester {semester} – {course.kind}"


_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10, "xi": 11,
          "xii": 12, "xiii": 13, "xiv": 14}
_SEMESTER = re.compile(r"\b(?:semester|smt|sem)\.?\s*[:\-]?\s*(\d{1,2}|[ivx]{1,4})\b", re.IGNORECASE)
_CODE = re.compile(r"^[A-Z]{1,6}[-. ]?[A-Z0-9]{0,4}\d{2,6}[A-Z0-9]{0,3}$")


def _semester_of(text: str) -> int | None:
    match = _SEMESTER.search(text or "")
    if not match:
        value = (text or "").strip().lower()
        if value.isdigit() and 1 <= int(value) <= 14:
            return int(value)
        return _ROMAN.get(value)
    raw = match.group(1).lower()
    return int(raw) if raw.isdigit() else _ROMAN.get(raw)


def _columns(header: list[str]) -> dict[str, int] | None:
    cols: dict[str, int] = {}
    for i, raw in enumerate(header):
        h = _label_key(raw)
        if "code" not in cols and ("kode" in h or "code" in h):
            cols["code"] = i
        elif "name" not in cols and ("mata kuliah" in h or "matakuliah" in h or h in ("nama", "nama mk", "course",
                                                                                    "course name", "mk")):
            cols["name"] = i
        elif "sks" not in cols and ("sks" in h or "credit" in h or "bobot" in h):
            cols["sks"] = i
        elif "semester" not in cols and ("semester" in h or h in ("smt", "sem", "smt.")):
            cols["semester"] = i
        elif "kind" not in cols and any(w in h for w in ("sifat", "jenis", "status", "kategori", "wajib", "pilihan",
                                                          "type", "kelompok")):
            cols["kind"] = i
    if {"code", "name", "sks"} <= cols.keys():
        return cols
    return None


def _context(table: Tag) -> str:
    parts = []
    caption = table.find("caption")
    if caption:
        parts.append(caption.get_text(" ", strip=True))
    previous = table.find_previous(lambda t: isinstance(t, Tag) and (t.name in HEADINGS or t.name in ("p", "strong")))
    if previous is not None:
        parts.append(previous.get_text(" ", strip=True))
    return " ".join(parts)


def _kind_of(*texts: str) -> str | None:
    for text in texts:
        low = (text or "").lower()
        if "pilih" in low or "elective" in low:
            return "Pilihan"
        if "wajib" in low or "compulsory" in low or "mandatory" in low:
            return "Wajib"
    return None


def find_courses(root: Tag) -> list[tuple[Tag, list[Course]]]:
    """Curriculum tables under ``root``: each with its courses. The caller may remove the tables afterwards."""
    found = []
    for table in root.find_all("table"):
        header, rows = table_rows(table)
        cols = _columns(header)
        if cols is None:
            continue
        context = _context(table)
        semester = _semester_of(context)
        context_kind = _kind_of(context)
        courses: list[Course] = []
        for cells in rows:
            if len(cells) < len(header):
                joined = " ".join(cells)
                if _semester_of(joined) is not None:
                    semester = _semester_of(joined)
                kind = _kind_of(joined)
                if kind:
                    context_kind = kind
                continue
            code = cells[cols["code"]].strip().upper()
            name = normalize_inline(cells[cols["name"]])
            sks_match = re.search(r"\d+", cells[cols["sks"]])
            if not _CODE.match(code) or not name or not sks_match:
                continue
            row_semester = _semester_of(cells[cols["semester"]]) if "semester" in cols else None
            kind = _kind_of(cells[cols["kind"]]) if "kind" in cols else None
            courses.append(Course(
                code=code,
                name=name,
                sks=int(sks_match.group()),
                semester=row_semester if row_semester is not None else semester,
                kind=kind or _kind_of(name) or context_kind or "Wajib",
            ))
        if courses:
            found.append((table, courses))
    return found
