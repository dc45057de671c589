"""Small Indonesian text helpers shared by the guards, the support check and the evaluation: words, sentences,
anchors (the question's key words) and normalisation for span matching. The word classes they use (stopwords,
question words, colloquial spellings, negations, aside words) are defined in :mod:`retrieval.language`."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from retrieval.aliases import HONORIFICS
from retrieval.language import (
    ACKNOWLEDGEMENTS,
    ANCHOR_STOPWORDS,
    CHAT_REASON,
    COLLOQUIAL_WORDS,
    FIRST_PERSON,
    NEGATIONS,
    PARTICLES,
    POLAR_BEFORE,
    PRE_TITLES,
    PURPOSE_WORDS,
    QUESTION_WORDS,
    REASON_CHAT_SPELLINGS,
    REASON_WORDS,
    REQUEST_NOUNS,
    REQUEST_VERBS,
    TRAILING_REASON,
    WH_WORDS,
    YES_NO,
    colloquial_spellings,
)

__all__ = [
    "attach_clitics",
    "told_apart",
    "strip_clitics",
    "anchors",
    "content_words",
    "is_negated",
    "name_words",
    "normalize",
    "sentences",
    "split_aside",
    "split_questions",
    "words",
]

# a word, or a number with its Indonesian decimal comma ("2,75": one number; "3, 4" and "ip,semester" stay apart)
_WORD = re.compile(r"[0-9A-Za-zÀ-ÖØ-öø-ÿ]+(?:[-'.][0-9A-Za-zÀ-ÖØ-öø-ÿ]+|(?<=\d),\d+)*")


def _function_word(word: str, raw: str) -> bool:
    """``word`` (lower case, as ``raw`` was typed) carries no topic. A colloquial spelling typed in capitals is an
    acronym ("SI" is Sistem Informasi, not "si" = "sih")."""
    if word in ANCHOR_STOPWORDS or word in QUESTION_WORDS:
        return True
    return word in COLLOQUIAL_WORDS and not (len(raw) > 1 and raw.isupper())


def normalize(text: str) -> str:
    """Lower-case, NFKC, punctuation to spaces, collapsed whitespace: the form used for span containment."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


_CITATION = re.compile(r"\s*\[\d+\]")


def strip_citations(text: str) -> str:
    """``text`` without its citation markers ("… 6 SKS. [1]" → "… 6 SKS.")."""
    return _CITATION.sub("", text).strip()


def holds(whole: str, part: str) -> bool:
    """``part`` occurs in ``whole`` as whole words (both in :func:`normalize`'s form)."""
    return bool(part) and f" {part} " in f" {whole} "


def names_subject(answer: str, subject: str) -> bool:
    """``answer`` names ``subject``: at least half of the subject's words of three letters or more (a name without
    its titles, an item without its code) occur in it."""
    wanted = [w for w in normalize(subject).split() if w.isalpha() and len(w) > 2]
    if not wanted:
        return normalize(subject) in normalize(answer)
    have = set(normalize(answer).split())
    return 2 * sum(w in have for w in wanted) >= len(wanted)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (keeps internal hyphens, dots in numbers like 3.50)."""
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def _strip_suffix(word: str) -> str:
    # light Indonesian clitic stripping so "dosennya" matches "dosen"; keep short words intact
    if word.endswith("-nya") and len(word) > 5:  # "UAS-nya"
        return word[:-4]
    for suffix in ("nya", "lah", "kah", "pun"):
        if word.endswith(suffix) and len(word) - len(suffix) >= (3 if suffix == "nya" else 4):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stopwords, no question words or fillers (also in their colloquial spellings),
    clitics stripped."""
    out = []
    previous_is_content = False
    for raw in _WORD.findall(unicodedata.normalize("NFKC", text)):
        w = raw.lower()
        # "info"/"informasi" after a content word modifies it ("Manajemen Informasi"): the topic, not a request
        if w in REQUEST_NOUNS and previous_is_content:
            out.append(w)
            continue
        previous_is_content = not _function_word(w, raw) and w not in REQUEST_VERBS
        if _function_word(w, raw):
            continue
        w = _strip_suffix(w)
        if _function_word(w, raw) or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(w)
    return out


def anchors(question: str) -> list[str]:
    """The question's key words (the anchors of docs/answers.md): content words, numbers and capitalised names, deduplicated."""
    seen: dict[str, None] = {}
    for w in content_words(question):
        seen.setdefault(w, None)
    return list(seen)


# A sentence ends at these: the next word is capitalised by convention, not because it is a name.
_SENTENCE_END = re.compile(r"[.?!:;\n]")


