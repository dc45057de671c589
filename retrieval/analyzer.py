"""Indonesian text analyzer for BM25: NFKC, lowercase, a split that keeps codes and numbers, stopwords,
optional PySastrawi stemming. The stopwords are :data:`retrieval.language.INDEX_STOPWORDS`.

``IF-301`` stays one token (plus its parts ``if`` and ``301``, so "301" alone still matches); decimal numbers
like ``3.5`` and e-mail addresses stay whole.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

from retrieval.language import INDEX_STOPWORDS

__all__ = ["Analyzer", "clipped_compounds", "is_dictionary_word", "stem"]

_EMAIL = re.compile(r"[^\W_][\w.+-]*@[^\W_][\w-]*(?:\.[\w-]+)+")
_TOKEN = re.compile(r"[^\W_]+(?:[-./'’][^\W_]+)*")
_SPLIT = re.compile(r"[-./'’]")


class Analyzer:
    """Turns text into BM25 terms. ``stemming=True`` applies the PySastrawi stemmer to alphabetic words."""

    def __init__(self, stemming: bool = False, stopwords: frozenset[str] = INDEX_STOPWORDS) -> None:
        self.stemming = stemming
        self.stopwords = stopwords
        self._stem: Callable[[str], str] | None = None
        self._stem_cache: dict[str, str] = {}
        if stemming:
            from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

            self._stem = StemmerFactory().create_stemmer().stem

    @staticmethod
    def normalize(text: str) -> str:
        return unicodedata.normalize("NFKC", text).lower()

    def words(self, text: str) -> list[str]:
        """Surface tokens (normalised, before stopword removal and stemming)."""
        text = self.normalize(text)
        out: list[str] = []
        pos = 0
        for match in _EMAIL.finditer(text):
            out.extend(self._split(text[pos : match.start()]))
            out.append(match.group(0))
            pos = match.end()
        out.extend(self._split(text[pos:]))
        return out

    @staticmethod
    def _split(text: str) -> list[str]:
        out: list[str] = []
        for match in _TOKEN.finditer(text):
            token = match.group(0)
            out.append(token)
            if _SPLIT.search(token):
                parts = [p for p in _SPLIT.split(token) if p]
                if not all(p.isdigit() for p in parts):
                    out.extend(parts)
        return out

    def __call__(self, text: str) -> list[str]:
        """BM25 terms of ``text``."""
        terms: list[str] = []
        for word in self.words(text):
            if word in self.stopwords or (len(word) == 1 and not word.isdigit()):
                continue
            terms.append(self.stem(word))
        return terms

    def stem(self, word: str) -> str:
        if self._stem is None or not word.isalpha():
            return word
        cached = self._stem_cache.get(word)
        if cached is None:
            cached = self._stem(word) or word
            if len(self._stem_cache) < 200_000:
                self._stem_cache[word] = cached
        return cached


_ALPHA_WORD = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=4096)
def clipped_compounds(text: str) -> frozenset[str]:
    """The clipped compounds two neighbouring words of ``text`` can form, the common Indonesian way of shortening
    a phrase: the first 2–4 letters of each joined, at least 5 letters in all ("warung kopi" → "warkop", "salah
    fokus" → "salfok", "murah meriah" → "murmer"; the bundled colloquial lexicon has 8 such entries among its 91
    two-word formal forms, tests/generation/test_colloquial_anchors.py). Words of at least 4 letters only, so that
    short function words never take part."""
    toks = [w.lower() for w in _ALPHA_WORD.findall(text)]
    out: set[str] = set()
    for a, b in zip(toks, toks[1:], strict=False):
        if len(a) < 4 or len(b) < 4:
            continue
        for i in (2, 3, 4):
            for j in (2, 3, 4):
                if i + j >= 5:
                    out.add(a[:i] + b[:j])
    return frozenset(out)


@functools.lru_cache(maxsize=1)
def _stemming() -> Analyzer:
    return Analyzer(stemming=True)


def stem(word: str) -> str:
    """PySastrawi's stem of one lower-case word ("ruangannya" → "ruang"); numbers and codes unchanged."""
    return _stemming().stem(word)


@functools.lru_cache(maxsize=1)
def _root_words() -> frozenset[str]:
    try:
        from Sastrawi.Stemmer.StemmerFactory import StemmerFactory
    except ImportError:  # PySastrawi is a dependency; without it no word counts as a dictionary word
        return frozenset()
    return frozenset(StemmerFactory().get_words_from_file())


def is_dictionary_word(word: str) -> bool:
    """``word`` is an Indonesian word: a root of PySastrawi's dictionary (29,932 roots, bundled with the stemmer),
    or an affixed form whose stem is one ("pendaftaran" → "daftar")."""
    roots = _root_words()
    return word in roots or (stem(word) != word and stem(word) in roots)
