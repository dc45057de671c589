"""Query normalisation: how students type → the words the site uses, before retrieval, the facts lookup and the
answer gates.

"jdwal krs kpn ya kak" → "jadwal krs Kartu Rencana Studi kapan". One :class:`QueryNormalizer` per index version,
built from four sources:

1. **Site aliases** (:mod:`retrieval.aliases`, mined from the site at build time): an abbreviation the site defines
   gets its long form added next to it ("TI" → "TI Teknik Informatika"); a lecturer's partial name gets the full
   name added ("pak Yaqin" → "pak Yaqin Muhammad Ainul Yaqin").
2. **Glossary** (:data:`retrieval.language.GLOSSARY`): generic university shorthand (kaprodi, dospem, matkul,
   krs, ukt, …), the fallback when the site defines nothing. A shorthand keeps its short form and gets the long
   form added, so BM25 still matches pages that use either; a shorthand the site never uses whose long form is one
   word or only function words is replaced ("smt" → "semester", "brp" → "berapa").
3. **Colloquial lexicon** (``data/colloquial_lexicon.csv``, Salsabila et al., IALP 2018; see ``data/README.md``;
   loaded by :mod:`retrieval.language`, where every word class the normaliser uses is defined). It is noisy ("si"
   → "sih", "kaya" → "kayak"), so an entry applies only when (a) the slang word is *not* in the index's vocabulary
   (the site uses it → it means what the site means), (b) every word of its formal form *is*
   in the vocabulary or is a function word (otherwise the replacement cannot help retrieval and may change the
   meaning), (c) the query token is not all capitals (an acronym: "SI", "TI", "PAI") and (d) the slang word is
   alphabetic and at least two letters long (digits mark codes, "anak2"-style reduplication is left alone, and
   "x" → "kali" is as often a multiplication sign). Chains are resolved first
   ("dh" → "dah" → "deh"), and the lexicon's own informal targets are mapped once more by
   :data:`retrieval.language.INFORMAL_TARGETS` ("gak" → "enggak" → "tidak"). :meth:`QueryNormalizer.stats`
   counts the entries kept.
   The anchor form (``expand=False``, the words the evidence is checked against) drops condition (b): a slang
   word the site does not use is missing from the evidence either way, and spelled formally ("tgl" → "tanggal")
   the support check can weigh it as the answer-type or function word it is.
4. **Vocabulary-driven repairs** of a word the index does not know (each only when the result is known):
   elongations collapsed ("bangettt" → "banget"), a clitic removed ("syaratnya" → "syarat"), and for words of at
   least five letters one omitted letter, one extra letter or two swapped neighbours ("jdwal" → "jadwal"), and for
   words of seven letters or more one mistyped letter other than the first ("pendaftarun" → "pendaftaran"), only
   when exactly one known word is that close (ties broken by document frequency, a remaining tie → unchanged),
   and never for a word of PySastrawi's root dictionary ("kuota" is no slip of "kota"); a loanword without the
   apostrophe or hyphen the site writes ("mahad" → "ma'had"); a clitic off a two-letter shorthand ("ipnya" → "ip").
5. **Academic years**: "24/25" → "2024/2025".

Discourse particles and vocatives (:data:`retrieval.language.FILLERS`: "dong", "sih", "kak", "min", …) are
dropped, except next to a number ("min 3 SKS"). Never changed: digits and codes ("IF-301", "3.5"), e-mail
addresses and URLs, all-caps tokens (except to add an alias's long form), capitalised words inside a sentence
and words after an honorific ("pak", "bu": names). The result is idempotent: ``normalize(normalize(q)) == normalize(q)``.
:meth:`QueryNormalizer.normalize_with_rules` also says which rules changed the query (:data:`RULES`), for the
answer trace.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from retrieval.aliases import HONORIFICS, AliasTable, alias_key
from retrieval.analyzer import is_dictionary_word
from retrieval.language import (
    FILLERS,
    FUNCTION_WORDS,
    GLOSSARY,
    INFORMAL_TARGETS,
    load_lexicon,
    resolve_formal,
)

__all__ = [
    "RULES",
    "FiredRule",
    "QueryNormalizer",
    "academic_year",
    "collapse_elongation",
    "colloquial_forms",
    "full_academic_years",
]

_EMAIL = re.compile(r"[^\W_][\w.+-]*@[^\W_][\w-]*(?:\.[\w-]+)+")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
_TOKEN = re.compile(r"[^\W_]+(?:[-./'’][^\W_]+)*\.?")
_ALPHA = re.compile(r"[a-z]+")
_CLITICS = ("nya", "lah", "kah", "pun")
_ACADEMIC_YEAR = re.compile(r"(\d{2}|20\d{2})/(\d{2})")  # "24/25", "2024/25": an academic year
_ACADEMIC_YEAR_IN_TEXT = re.compile(r"(?<![\d.,/])(?:\d{2}|20\d{2})/\d{2}(?![\d.,/])")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_SENTENCE_END = re.compile(r"[.?!]\s*$")

# What the normaliser did to a query, one record per change (``QueryNormalizer.normalize_with_rules``, the answer
# trace's "rewrite" step): ``{"rule": …, "from": the token as typed, "to": its replacement or the phrase added}``.
FiredRule = dict[str, str]
# The rules, by name: a lexicon entry ("kalo" → "kalau"; also on an elongated word, after a clitic, or on the
# anchor form only), a glossary shorthand replaced ("smt" → "semester") or expanded ("krs" → "krs kartu rencana
# studi"), a site abbreviation or a lecturer's name expanded, an elongation collapsed, a loanword's mark restored, a
# clitic removed, a colloquial verb form (also on the anchor form only), a typing slip, an academic year written
# out, a filler dropped.
RULES = ("colloquial", "elongation_colloquial", "clitic_colloquial", "clitic_morphology", "colloquial_anchor", "glossary",
         "glossary_expansion", "alias", "name", "elongation", "loanword", "clitic", "morphology", "morphology_anchor",
         "typo", "clitic_typo", "lookalike", "clipping", "academic_year", "filler")
_Add = Callable[[int, str, str, str], None]  # add(token index, phrase, rule, the words it expands)


def _fired(rule: str, source: str, to: str) -> FiredRule:
    return {"rule": rule, "from": source, "to": to}


_VOWELS = frozenset("aeiou")


def _prefixed(prefix: str, root: str) -> str:
    """``meN-`` / ``peN-`` on ``root`` with the standard nasal assimilation ("tulis" → "menulis", "kirim" →
    "mengirim", "susun" → "menyusun", "pikir" → "memikir", "lapor" → "melapor")."""
    head = root[:1]
    if head in _VOWELS or head in "gh":
        return prefix + "ng" + root
    if head == "k":
        return prefix + "ng" + root[1:]
    if head in "bfv":
        return prefix + "m" + root
    if head == "p":
        return prefix + "m" + root[1:]
    if head in "dcjz":
        return prefix + "n" + root
    if head == "t":
        return prefix + "n" + root[1:]
    if head == "s":
        return prefix + "ny" + root[1:]
    return prefix + root


def colloquial_forms(word: str) -> list[str]:
    """Formal candidates for a colloquial verb form, most likely first: the nasal prefixes ng-/nge-/ny-/n-/m-
    (for meN-, whose first consonant k/s/c/t/p they swallow) and the suffix -in (for -kan / -i) ("nyari" →
    "mencari", "bedain" → "membedakan", "diajarin" → "diajari"). General Indonesian morphology, not a word list;
    the normaliser keeps only a candidate the site itself uses. Checked on the bundled colloquial lexicon: of its
    605 entries with a one-word formal form for which this gives candidates, 298 have that form among them."""
    if len(word) < 5 or not word.isalpha():
        return []
    bodies = [word]
    if word.endswith("in") and len(word) > 5:
        bodies = [word[:-2] + "kan", word[:-2] + "i", word[:-2], word]
    roots: list[str] = []
    out: list[str] = []
    for body in bodies:
        if body.startswith("di") and body != word:
            out.append(body)  # "diumumin" → "diumumkan"
            continue
        if body.startswith("nge") and body[3:4] not in _VOWELS:
            roots.append(body[3:])  # "ngecek" → "cek"
        if body.startswith("ng") and body[2:3] in _VOWELS:
            roots += [body[2:], "k" + body[2:]]  # "ngajar" → "ajar", "ngirim" → "kirim", "ngepalai" → "kepalai"
        elif body.startswith("ny") and body[2:3] in _VOWELS:
            roots += ["s" + body[2:], "c" + body[2:]]  # "nyusun" → "susun", "nyari" → "cari"
        elif body.startswith("n") and body[1:2] in _VOWELS:
            roots.append("t" + body[1:])  # "nulis" → "tulis"
        elif body.startswith("m") and body[1:2] in _VOWELS and not body.startswith("me"):
            roots.append("p" + body[1:])  # "mikir" → "pikir"
        elif body != word and len(body) >= 4:
            roots.append(body)  # "-in" on a bare root ("kasihin" → "kasih"; never "mesin" → "mes")
    for root in roots:
        if len(root) < 3:
            continue
        out += [_prefixed("me", root), root, _prefixed("pe", root)]
        if root.endswith(("kan", "i")):
            continue
        out += [_prefixed("me", root) + "kan", _prefixed("me", root) + "i"]
    return [w for w in dict.fromkeys(out) if w != word]


def academic_year(token: str) -> str | None:
    """The full academic year a shorthand one stands for ("24/25", "2024/25" → "2024/2025"), or None (also for two
    years that do not follow each other)."""
    m = _ACADEMIC_YEAR.fullmatch(token)
    if not m or int(m.group(2)) != (int(m.group(1)[-2:]) + 1) % 100:
        return None
    first = m.group(1) if len(m.group(1)) == 4 else "20" + m.group(1)
    return f"{first}/{first[:2]}{m.group(2)}"


def full_academic_years(text: str) -> str:
    """``text`` with each shorthand academic year written out (:func:`academic_year`)."""
    return _ACADEMIC_YEAR_IN_TEXT.sub(lambda m: academic_year(m.group(0)) or m.group(0), text)


def collapse_elongation(word: str) -> tuple[str, str]:
    """Runs of three or more equal letters collapsed to one and to two: ("bangettt" → "banget", "bangett")."""
    return re.sub(r"(.)\1{2,}", r"\1", word), re.sub(r"(.)\1{2,}", r"\1\1", word)


@dataclass(slots=True)
class _Tok:
    start: int
    end: int
    text: str
    lower: str
    out: str | None = None  # replacement (None = unchanged, "" = dropped)
    protected: bool = False
    plain: bool = True  # only letters


def _tokenize(text: str) -> list[_Tok]:
    """The tokens of ``text`` in order: URLs and e-mail addresses as protected tokens, then the words."""
    blocked: list[tuple[int, int]] = []
    for rx in (_URL, _EMAIL):
        for m in rx.finditer(text):
            if not any(s < m.end() and m.start() < e for s, e in blocked):
                blocked.append((m.start(), m.end()))
    toks: list[_Tok] = []
    for s, e in blocked:
        toks.append(_Tok(s, e, text[s:e], text[s:e].lower(), protected=True, plain=False))
    for m in _TOKEN.finditer(text):
        if any(s < m.end() and m.start() < e for s, e in blocked):
            continue
        word = m.group(0)
        if word.endswith(".") and not re.search(r"[.][^\W_]", word):
            word = word[:-1]  # a full stop after a word ends the sentence; "S.Kom." keeps its dot
        toks.append(_Tok(m.start(), m.start() + len(word), word, word.lower(),
                         plain=word.isalpha()))
    toks.sort(key=lambda t: t.start)
    return toks


def _render(text: str, toks: list[_Tok], added: dict[int, list[str]]) -> str:
    """``text`` with each token's replacement and the phrases added after it, spacing and punctuation tidied."""
    parts: list[str] = []
    pos = 0
    for i, tok in enumerate(toks):
        parts.append(text[pos : tok.start])
        parts.append(tok.text if tok.out is None else tok.out)
        for phrase in added.get(i, ()):
            parts.append(" " + phrase)
        pos = tok.end
    parts.append(text[pos:])
    out = "".join(parts)
    out = re.sub(r"\s+", " ", out)
    out = re.sub(r"\s+([?!.,;:])", r"\1", out)
    out = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", out)
    out = re.sub(r"^[\s,;:.!]+", "", out)
    out = re.sub(r"[,;:]\s*([?!.])", r"\1", out).strip()
    return out or text


