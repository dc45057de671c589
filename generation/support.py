"""Evidence handling: split retrieved chunks into sentences, score them against the question, measure anchor
coverage, and check that answer sentences are supported by the context (lexical overlap + embedding
similarity against τ; docs/answers.md, "Anchors, support overlap and τ")."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from generation.prompts import neutralize
from generation.text import content_words, normalize, sentences
from retrieval.analyzer import clipped_compounds
from retrieval.language import ANSWER_TYPE_WORDS, CARDINALS, CLOCK_WORDS, HOURS_WORDS, TIME_DEIXIS

__all__ = [
    "BOUND_RATIO",
    "SOFT_ANCHOR_WEIGHT",
    "EvidenceSentence",
    "SupportResult",
    "anchor_coverage",
    "clipped_compounds",
    "check_support",
    "lexical_overlap",
    "split_evidence",
    "stem",
    "corpus_weights",
    "idf_weights",
    "is_number_anchor",
    "is_soft",
    "soft_anchors",
    "stems",
    "text_stems",
    "within_stated_bounds",
]


@functools.lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

    return StemmerFactory().create_stemmer()


@functools.lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    if len(word) <= 3 or not any(ch.isalpha() for ch in word):  # numbers ("2,75", "1.500") as written
        return word
    try:
        return _stemmer().stem(word) or word
    except Exception:  # boundary: PySastrawi (untyped, third-party) raises assorted errors on odd tokens; the word
        return word  # itself is fine then


def is_number_anchor(anchor_stem: str) -> bool:
    """Whether an anchor is a number the cited chunk must hold ("2024", "2,75", "ke-5", "20rb"): it starts with a digit
    (or is an ordinal "ke-5"). A token that starts with a letter ("S1", "D3", "IF-301", "COVID-19") is a name or code
    with a digit in it, weighed by its rarity like any other anchor."""
    return anchor_stem[:1].isdigit() or (anchor_stem.startswith("ke-") and anchor_stem[3:4].isdigit())


def stems(text: str) -> list[str]:
    """Stemmed content words of ``text`` (Indonesian affixes removed, so "pengajar" meets "mengajar")."""
    return [stem(w) for w in content_words(text)]


@functools.lru_cache(maxsize=1)
def _expansions() -> tuple[tuple[str, frozenset[str]], ...]:
    from retrieval.language import GLOSSARY

    out = []
    for short, long in GLOSSARY.items():
        long_stems = frozenset(stems(long))
        # one-word long forms too ("lab" = laboratorium); a long form of function words only ("brp") has no stems
        if long_stems and long_stems != {stem(short)}:
            out.append((stem(short), long_stems))
    return tuple(out)


def text_stems(text: str) -> set[str]:
    """Stems of ``text`` plus the shorthand whose spelled-out form it contains ("program studi" → "prodi"), and the
    spelled-out form of the shorthand it contains ("IPK" → "indeks prestasi kumulatif"), so a question in either
    form (the query normaliser adds the long form next to the short one) meets a page that uses the other."""
    found = set(stems(text))
    low = text.lower()
    # a hyphenated word also holds its parts and its unhyphenated spelling ("Riau-Lingga" → "riau", "lingga";
    # "e-mail" → "email"), as the BM25 analyzer indexes them: retrieval finds the page for "riau", and the anchor
    # check must see the word there too
    for compound in _HYPHENATED.findall(low):
        parts = [p for p in compound.split("-") if len(p) >= 2]
        found |= {stem(p) for p in parts}
        found.add(stem(compound.replace("-", "")))
    # a compound written apart meets its fused spelling ("ibu kota" holds "ibukota", "tata surya" "tatasurya"; the
    # IDK-MRC tune split's cases): Indonesian writes many compounds both ways. Neighbours a single space joins, each
    # of three letters or more
    found.update(a + b for a, b in _NEIGHBOURS.findall(low))
    for short, long_stems in _expansions():
        if long_stems <= found:
            found.add(short)
        elif short in found:
            found |= long_stems
    found |= clipped_compounds(text)
    # small numbers in words or digits ("tujuh hari" meets "7 hari"), "%" and "persen"
    for w in list(found):
        if w in _NUMBER_WORDS:
            found.add(_NUMBER_WORDS[w])
        elif w in _NUMBER_DIGITS:
            found.add(_NUMBER_DIGITS[w])
    if "persen" in found or re.search(r"\d\s?%", text):
        found |= {"persen", "%"}
    # acronyms of capitalised word runs: "Institut Teknologi Bandung" also answers to "ITB"
    for run in _CAP_RUN.findall(text):
        parts = run.split()
        for i in range(len(parts)):
            for j in range(i + 2, min(len(parts), i + 6) + 1):
                found.add("".join(p[0] for p in parts[i:j]).lower())
    return found


_NEIGHBOURS = re.compile(r"(?<![^\W_])(?=([^\W\d_]{3,}) ([^\W\d_]{3,})(?![^\W_]))")
_HYPHENATED = re.compile(r"[^\W_]+(?:'[^\W_]+)?(?:-[^\W_]+(?:'[^\W_]+)?)+")
_CAP_RUN = re.compile(r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)+")
_NUMBER_WORDS = dict(zip(CARDINALS, map(str, range(1, 12)), strict=True))
_NUMBER_DIGITS = {d: w for w, d in _NUMBER_WORDS.items()}


# A bound a page states for a value ("IPK minimal 3,00", "di bawah 3,00", "paling sedikit 450", "≥ 3,5"), with at most
# two words between the bound word and its number ("minimal semester 6"). A linguistic list written for this
# project: the comparative phrases of Indonesian regulations.
_BOUND = re.compile(
    r"(?:\b(?:minimal|maksimal|minimum|maksimum|min|maks|sekurang-kurangnya|setidaknya|sebanyak-banyaknya|"
    r"selambat-lambatnya|hingga|sampai|paling\s+(?:sedikit|banyak|rendah|tinggi|lama|lambat|cepat)|"
    r"di\s+(?:bawah|atas)|(?:kurang|lebih)\s+dari)\b|[≥≤<>])\.?\s*(?:[^\W\d_]+\s+){0,2}?(\d+(?:[.,]\d+)?)",
    re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)\d\d")
# how far a student's value may lie from a stated bound and still be the same quantity (2,9 against 3,00; 110 SKS
# against 120, not semester 5 against 120 SKS): within a factor of two. Set, not fitted.
BOUND_RATIO = 2.0


def _value(number: str) -> float | None:
    """A number as Indonesian writes it: "2,75", "1.500" (thousands), "1.500,5", "3.5"."""
    if "," in number or re.fullmatch(r"\d{1,3}(?:\.\d{3})+", number):
        number = number.replace(".", "").replace(",", ".")
    try:
        return float(number)
    except ValueError:
        return None


def within_stated_bounds(numbers: Sequence[str], text: str) -> set[str]:
    """The question's numbers (as written: "2,9", "420") that ``text`` does not name but states a bound for
    (:data:`_BOUND`) of the same magnitude: "IP saya 2,9" is answered by "maksimal 20 SKS jika IP di bawah 3,00".
    Years are names, never values to compare."""
    bounds = [v for m in _BOUND.finditer(text) if (v := _value(m.group(1))) is not None and v > 0]
    out = set()
    for n in numbers:
        v = _value(n)
        if v is None or v <= 0 or _YEAR.fullmatch(n) or not bounds:
            continue
        if any(1.0 / BOUND_RATIO <= v / b <= BOUND_RATIO for b in bounds):
            out.add(n)
    return out


@dataclass(frozen=True, slots=True)
class EvidenceSentence:
    text: str
    hit_rank: int  # rank of the chunk it came from (0 = best)
    chunk_id: str
    url: str
    title: str
    index: int  # position inside its chunk


def split_evidence(hits: Sequence[object], max_sentences: int = 80) -> list[EvidenceSentence]:
    """Neutralised sentences of the hits, in rank order; duplicates (overlapping chunks) removed."""
    out: list[EvidenceSentence] = []
    seen: set[str] = set()
    for rank, hit in enumerate(hits):
        text = neutralize(getattr(hit, "text", ""))
        for i, sent in enumerate(sentences(text)):
            key = normalize(sent)
            if not key or key in seen:
                continue
            seen.add(key)
            out.append(
                EvidenceSentence(sent, rank, getattr(hit, "chunk_id", ""), getattr(hit, "url", ""),
                                 getattr(hit, "title", ""), i)
            )
            if len(out) >= max_sentences:
                return out
    return out


def lexical_overlap(claim: str, context_stems: set[str]) -> float:
    """Fraction of the claim's content words (stemmed) present in the context."""
    words = stems(claim)
    if not words:
        return 0.0
    return sum(w in context_stems for w in words) / len(words)


