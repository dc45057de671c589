"""What kind of answer a question wants (the finalizer of docs/answers.md, "The finalizer: answer types and cited spans"), and whether a sentence can
carry it: "berapa" needs a number, "kapan" a time, "siapa" a person, a fee question an amount of money. A sentence
of the right topic but without the right kind of answer is not support."""

from __future__ import annotations

import functools
import re

from generation.text import words
from retrieval.language import (
    CARDINALS,
    DAYS,
    FRACTIONS,
    MONTHS,
    NUMBER_MAGNITUDES,
    ONE_ANSWER_QUESTION_WORDS,
    ORDINALS,
    TIME_WORDS,
    WHO_WORDS,
    colloquial_spellings,
)

__all__ = ["expected_type", "expected_unit", "is_list_question", "one_answer_form", "type_ok", "unit_ok"]

# a number in words: the cardinals, the words that build larger numbers, the fractions and the first five ordinals
_NUMBER_WORDS = [*CARDINALS, *NUMBER_MAGNITUDES, *FRACTIONS, *ORDINALS[:5]]
_TITLE = re.compile(
    r"\b(Dr|Prof|Ir|Drs|Dra|Hj?)\.\s|\b[MS]\.\s?(Kom|T|Si|Sc|Cs|Pd|Eng|Ag)\b|\bPh\.D\b|\b(Bapak|Ibu|Pak|Bu)\s+[A-Z]"
)
_MONEY = re.compile(r"\brp\.?\s?\d|\brupiah\b|\b\d{1,3}(\.\d{3})+\b|\bjuta\b|\bribu\b|\bgratis\b|\bbebas\b|\bpembebasan\b",
                    re.IGNORECASE)
_LIST = re.compile(r"\b(apa|siapa|mana|mata kuliah apa|dosen mana)\s+(saja|aja)\b|\bsebutkan\b|\bapa-apa\b",
                   re.IGNORECASE)
