"""Composing replies: the standard abstention message and cited extractive/span answers (docs/answers.md, "The finalizer: answer types and cited spans")."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from generation.support import EvidenceSentence
from generation.text import content_words, normalize, words
from generation.types import Reply, Source
from retrieval.language import ANCHOR_STOPWORDS, DAYS, MONTHS, QUESTION_WORDS

__all__ = [
    "ABSTAIN_MESSAGE", "abstain_text", "answer_label", "cite", "combine_parts", "compose_answer", "disagree_by_year", "display", "newest_first",
    "list_item", "list_start", "whole_date",
]

ABSTAIN_MESSAGE = (
    "Maaf, saya belum menemukan informasi yang cukup di situs program studi untuk menjawab pertanyaan itu."
)


def abstain_text(contact_url: str | None = None, related: Sequence[str] = ()) -> str:
    """One standard Indonesian message plus a helpful pointer (contact page, related topics)."""
    parts = [ABSTAIN_MESSAGE]
    if related:
        topics = "; ".join(related[:3])
        # a lecturer's page title ends with its degree's full stop ("…, M.T."): no second one
        parts.append(f"Topik terkait yang mungkin membantu: {topics}" + ("" if topics.endswith(".") else "."))
    if contact_url:
        parts.append(f"Untuk pertanyaan lebih lanjut, silakan hubungi program studi: {contact_url}")
    else:
        parts.append("Untuk pertanyaan lebih lanjut, silakan hubungi sekretariat program studi.")
    return "\n".join(parts)


SAME_TOPIC_JACCARD = 0.4  # hand-set: two dated statements count as versions of one fact above this word overlap
_YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")


def _year(s: EvidenceSentence) -> int | None:
    years = [int(y) for y in _YEAR.findall(s.text)]
    return max(years) if years else None


def disagree_by_year(a: EvidenceSentence, b: EvidenceSentence) -> bool:
    """Two sentences from different pages that date what they say with different years (an older and a newer
    accreditation, last year's and this year's schedule)."""
    ya, yb = _year(a), _year(b)
    if a.url == b.url or ya is None or yb is None or ya == yb:
        return False
    # … about the same thing: most of their words (numbers aside) are shared
    wa = {w for w in content_words(a.text) if not any(ch.isdigit() for ch in w)}
    wb = {w for w in content_words(b.text) if not any(ch.isdigit() for ch in w)}
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= SAME_TOPIC_JACCARD


def newest_first(pair: Sequence[EvidenceSentence]) -> list[EvidenceSentence]:
    return sorted(pair, key=lambda s: -(_year(s) or 0))


# a written date: optional weekday, day or day range, month name, optional year ("Senin, 5 Mei 2025", "11–22 Agustus 2025")
_DATE = re.compile(
    rf"(?:\b(?:{'|'.join(DAYS)}),?\s+)?"
    rf"\b\d{{1,2}}(?:\s*[–-]\s*\d{{1,2}})?\s+(?:{'|'.join(MONTHS)})\b\.?(?:\s+(?:19|20)\d\d\b)?",
    re.IGNORECASE)


def whole_date(span: str, sentence: str) -> str:
    """The whole date a span is part of ("2025" in "pada 12 Maret 2025" → "12 Maret 2025"): the small model often
    copies only the year or the day, which alone misstates the answer. The span itself when it is not inside
    exactly one date of the sentence."""
    key = normalize(span)
    if not key:
        return span
    dates = [m.group(0) for m in _DATE.finditer(sentence)]
    holding = [d for d in dates if re.search(rf"(?<!\w){re.escape(key)}(?!\w)", normalize(d))]
    if len(holding) != 1 or normalize(holding[0]) == key:
        return span
    return holding[0]


_LABEL_LINE = re.compile(r"^[^:]{2,40}:\s+\S")
_DASH_LED = re.compile(r"^\s*[-–—]+\s*")


def display(s: EvidenceSentence) -> str:
    """The sentence as shown: a bare "Label: value" line gets its page title in front, so "Jabatan: Sekretaris
    Program Studi" on a lecturer's page says whose post it is."""
    text = s.text.rstrip()
    dashed = _DASH_LED.match(text)
    if dashed:  # a signature or list fragment ("– Supriyono, M.Kom., Ketua Program Studi") never leads with its dash
        text = text[dashed.end():]
    if (dashed or _LABEL_LINE.match(text)) and s.title and normalize(s.title) not in normalize(text):
        return f"{s.title} — {text}"
    return text


