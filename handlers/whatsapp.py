"""WhatsApp Cloud API adapter on pywa (``pywa_async`` 4.5): signature and subscription checks, typed updates, sending.

The HTTP route stays on the bot's shared aiohttp server (``bot/channels/whatsapp.py``); it hands the raw body and
the ``X-Hub-Signature-256`` header to ``WhatsAppWebhook.accept``. pywa runs without a web server of its own (no
``server``, no callback URL), so there is no second web framework. ``accept`` checks the signature with pywa's
validator, splits the delivery into one update per user message, reads each with pywa's typed updates
(``Message``, ``CallbackButton``, ``CallbackSelection``, ``EditedMessage``), schedules their processing in
background tasks (references kept, drained on shutdown) and returns at once, so Meta gets its 200 quickly.
Sending goes through ``pywa_async.WhatsApp`` on its own ``httpx.AsyncClient`` (timeout; base URL
``WHATSAPP_GRAPH_BASE_URL``) with our retries on 429/5xx/network errors.

Why not pywa's ``webhook_update_handler``: ``accept`` must answer synchronously, and that handler is a coroutine that
reads only ``messages[0]`` and ``contacts[0]`` of a delivery, keeps its own in-process duplicate filter, and needs
``contacts[].user_id`` (the business-scoped user id Meta only adds since 2026). So each message gets its own
envelope here with its own contact (filled in when Meta left it out), and our Redis dedup stays the only one.
Its challenge handler is not used either: ``verify_subscription`` also checks ``hub.mode`` and compares in constant
time.

Message policy:
- text → answer (``/command`` → command); an edited text (``type: edit``) → the edited text is answered once, the
  edit deduplicated on its own id;
- a button or list reply whose id is ``fb:up|down:<trace>`` (read by ``handlers.chat.parse_feedback_id``, the
  ids under an answer built by ``feedback_ids``, as on every channel) → feedback; a reply button under an
  ask-back (``pick:<text>``, ``handlers.choices``) → the choice's full text is the user's text (``pick:<index>``, for
  a choice longer than the id allows, is looked up in the user's last ask-back; a stale one gets a polite note); any
  other button or list reply → its title is the user's text;
- reactions → ignored politely (no reply, a debug line); system, welcome-request, deletion and other
  interactive events → ignored;
- voice, audio, location, images, documents, stickers, contacts, orders, unknown types, and messages pywa cannot
  read → a polite "text only" notice, so nothing a student sends goes unanswered.
Statuses, errors and other webhook fields → ignored. Every message id is deduplicated for a day, so a redelivery
gets one reply. Free-form messages are only sent inside the 24-hour customer-service window that starts with the
user's last inbound message; outside it nothing is sent and a line is logged. Rate limits are the ChatService's.
While a question is answered, ``handlers.progress.answer_with_progress`` re-sends mark-read + typing every
``typing_interval`` seconds (WhatsApp drops the indicator after about 25 s) and tells a queued user their position.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import logging
import string
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import httpx
from pywa import utils as pywa_utils
from pywa_async.client import WhatsApp
from pywa_async.errors import PywaUnknownEnumMemberWarning, WhatsAppError
from pywa_async.types.base_update import RawUpdate
from pywa_async.types.callback import Button, CallbackButton, CallbackSelection
from pywa_async.types.message import EditedMessage, Message
from pywa_async.types.others import MessageType

from handlers import texts
from handlers.chat import ChatService, Reply, UserRef, feedback_ids, parse_feedback_id
from handlers.choices import choice_at, parse_pick_id, pick_ids, short_titles
from handlers.errors import ChannelError
from handlers.formatting import format_sources_plain, mark, split_message
from handlers.progress import answer_with_progress
from storage.dedup import MessageDeduper, UserState

__all__ = [
    "GraphClient",
    "GraphConfig",
    "GraphSendError",
    "InboundMessage",
    "WhatsAppWebhook",
    "parse_payload",
    "verify_signature",
    "verify_subscription",
]

logger = logging.getLogger(__name__)

TEXT_LIMIT = 4096
BUTTON_ID_LIMIT = 256  # a reply button's id
BUTTON_TITLE_LIMIT = 20  # a reply button's title, in characters
BUTTON_BODY_LIMIT = 1024  # the text of a message with reply buttons
MAX_BUTTONS = 3  # reply buttons in one message
SERVICE_WINDOW_SECONDS = 24 * 3600
FEEDBACK_PROMPT = "Apakah jawaban ini membantu?"
_HEX = frozenset(string.hexdigits)
_T = TypeVar("_T")


def verify_signature(app_secret: str, body: bytes, header: str | None) -> bool:
    """``X-Hub-Signature-256: sha256=<hex>`` is the HMAC-SHA256 of the raw body with the app secret.

    The comparison is pywa's (constant time); the header is normalised first (case, spaces) and anything that is not
    ``sha256=`` plus hex digits is refused before it gets there."""
    if not app_secret or not header or not isinstance(header, str):
        return False
    algorithm, _, given = header.strip().partition("=")
    given = given.strip().lower()
    if algorithm.lower() != "sha256" or not given or not set(given) <= _HEX:
        return False
    return pywa_utils.webhook_updates_validator(app_secret, body, f"sha256={given}")


def verify_subscription(query: Mapping[str, str], verify_token: str) -> tuple[int, str]:
    """The GET handshake: echo ``hub.challenge`` when mode is subscribe and the token matches, else 403."""
    mode = query.get("hub.mode", "")
    token = query.get("hub.verify_token", "")
    challenge = query.get("hub.challenge", "")
    if mode == "subscribe" and verify_token and hmac.compare_digest(token.encode("utf-8", "replace"),
                                                                    verify_token.encode()):
        return 200, challenge
    return 403, "verification failed"


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One user message from a webhook. ``kind``: text, feedback, pick, ignore, unsupported.

    ``pick`` is a ``pick:<index>`` button under an ask-back: ``pick`` the index, ``text`` the button's title.

    ``msg_type`` is the Cloud API type (``text``, ``edit``, ``audio``, ``reaction``…); ``read_id`` is the message
    to mark as read (for an edit, the original message)."""

    message_id: str
    sender: str
    kind: str
    text: str = ""
    feedback_value: str = ""
    feedback_trace: str = ""
    msg_type: str = ""
    timestamp: float = 0.0
    read_id: str = ""
    pick: int = -1


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    if isinstance(value, bool):
        return ""
    return value if isinstance(value, str) else (str(value) if isinstance(value, int | float) else "")


