"""Small talk in front of the answerer (``ChatService``'s side of ``generation.smalltalk``): a greeting, thanks,
goodbye… gets its short reply at once, and a small-talk clause before a question is cut off the question."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from generation.smalltalk import SmallTalk
from handlers import texts
from handlers.replies import Reply, UserRef

__all__ = ["SmallTalkDetector", "names_a_choice", "smalltalk_reply", "without_smalltalk_lead"]

# the service's own logger, so that these lines read as they did when this code was part of ChatService
logger = logging.getLogger("handlers.chat")

# a short clause before a comma, full stop or exclamation mark and the rest of the message ("halo min, …", "ok. …")
_LEAD_CLAUSE = re.compile(r"^\s*([^,.!?\n]{1,40}?)\s*[,.!]+\s+(?=\S)")


class SmallTalkDetector(Protocol):
    """Tells small talk from questions (``generation.smalltalk.SmallTalkClassifier``)."""

    def classify(self, text: str) -> SmallTalk: ...


def names_a_choice(text: str, choices: Sequence[str]) -> bool:
    """The message is one of ``choices`` or shares a word of three letters or more with one (a surname for
    "Dr. Budi Santoso, M.T.")."""
    words = {w for w in re.findall(r"\w+", text.casefold()) if len(w) >= 3}
    return any(text.strip().casefold() == c.strip().casefold() or words & set(re.findall(r"\w+", c.casefold()))
               for c in choices)


async def smalltalk_reply(detector: SmallTalkDetector | None, user: UserRef, text: str,
                          offered: Callable[[], Awaitable[Sequence[str]]]) -> Reply | None:
    """A greeting, thanks, goodbye… gets its short reply at once, the way a command's is shown: no retrieval, no
    answer reused, no sources or 👍/👎, and nothing stored (not in the history the pipeline reads for
    follow-ups, not in the question log). None for a question, for a message that names one of the user's
    pending ask-back choices (``offered()``, awaited only for small talk; a pick that names a choice goes to the
    pipeline whatever it looks like), and when the classifier fails."""
    if detector is None:
        return None
    try:
        decision = detector.classify(text)
    except Exception:  # boundary: the classifier is a model; any failure of it only skips the small-talk reply
        logger.exception("the small-talk classifier failed; the message goes to the answerer")
        return None
    if not decision.is_smalltalk:
        return None
    if names_a_choice(text, await offered()):
        return None
    logger.info("small talk channel=%s intent=%s p=%.2f", user.channel, decision.intent, decision.confidence)
    return Reply(texts.smalltalk_reply(decision.intent), kind="smalltalk")


def without_smalltalk_lead(detector: SmallTalkDetector | None, text: str) -> str:
    """"pagi kak, pkl bisa diambil kapan?" → "pkl bisa diambil kapan?": a clause before the first comma or full
    stop that the classifier takes for small talk (a greeting, "ok", "btw"), followed by a question, is
    not part of the question (at most two such clauses). The message is unchanged when the classifier fails."""
    if detector is None:
        return text
    for _ in range(2):
        lead = _LEAD_CLAUSE.match(text)
        if lead is None:
            break
        rest = text[lead.end():].strip()
        try:
            if not detector.classify(lead.group(1)).is_smalltalk or detector.classify(rest).is_smalltalk:
                break
        except Exception:  # boundary: the classifier is a model; any failure of it leaves the message whole
            logger.exception("the small-talk classifier failed; the message goes to the answerer whole")
            break
        text = rest
    return text