# "daftar" is the noun "list" ("daftar dosen") and the verb "register" ("daftarnya kapan", "cara daftar",
# "daftar ulang"): it asks for a list only without a question word for one answer
_DAFTAR = re.compile(r"\bdaftar\b(?!\s+ulang\b)", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _one_answer_words() -> frozenset[str]:
    """Question words that want one answer (retrieval.language.ONE_ANSWER_QUESTION_WORDS), with "-kah" and "-nya" and
    their colloquial spellings from the lexicon (as generation.text builds its word classes)."""
    formal = ONE_ANSWER_QUESTION_WORDS
    forms = formal | {f"{w}{suffix}" for w in formal for suffix in ("kah", "nya")}
    return forms | frozenset(w for w in colloquial_spellings(formal) if len(w) >= 3)


# "siapa", "siapakah": the question wants a person
_WHO = re.compile(rf"\b(?:{'|'.join(sorted(WHO_WORDS))})\b")


def expected_type(question: str) -> str | None:
    q = question.lower()
    if re.search(r"\b(biaya|harga|tarif|ukt|spp|uang|bayar)\b", q) and re.search(r"\bberapa", q):
        return "money"
    if re.search(r"\bberapa\s+(lama|hari|minggu|bulan|tahun|jam)\b", q):
        return "number"
    if re.search(r"\bberapa", q):
        return "number"
    if re.search(r"\bkapan|\btanggal berapa|\bjam berapa|\bpukul berapa|\b(hari|bulan|tanggal)\s+apa\b", q):
        return "time"
    if _WHO.search(q) and not _LIST.search(q):
        return "person"
    return None


# A time is written as a year ("2024", "tahun 988"), a clock time ("07.30"), a date ("12/3"), an amount of a time unit
# ("3 hari", "2 semester"), an ordinal period ("semester 7", "abad ke-19"), a decade ("90-an"), or in words (month,
# day, time-of-day words). A bare number is not one: "144 SKS" does not say when.
_TIME_NUMBER = re.compile(
    r"\b(?:1\d{3}|20\d{2})(?:-?an)?\b|\b\d{1,2}[.:]\d{2}\b|\b\d{1,2}[/-]\d{1,2}\b|\b\d+-an\b"
    r"|\b\d+\s*(?:detik|menit|jam|hari|minggu|pekan|bulan|tahun|abad|semester|dekade|windu|masehi|sm|m)\b"
    r"|\b(?:abad|semester|tahun|minggu|hari|bulan|pekan|dekade|tanggal|angkatan|periode|gelombang|tahap)\s+(?:ke-?\s*)?\d+"
    r"|\b(?:pada|sekitar|sejak|hingga|sampai|antara|tahun)\s+\d{3,4}\b|\b\d{3,4}\s*[–-]\s*\d{3,4}\b",
    re.IGNORECASE,
)
# A name: a capitalised word that is no Indonesian word (PySastrawi's root dictionary: "Teknik Kimia", "Lomba
# Periode Maret" are not names, "Wiratmoko", "McAllister" are), besides titles and "oleh …". An acronym in capitals
# ("HMJ", "BEM") names an organisation, so the second letter must be lower case. On the IDK-MRC tune split's "siapa"
# questions this loses 1 of 611 gold sentences that passed ("PBB memiliki 51 negara anggota", which names no one).
_CAPITALISED = re.compile(r"\b[A-Z][a-z][a-zA-Z]+\b")


def _names_someone(text: str) -> bool:
    from retrieval.analyzer import is_dictionary_word

    if _TITLE.search(text) or re.search(r"\boleh\s+\w+", text.lower()):
        return True
    return any(not is_dictionary_word(m.group(0).lower()) for m in _CAPITALISED.finditer(text))


def type_ok(kind: str | None, text: str) -> bool:
    if kind is None:
        return True
    low = text.lower()
    has_digit = bool(re.search(r"\d", text))
    if kind == "money":
        return bool(_MONEY.search(text))
    if kind == "number":
        return has_digit or any(re.search(rf"\b{w}\b", low) for w in _NUMBER_WORDS)
    if kind == "time":
        return bool(_TIME_NUMBER.search(text)) or any(re.search(rf"\b{w}\b", low) for w in (*MONTHS, *DAYS, *TIME_WORDS))
    if kind == "person":
        # a title, a name, or an agent phrase ("dimainkan oleh seorang dalang")
        return _names_someone(text)
    return True


def one_answer_form(question: str) -> str:
    """The question with its plural question word made singular ("siapa saja" → "siapa"): what it asks about one
    item of a list."""
    return " ".join(_LIST.sub(lambda m: m.group(1) or "", question).split())


def is_list_question(question: str) -> bool:
    if _LIST.search(question):
        return True
    return bool(_DAFTAR.search(question)) and _one_answer_words().isdisjoint(words(question))


# Units a "berapa <unit>" question names, each with the words a page may count it in. A sentence that gives a number
# in another unit ("100 SKS" for "berapa jam") answers a different question. Measure words written for this project;
# "tahun" is left out, because "berapa tahun" is as often answered with a span of years ("1990–1995"). On the IDK-MRC
# tune split, 17 of the 20 answerable "berapa <unit>" questions with such a unit have a number followed by it in the
# sentence holding the gold answer.
_UNITS: dict[str, tuple[str, ...]] = {
    "jam": ("jam",), "menit": ("menit",), "hari": ("hari",), "minggu": ("minggu", "pekan"), "pekan": ("pekan", "minggu"),
    "bulan": ("bulan",), "semester": ("semester",), "sks": ("sks",), "kali": ("kali",), "halaman": ("halaman",),
    "persen": ("persen", "%"),
    "orang": ("orang", "peserta", "mahasiswa", "jiwa", "anggota", "siswa", "penduduk", "warga", "tim", "kelompok"),
    # "berapa lama": a duration, in any time unit ("1 bulan", "160 jam", "4 tahun") or as a span of years
    # (_YEAR_SPAN: "1368 - 1644", "antara 1957 dan 1975"); "3 SKS" or "100 halaman" is not one. On the IDK-MRC tune
    # split's answerable "berapa lama" questions, 35 of the 36 sentences holding the gold answer carry one, and 16
    # of the 98 other sentences of their passages do (the class was chosen from a sample-site dev miss)
    "lama": ("detik", "menit", "jam", "hari", "minggu", "pekan", "bulan", "tahun", "semester", "abad", "dekade", "windu"),
}
_NUMBER = r"(?:\d[\d.,]*|" + "|".join(_NUMBER_WORDS) + r"|\w+(?:belas|puluh|ratus|ribu))"
# a span of time: two numbers around a range word ("1368 - 1644", "25 - 220", "27 SM sampai 284 M", "11 Oktober
# hingga 12 Oktober"), or two different years in one sentence ("sejak tahun 1669 sampai meninggal … tahun 1703")
_YEAR_SPAN = re.compile(r"\b\d{1,4}(?:\s*(?:SM|M)|\s+[A-Za-z]+)?\s*(?:[–—-]|s\.?\s?d\.?|hingga|sampai|dan)\s*\d{1,4}\b",
                        re.IGNORECASE)
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2})\b")


def expected_unit(question: str) -> str | None:
    """The unit a "berapa" question counts in ("berapa jam", "berapa orang"), or None."""
    m = re.search(r"\bberapa(?:kah)?\s+(\w+)", question.lower())
    return m.group(1) if m and m.group(1) in _UNITS else None


def unit_ok(unit: str | None, text: str) -> bool:
    """``text`` gives a number in ``unit`` (or one of its counting words): "200 jam", "31 peserta", "75%"."""
    if unit is None or unit not in _UNITS:
        return True
    low = text.lower()
    if unit == "lama" and (_YEAR_SPAN.search(text) or len(set(_YEAR.findall(text))) >= 2):
        return True
    for word in _UNITS[unit]:
        if word == "%":
            if re.search(r"\d\s?%", low):
                return True
        elif re.search(rf"\b{_NUMBER}\s+(?:\w+\s+)?{word}\b", low):
            return True
    return False