def name_words(text: str) -> list[str]:
    """The content words ``text`` writes as names: capitalised ("Kádár", "White Rose") or acronyms ("TI"), except a
    sentence's first word and forms of address ("Pak Budi" → "budi"), in :func:`content_words`'s form, deduplicated.
    Names are what a paraphrase rarely changes: the support step's anchor table marks them, so a fit can see which
    missing anchors were names. A question typed in lower case has none."""
    text = unicodedata.normalize("NFKC", text)
    out: dict[str, None] = {}
    previous: str | None = None
    previous_end = 0
    for match in _WORD.finditer(text):
        raw = match.group(0)
        starts_sentence = previous is None or (bool(_SENTENCE_END.search(text, previous_end, match.start()))
                                               and previous.lower() not in PRE_TITLES)  # "Dr. Rahmat"
        previous, previous_end = raw, match.end()
        if starts_sentence or not raw[:1].isupper() or raw.lower() in HONORIFICS:
            continue
        for w in content_words(raw):
            out.setdefault(w, None)
    return list(out)


_CLAUSE_END = re.compile(r"[.?!,;:\n]")


def is_negated(text: str) -> bool:
    """Whether ``text`` negates: a negation word (:data:`NEGATIONS`, also with "-lah"/"-kah") that is not the other
    answer a yes/no question offers (``POLAR_BEFORE``, or the last word of its clause apart from fillers). A negated
    question ("Mengapa X tidak dihukum?") asks about what did not happen, and its answer's evidence says so:
    evidence that negates nothing answers another question (the calibrated gate's ``negation_present``)."""
    for clause in _CLAUSE_END.split(unicodedata.normalize("NFKC", text)):
        tokens = [w.lower() for w in _WORD.findall(clause)]
        while tokens and tokens[-1] in QUESTION_WORDS:  # trailing fillers ("… belum sih", "… tidak ya kak")
            tokens.pop()
        for i, w in enumerate(tokens):
            if w not in NEGATIONS and _strip_suffix(w) not in NEGATIONS:
                continue
            if i == len(tokens) - 1 or (i > 0 and tokens[i - 1] in POLAR_BEFORE):
                continue
            return True
    return False


def sentences(text: str) -> list[str]:
    """Split a passage into sentences (also at line breaks, which separate list items and table rows).

    A full stop does not end a sentence after a title ("Dr.", "Prof."), after an initial ("A."), or when the next
    word starts in lower case or with a digit ("M.Kom. dan", "Rp 2.500.000")."""
    out: list[str] = []
    for line in text.splitlines():
        pieces = [p for p in re.split(r"(?<=[.!?])\s+", line) if p.strip()]
        buf = ""
        for k, piece in enumerate(pieces):
            buf = f"{buf} {piece.strip()}" if buf else piece.strip()
            nxt = pieces[k + 1].lstrip() if k + 1 < len(pieces) else ""
            last = buf.split()[-1]
            core = last.rstrip(".!?").lower().strip(",;:()")
            join = False
            if nxt and last.endswith("."):
                if core in PRE_TITLES or (len(core) == 1 and core.isalpha()):
                    join = True
                elif nxt[:1].islower() or nxt[:1].isdigit():
                    join = True
            if not join:
                out.append(" ".join(buf.split()))
                buf = ""
        if buf:
            out.append(" ".join(buf.split()))
    return [s for s in out if len(s) >= 3]


# "ujian nya": a "-nya" typed apart from the word (letters only) before it
_DETACHED_NYA = re.compile(r"(?<![\w-])([^\W\d_]{2,}) +(nya)\b", re.IGNORECASE)


def attach_clitics(text: str) -> str:
    """A possessive "-nya" typed apart joined to its word ("jadwal ujian nya?" → "jadwal ujiannya?"), so that a
    follow-up reads as one however it was typed."""
    return _DETACHED_NYA.sub(r"\1\2", text)


def strip_clitics(text: str) -> str:
    """The text with "-nya" / "-lah" / "-kah" clitics removed from its words ("emailnya?" → "email?")."""
    return _WORD.sub(lambda m: m.group(0) if m.group(0).lower() in ANCHOR_STOPWORDS else _strip_suffix(m.group(0)),
                     text)


# --- asides: what a student says about themselves or why they ask ------------------------------------------------
# Students explain themselves around the question ("… tanggal berapa? mau mudik soalnya", "aku anak farmasi, boleh
# ikut …?"). Those words are not what the page must contain: a page that gives the date does not say "mudik". The
# word classes (retrieval.language: wh-words, yes/no tails, first-person pronouns, reason words), each with its
# colloquial spellings from the lexicon.
_WH_WORDS = WH_WORDS | frozenset(w for w in colloquial_spellings(WH_WORDS) if len(w) >= 3)
_YES_NO_TAILS = YES_NO | frozenset(w for w in colloquial_spellings(YES_NO) if len(w) >= 2)
_SELF_WORDS = FIRST_PERSON | frozenset(w for w in colloquial_spellings(FIRST_PERSON) if len(w) >= 2)
_REASON_WORDS = (REASON_WORDS | frozenset(w for w in colloquial_spellings(REASON_WORDS) if len(w) >= 2)
                 | REASON_CHAT_SPELLINGS)
