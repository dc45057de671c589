"""Aliases mined from the site itself at index build time, stored with the index version (``aliases.json``).

Two kinds:

- **Abbreviations** defined on the site: ``Long Name (ABBR)`` and ``ABBR (Long Name)``, e.g. "Teknik Informatika
  (TI)", "Ilmu Komunikasi (Ilkom)", "Kartu Rencana Studi (KRS)". The abbreviation must be derivable from the long
  form (:func:`derives`): every content word of the long form gives the abbreviation at least its first letter,
  possibly more of its letters in order (syllable prefixes such as "Il·kom"), and nothing else is left over. This is
  Schwartz & Hearst's (2003) match made stricter, so "Kerja Praktik (PKL)" or "Gedung (B.3.04)" are not aliases.
  The long form is the longest run of words before the parenthesis that fits (every word must contribute, so it
  is at most as many words as the abbreviation has letters).
- **Lecturer names**: a run of capitalised words with academic titles around it ("Dr. Muhammad Ainul Yaqin,
  M.Kom.", "Prof. Dr. Suhartono, S.Si., M.Kom."). Its variants are the bare name, every run of two or more of its
  words ("Ainul Yaqin") and each single word ("Yaqin"); a variant two people share is dropped. A variant whose
  words all occur as ordinary lower-case words on the site ("utama", "bagus") counts only after an honorific
  ("pak Utama", "bu Putri").
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.language import formal_vocabulary

__all__ = ["ALIASES_FILE", "AliasTable", "HONORIFICS", "derives", "find_abbreviations", "find_names", "mine_aliases"]

ALIASES_FILE = "aliases.json"
FORMAT = 1

# How students address lecturers before a name.
HONORIFICS = frozenset("pak bapak bpk pa bu ibu bunda prof dr ustadz ustadzah mas mbak".split())

# Words inside a long form that need not contribute a letter ("Capture The Flag", "Bahasa dan Sastra").
_CONNECTORS = frozenset("dan & of the and for di ke untuk dari atau serta pada in on".split())

_SHORT = r"[A-Za-z][A-Za-z.&-]{0,11}"
_LONG_BEFORE = re.compile(r"([^()\n.,;:!?]{2,200}?)\s*\(\s*(" + _SHORT + r")\s*\)")
_SHORT_BEFORE = re.compile(r"(?<![\w.-])(" + _SHORT + r")\s*\(\s*([^()\n,;:!?]{3,120}?)\s*\)")
_WORD = re.compile(r"[^\W\d_][\w'’&-]*|&")

# --- names ---------------------------------------------------------------------------------------------------
_PRE_TITLE = r"(?:Prof|Dr|Drs|Dra|Ir|Hj|H|KH|K\.H)\.[ \t]*"
_NAME_WORD = r"[A-Z][a-z'’]+(?:-[A-Z][a-z]+)?"
# a degree after the name: "M.Kom.", "S.Si.", "M.T.", "Ph.D.", "S.Kom", "MT" (never a title of the next name)
_DEGREE = (
    r"(?!(?:Prof|Dr|Drs|Dra|Ir|Hj|H|KH)\.)"
    r"(?:[A-Z][a-z]{0,2}\.(?:[A-Z][a-z]{0,3}\.)*(?:[A-Z][a-z]{0,3}\b(?!\.))?"
    r"|(?:MT|MM|ST|SE|SH|MH|MA|MSi|MKom|MSc|MCs|MPd|MEng|PhD|Lc)\b)"
)
_NAME = re.compile(
    r"(?<![\w.])(?P<pre>(?:" + _PRE_TITLE + r")*)"
    r"(?P<name>" + _NAME_WORD + r"(?:[ \t]+" + _NAME_WORD + r"){0,4})"
    r"(?P<post>(?:[ \t]*,\s*" + _DEGREE + r")+)?"
)
_EMAIL_OR_URL = re.compile(r"\S+@\S+|\bhttps?://\S+|\bwww\.\S+")
_LOWER_WORD = re.compile(r"(?<![\w.@/-])[a-z][a-z'’]*(?![\w@/-])")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def alias_key(text: str) -> str:
    """The lookup form of an abbreviation or a name variant: lower case, words joined by single spaces, no dots
    at the end ("S.Kom." → "s.kom")."""
    return " ".join(_norm(text).lower().split()).strip(".")


# --- abbreviations -------------------------------------------------------------------------------------------
def _letters(short: str) -> str:
    return "".join(ch for ch in short.lower() if ch.isalpha())


def _plausible_short(short: str) -> bool:
    letters = _letters(short)
    if not 2 <= len(letters) <= 10 or any(ch.isdigit() for ch in short):
        return False
    # an abbreviation has two capitals ("TI", "S.Kom.") or is a capitalised blend of syllables of at most
    # eight letters ("Ilkom", "Saintek")
    upper = sum(ch.isupper() for ch in short)
    return upper >= 2 or (short[0].isupper() and len(letters) <= 8)


def derives(short: str, long_words: Sequence[str]) -> bool:
    """Whether the abbreviation ``short`` can be formed from the words of ``long_words``: every non-connector
    word gives its first letter and optionally more of its letters in order; connectors give nothing or their
    first letter; all letters of ``short`` are used, in order."""
    s = _letters(short)
    words = [w.lower() for w in long_words if any(ch.isalpha() for ch in w)]
    if not s or not words or not any(w not in _CONNECTORS for w in words):
        return False
    if len(words) == 1 and s == _letters(words[0]):
        return False  # the word itself, not an abbreviation of it
    memo: dict[tuple[int, int], bool] = {}

    def fit(i: int, j: int) -> bool:
        if j == len(words):
            return i == len(s)
        key = (i, j)
        if key in memo:
            return memo[key]
        word = _letters(words[j])
        ok = False
        if words[j] in _CONNECTORS and fit(i, j + 1):
            ok = True
        elif i < len(s) and word and word[0] == s[i]:
            # the word's first letter, then k more letters of s as a subsequence of the rest of the word
            rest, pos, k = word[1:], 0, 0
            ok = fit(i + 1, j + 1)
            while not ok and i + 1 + k < len(s):
                found = rest.find(s[i + 1 + k], pos)
                if found < 0:
                    break
                pos, k = found + 1, k + 1
                ok = fit(i + 1 + k, j + 1)
        memo[key] = ok
        return ok

    return fit(0, 0)


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def find_abbreviations(text: str) -> list[tuple[str, str]]:
    """``(short, long)`` pairs defined in ``text`` by either parenthesis pattern."""
    text = _norm(text)
    out: list[tuple[str, str]] = []
    for m in _LONG_BEFORE.finditer(text):
        short = m.group(2)
        if not _plausible_short(short):
            continue
        before = _words(m.group(1))
        n_letters = len(_letters(short))
        best = None
        for size in range(1, min(len(before), n_letters + 3) + 1):
            candidate = before[-size:]
            if candidate[0].lower() not in _CONNECTORS and derives(short, candidate):
                best = candidate  # the longest run that fits: "KKNI" is Kerangka Kualifikasi Nasional Indonesia
        if best is not None:
            out.append((short, " ".join(best)))
    for m in _SHORT_BEFORE.finditer(text):
        short, inner = m.group(1), _words(m.group(2))
        if len(inner) >= 2 and _plausible_short(short) and derives(short, inner) and len(inner) <= len(_letters(short)) + 3:
            out.append((short, " ".join(inner)))
    return out


# --- names ---------------------------------------------------------------------------------------------------
def _lowercase_words(texts: Sequence[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_LOWER_WORD.findall(_EMAIL_OR_URL.sub(" ", _norm(text))))
    return counts


def find_names(text: str, lowercase: Counter[str] | set[str]) -> list[tuple[str, str]]:
    """``(bare name, titled name)`` of the lecturer-like names in ``text``: capitalised words with a title before
    ("Dr.", "Prof.") or a degree after (", M.Kom."). Leading words that the site also uses in lower case are role
    words ("Ketua Wiratmoko") and are dropped when no title marks the start; at least half of the remaining words
    must never occur in lower case."""
    out: list[tuple[str, str]] = []
    for m in _NAME.finditer(_norm(text)):
        pre, post = m.group("pre") or "", m.group("post") or ""
        if not pre and not post:
            continue
        tokens = m.group("name").split()
        if not pre:
            while tokens and tokens[0].lower() in lowercase:
                tokens = tokens[1:]
        if not tokens:
            continue
        proper = sum(t.lower() not in lowercase for t in tokens)
        if 2 * proper < len(tokens):
            continue
        bare = " ".join(tokens)
        titled = f"{pre}{bare}{post}".strip()
        out.append((bare, " ".join(titled.split())))
    return out


# --- the table -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AliasTable:
    """Aliases of one site. ``abbreviations``: short form (lower case) → long form. ``names``: name variant (lower
    case) → bare full name. ``honorific_names``: variants that count only after "pak", "bu", … ``titled``: bare
    name → the titled form seen most often."""

    abbreviations: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    honorific_names: dict[str, str] = field(default_factory=dict)
    titled: dict[str, str] = field(default_factory=dict)
    shorts: dict[str, str] = field(default_factory=dict)  # lower-case short form → its spelling on the site

    def __len__(self) -> int:
        return len(self.abbreviations) + len(self.titled)

    def counts(self) -> dict[str, int]:
        return {"abbreviations": len(self.abbreviations), "names": len(self.titled),
                "name_variants": len(self.names) + len(self.honorific_names)}

    def as_json(self) -> dict[str, object]:
        return {"format": FORMAT, "abbreviations": {k: {"short": self.shorts.get(k, k), "long": v}
                                                    for k, v in sorted(self.abbreviations.items())},
                "names": {k: v for k, v in sorted(self.names.items())},
                "honorific_names": {k: v for k, v in sorted(self.honorific_names.items())},
                "titled": {k: v for k, v in sorted(self.titled.items())}}

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.as_json(), ensure_ascii=False, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> AliasTable:
        """The table saved at ``path``; an empty table when the file does not exist (an index built before
        aliases were mined)."""
        if not path.exists():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"{path} has alias format {data.get('format')!r}, this code reads {FORMAT}")
        abbrevs = data.get("abbreviations", {})
        return cls(
            abbreviations={k: str(v["long"]) for k, v in abbrevs.items()},
            names=dict(data.get("names", {})),
            honorific_names=dict(data.get("honorific_names", {})),
            titled=dict(data.get("titled", {})),
            shorts={k: str(v["short"]) for k, v in abbrevs.items()},
        )


def mine_aliases(texts: Iterable[str]) -> AliasTable:
    """Mine the abbreviation and name aliases of a site from its chunk texts (titles included)."""
    texts = [t for t in texts if t]
    lowercase = _lowercase_words(texts)
    long_counts: dict[str, Counter[str]] = {}
    short_spelling: dict[str, Counter[str]] = {}
    titled_counts: dict[str, Counter[str]] = {}
    for text in texts:
        for short, long in find_abbreviations(text):
            key = alias_key(short)
            long_counts.setdefault(key, Counter())[" ".join(long.split())] += 1
            short_spelling.setdefault(key, Counter())[short.rstrip(".") if short.count(".") == 1 else short] += 1
        for bare, titled in find_names(text, lowercase):
            titled_counts.setdefault(bare, Counter())[titled] += 1
    abbreviations: dict[str, str] = {}
    for key, counter in long_counts.items():
        (best, n), *rest = counter.most_common(2) + [("", 0)]
        if rest and rest[0][1] == n:  # two long forms equally often: ambiguous
            continue
        abbreviations[key] = best
    # a name seen only as part of a longer name ("Yaqin" in "Muhammad Ainul Yaqin") is that person, not another
    bares = sorted(titled_counts, key=lambda b: -len(b.split()))
    people: dict[str, str] = {}  # bare name → canonical bare name
    for bare in bares:
        containing = {p for p in people.values() if _contains(p, bare)}
        people[bare] = containing.pop() if len(containing) == 1 else bare
    merged: dict[str, Counter[str]] = {}
    for bare, counter in titled_counts.items():
        merged.setdefault(people[bare], Counter()).update(counter)
    titled_forms = {bare: counter.most_common(1)[0][0] for bare, counter in merged.items()}
    claims: dict[str, set[str]] = {}
    for bare in titled_forms:
        tokens = bare.split()
        for i in range(len(tokens)):
            for j in range(i + 1, len(tokens) + 1):
                span = tokens[i:j]
                if len(span) == 1 and len(span[0]) < 3:
                    continue
                claims.setdefault(alias_key(" ".join(span)), set()).add(bare)
    names: dict[str, str] = {}
    honorific: dict[str, str] = {}
    language = formal_vocabulary()
    for variant, owners in claims.items():
        if len(owners) != 1:
            continue
        owner = next(iter(owners))
        # a variant made of words the site or the language uses as words (a first name that is also an adjective)
        # names the lecturer only after "pak", "bu", …
        if all(w in lowercase or w in language for w in variant.split()):
            honorific[variant] = owner
        else:
            names[variant] = owner
    shorts = {k: c.most_common(1)[0][0] for k, c in short_spelling.items() if k in abbreviations}
    return AliasTable(abbreviations, names, honorific, titled_forms, shorts)


def _contains(longer: str, shorter: str) -> bool:
    a, b = longer.lower().split(), shorter.lower().split()
    return len(b) < len(a) and any(a[i : i + len(b)] == b for i in range(len(a) - len(b) + 1))
