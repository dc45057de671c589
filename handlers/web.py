"""Web chat and JSON API logic (the aiohttp routes in ``bot/server.py`` call these with parsed JSON).

``/api/chat`` accepts ``{"message": …, "session_id": …}`` and the thesis's body ``{"query": …}`` (also
``"question"``); the reply carries the answer, its sources and a ``usage`` block like the thesis's response.
``/api/retrieve`` accepts ``{"query", "k"}`` and the thesis's ``{"query", "top_k"}``.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from handlers.chat import ChatService, UserRef

__all__ = ["WebApi", "WebApiError"]

logger = logging.getLogger(__name__)

_SESSION_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SearchFunction = Callable[[str, int], Awaitable[list[dict[str, Any]]]]


class WebApiError(Exception):
    """A request the API refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _first_text(body: dict[str, Any], *names: str) -> str:
    for name in names:
        value = body.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


class WebApi:
    """Channel adapter for the web page and JSON clients."""

    def __init__(
        self, service: ChatService, search: SearchFunction | None = None, *, max_k: int = 20, metrics: Any = None
    ) -> None:
        self.service = service
        self.search = search
        self.max_k = max_k
        self.metrics = metrics  # bot.metrics.Metrics or None

    async def chat(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise WebApiError(400, 'send a JSON object such as {"message": "Siapa ketua prodi?"}')
        text = _first_text(body, "message", "query", "question", "text")
        if not text:
            raise WebApiError(400, 'the JSON body needs a non-empty "message" (or "query") string')
        session = body.get("session_id")
        if not isinstance(session, str) or not _SESSION_RE.match(session):
            session = "anon-" + secrets.token_hex(8)
        user = UserRef("web", session)
        if self.metrics is not None:
            self.metrics.message("web")
        reply = await self.service.handle(user, text)
        if reply.answer is not None and self.metrics is not None:
            self.metrics.answer("web", reply.answer)
        data = reply.as_json()
        data["session_id"] = session
        if reply.answer is not None:
            data["answer"] = reply.answer.answer
            trace = reply.answer.trace
            tokens = {"prompt_tokens": 0, "completion_tokens": 0}
            for step in getattr(trace, "steps", []) or []:
                for key in tokens:
                    value = step.get(key) if isinstance(step, dict) else None
                    if isinstance(value, int | float):
                        tokens[key] += int(value)
            data["usage"] = {
                **tokens,
                "total_tokens": tokens["prompt_tokens"] + tokens["completion_tokens"],
                "latency_ms": round(float(reply.answer.latency_ms), 1),
            }
        else:
            data["answer"] = reply.text
        return data

    async def feedback(self, body: Any) -> dict[str, Any]:
        """``{"session_id", "feedback_id", "value": "up"|"down"}`` → stores the vote with the answer's trace id."""
        if not isinstance(body, dict):
            raise WebApiError(400, 'send {"session_id": …, "feedback_id": …, "value": "up" or "down"}')
        session = body.get("session_id")
        if not isinstance(session, str) or not _SESSION_RE.match(session):
            raise WebApiError(400, '"session_id" must be the session the answer was given in')
        value = body.get("value")
        if value not in ("up", "down"):
            raise WebApiError(400, '"value" must be "up" or "down"')
        trace_id = body.get("feedback_id")
        trace_id = trace_id if isinstance(trace_id, str) else ""
        reply = await self.service.feedback(UserRef("web", session), trace_id[:128], value)
        return {"stored": reply.kind != "notice", "reply": reply.text}

    async def retrieve(self, body: Any) -> dict[str, Any]:
        if self.search is None:
            raise WebApiError(503, "retrieval is not available: build the index first (python -m bot index)")
        if not isinstance(body, dict):
            raise WebApiError(400, 'send a JSON object such as {"query": "jadwal kuliah", "k": 5}')
        query = _first_text(body, "query", "question", "message")
        if not query:
            raise WebApiError(400, 'the JSON body needs a non-empty "query" string')
        raw_k = body.get("k", body.get("top_k", 5))
        if isinstance(raw_k, bool) or not isinstance(raw_k, int | float | str):
            raise WebApiError(400, f'"k" must be a whole number between 1 and {self.max_k}')
        try:
            k = int(raw_k)
        except ValueError:
            raise WebApiError(400, f'"k" must be a whole number between 1 and {self.max_k}') from None
        if not 1 <= k <= self.max_k:
            raise WebApiError(400, f'"k" must be a whole number between 1 and {self.max_k}')
        hits = await self.search(query, k)
        return {"query": query, "k": k, "hits": hits}