_CLAUSE_BREAK = re.compile(r"(\s*[?!]+\s*|\s*,\s*|\.\s+|\s*\n+\s*)")


def _is_question(clause: str, separator: str) -> bool:
    ws = words(clause)
    if "?" in separator or any(w in _WH_WORDS for w in ws):
        return True
    tail = [w for w in ws if w not in PARTICLES]
    return bool(tail) and tail[-1] in _YES_NO_TAILS


def _is_aside(clause: str, after_question: bool) -> bool:
    ws = words(clause)
    if not ws:
        return False
    first = ws[0]
    return (all(w in ACKNOWLEDGEMENTS for w in ws) or first in _SELF_WORDS or first in _REASON_WORDS
            or ws[-1] in TRAILING_REASON or (after_question and first in PURPOSE_WORDS))


def _split_inside(clause: str) -> tuple[str, str]:
    """A question with its reason run on without punctuation ("… apa ya mau konfirmasi …"): the reason starts at a
    reason word right after a wh-word (and its particles) that has the topic before it."""
    tokens = clause.split()
    low = [t.lower().strip("?!.,") for t in tokens]
    for i, w in enumerate(low):
        if i == 0 or w not in _WH_WORDS:
            continue
        j = i + 1
        while j < len(low) and low[j] in PARTICLES:
            j += 1
        if j < len(low) and low[j] in _REASON_WORDS and not any(x in _WH_WORDS for x in low[j:]):
            return " ".join(tokens[:j]), " ".join(tokens[j:])
        # a chat reason word further on ("… brp persen biar aman"); the formal "karena"/"agar" may belong to the
        # question itself ("runtuh karena apa")
        for j in range(i + 1, len(low)):
            if low[j] in CHAT_REASON and not any(x in _WH_WORDS for x in low[j:]):
                return " ".join(tokens[:j]), " ".join(tokens[j:])
        return clause, ""
    return clause, ""


def split_aside(question: str) -> tuple[str, str]:
    """(the question, the aside): the clauses in which a student says who they are ("aku anak farmasi") or why
    they ask ("mau mudik soalnya", "buat daftar beasiswa") split off the question. A clause with a question word,
    a question mark or a yes/no tail ("… gak?") is never an aside, and nothing is split off when no content word
    would be left; then the aside is empty and the question comes back unchanged."""
    parts = _CLAUSE_BREAK.split(question)
    clauses = [(parts[k], parts[k + 1] if k + 1 < len(parts) else "") for k in range(0, len(parts), 2)]
    kept: list[str] = []
    aside: list[str] = []
    seen_question = False
    for text, sep in clauses:
        if not text.strip():
            kept.append(text + sep)
            continue
        if _is_question(text, sep):
            core, rest = _split_inside(text)
            kept.append(core + (sep if not rest else ""))
            if rest:
                aside.append(rest)
            seen_question = True
        elif _is_aside(text, seen_question):
            aside.append(text.strip())
        else:
            kept.append(text + sep)
    core = "".join(kept).strip().rstrip(",").strip()
    if not aside or not content_words(core):
        return question, ""
    return core, " ".join(aside)


MAX_PARTS = 3  # more question marks than this is not a list of questions to answer one by one


def split_questions(message: str) -> list[str]:
    """The questions of a message that asks more than one ("ada klub catur? pelatihnya siapa"), each to be answered
    in turn with the ones before it as context. A part starts after a question mark or a line break, and only where
    a question with a content word of its own begins; anything else (an aside, a greeting) stays with the question
    before it. One part (the message itself) when there is only one such question, or more than MAX_PARTS."""
    pieces = [p for p in re.split(r"(?<=\?)\s+|\s*\n+\s*", message.strip()) if p.strip()]
    parts: list[str] = []
    for piece in pieces:
        starts = _is_question(piece, "?" if piece.rstrip().endswith("?") else "") and bool(content_words(piece))
        if parts and (not starts or not content_words(parts[-1])):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    if len(parts) < 2 or len(parts) > MAX_PARTS:
        return [message]
    return parts


def told_apart(names: Sequence[frozenset[str]], asked: Iterable[str]) -> list[int]:
    """The positions of the ``names`` (each a set of words) that hold a word of ``asked`` no other name holds, in
    order: "robotika" tells "Klub Robotika" apart from "Klub Musik", "klub" tells neither."""
    once = {w for w in set(asked) if sum(w in n for n in names) == 1}
    return [k for k, n in enumerate(names) if n & once]
