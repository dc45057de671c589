"""Announcement topics: what a student subscribes to (``/langganan beasiswa``) and whether an announcement is about
it. Both sides go through the query normaliser students' questions go through (``retrieval.normalize``), so
shorthand meets its long form: "bsw" and "beasiswa", "krs" and "kartu rencana studi", "sempro" and "seminar
proposal".

- :func:`normalize_topic` is the stored form of a topic: the normaliser's formal words (``expand=False``), lower
  case, fillers ("dong", "kak") dropped. "" when nothing is left.
- :func:`topic_matches` says whether an announcement text is about a stored topic: every word of the topic occurs
  in the text, or every word of the long form the normaliser adds to it ("krs" → "kartu rencana studi"). The text
  is normalised with expansions, so a text that writes the shorthand matches the long-form topic too.
"""

from __future__ import annotations

import re
import threading

from retrieval.language import FILLERS
from retrieval.normalize import QueryNormalizer
from storage.announcements import ALL as ALL_TOPICS
from storage.announcements import MAX_TOPIC_CHARS

__all__ = ["ALL_TOPICS", "MAX_TOPIC_CHARS", "normalize_topic", "topic_matches", "topic_words"]

_WORD = re.compile(r"\w+", re.UNICODE)
_normalizer: QueryNormalizer | None = None
_lock = threading.Lock()


def _the_normalizer() -> QueryNormalizer:
    """The site-independent normaliser (glossary, colloquial lexicon): the same for every process and run."""
    global _normalizer
    if _normalizer is None:
        with _lock:
            if _normalizer is None:
                _normalizer = QueryNormalizer()
    return _normalizer


def topic_words(text: str, *, expand: bool = False) -> list[str]:
    """The lower-case words of ``text`` after the question normalisation, fillers dropped."""
    normalized = _the_normalizer().normalize(text or "", expand=expand)
    return [w for w in _WORD.findall(normalized.casefold()) if w not in FILLERS]


def normalize_topic(text: str) -> str:
    """The stored form of a topic typed by a student ("Bsw dong" → "beasiswa"); "" when no word is left."""
    return " ".join(topic_words(text))


def topic_matches(topic: str, text: str) -> bool:
    """Whether ``text`` (an announcement's title and lead) is about ``topic`` (a stored topic, or ``all``)."""
    if topic == ALL_TOPICS:
        return True
    short = topic_words(topic)
    if not short:
        return False
    words = set(topic_words(text, expand=True))
    if set(short) <= words:
        return True
    long = [w for w in topic_words(topic, expand=True) if w not in short]
    return bool(long) and set(long) <= words