# --- reading a delivery ------------------------------------------------------------------------------------------

_Update = Message | CallbackButton[str] | CallbackSelection[str] | EditedMessage  # no factory: ``data`` is the id
_NO_METADATA = {"display_phone_number": "", "phone_number_id": ""}
_IGNORED_TYPES = frozenset(
    {
        MessageType.REACTION,
        MessageType.SYSTEM,
        MessageType.REQUEST_WELCOME,
        MessageType.REVOKE,
        MessageType.INTERACTIVE,  # not a button or list reply (e.g. a flow or call-permission reply)
    }
)


def _contact_for(value: dict[str, Any], message: dict[str, Any], sender: str) -> dict[str, Any]:
    """The sender's entry of ``value.contacts`` (pywa reads ``contacts[0]``), with the fields pywa 4.5 requires.

    Meta omits ``contacts`` on system messages, and ``user_id`` (the business-scoped user id) on deliveries shaped
    before its 2026 roll-out; the sender's own ids stand in."""
    user_id = _str(message.get("from_user_id"))
    wa_id = _str(message.get("from"))
    contact: dict[str, Any] = {}
    for candidate in _list(value.get("contacts")):
        candidate = _dict(candidate)
        same_number = bool(wa_id) and _str(candidate.get("wa_id")) == wa_id
        if same_number or (bool(user_id) and _str(candidate.get("user_id")) == user_id):
            contact = dict(candidate)
            break
    if not contact:
        contact = {"wa_id": wa_id} if wa_id else {}
    if not _str(contact.get("user_id")):
        contact["user_id"] = user_id or _str(contact.get("wa_id")) or sender
    if not isinstance(contact.get("profile"), dict):
        contact["profile"] = {}
    return contact