# the digits a letter looks like, in names typed with the letter ("robo" for "R0BO")
_LOOKALIKE = {"o": "0", "l": "1", "i": "1"}


def _single_slip(word: str, vocabulary: Mapping[str, int]) -> str | None:
    """The one known word of at least four letters a single typing slip away from ``word`` (one letter omitted,
    one too many, two neighbours swapped, or for seven letters or more one mistyped letter other than the first),
    the most frequent when several are; None when none is or the two most frequent tie."""
    candidates = set()
    for k in range(len(word) + 1):  # one letter omitted
        for ch in _ALPHABET:
            candidates.add(word[:k] + ch + word[k:])
    for k in range(len(word)):  # one letter too many
        candidates.add(word[:k] + word[k + 1 :])
    for k in range(len(word) - 1):  # two neighbours swapped
        candidates.add(word[:k] + word[k + 1] + word[k] + word[k + 2 :])
    if len(word) >= 7:  # one letter mistyped, not the first ("pendaftarun" → "pendaftaran")
        for k in range(1, len(word)):
            for ch in _ALPHABET:
                candidates.add(word[:k] + ch + word[k + 1 :])
    candidates.discard(word)
    found = sorted(((vocabulary.get(c, 0), c) for c in candidates
                    if c in vocabulary and len(c) >= 4), reverse=True)
    if not found or (len(found) > 1 and found[0][0] == found[1][0]):
        return None
    return found[0][1]


