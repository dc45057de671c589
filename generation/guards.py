"""Degeneration detector: repeated n-grams, prompt/template echo, system-prompt fragments, wrong language, empty.

The thesis's TinyLlama looped in ~20% of answers and leaked its template in ~30% (docs/answers.md, "Degeneration and template leaks"); nothing the
detector flags may reach a student.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from generation.prompts import SYSTEM_PROMPT, TEMPLATE_MARKERS
from generation.text import words

__all__ = ["Verdict", "check_degenerate", "is_template_leak"]

# Frequent Indonesian function words, and frequent English ones, for a cheap language check.
_ID_COMMON = frozenset(
    "yang dan di ke dari untuk dengan pada adalah ini itu dalam atau tidak akan oleh sebagai juga ada bisa "
    "program studi mahasiswa dosen kuliah semester".split()
)
_EN_COMMON = frozenset(
    "the and of to is in that for with as was on are be this by it from at an have which not you your can will "
    "would should".split()
)
_CODE_RE = re.compile(r"[{}<>\\]|```|https?://\S+\s*\S*https?://")


@dataclass(frozen=True, slots=True)
class Verdict:
    degenerate: bool
    reason: str = ""
    template_leak: bool = False


def is_template_leak(text: str) -> bool:
    lowered = text.lower()
    if any(m.lower() in lowered for m in TEMPLATE_MARKERS):
        return True
    # a run of 6+ words from the system prompt
    sys_words = words(SYSTEM_PROMPT)
    out_words = " ".join(words(text))
    for i in range(len(sys_words) - 5):
        if " ".join(sys_words[i : i + 6]) in out_words:
            return True
    return False


def _repeated_ngrams(tokens: list[str], n: int) -> bool:
    if len(tokens) < n * 2:
        return False
    counts = Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    top = counts.most_common(1)[0][1]
    # a loop repeats a phrase over much of the text; natural text repeats "program studi" now and then
    return top >= 3 and top * n / len(tokens) >= 0.4


def check_degenerate(text: str, *, prompt: str = "", context_words: frozenset[str] = frozenset()) -> Verdict:
    """Classify one generated text. ``prompt`` is the template part of the prompt (examples, instructions, not the
    context): an 8-word stretch copied from it is an echo. ``context_words``
    lets a span that is copied from the (Indonesian) context pass the language check even if it is a name."""
    stripped = text.strip()
    if not stripped or not any(ch.isalnum() for ch in stripped):
        return Verdict(True, "empty")
    if is_template_leak(stripped):
        return Verdict(True, "template_echo", template_leak=True)
    tokens = words(stripped)
    if not tokens:
        return Verdict(True, "empty")
    if prompt and len(tokens) >= 8:
        p = " ".join(words(prompt))
        window = 8
        for i in range(len(tokens) - window + 1):
            if " ".join(tokens[i : i + window]) in p:
                return Verdict(True, "prompt_echo", template_leak=True)
    for n in (1, 2, 3, 4):
        if n == 1:
            counts = Counter(t for t in tokens if len(t) > 2)
            if counts and counts.most_common(1)[0][1] >= 4 and counts.most_common(1)[0][1] / len(tokens) > 0.3:
                return Verdict(True, "repeated_ngram")
        elif _repeated_ngrams(tokens, n):
            return Verdict(True, "repeated_ngram")
    if re.search(r"(.)\1{5,}", stripped) or re.search(r"(\D{2,4})\1{3,}", stripped):
        return Verdict(True, "repeated_chars")
    if _CODE_RE.search(stripped):
        return Verdict(True, "markup")
    if len(tokens) >= 4:
        en = sum(t in _EN_COMMON for t in tokens)
        idn = sum(t in _ID_COMMON for t in tokens)
        in_context = sum(t in context_words for t in tokens)
        if en >= 2 and en > idn and in_context < len(tokens) * 0.6:
            return Verdict(True, "wrong_language")
    return Verdict(False)