def anchor_coverage(anchor_stems: Sequence[str], text_stems: set[str], weights: dict[str, float] | None = None) -> float:
    """Seed 002: the (optionally idf-weighted) fraction of the question's anchors that the evidence contains."""
    if not anchor_stems:
        return 1.0
    weights = weights or {}
    total = sum(weights.get(a, 1.0) for a in anchor_stems)
    got = sum(weights.get(a, 1.0) for a in anchor_stems if a in text_stems)
    return got / total if total else 1.0


# Soft anchors: words a question needs but evidence paraphrases or leaves out. Three classes, none written against
# an evaluation set: the answer-type words (generation.text.ANSWER_TYPE_WORDS: "syarat", "lama", "jadwal"), relative
# time words (retrieval.language.TIME_DEIXIS: "kemarin", "besok") and the general function words of Sastrawi's Indonesian stopword list (bundled with the PySastrawi dependency; derived from
# Tala's 2003 list: "bapak", "ibu", "hal", "bagian", "mulai", "masuk", "bekerja" …). A student's "pak"/"bu", "hal
# apa aja" or "mulai kapan" must not make a page that answers look as if it missed the question.
# Set a priori, not fitted: on the calibrator's tune rows (IDK-MRC tune + dev, bench/fit_abstention.py
# --soft-weights 0,0.1,0.2,0.35,0.5,1) every weight from 0 to 0.5 gave the same out-of-fold result and 1.0 one
# question more of 139; formal questions rarely hold these words, so that data cannot tell (docs/answers.md).
SOFT_ANCHOR_WEIGHT = 0.2
# Relative time words: a page says "12 Maret 2025", never "kemarin" or "besok" (written for this project).