def cite(sentences: Sequence[EvidenceSentence]) -> tuple[list[str], tuple[Source, ...]]:
    """Number the distinct sources of the sentences; returns each sentence with its ``[n]`` marker."""
    order: dict[str, int] = {}
    sources: list[Source] = []
    out = []
    for s in sentences:
        key = s.url or s.chunk_id
        if key not in order:
            order[key] = len(order) + 1
            sources.append(Source(url=s.url, title=s.title or s.url))
        out.append(f"{display(s)} [{order[key]}]")
    return out, tuple(sources)


def answer_label(question: str) -> str:
    """The question's topic as a short label for the direct answer ("Apa gelar lulusan TI?" → "Gelar lulusan TI"):
    its words without question words, fillers and function words, in their own spelling; empty when that leaves
    nothing or more than six words (a label that long reads worse than none)."""
    kept = []
    for raw in re.findall(r"\S+", question):
        core = raw.strip("?!.,;:()\"'")
        low = core.lower()
        if not core or low in ANCHOR_STOPWORDS or low in QUESTION_WORDS:
            continue
        kept.append(core)
    if not kept or len(kept) > 6:
        return ""
    label = " ".join(kept)
    return label[:1].upper() + label[1:]


# A list's item line: a short label, a colon, then what it is ("Komunitas ETH0: jaringan komputer …", "Software
# Engineer: merancang …") or a table row of "Field: value" pairs ("Beasiswa: KIP Kuliah; Penyelenggara: …"). A
# sentence ending in a colon introduces a list and is no item.
_ITEM = re.compile(r"^(?P<label>[^:;]{2,80}?):\s+(?P<rest>\S.*)$")


_LABEL_GLUE = frozenset("dan atau & untuk di ke dari dengan yang of and the".split())
# a sentence that introduces the lines after it: "… profil berikut:", "… antara lain", "… meliputi"
_INTRODUCES = re.compile(r":\s*$|\b(berikut|antara lain|meliputi|yaitu|sebagai berikut)\b", re.IGNORECASE)


def _names_something(label: str) -> bool:
    """A label that is a name ("Software Engineer", "Komunitas ETH0", "Data Science Enthusiast (DSE)"): every
    content word capitalised; one word only when it is no Indonesian word ("Python", not "Catatan")."""
    from retrieval.analyzer import is_dictionary_word

    content = [w for w in label.split() if w.lower() not in _LABEL_GLUE]
    if not content or not all(w[0].isupper() or w[0].isdigit() or w[0] == "(" for w in content):
        return False
    return len(content) > 1 or not is_dictionary_word(content[0].lower().strip("()"))


def list_item(text: str, *, loose: bool = False) -> str | None:
    """The name an item line gives its item, or None for prose: a table row's first value ("Beasiswa: KIP Kuliah;
    Penyelenggara: …"), or a name followed by a description ("Komunitas ETH0: jaringan komputer …"). A field and
    its value ("Jabatan Fungsional: Guru Besar", "NIP: 1968…") describe one record and are no item; neither is a
    step with a colon ("Perhatikan batas SKS: maksimal 24 SKS …"). ``loose``: a description may open with a capital
    ("Komunitas UINUX: Linux dan …"), for a line the caller already knows stands among items."""
    m = _ITEM.match(text.strip())
    # a label inside an open parenthesis or after a comma is a clause of prose ("Kromosom (Greek: chroma; …)",
    # "General Electric Company, atau GE, NYSE: adalah …")
    if m is None or m["label"].count("(") != m["label"].count(")") or "," in m["label"]:
        return None
    pairs = [part.strip() for part in m["rest"].split(";")]
    if len(pairs) > 1 and _ITEM.match(pairs[1]):  # a table row: the label names the column, the value the item
        return pairs[0].rstrip(".") if len(pairs[0]) <= 80 else None
    label, rest = m["label"].strip(), m["rest"]
    return label if (loose or rest[:1].islower()) and _names_something(label) else None


