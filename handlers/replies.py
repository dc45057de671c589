"""The two values every part of ``handlers`` passes around: who is talking (``UserRef``) and what goes back
(``Reply``). A module of their own so that the helpers of ``handlers.chat`` can build replies without importing the
service; ``handlers.chat`` re-exports both."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generation.types import Answer, Source

__all__ = ["Reply", "UserRef"]


@dataclass(frozen=True, slots=True)
class UserRef:
    """Who is talking: the channel and the user's id on it (Telegram user id, WhatsApp number, web session)."""

    channel: str
    user_id: str
    display: str = field(default="", compare=False)

    @property
    def key(self) -> str:
        return f"{self.channel}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class Reply:
    """What to send back. ``kind``: answer, smalltalk, command, notice, rate_limited, error.

    ``feedback_id`` is the answer's trace id when the reply should carry 👍/👎 buttons.
    ``choices`` (kind ``askback``): the candidates of an ambiguous follow-up, which each channel shows as buttons; a
    press sends the choice's text like a typed message (docs/channels.md, "Asking back").
    """

    text: str
    kind: str = "command"
    answer: Answer | None = None
    sources: tuple[Source, ...] = ()
    feedback_id: str = ""
    choices: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "reply": self.text,
            "kind": self.kind,
            "sources": [s.as_json() for s in self.sources],
            "feedback_id": self.feedback_id,
        }
        if self.answer is not None:
            data.update(self.answer.as_json())
            data["reply"] = self.text
        data["choices"] = list(self.choices)
        return data
