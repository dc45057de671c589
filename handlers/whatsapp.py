"""WhatsApp Cloud API adapter: signature and subscription checks, payload parsing, processing, Graph API sending.

The HTTP route lives in ``bot/server.py``; it hands the raw body here. ``WhatsAppWebhook.accept`` checks the
signature, parses JSON of any shape into ``InboundMessage`` records, schedules their processing in background tasks
(references kept, drained on shutdown) and returns at once, so Meta gets its 200 quickly.

Message policy: text → answer (``/command`` → command); an interactive/template button reply whose id is ``fb:…``
→ feedback; reactions and system messages → ignored; media, location, contacts and anything else → a polite
"text only" notice. Statuses, errors and other webhook fields → ignored. Every message id is deduplicated for a
day, so a redelivery gets one reply. Free-form messages are only sent inside the 24-hour customer-service window
that starts with the user's last inbound message; outside it nothing is sent and a line is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from handlers import texts
from handlers.chat import ChatService, Reply, UserRef
from handlers.formatting import format_sources_plain, split_message
from storage.dedup import MessageDeduper, UserState

__all__ = [
    "GraphClient",
    "GraphConfig",
    "InboundMessage",
    "WhatsAppWebhook",
    "parse_payload",
    "verify_signature",
    "verify_subscription",
]

logger = logging.getLogger(__name__)

TEXT_LIMIT = 4096
SERVICE_WINDOW_SECONDS = 24 * 3600
FEEDBACK_PROMPT = "Apakah jawaban ini membantu?"


def verify_signature(app_secret: str, body: bytes, header: str | None) -> bool:
    """``X-Hub-Signature-256: sha256=<hex>`` is the HMAC-SHA256 of the raw body with the app secret."""
    if not app_secret or not header or not isinstance(header, str):
        return False
    algorithm, _, given = header.strip().partition("=")
    if algorithm.lower() != "sha256" or not given:
        return False
    expected = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), given.strip().lower().encode())


def verify_subscription(query: Mapping[str, str], verify_token: str) -> tuple[int, str]:
    """The GET handshake: echo ``hub.challenge`` when mode is subscribe and the token matches, else 403."""
    mode = query.get("hub.mode", "")
    token = query.get("hub.verify_token", "")
    challenge = query.get("hub.challenge", "")
    if mode == "subscribe" and verify_token and hmac.compare_digest(token.encode(), verify_token.encode()):
        return 200, challenge
    return 403, "verification failed"


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One user message from a webhook. ``kind``: text, feedback, ignore, unsupported."""

    message_id: str
    sender: str
    kind: str
    text: str = ""
    feedback_value: str = ""
    feedback_trace: str = ""
    msg_type: str = ""
    timestamp: float = 0.0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else (str(value) if isinstance(value, int | float) else "")


def _feedback_from_id(button_id: str) -> tuple[str, str] | None:
    parts = button_id.split(":", 2)
    if len(parts) >= 2 and parts[0] == "fb" and parts[1] in ("up", "down"):
        return parts[1], parts[2] if len(parts) == 3 else ""
    return None


def _classify(message: dict[str, Any]) -> InboundMessage | None:
    message_id = _str(message.get("id"))
    sender = _str(message.get("from"))
    if not message_id or not sender:
        return None
    msg_type = _str(message.get("type"))
    try:
        ts = float(_str(message.get("timestamp")) or 0)
    except ValueError:
        ts = 0.0
    base = {"message_id": message_id, "sender": sender, "msg_type": msg_type, "timestamp": ts}
    if msg_type == "text":
        body = _str(_dict(message.get("text")).get("body"))
        return InboundMessage(kind="text", text=body, **base)
    if msg_type == "interactive":
        interactive = _dict(message.get("interactive"))
        reply = _dict(interactive.get("button_reply")) or _dict(interactive.get("list_reply"))
        feedback = _feedback_from_id(_str(reply.get("id")))
        if feedback:
            return InboundMessage(kind="feedback", feedback_value=feedback[0], feedback_trace=feedback[1], **base)
        title = _str(reply.get("title"))
        return InboundMessage(kind="text", text=title, **base) if title else InboundMessage(kind="ignore", **base)
    if msg_type == "button":
        button = _dict(message.get("button"))
        feedback = _feedback_from_id(_str(button.get("payload")))
        if feedback:
            return InboundMessage(kind="feedback", feedback_value=feedback[0], feedback_trace=feedback[1], **base)
        text = _str(button.get("text"))
        return InboundMessage(kind="text", text=text, **base) if text else InboundMessage(kind="ignore", **base)
    if msg_type in ("reaction", "system", "ephemeral", "request_welcome"):
        return InboundMessage(kind="ignore", **base)
    return InboundMessage(kind="unsupported", **base)