def list_start(texts: Sequence[str], best: int, items: Sequence[str | None] | None = None) -> int:
    """Where a list answer starts when its best line is ``texts[best]`` (lines of one chunk, in page order): an item
    line in a run of at least two items starts the list at the run's first item, or at the sentence before it
    when that sentence introduces the run ("… profil berikut:"). ``items``: each line's item name when the caller
    has them (else ``list_item`` of each line)."""
    if items is None:
        items = [list_item(t) for t in texts]
    if items[best] is None:
        return best
    start, end = best, best
    while start > 0 and items[start - 1] is not None:
        start -= 1
    while end + 1 < len(texts) and items[end + 1] is not None:
        end += 1
    if end == start:  # a lone line with a colon is no list
        return best
    return start - 1 if start > 0 and _INTRODUCES.search(texts[start - 1]) else start


def compose_answer(
    span: str | None, support: Sequence[EvidenceSentence], *, as_list: bool = False, question: str = ""
) -> tuple[str, tuple[Source, ...]]:
    """The direct answer first, then its supporting sentence(s), each with a citation marker: the accepted span
    under the question's topic ("Gelar lulusan TI: S.Kom.") whenever the sentence says more than the span.
    ``as_list``: the lines one per row, cited once per source at the end."""
    if as_list:
        _, sources = cite(support)
        marks = " ".join(f"[{i}]" for i in range(1, len(sources) + 1))
        items = [list_item(s.text) for s in support]
        if sum(item is not None for item in items) < 2:  # prose lines ("Telah lulus minimal 100 SKS.") stay whole
            items = [None] * len(support)
        lines = [f"- {item}" if item is not None else s.text.rstrip() for s, item in zip(support, items, strict=True)]
        return "\n".join(lines) + f" {marks}", sources
    cited, sources = cite(support)
    body = " ".join(cited)
    if len(support) == 2 and disagree_by_year(support[0], support[1]):
        # pages disagree: the newer statement leads, the older one is named as older rather than dropped
        body = f"{cited[0]}\nHalaman lain menyebut informasi yang lebih lama: {cited[1]}"
    if span:
        lead = span.strip().rstrip(".").strip()
        span_n = normalize(lead)
        first = normalize(support[0].text) if support else ""
        if span_n and (not first or len(words(first)) - len(words(span_n)) > 3):
            label = answer_label(question)
            if label and normalize(label) not in span_n and span_n not in normalize(label):
                lead = f"{label}: {lead}"
            return f"{lead}.\n{body}", sources
    return body, sources


_CITATION = re.compile(r"\[(\d+)\]")


def _cited_pieces(text: str) -> list[str]:
    """The pieces of a reply, each up to and with its citation marker (the last piece may have none)."""
    return [p.strip() for p in re.findall(r"[^\[]*?\[\d+\]|[^\[]+$", text, re.DOTALL) if p.strip()]


def combine_parts(parts: Sequence[tuple[str, Reply]]) -> Reply:
    """One reply to a message of several questions (generation.text.split_questions): each answered part in order
    with its citations renumbered over the merged sources, and a line for each part not found on the site. When no
    part was answered, the first part's abstention stands, as for a single question."""
    answered = [r for _, r in parts if not r.abstained]
    if not answered:
        return parts[0][1]
    texts: list[str] = []
    sources: list[Source] = []
    for question, r in parts:
        if r.abstained:
            texts.append(f'Untuk pertanyaan "{question.strip()}", saya belum menemukan informasinya di situs program studi.')
            continue
        number: dict[int, int] = {}
        for k, source in enumerate(r.sources, 1):
            if source not in sources:
                sources.append(source)
            number[k] = sources.index(source) + 1

        def renumber(m: re.Match[str], number: dict[int, int] = number) -> str:
            return f"[{number.get(int(m.group(1)), int(m.group(1)))}]"

        text = _CITATION.sub(renumber, r.answer)
        # what an earlier part already said (both parts found the same sentence) is not said twice
        said = {normalize(c) for t in texts for c in _cited_pieces(t)}
        pieces = _cited_pieces(text)
        fresh = [c for c in pieces if normalize(c) not in said]
        if fresh:
            texts.append(" ".join(fresh) if len(fresh) < len(pieces) else text)
    first = answered[0]
    return dataclasses.replace(first, answer="\n\n".join(texts), sources=tuple(sources),
                               highlights=tuple(h for r in answered for h in r.highlights),
                               confidence=min(float(r.confidence) for r in answered),
                               iterations=sum(int(r.iterations) for _, r in parts))
