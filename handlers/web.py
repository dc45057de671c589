"""Web chat and JSON API logic (the aiohttp routes in ``bot/server.py`` call these with parsed JSON).

``/api/chat`` accepts ``{"message": …, "session_id": …}`` and the thesis's body ``{"query": …}`` (also
``"question"``); the reply carries the answer, its sources and a ``usage`` block like the thesis's response.
``/api/retrieve`` accepts ``{"query", "k"}`` and the thesis's ``{"query", "top_k"}``; its query is capped like a
question (``MAX_QUESTION_CHARS``), so no request can hold the embedder for long.

:class:`ClientLimits` guards all three per client address (the server works the address out): a request budget per
minute, shared with every replica through the per-user state, and a cap on the requests one client has in progress
in this process; past either, a 429 with ``Retry-After`` and a polite Indonesian ``reply`` the page shows.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from handlers import texts
from handlers.chat import ChatService, UserRef
from handlers.errors import ChannelError
from storage.privacy import clean_incoming

__all__ = ["ClientLimits", "WebApi", "WebApiError"]

logger = logging.getLogger(__name__)

_SESSION_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SearchFunction = Callable[[str, int], Awaitable[list[dict[str, Any]]]]


class WebApiError(ChannelError):
    """A request the API refuses; ``status`` is the HTTP status to answer with, ``reply`` the Indonesian sentence for
    the student (when the page should show one) and ``retry_after`` the seconds to wait (429)."""

    def __init__(self, status: int, message: str, *, reply: str = "", retry_after: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reply = reply
        self.retry_after = retry_after


class ClientLimits:
    """Per client address: at most ``per_minute`` requests a minute (counted in ``state``, Redis when configured, so
    every replica shares the budget) and at most ``max_in_flight`` in progress in this process at once."""

    def __init__(self, state: Any, *, per_minute: int, max_in_flight: int) -> None:
        self.state = state  # storage.dedup.UserState
        self.per_minute = per_minute
        self.max_in_flight = max_in_flight
        self._in_flight: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def admit(self, client: str) -> AsyncIterator[None]:
        """Hold one of ``client``'s slots for the body of the ``async with``; WebApiError(429) when none is left."""
        if self._in_flight.get(client, 0) >= self.max_in_flight:
            logger.info("web request shed: this client already has %d in progress", self.max_in_flight)
            raise WebApiError(429, f"too many requests in progress from this address (at most {self.max_in_flight})",
                              reply=texts.BUSY_CLIENT, retry_after=2)
        self._in_flight[client] = self._in_flight.get(client, 0) + 1  # taken before the first await: no race
        try:
            allowed, reset = await self.state.hit_rate(f"web-client:{client}", self.per_minute)
            if not allowed:
                logger.info("web rate limit hit for a client address")
                raise WebApiError(429, f"rate limit: at most {self.per_minute} requests a minute from one address",
                                  reply=texts.RATE_LIMITED.format(seconds=max(1, reset)), retry_after=max(1, reset))
            yield
        finally:
            left = self._in_flight[client] - 1
            if left:
                self._in_flight[client] = left
            else:
                del self._in_flight[client]


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
        self.max_query_chars = service.max_question_chars  # one cap for questions and retrieve queries

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
        query = clean_incoming(_first_text(body, "query", "question", "message")).strip()  # as a question is
        if not query:
            raise WebApiError(400, 'the JSON body needs a non-empty "query" string')
        if len(query) > self.max_query_chars:
            raise WebApiError(413, f'"query" is longer than {self.max_query_chars} characters; shorten it',
                              reply=texts.TOO_LONG.format(limit=self.max_query_chars))
        k = self._k(body.get("k", body.get("top_k", 5)))
        try:
            hits = await self.search(query, k)
        except Exception as error:  # boundary: no index yet, or it could not be read: the route is unavailable, not broken
            logger.warning("retrieval failed for /api/retrieve: %s", error)
            raise WebApiError(503, "retrieval is not available right now: build the index first "
                                   "(python -m bot reindex) or try again") from None
        return {"query": query, "k": k, "hits": hits}

    def _k(self, raw: object) -> int:
        """``k`` as a whole number in 1..max_k: an int, an integral finite float, or ASCII digits; else a 400."""
        refusal = WebApiError(400, f'"k" must be a whole number between 1 and {self.max_k}')
        if isinstance(raw, str) and raw.strip().isascii() and raw.strip().isdigit() and len(raw.strip()) <= 6:
            raw = int(raw.strip())
        if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
            raw = int(raw)
        if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= self.max_k:
            raise refusal
        return raw