def parse_payload(payload: Any) -> list[InboundMessage]:
    """Every user message in a webhook payload of any shape; statuses, errors and other fields are skipped."""
    out: list[InboundMessage] = []
    for entry in _list(_dict(payload).get("entry")):
        for change in _list(_dict(entry).get("changes")):
            change = _dict(change)
            if change.get("field", "messages") != "messages":
                continue
            for message in _list(_dict(change.get("value")).get("messages")):
                parsed = _classify(_dict(message))
                if parsed is not None:
                    out.append(parsed)
    return out


@dataclass(frozen=True, slots=True)
class GraphConfig:
    base_url: str
    phone_number_id: str
    token: str
    timeout_seconds: float = 10.0
    retries: int = 3
    backoff_seconds: float = 0.5


class GraphSendError(Exception):
    """The Graph API refused a message (4xx other than 429) or kept failing after the retries."""


class GraphClient:
    """Sends through ``POST {base}/{phone_number_id}/messages`` with a timeout and retries on 429/5xx."""

    def __init__(self, config: GraphConfig) -> None:
        self.config = config
        self._session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return f"{self.config.base_url.rstrip('/')}/{self.config.phone_number_id}/messages"

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.config.timeout_seconds),
                headers={"Authorization": f"Bearer {self.config.token}"},
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, payload: dict[str, Any]) -> dict[str, Any]:
        session = self._get_session()
        delay = self.config.backoff_seconds
        last_error = ""
        for attempt in range(self.config.retries + 1):
            try:
                async with session.post(self.url, json=payload) as response:
                    text = await response.text()
                    if response.status < 300:
                        try:
                            data = json.loads(text) if text else {}
                        except ValueError:
                            data = {}
                        return data if isinstance(data, dict) else {}
                    last_error = f"HTTP {response.status}: {text[:200]}"
                    if response.status != 429 and response.status < 500:
                        raise GraphSendError(f"Graph API refused the message ({last_error})")
                    retry_after = response.headers.get("Retry-After", "")
                    if retry_after.isdigit():
                        delay = min(float(retry_after), 30.0)
            except (aiohttp.ClientError, TimeoutError) as error:
                last_error = f"{type(error).__name__}: {error}"
            if attempt < self.config.retries:
                logger.warning("Graph API call failed (%s); retry %d in %.1fs", last_error, attempt + 1, delay)
                await asyncio.sleep(delay)
                delay *= 2
        raise GraphSendError(f"Graph API kept failing after {self.config.retries + 1} attempts ({last_error})")

    async def send_text(self, to: str, body: str) -> dict[str, Any]:
        return await self.post(
            {
                "messaging_product": "whatsapp",
                "recipient_type": "individual",
                "to": to,
                "type": "text",
                "text": {"preview_url": False, "body": body},
            }
        )

    async def send_feedback_buttons(self, to: str, trace_id: str, body: str = FEEDBACK_PROMPT) -> dict[str, Any]:
        buttons = [
            {"type": "reply", "reply": {"id": f"fb:up:{trace_id}"[:256], "title": "👍 Membantu"}},
            {"type": "reply", "reply": {"id": f"fb:down:{trace_id}"[:256], "title": "👎 Kurang"}},
        ]
        return await self.post(
            {
                "messaging_product": "whatsapp",
                "recipient_type": "individual",
                "to": to,
                "type": "interactive",
                "interactive": {"type": "button", "body": {"text": body[:1024]}, "action": {"buttons": buttons}},
            }
        )

    async def mark_read(self, message_id: str, *, typing: bool = True) -> dict[str, Any]:
        payload: dict[str, Any] = {"messaging_product": "whatsapp", "status": "read", "message_id": message_id}
        if typing:
            payload["typing_indicator"] = {"type": "text"}
        return await self.post(payload)