def _envelope(entry: dict[str, Any], value: dict[str, Any], message: dict[str, Any], sender: str) -> dict[str, Any]:
    """One message in a webhook envelope of its own, as pywa reads it (``entry[0].changes[0].value.messages[0]``)."""
    message = dict(message)
    try:
        int(_str(message.get("timestamp")))
    except ValueError:
        message["timestamp"] = str(int(time.time()))
    interactive = _dict(message.get("interactive"))
    if interactive.get("type") == "list_reply" and not _dict(message.get("context")).get("id"):
        message["context"] = {"id": ""}  # pywa 4.5 requires the replied-to list message; Meta always sends it
    metadata = _dict(value.get("metadata"))
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": _str(entry.get("id")),
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            **value,
                            "metadata": {**_NO_METADATA, **metadata},
                            "contacts": [_contact_for(value, message, sender)],
                            "messages": [message],
                        },
                    }
                ],
            }
        ],
    }


def _update_class(message: dict[str, Any]) -> type[_Update]:
    msg_type = message.get("type")
    if msg_type == "edit":
        return EditedMessage
    if msg_type == "button":
        return CallbackButton
    if msg_type == "interactive":
        reply = _dict(message.get("interactive")).get("type")
        if reply == "button_reply":
            return CallbackButton
        if reply == "list_reply":
            return CallbackSelection
    return Message


def _typed_update(client: WhatsApp, envelope: dict[str, Any], message_id: str) -> _Update:
    raw = RawUpdate(json.dumps(envelope).encode(), hmac_header=None, update_hash=message_id)
    with warnings.catch_warnings():
        # a type newer than pywa becomes MessageType.UNKNOWN (and gets the text-only notice) without a warning
        warnings.simplefilter("ignore", PywaUnknownEnumMemberWarning)
        update = _update_class(envelope["entry"][0]["changes"][0]["value"]["messages"][0]).from_update(client, raw)
        # pywa annotates from_update with its sync base class, though it builds ``cls`` (the pywa_async class here)
        return cast(_Update, update)


def _classify(update: _Update, raw_type: str) -> dict[str, Any]:
    """kind / text / feedback of a typed update."""
    if isinstance(update, EditedMessage):
        return _classify(update.message, raw_type)
    if isinstance(update, CallbackButton | CallbackSelection):
        feedback = parse_feedback_id(_str(update.data))
        if feedback:
            return {"kind": "feedback", "feedback_value": feedback[0], "feedback_trace": feedback[1]}
        title = _str(update.title).strip()
        pick = parse_pick_id(_str(update.data))
        if isinstance(pick, int):
            return {"kind": "pick", "pick": pick, "text": title}
        if pick:
            return {"kind": "text", "text": pick}
        return {"kind": "text", "text": title} if title else {"kind": "ignore"}
    assert isinstance(update, Message)
    if update.type == MessageType.TEXT:
        return {"kind": "text", "text": _str(update.text)}
    if update.type in _IGNORED_TYPES or raw_type == "ephemeral":
        return {"kind": "ignore"}
    return {"kind": "unsupported"}


def _read_message(
    client: WhatsApp, entry: dict[str, Any], value: dict[str, Any], message: dict[str, Any]
) -> InboundMessage | None:
    message_id = _str(message.get("id"))
    sender = _str(message.get("from")) or _str(message.get("from_user_id"))
    if not message_id or not sender:
        logger.debug("WhatsApp webhook: a message without id or sender skipped")
        return None
    raw_type = _str(message.get("type"))
    envelope = _envelope(entry, value, message, sender)
    try:
        update = _typed_update(client, envelope, message_id)
        fields = _classify(update, raw_type)
    except Exception as error:  # boundary: a shape pywa cannot read: the student still hears from us
        logger.warning("WhatsApp message %s (type %r) could not be read (%s); it gets the text-only notice",
                       message_id, raw_type[:40], type(error).__name__)
        sent_at = float(envelope["entry"][0]["changes"][0]["value"]["messages"][0]["timestamp"])
        return InboundMessage(message_id=message_id, sender=sender, kind="unsupported", msg_type=raw_type,
                              timestamp=sent_at, read_id=message_id)
    user = update.from_user
    read_id = update.original_message_id if isinstance(update, EditedMessage) else message_id
    return InboundMessage(
        message_id=message_id,
        sender=_str(user.wa_id) or _str(user.bsuid) or sender,
        msg_type=raw_type,
        timestamp=update.timestamp.timestamp(),
        read_id=read_id or message_id,
        **fields,
    )