@functools.lru_cache(maxsize=1)
def soft_anchors() -> frozenset[str]:
    """The soft anchor words and their stems."""
    try:
        from Sastrawi.StopWordRemover.StopWordRemoverFactory import StopWordRemoverFactory

        general = {w for w in StopWordRemoverFactory().get_stop_words() if len(w) > 1}
    except ImportError:  # PySastrawi is a dependency; without it only the answer-type words are soft
        general = set()
    words = set(ANSWER_TYPE_WORDS) | general | TIME_DEIXIS
    return frozenset(words | {stem(w) for w in words})


# Opening hours (retrieval.language.HOURS_WORDS, CLOCK_WORDS): "buka"/"tutup" next to a clock word ("jam bukanya", "buka sampai jam berapa") name the answer, the
# service hours a page gives as "Jam layanan: 08.00–15.00"; without one they name an event ("pendaftaran dibuka
# kapan") that the evidence must state. A linguistic rule written for this project.
def is_soft(anchor_stem: str, word: str = "", question_stems: Collection[str] = ()) -> bool:
    """Whether an anchor (its stem, optionally the word it came from) belongs to the soft class; with the question's
    stems, also the opening-hours words of a question that asks for a clock time."""
    soft = soft_anchors()
    if anchor_stem in soft or word in soft:
        return True
    return anchor_stem in HOURS_WORDS and not CLOCK_WORDS.isdisjoint(question_stems)


def idf_weights(anchor_stems: Sequence[str], docs: Sequence[set[str]], soft_weight: float | None = None) -> dict[str, float]:
    """Rarer anchors weigh more: ln((N+1)/(df+0.5)), floored at 0.3 so common anchors still count a little; soft
    anchors (:func:`soft_anchors`) weigh :data:`SOFT_ANCHOR_WEIGHT` because evidence paraphrases them."""
    soft_w = SOFT_ANCHOR_WEIGHT if soft_weight is None else soft_weight
    n = len(docs)
    df = Counter(a for a in set(anchor_stems) for d in docs if a in d)
    return {a: soft_w if is_soft(a, question_stems=anchor_stems) else max(0.3, math.log((n + 1) / (df.get(a, 0) + 0.5)))
            for a in anchor_stems}


@dataclass(frozen=True, slots=True)
class SupportResult:
    sentence: str
    supported: bool
    overlap: float
    similarity: float


def check_support(
    claims: Sequence[str],
    context_stems: set[str],
    claim_vecs: np.ndarray | None,
    context_vecs: np.ndarray | None,
    tau: float = 0.5,
    sim_min: float = 0.85,
) -> list[SupportResult]:
    """A claim is supported when its lexical overlap reaches τ, or when it nearly does (≥ τ·0.6) and its best
    embedding similarity to a context sentence reaches ``sim_min``."""
    out = []
    for i, claim in enumerate(claims):
        ov = lexical_overlap(claim, context_stems)
        sim = 0.0
        if claim_vecs is not None and context_vecs is not None and len(context_vecs):
            sim = float(np.max(context_vecs @ claim_vecs[i]))
        ok = ov >= tau or (ov >= tau * 0.6 and sim >= sim_min)
        out.append(SupportResult(claim, ok, ov, sim))
    return out


def corpus_weights(index: object, question: str) -> dict[str, float] | None:
    """Anchor weights from the whole index (BM25 document frequencies): "sekretaris" outweighs "informatika" on a
    site where every page says "Teknik Informatika". None when the index has no BM25 statistics."""
    from retrieval.language import GLOSSARY

    bm25 = getattr(index, "bm25", None)
    analyzer = getattr(index, "analyzer", None)
    n = int(getattr(bm25, "n_docs", 0) or 0)
    if bm25 is None or analyzer is None or n <= 0:
        return None
    out: dict[str, float] = {}
    words = content_words(question)
    question_stems = {stem(w) for w in words}
    for w in words:
        st = stem(w)
        if is_soft(st, w, question_stems):
            out[st] = SOFT_ANCHOR_WEIGHT
            continue
        try:
            df = _df(bm25, analyzer, w)
            if w in GLOSSARY:  # shorthand: as common as its commonest spelling ("prodi" ~ "program studi")
                long_df = min(_df(bm25, analyzer, x) for x in GLOSSARY[w].split())
                df = max(df, long_df)
        except (AttributeError, TypeError, KeyError, IndexError):  # an index without these statistics (no
            return None  # document_frequency, no callable analyzer, a vocabulary out of step): local weights
        out.setdefault(st, max(0.3, math.log((n + 1) / (df + 0.5))))
    return out


def _df(bm25: object, analyzer: object, word: str) -> int:
    terms = list(analyzer(word)) or [word]  # type: ignore[operator]
    return max(int(bm25.document_frequency(t)) for t in terms)  # type: ignore[attr-defined]