class WhatsAppWebhook:
    """Checks, parses and processes webhook deliveries; replies through a ``GraphClient``."""

    def __init__(
        self,
        service: ChatService,
        graph: GraphClient,
        deduper: MessageDeduper,
        state: UserState,
        *,
        app_secret: str,
        verify_token: str,
        metrics: Any = None,
        typing_interval: float = 20.0,
    ) -> None:
        self.service = service
        self.typing_interval = typing_interval
        self.graph = graph
        self.deduper = deduper
        self.state = state
        self.app_secret = app_secret
        self.verify_token = verify_token
        self.metrics = metrics
        self._tasks: set[asyncio.Task[None]] = set()

    def verify(self, query: Mapping[str, str]) -> tuple[int, str]:
        return verify_subscription(query, self.verify_token)

    def accept(self, body: bytes, signature: str | None) -> tuple[int, str]:
        """Check and schedule one POST delivery; returns the HTTP status and a short body."""
        if not verify_signature(self.app_secret, body, signature):
            logger.warning("WhatsApp webhook: bad or missing X-Hub-Signature-256; delivery refused")
            return 403, "invalid signature"
        try:
            payload = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return 400, "body is not JSON"
        messages = parse_payload(payload)
        for message in messages:
            task = asyncio.get_running_loop().create_task(self._process_safely(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return 200, "ok"

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, grace_seconds: float = 30.0) -> None:
        """Wait for background processing to finish (shutdown); cancel what is left after ``grace_seconds``."""
        if not self._tasks:
            return
        tasks = list(self._tasks)
        _done, not_done = await asyncio.wait(tasks, timeout=grace_seconds)
        for task in not_done:
            task.cancel()
        if not_done:
            await asyncio.gather(*not_done, return_exceptions=True)

    async def close(self) -> None:
        await self.drain()
        await self.graph.close()

    async def _process_safely(self, message: InboundMessage) -> None:
        try:
            await self.process(message)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("WhatsApp message %s could not be processed", message.message_id)

    async def process(self, message: InboundMessage) -> None:
        """Handle one inbound message (deduplicated)."""
        if not await self.deduper.first_time(f"wa:{message.message_id}"):
            logger.info("WhatsApp message %s already handled; redelivery ignored", message.message_id)
            return
        user = UserRef("whatsapp", message.sender)
        if message.kind == "ignore":
            return
        # The window opens with the message's own time: a delivery Meta retried for days stays outside it.
        now = time.time()
        sent_at = message.timestamp if 0 < message.timestamp <= now + 300 else now
        previous = await self.state.last_inbound(user.key)
        inbound = max(sent_at, previous or 0.0)
        await self.state.touch_inbound(user.key, inbound)
        if self.metrics is not None:
            self.metrics.message("whatsapp")
        if message.kind == "feedback":
            reply = await self.service.feedback(user, message.feedback_trace, message.feedback_value)
        elif message.kind == "unsupported":
            reply = Reply(texts.TEXT_ONLY, kind="notice")
        else:
            reply = await self._answer_with_typing(user, message, inbound)
            if reply.answer is not None and self.metrics is not None:
                self.metrics.answer("whatsapp", reply.answer)
        await self.send_reply(user, reply, last_inbound=inbound)

    async def _answer_with_typing(self, user: UserRef, message: InboundMessage, inbound: float) -> Reply:
        """Mark read + typing, re-sent while the answer takes long (WhatsApp drops it after ~25 s); tell a queued
        user their position once."""
        told = False

        async def keep_typing() -> None:
            while True:
                await self._typing(message.message_id)
                await asyncio.sleep(self.typing_interval)

        async def on_position(position: int) -> None:
            nonlocal told
            if position >= 1 and not told:
                told = True
                await self.send_reply(user, Reply(texts.QUEUED.format(position=position), kind="notice"),
                                      last_inbound=inbound)

        typing = asyncio.create_task(keep_typing())
        try:
            return await self.service.handle(user, message.text, on_position=on_position)
        finally:
            typing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await typing

    async def _typing(self, message_id: str) -> None:
        try:
            await self.graph.mark_read(message_id, typing=True)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a missing read receipt must not cost the reply
            logger.warning("WhatsApp mark-as-read failed: %s", error)

    async def within_window(self, user: UserRef, last_inbound: float | None = None) -> bool:
        """Is the user's 24-hour customer-service window open? ``last_inbound`` skips the store lookup."""
        last = last_inbound if last_inbound is not None else await self.state.last_inbound(user.key)
        return last is not None and time.time() - last < SERVICE_WINDOW_SECONDS

    async def send_reply(self, user: UserRef, reply: Reply, *, last_inbound: float | None = None) -> None:
        """Send a Reply as text parts (sources appended) plus 👍/👎 buttons for answers, inside the window only."""
        if not await self.within_window(user, last_inbound):
            logger.warning("WhatsApp: last inbound message of a user is older than 24 h; free-form reply not sent")
            return
        body = reply.text
        if reply.kind == "answer" and reply.sources:
            body = f"{body}\n\n{format_sources_plain(reply.sources)}"
        for part in split_message(body, TEXT_LIMIT):
            await self.graph.send_text(user.user_id, part)
        if reply.feedback_id:
            await self.graph.send_feedback_buttons(user.user_id, reply.feedback_id)