def _messages(payload: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    for entry in _list(_dict(payload).get("entry")):
        entry = _dict(entry)
        for change in _list(entry.get("changes")):
            change = _dict(change)
            if change.get("field", "messages") != "messages":
                continue
            value = _dict(change.get("value"))
            for message in _list(value.get("messages")):
                yield entry, value, _dict(message)


def parse_payload(payload: Any, client: WhatsApp | None = None) -> list[InboundMessage]:
    """Every user message in a webhook payload of any shape, read by pywa; statuses, errors and other fields are
    skipped. ``client`` is the pywa client the typed updates belong to (a token-less one when not given)."""
    client = client if client is not None else WhatsApp()
    out: list[InboundMessage] = []
    for entry, value, message in _messages(payload):
        parsed = _read_message(client, entry, value, message)
        if parsed is not None:
            out.append(parsed)
    return out


# --- sending -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GraphConfig:
    base_url: str
    phone_number_id: str
    token: str
    timeout_seconds: float = 10.0
    retries: int = 3
    backoff_seconds: float = 0.5


class GraphSendError(ChannelError):
    """The Graph API refused a message (4xx other than 429) or kept failing after the retries."""


class GraphClient:
    """Sends through pywa's async client, retrying on 429 (honouring ``Retry-After``), 5xx and network errors.

    pywa gets its own ``httpx.AsyncClient`` with the timeout; pywa points it at graph.facebook.com with its own API
    version, then the base URL is set to ``config.base_url`` (``WHATSAPP_GRAPH_BASE_URL``), so the configured
    version is used and tests reach a loopback stand-in."""

    def __init__(self, config: GraphConfig) -> None:
        self.config = config
        self._http: httpx.AsyncClient | None = None
        self._client: WhatsApp | None = None

    @property
    def client(self) -> WhatsApp:
        """The pywa client (created on first use)."""
        if self._client is None:
            http = httpx.AsyncClient(timeout=httpx.Timeout(self.config.timeout_seconds))
            # No server, no callback URL: pywa only reads updates and sends (its dispatcher is not used).
            client = WhatsApp(phone_id=self.config.phone_number_id or None, token=self.config.token or None,
                              session=http)
            http.base_url = httpx.URL(self.config.base_url.rstrip("/"))
            self._http, self._client = http, client
        return self._client

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        self._http = self._client = None

    async def _call(self, send: Callable[[WhatsApp], Awaitable[_T]]) -> _T:
        client = self.client
        delay = self.config.backoff_seconds
        last_error = ""
        for attempt in range(self.config.retries + 1):
            try:
                return await send(client)
            except WhatsAppError as error:
                status = error.status_code
                last_error = f"HTTP {status}: {str(error.message)[:200]}"
                if status is not None and status != 429 and status < 500:
                    raise GraphSendError(f"Graph API refused the message ({last_error})") from error
                response = error.raw_response
                retry_after = response.headers.get("Retry-After", "") if response is not None else ""
                if retry_after.isdigit():
                    delay = min(float(retry_after), 30.0)
            except httpx.RequestError as error:
                last_error = f"{type(error).__name__}: {error}"
            if attempt < self.config.retries:
                logger.warning("Graph API call failed (%s); retry %d in %.1fs", last_error, attempt + 1, delay)
                await asyncio.sleep(delay)
                delay *= 2
        raise GraphSendError(f"Graph API kept failing after {self.config.retries + 1} attempts ({last_error})")

    async def send_text(self, to: str, body: str) -> str:
        """Send a text (no link preview); returns the new message id."""
        sent = await self._call(lambda wa: wa.send_message(to=to, text=body, preview_url=False))
        return sent.id

    async def send_template(self, to: str, name: str, language: str, body_params: Sequence[str]) -> str:
        """Send the approved template ``name`` in ``language`` (e.g. ``id``) with its body variables {{1}}, {{2}}, …
        filled in order, through pywa's template API: what may go out outside the 24-hour window."""
        from pywa_async.types.templates import BodyText, TemplateLanguage

        # pywa declares BodyText.params without self or @staticmethod; called on the class it takes only the values
        params = [BodyText.params(*[str(p)[:1024] for p in body_params])]  # type: ignore[arg-type]
        sent = await self._call(lambda wa: wa.send_template(to=to, name=name, language=TemplateLanguage(language),
                                                            params=params))
        return sent.id

    async def send_feedback_buttons(self, to: str, trace_id: str, body: str = FEEDBACK_PROMPT) -> str:
        """Send the 👍/👎 reply buttons (ids from ``handlers.chat.feedback_ids``: ``fb:up:<trace>`` /
        ``fb:down:<trace>``); returns the message id."""
        up, down = feedback_ids(trace_id, max_bytes=BUTTON_ID_LIMIT)
        buttons = [
            Button(title="👍 Membantu", callback_data=up),
            Button(title="👎 Kurang", callback_data=down),
        ]
        sent = await self._call(lambda wa: wa.send_message(to=to, text=body[:1024], buttons=buttons))
        return sent.id

    async def send_choice_buttons(self, to: str, choices: tuple[str, ...], body: str) -> str:
        """Send an ask-back's choices as reply buttons (at most 3) under ``body``: titles shortened to 20 characters
        (``short_titles``), ids ``pick:<full text>`` (``pick_ids``); returns the message id."""
        choices = choices[:MAX_BUTTONS]
        ids = pick_ids(choices, max_bytes=BUTTON_ID_LIMIT)
        titles = short_titles(choices, BUTTON_TITLE_LIMIT)
        buttons = [Button(title=t, callback_data=data) for t, data in zip(titles, ids, strict=True)]
        sent = await self._call(lambda wa: wa.send_message(to=to, text=body[:BUTTON_BODY_LIMIT], buttons=buttons))
        return sent.id

    async def mark_read(self, message_id: str, *, typing: bool = True) -> bool:
        """Mark a message read, with the typing indicator (WhatsApp drops it after about 25 s) unless ``typing`` is
        false."""
        if typing:
            result = await self._call(lambda wa: wa.indicate_typing(message_id))
        else:
            result = await self._call(lambda wa: wa.mark_message_as_read(message_id))
        return bool(result)


# --- the webhook -------------------------------------------------------------------------------------------------

class WhatsAppWebhook:
    """Checks, reads and processes webhook deliveries; replies through a ``GraphClient``."""

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

    def parse(self, payload: Any) -> list[InboundMessage]:
        """The user messages of a (signature-checked) payload, read with this webhook's pywa client."""
        return parse_payload(payload, self.graph.client)

    def accept(self, body: bytes, signature: str | None) -> tuple[int, str]:
        """Check and schedule one POST delivery; returns the HTTP status and a short body."""
        if not verify_signature(self.app_secret, body, signature):
            logger.warning("WhatsApp webhook: bad or missing X-Hub-Signature-256; delivery refused")
            return 403, "invalid signature"
        try:
            payload = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return 400, "body is not JSON"
        for message in self.parse(payload):
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
        except Exception:  # boundary: one bad message must not stop the others (it runs as a task of its own)
            logger.exception("WhatsApp message %s could not be processed", message.message_id)

    async def process(self, message: InboundMessage) -> None:
        """Handle one inbound message (deduplicated on its id; an edit has an id of its own)."""
        if message.kind == "ignore":
            logger.debug("WhatsApp %s message %s ignored (no reply)", message.msg_type or "?", message.message_id)
            return
        if not await self.deduper.first_time(f"wa:{message.message_id}"):
            logger.info("WhatsApp message %s already handled; redelivery ignored", message.message_id)
            return
        user = UserRef("whatsapp", message.sender)
        # The window opens with the message's own time: a delivery Meta retried for days stays outside it.
        now = time.time()
        sent_at = message.timestamp if 0 < message.timestamp <= now + 300 else now
        previous = await self.state.last_inbound(user.key)
        inbound = max(sent_at, previous or 0.0)
        await self.state.touch_inbound(user.key, inbound)
        if self.metrics is not None:
            self.metrics.message("whatsapp")
        if message.kind == "pick":
            message = await self._picked(user, message)
        if message.kind == "feedback":
            reply = await self.service.feedback(user, message.feedback_trace, message.feedback_value)
        elif message.kind == "pick":
            logger.info("WhatsApp message %s: a stale ask-back choice", message.message_id)
            reply = Reply(texts.CHOICE_STALE, kind="notice")
        elif message.kind == "unsupported":
            logger.info("WhatsApp %s message %s: text-only notice", message.msg_type or "?", message.message_id)
            reply = Reply(texts.TEXT_ONLY, kind="notice")
        else:
            reply = await self._answer_with_typing(user, message, inbound)
            if reply.answer is not None and self.metrics is not None:
                self.metrics.answer("whatsapp", reply.answer)
        await self.send_reply(user, reply, last_inbound=inbound)

    async def _picked(self, user: UserRef, message: InboundMessage) -> InboundMessage:
        """A ``pick:<index>`` button → a text message of the user's last ask-back's choice, if the button's title is
        still that choice's; else the message as it was (kind ``pick``: stale)."""
        choices = (await self.state.last_choices(user.key))[:MAX_BUTTONS]
        chosen = choice_at(choices, message.pick, message.text, short_titles(choices, BUTTON_TITLE_LIMIT))
        return dataclasses.replace(message, kind="text", text=chosen) if chosen is not None else message

    async def _answer_with_typing(self, user: UserRef, message: InboundMessage, inbound: float) -> Reply:
        """``answer_with_progress``: mark read + typing, re-sent every ``typing_interval`` while the answer takes
        long (WhatsApp drops it after ~25 s); a queued user is told their position once."""

        async def typing() -> None:
            await self._typing(message.read_id or message.message_id)

        async def notice(text: str) -> None:
            await self.send_reply(user, Reply(text, kind="notice"), last_inbound=inbound)

        return await answer_with_progress(self.service, user, message.text, typing=typing, notice=notice,
                                          interval=self.typing_interval)

    async def _typing(self, message_id: str) -> None:
        # A reply ready at once (small talk, a command) stops the typing loop while its first call may be under way:
        # that call is let finish (shielded, and kept with the background tasks that drain waits for) rather than
        # cut off mid-request with its connection.
        task = asyncio.get_running_loop().create_task(self._mark_read(message_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await asyncio.shield(task)

    async def _mark_read(self, message_id: str) -> None:
        try:
            await self.graph.mark_read(message_id, typing=True)
        except Exception as error:  # boundary: a missing read receipt must not cost the reply
            logger.warning("WhatsApp mark-as-read failed: %s", error)

    async def within_window(self, user: UserRef, last_inbound: float | None = None) -> bool:
        """Is the user's 24-hour customer-service window open? ``last_inbound`` skips the store lookup."""
        last = last_inbound if last_inbound is not None else await self.state.last_inbound(user.key)
        return last is not None and time.time() - last < SERVICE_WINDOW_SECONDS

    async def send_reply(self, user: UserRef, reply: Reply, *, last_inbound: float | None = None) -> None:
        """Send a Reply as text parts (sources appended) plus 👍/👎 buttons for answers, inside the window only; an
        ask-back's choices are reply buttons under its text (under ``texts.CHOICE_PROMPT`` after a long text)."""
        if not await self.within_window(user, last_inbound):
            logger.warning("WhatsApp: last inbound message of a user is older than 24 h; free-form reply not sent")
            return
        body = reply.text
        if reply.answer is not None and reply.answer.highlights:  # the reader's answer span in WhatsApp's bold
            body = mark(body, reply.answer.highlights, "*", "*")
        if reply.kind == "answer" and reply.sources:
            body = f"{body}\n\n{format_sources_plain(reply.sources)}"
        parts = split_message(body, TEXT_LIMIT)
        prompt = texts.CHOICE_PROMPT
        if reply.choices and parts and len(parts[-1]) <= BUTTON_BODY_LIMIT:
            prompt = parts.pop()  # the question back and its buttons in one message
        for part in parts:
            await self.graph.send_text(user.user_id, part)
        if reply.choices:
            await self.graph.send_choice_buttons(user.user_id, reply.choices, prompt)
        if reply.feedback_id:
            await self.graph.send_feedback_buttons(user.user_id, reply.feedback_id)