def _site_lexicon(lexicon: Mapping[str, str], known: Callable[[str], bool]
                  ) -> tuple[dict[str, str], dict[str, str], int]:
    """The lexicon entries (and :data:`retrieval.language.INFORMAL_TARGETS`) for a site whose words ``known``
    tells: ``(applied, anchor, seen)``. An alphabetic slang word of two letters or more that the site does not use goes to
    ``applied`` when every word of its resolved formal form is a function word, a filler or known ("" when all are
    fillers: the word is dropped), else to ``anchor`` when that form is alphabetic; ``seen`` counts the lexicon's
    alphabetic entries considered."""
    applied: dict[str, str] = {}
    anchor: dict[str, str] = {}
    seen = 0
    for slang in dict.fromkeys([*lexicon, *INFORMAL_TARGETS]):
        if not slang.isalpha() or len(slang) < 2:
            continue
        seen += slang in lexicon
        if known(slang):
            continue
        formal = resolve_formal(slang, lexicon)
        words = formal.split()
        if not words or formal == slang:
            continue
        if all(w in FUNCTION_WORDS or w in FILLERS or known(w) for w in words):
            applied[slang] = "" if all(w in FILLERS for w in words) else formal
        elif all(w.isalpha() for w in words):
            anchor[slang] = formal
    return applied, anchor, seen


def _unmarked_spellings(vocabulary: Mapping[str, int], known: Callable[[str], bool]) -> dict[str, str]:
    """``bare → term`` for the vocabulary's terms with an apostrophe or a hyphen whose bare spelling (alphabetic,
    four letters or more) the site does not use; of two terms with one bare spelling, the more frequent."""
    unmarked: dict[str, str] = {}
    for term in vocabulary:
        bare = term.replace("'", "").replace("-", "")
        if bare != term and bare.isalpha() and len(bare) >= 4 and not known(bare):
            # two spellings that differ only in their marks: the commoner one
            best = unmarked.get(bare)
            if best is None or vocabulary[term] > vocabulary[best]:
                unmarked[bare] = term
    return unmarked


class QueryNormalizer:
    """Normalises informal queries for one site. ``vocabulary`` maps the index's BM25 terms to their document
    frequency (empty: no site → only function-word mappings apply and there is no typo correction); ``stem``
    is the analyzer's stemmer when the BM25 terms are stems."""

    def __init__(
        self,
        *,
        lexicon: Mapping[str, str] | None = None,
        glossary: Mapping[str, str] = GLOSSARY,
        aliases: AliasTable | None = None,
        vocabulary: Mapping[str, int] | None = None,
        stem: Callable[[str], str] | None = None,
        typo_correction: bool = True,
    ) -> None:
        self.aliases = aliases or AliasTable()
        self.glossary = {k.lower(): v.lower() for k, v in glossary.items()}
        self.vocabulary: Mapping[str, int] = vocabulary or {}
        self._stem = stem
        self.typo_correction = typo_correction and bool(self.vocabulary) and stem is None
        lexicon = load_lexicon() if lexicon is None else lexicon
        # words that must never be "repaired": the long forms the normaliser itself adds
        self._own_words = frozenset(
            w for long in [*self.glossary.values(), *self.aliases.abbreviations.values(), *self.aliases.titled]
            for w in _ALPHA.findall(long.lower())
        )
        # the entries that apply to this site, and (anchor lexicon) those whose formal form the site does not use
        # either: applied to the anchor form only (``expand=False``)
        self.lexicon, self._anchor_lexicon, self._lexicon_seen = _site_lexicon(lexicon, self.known)
        # a site abbreviation that is also a function word, a filler or a colloquial spelling of one ("SI" vs
        # "si" → "sih"): only its all-caps spelling is the abbreviation
        self._ambiguous_short = frozenset(
            k for k in self.aliases.abbreviations
            if k in FUNCTION_WORDS or k in FILLERS or (k in lexicon and all(
                w in FUNCTION_WORDS or w in FILLERS for w in resolve_formal(k, lexicon).split()))
        )
        self._max_name = max((len(v.split()) for v in [*self.aliases.names, *self.aliases.honorific_names]),
                             default=0)
        # the site's words with an apostrophe or a hyphen, as students type them without ("jumat" → "jum'at")
        self._unmarked = _unmarked_spellings(self.vocabulary, self.known)
        self._sorted_terms = sorted(self.vocabulary)  # for clipped words (``_unclipped``)

    # --- vocabulary ----------------------------------------------------------------------------------------------
    def known(self, word: str) -> bool:
        """Whether the site uses ``word`` (a BM25 term of the index, or the stem of one)."""
        if word in self.vocabulary:
            return True
        return self._stem is not None and self._stem(word) in self.vocabulary

    def _ok(self, word: str) -> bool:
        """Keep ``word`` as it is: the site uses it, the normaliser adds it itself, or it is a function word with
        no formal spelling in the lexicon ("gimana" is a stopword, but "bagaimana" is the formal form)."""
        return (word in FUNCTION_WORDS and word not in self.lexicon) or word in self._own_words or self.known(word)

    def stats(self) -> dict[str, int]:
        """How many lexicon entries (alphabetic slang) exist and how many apply to this site's vocabulary."""
        dropping = sum(1 for v in self.lexicon.values() if not v)
        return {"lexicon_entries": self._lexicon_seen, "lexicon_applied": len(self.lexicon),
                "lexicon_to_filler": dropping, "vocabulary": len(self.vocabulary),
                "glossary": len(self.glossary), **self.aliases.counts()}

    # --- the normalisation ---------------------------------------------------------------------------------------
    def normalize(self, text: str, *, expand: bool = True) -> str:
        """The query in formal words with the long forms of abbreviations and the full names of lecturers added
        next to them; ``expand=False``: formal words only, nothing added (for checking the question's own words
        against evidence, where an added long form the page does not spell out would count as missing)."""
        return self.normalize_with_rules(text, expand=expand)[0]

    def normalize_with_rules(self, text: str, *, expand: bool = True) -> tuple[str, list[FiredRule]]:
        """:meth:`normalize`'s result and the rules that changed the query, in the order they fired: one
        ``{"rule", "from", "to"}`` record per change (:data:`RULES` names them; "to" is "" for a dropped filler,
        the added phrase for an expansion)."""
        fired: list[FiredRule] = []
        text = " ".join(unicodedata.normalize("NFKC", text or "").split())
        if not text:
            return "", fired
        toks = _tokenize(text)
        if not toks:
            return text, fired
        present = " " + " ".join(t.lower.rstrip(".") for t in toks) + " "
        added: dict[int, list[str]] = {}
        done: set[str] = set()

        def add(i: int, phrase: str, rule: str, source: str) -> None:
            key = " ".join(phrase.lower().split())
            if not expand or key in done or f" {key} " in present:
                return
            done.add(key)
            added.setdefault(i, []).append(phrase)
            fired.append(_fired(rule, source, phrase))

        self._names(toks, add)
        for i, tok in enumerate(toks):
            if tok.protected:
                continue
            if self._fillers(toks, i):
                fired.append(_fired("filler", tok.text, ""))
        for i, tok in enumerate(toks):
            if tok.protected or tok.out == "":
                continue
            self._word(text, toks, i, add, fired, anchors=not expand)
        return _render(text, toks, added), fired

    def _names(self, toks: list[_Tok], add: _Add) -> None:
        """Lecturer name variants (longest first); the tokens become protected and the full name is added."""
        if not self._max_name:
            return
        i = 0
        while i < len(toks):
            found = None
            for n in range(min(self._max_name, len(toks) - i), 0, -1):
                span = toks[i : i + n]
                if not all(t.plain for t in span):
                    continue
                key = " ".join(t.lower for t in span)
                owner = self.aliases.names.get(key)
                after_honorific = i > 0 and toks[i - 1].lower.rstrip(".") in HONORIFICS
                if owner is None and after_honorific:
                    owner = self.aliases.honorific_names.get(key)
                if owner is not None:
                    found = (n, owner, after_honorific)
                    break
            if found is None:
                i += 1
                continue
            n, owner, after_honorific = found
            for t in toks[i : i + n]:
                t.protected = True
            if after_honorific:
                toks[i - 1].protected = True
            add(i + n - 1, owner, "name", " ".join(t.text for t in toks[i : i + n]))
            i += n

    def _fillers(self, toks: list[_Tok], i: int) -> bool:
        """Drop token ``i`` when it is a filler not next to a number; True when it was dropped."""
        tok = toks[i]
        if tok.lower not in FILLERS or not tok.plain or (tok.text.isupper() and len(tok.text) > 1):
            return False
        near = [toks[j] for j in (i - 1, i + 1) if 0 <= j < len(toks)]
        if any(any(ch.isdigit() for ch in t.text) for t in near):
            return False
        tok.out = ""
        return True

    @staticmethod
    def _sentence_initial(text: str, toks: list[_Tok], i: int) -> bool:
        """No kept word before token ``i`` in its sentence (dropped fillers do not count)."""
        for j in range(i - 1, -1, -1):
            if _SENTENCE_END.search(text[toks[j].end : toks[j + 1].start]):
                return True
            if toks[j].out != "":
                return False
        return True

    def _abbreviation(self, i: int, tok: _Tok, add: _Add, fired: list[FiredRule]) -> bool:
        """Add the long form of a site abbreviation or a glossary shorthand; True when ``tok`` was one."""
        key = alias_key(tok.text)
        caps = sum(ch.isupper() for ch in tok.text) >= 2 and tok.text.upper() == tok.text
        long = self.aliases.abbreviations.get(key)
        if long is not None and (caps or key not in self._ambiguous_short):
            add(i, long, "alias", tok.text)
            tok.protected = True
            return True
        long = self.glossary.get(key) if tok.plain else None
        if long is None:
            return False
        single = " " not in long or all(w in FUNCTION_WORDS for w in long.split())
        if single and not caps and not self.known(key):
            tok.out = long  # "smt" → "semester", "brp" → "berapa"
            fired.append(_fired("glossary", tok.text, long))
        else:
            add(i, long, "glossary_expansion", tok.text)  # "krs" → "krs kartu rencana studi"
        return True

    def _word(self, text: str, toks: list[_Tok], i: int, add: _Add, fired: list[FiredRule], *,
              anchors: bool = False) -> None:
        tok = toks[i]
        year = academic_year(tok.text)
        if year:  # "24/25" → "2024/2025"
            tok.out = year
            fired.append(_fired("academic_year", tok.text, year))
            return
        if self._abbreviation(i, tok, add, fired) or not tok.plain:
            return  # abbreviations; codes, numbers, dotted forms stay as they are
        word = tok.lower
        if len(tok.text) > 1 and tok.text.isupper():
            return  # an acronym the site does not define: left alone
        if tok.text[:1].isupper() and not self._sentence_initial(text, toks, i):
            return  # a capitalised word inside a sentence: a name
        if i > 0 and toks[i - 1].lower.rstrip(".") in HONORIFICS:
            return  # "pak budi": a name
        if self._ok(word):
            return
        fixed, rule = self._repair(word)
        if fixed is None and anchors:
            fixed, rule = (self._anchor_lexicon.get(collapse_elongation(word)[0]) or self._anchor_lexicon.get(word),
                           "colloquial_anchor")
            if not fixed:
                fixed, rule = self._anchor_morphology(word), "morphology_anchor"
        if fixed is None or fixed == word:
            return
        tok.out = fixed
        fired.append(_fired(rule, tok.text, fixed))
        if fixed and " " not in fixed:  # the repaired word may be a shorthand itself ("jrsn" → "jurusan")
            probe = _Tok(tok.start, tok.end, fixed, fixed)
            if self._abbreviation(i, probe, add, fired) and probe.out is not None:
                tok.out = probe.out

    @staticmethod
    def _anchor_morphology(word: str) -> str | None:
        """For the anchor form only: the formal form of a colloquial verb that neither the site nor the lexicon
        knows, by the colloquial morphology (:func:`colloquial_forms`), checked against PySastrawi's root
        dictionary instead of the site ("dikumpulin" → "dikumpulkan", stem "kumpul"; "diisiin" → "diisikan", stem
        "isi"). Like the anchor
        lexicon, it lets the support check weigh the word as what it is; a dictionary word is never read as slang."""
        if is_dictionary_word(word):
            return None
        return next((form for form in colloquial_forms(word) if is_dictionary_word(form)), None)

    def _repair(self, word: str) -> tuple[str | None, str]:
        """The formal or known form of a word the site does not use, or None, with the name of the rule that gave
        it (:data:`RULES`)."""
        # 1. the lexicon, on the word as typed and with elongations collapsed ("bangettt")
        one, two = collapse_elongation(word)
        for form in dict.fromkeys((word, one, two)):
            if form in self.lexicon:
                return self.lexicon[form], "colloquial" if form == word else "elongation_colloquial"
            if form != word and self._ok(form):
                return form, "elongation"
        # 2. a loanword without its apostrophe or hyphen ("mahad" → "ma'had")
        if one in self._unmarked:
            return self._unmarked[one], "loanword"
        # 3. a clitic ("syaratnya" → "syarat"), possibly on a slang base ("milihnya" → "milih" → "memilih"); on a
        # two-letter base only when it is shorthand the site or the glossary knows ("ipnya" → "ip", not "tanya"); a
        # longer base also when it is shorthand ("dospemnya" → "dospem", written out afterwards)
        for suffix in _CLITICS:
            base = one[: -len(suffix)]
            if not one.endswith(suffix) or len(base) < 2:
                continue
            shorthand = base in self.glossary or base in self.aliases.abbreviations
            if len(base) == 2:
                if suffix == "nya" and (shorthand or (self.known(base) and base not in FUNCTION_WORDS)):
                    return base, "clitic"
                continue
            if self._ok(base) or shorthand:
                return base, "clitic"
            if self.lexicon.get(base):
                return self.lexicon[base], "clitic_colloquial"
            # … on a colloquial verb ("diumuminnya" → "diumumin" → "diumumkan")
            for form in colloquial_forms(base):
                if self.known(form):
                    return form, "clitic_morphology"
            # … on a typing slip ("jadwlnya" → "jadwl" → "jadwal")
            if self.typo_correction and len(base) >= 5 and not is_dictionary_word(base):
                fixed = _single_slip(base, self.vocabulary)
                if fixed:
                    return fixed, "clitic_typo"
        # 4. colloquial verb morphology ("ngajar" → "mengajar", "ngepalain" → "kepala", "diumumin" → "diumumkan")
        for form in colloquial_forms(one):
            if self.known(form):
                return form, "morphology"
        # 5. one typing slip against the site's vocabulary
        if self.typo_correction and len(one) >= 5 and not is_dictionary_word(one):  # "kuota" is no slip of "kota"
            fixed = _single_slip(one, self.vocabulary)
            if fixed:
                return fixed, "typo"
        # 5b. a letter typed for the digit it looks like in a site's name ("robo" → "r0bo")
        if self.typo_correction and len(one) >= 3:
            fixed = self._lookalike(one)
            if fixed:
                return fixed, "lookalike"
        # 6. a clipped word: the one site word it starts ("yudis" → "yudisium")
        if self.typo_correction and len(one) >= 4 and one.isalpha() and not is_dictionary_word(one):
            fixed = self._unclipped(one)
            if fixed:
                return fixed, "clipping"
        return (one, "elongation") if one != word else (None, "")

    def _lookalike(self, word: str) -> str | None:
        """The one site word that ``word`` is with one letter read as the digit it looks like (o → 0, l/i → 1), or
        None (no such word, or two)."""
        found = {word[:k] + digit + word[k + 1 :] for k, ch in enumerate(word) for digit in _LOOKALIKE.get(ch, "")}
        known = [w for w in found if w in self.vocabulary]
        return known[0] if len(known) == 1 else None

    def _unclipped(self, word: str) -> str | None:
        """The one alphabetic site word that starts with ``word`` and is at least three letters longer, or None
        (no such word, or two)."""
        terms = self._sorted_terms
        at = bisect.bisect_left(terms, word)
        found: str | None = None
        while at < len(terms) and terms[at].startswith(word):
            term = terms[at]
            at += 1
            if len(term) < len(word) + 3 or not term.isalpha():
                continue
            if found is not None:
                return None
            found = term
        return found

    def __call__(self, text: str) -> str:
        return self.normalize(text)
