"""ChatService: the channel-neutral core. Text in → Reply (with the Answer) out, plus the bot's commands.

Channel adapters (Telegram, WhatsApp, web) translate their events into ``UserRef`` + text and render the ``Reply``.
The service depends only on small interfaces: an ``Answerer`` (the generation pipeline), the conversation store,
the feedback store, per-user state, and two callables for ``/status`` and ``/reindex`` that ``bot/`` provides.
Parts of it live in modules of their own: ``handlers.smalltalk_filter`` (small talk before the answerer),
``handlers.subscribing`` (/langganan, /berhenti), ``handlers.status`` (the /status text), ``handlers.announcing``
(the notice's Kirim / Buang buttons) and ``handlers.replies`` (``UserRef``, ``Reply``, re-exported here).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from generation.config import StopReason
from generation.types import Answer, Source
from handlers import announcing, subscribing, texts
from handlers.awaitables import resolve
from handlers.formatting import format_sources_plain
from handlers.replies import Reply, UserRef
from handlers.smalltalk_filter import SmallTalkDetector, smalltalk_reply, without_smalltalk_lead
from handlers.status import format_status
from handlers.subscribing import Subscriptions
from storage.conversations import ConversationStore
from storage.dedup import UserState
from storage.feedback import FEEDBACK_VALUES, FeedbackStore
from storage.models import Message
from storage.privacy import clean_incoming, strip_controls

__all__ = ["COMMANDS", "Answerer", "ChatService", "PositionCallback", "Reply", "SmallTalkDetector", "UserRef",
           "announce_callback", "feedback_ids", "parse_announce_callback", "parse_feedback_id"]

logger = logging.getLogger(__name__)

PositionCallback = Callable[[int], Awaitable[None] | None]
StatusProvider = Callable[[], Awaitable[dict[str, Any]] | dict[str, Any]]
ReindexTrigger = Callable[[str], Awaitable[Any] | Any]  # called with the requester's user key
# an admin answer from /jawab: (question, answer, author user key) -> the stored answer's id
AdminAnswerWriter = Callable[[str, str, str], Awaitable[Any] | Any]

# every command ChatService.command runs ("bantuan" is an alias of "help"); each channel offers these
COMMANDS = ("start", "help", "reset", "sumber", "status", "reindex", "hapus", "feedback", "jawab", "langganan",
            "berhenti")


def feedback_ids(trace_id: str, *, max_bytes: int | None = None) -> tuple[str, str]:
    """The ids of the 👍/👎 buttons under an answer: ``fb:up:<trace>`` and ``fb:down:<trace>`` (without a trace id,
    ``fb:up`` / ``fb:down``: the user's last answer). ``max_bytes`` is the channel's limit on a button id (UTF-8);
    ids longer than that fall back to the last-answer form rather than carry a cut trace id."""
    ids = (f"fb:up:{trace_id}", f"fb:down:{trace_id}") if trace_id else ("fb:up", "fb:down")
    if max_bytes is not None and any(len(i.encode()) > max_bytes for i in ids):
        return feedback_ids("")
    return ids


# the Kirim / Buang buttons of the Telegram admins' announcement notice (bot.announcements.notify_pending)
CALLBACK_PREFIX = "ann"
_ACTIONS = {"send": "s", "discard": "d"}


def announce_callback(action: str, announcement_id: int) -> str:
    """A button's callback data: ``ann:s:<id>`` / ``ann:d:<id>`` (well under Telegram's 64 bytes)."""
    return f"{CALLBACK_PREFIX}:{_ACTIONS[action]}:{int(announcement_id)}"


def parse_announce_callback(data: str) -> tuple[str, int] | None:
    """(``send`` | ``discard``, id) of a notice button's data, or None for any other data."""
    parts = (data or "").split(":")
    if len(parts) != 3 or parts[0] != CALLBACK_PREFIX or not (parts[2].isascii() and parts[2].isdigit()):
        return None
    action = {v: k for k, v in _ACTIONS.items()}.get(parts[1])
    if action is None or len(parts[2]) > 18:
        return None
    return action, int(parts[2])


def parse_feedback_id(data: str) -> tuple[str, str] | None:
    """A button id from :func:`feedback_ids` → ``(value, trace_id)``; ``fb:up`` alone (trace ""): the last answer.
    None for any other id, ``fb:<anything but up or down>`` included."""
    parts = (data or "").split(":", 2)
    if len(parts) >= 2 and parts[0] == "fb" and parts[1] in FEEDBACK_VALUES:
        return parts[1], parts[2] if len(parts) == 3 else ""
    return None


class QuestionLog(Protocol):
    """Where answered questions go for the admins' report (``storage.insights.QuestionLog``): masked, keyed by
    the trace id, with the channel and the user only as a key ``/hapus`` can delete by."""

    async def record(self, **fields: Any) -> Any: ...

    async def feedback(self, trace_id: str, value: str) -> Any: ...

    async def forget(self, user_key: str) -> Any: ...


@runtime_checkable
class Answerer(Protocol):
    """What the generation pipeline offers: answer one question given the conversation so far."""

    async def answer(
        self, question: str, history: Sequence[Message], *, on_position: PositionCallback | None = None
    ) -> Answer: ...


def _normalise_id(value: str) -> str:
    return value.strip().lstrip("+").lower()


class ChatService:
    """Channel-neutral message and command handling. One instance serves every channel."""

    def __init__(
        self,
        answerer: Answerer,
        conversations: ConversationStore,
        feedback: FeedbackStore,
        state: UserState,
        *,
        admin_ids: Sequence[str] = (),
        rate_limit_per_minute: int = 5,
        history_window: int = 20,
        status_provider: StatusProvider | None = None,
        reindex_trigger: ReindexTrigger | None = None,
        queue_depth: Callable[[], int] | None = None,
        max_question_chars: int = 1000,
        answer_timeout: float = 180.0,
        question_log: QuestionLog | None = None,
        admin_answer: AdminAnswerWriter | None = None,
        smalltalk: SmallTalkDetector | None = None,
        subscriptions: Subscriptions | None = None,
        announcements: Any = None,
    ) -> None:
        """``announcements``: the admins' ``bot.announcements.AnnouncementDesk`` (what /admin's buttons call), for
        the Kirim / Buang buttons of the Telegram admin notice."""
        self.answerer = answerer
        self.conversations = conversations
        self.feedback_store = feedback
        self.state = state
        self.admin_ids = frozenset(_normalise_id(a) for a in admin_ids if a.strip())
        self.rate_limit_per_minute = rate_limit_per_minute
        self.history_window = history_window
        self.status_provider = status_provider
        self.reindex_trigger = reindex_trigger
        self.queue_depth = queue_depth
        self.max_question_chars = max_question_chars
        self.answer_timeout = answer_timeout
        self.question_log = question_log
        self.admin_answer = admin_answer
        self.smalltalk = smalltalk
        self.subscriptions = subscriptions
        self.announcements = announcements

    # --- entry points -----------------------------------------------------------------------------------------
    def is_admin(self, user: UserRef) -> bool:
        return _normalise_id(user.user_id) in self.admin_ids or _normalise_id(user.key) in self.admin_ids

    async def handle(self, user: UserRef, text: str, *, on_position: PositionCallback | None = None) -> Reply:
        """Route a text: ``/command args`` to the command, anything else to ``ask`` (both rate limited). Control
        characters go first, so that none hides a command nor is echoed back (a question is cleaned in ``_ask``)."""
        text = strip_controls(text).strip()
        allowed, reset = await self.state.hit_rate(user.key, self.rate_limit_per_minute)
        if not allowed:
            logger.info("rate limit hit for a %s user", user.channel)
            return Reply(texts.RATE_LIMITED.format(seconds=max(1, reset)), kind="rate_limited")
        if text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            name = name.split("@", 1)[0].lower()
            return await self.command(user, name, args.strip())
        return await self._ask(user, text, on_position=on_position)

    async def ask(self, user: UserRef, text: str, *, on_position: PositionCallback | None = None) -> Reply:
        """Answer a question (rate limited). Never raises: failures become a polite error reply."""
        allowed, reset = await self.state.hit_rate(user.key, self.rate_limit_per_minute)
        if not allowed:
            return Reply(texts.RATE_LIMITED.format(seconds=max(1, reset)), kind="rate_limited")
        return await self._ask(user, text, on_position=on_position)

    async def command(self, user: UserRef, name: str, args: str = "") -> Reply:
        """Run one command by name; an unknown name gets a polite pointer to /help."""
        handlers: dict[str, Callable[[UserRef], Awaitable[Reply]]] = {
            "start": self.start,
            "help": self.help,
            "bantuan": self.help,
            "reset": self.reset,
            "sumber": self.sumber,
            "status": self.status,
            "reindex": self.reindex,
            "hapus": self.hapus,
        }
        if name == "feedback":
            value, _, trace_id = args.partition(" ")
            return await self.feedback(user, trace_id.strip(), value.strip())
        if name == "jawab":
            return await self.jawab(user, args)
        if name == "langganan":
            return await self.langganan(user, args)
        if name == "berhenti":
            return await self.berhenti(user, args)
        handler = handlers.get(name)
        if handler is None:
            return Reply(texts.UNKNOWN_COMMAND, kind="notice")
        return await handler(user)

    # --- questions ------------------------------------------------------------------------------------------
    async def _ask(self, user: UserRef, text: str, *, on_position: PositionCallback | None) -> Reply:
        # the one entry of every question, whichever channel: control characters out, personal data masked, before
        # the answerer, the history, the question log, the telemetry or a log line sees it (storage/privacy.py)
        text = clean_incoming(text)
        if not text:
            return Reply(texts.ASK_SOMETHING, kind="notice")
        if len(text) > self.max_question_chars:
            return Reply(texts.TOO_LONG.format(limit=self.max_question_chars), kind="notice")
        smalltalk = await smalltalk_reply(self.smalltalk, user, text, lambda: self._offered(user))
        if smalltalk is not None:
            return smalltalk
        text = without_smalltalk_lead(self.smalltalk, text)
        history = await self.conversations.history(user.key, self.history_window)
        started = time.perf_counter()
        try:
            answer = await asyncio.wait_for(
                self.answerer.answer(text, history, on_position=on_position), timeout=self.answer_timeout
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # boundary: any failure of the answerer (or its timeout) becomes the polite error reply
            logger.exception("answering failed for a %s user", user.channel)
            return Reply(texts.ERROR, kind="error")
        logger.info(
            "answered channel=%s abstained=%s sources=%d ms=%.0f",
            user.channel,
            answer.abstained,
            len(answer.sources),
            (time.perf_counter() - started) * 1000,
        )
        now = time.time()
        await self.conversations.append(user.key, Message(role="user", text=text, ts=now))
        await self.conversations.append(user.key, Message(role="assistant", text=answer.answer, ts=time.time()))
        offered = getattr(answer, "choices", ()) or ()
        choices = tuple(c.strip() for c in offered if isinstance(c, str) and c.strip())
        if choices or answer.stop_reason == StopReason.ASK_BACK:
            # asking back: neither an answer nor a refusal, so no 👍/👎, no question-log row and the last answer
            # (/sumber) stays; both turns are in the history above, which the pipeline reads to resolve the pick.
            # An ask-back for a name among many has no buttons; it still replaces an older ask-back's choices
            await self.state.set_last_choices(user.key, choices)
            return Reply(answer.answer.strip() or texts.CHOICE_PROMPT, kind="askback", answer=answer, choices=choices)
        sources = tuple(answer.sources)
        await self.state.set_last_answer(user.key, answer.trace_id, [s.as_json() for s in sources])
        if self.question_log is not None:
            await self.question_log.record(trace_id=answer.trace_id, channel=user.channel, user_key=user.key,
                                           question=text, answer=answer.answer, abstained=answer.abstained)
        body = answer.answer.strip() or texts.ERROR  # an abstention already carries the pipeline's pointer
        return Reply(body, kind="answer", answer=answer, sources=sources, feedback_id=answer.trace_id)

    async def _offered(self, user: UserRef) -> tuple[str, ...]:
        """The choices of the user's pending ask-back, and the lines of the ask-back under its first (a role
        several people hold is asked back one line each, "- Koordinator X: Dr. …", so the role's own word picks)."""
        choices = await self.state.last_choices(user.key)
        if not choices:
            return ()
        history = await self.conversations.history(user.key, 2)
        asked = next((m.text for m in reversed(history) if m.role == "assistant"), "")
        return (*choices, *asked.splitlines()[1:])

    # --- commands --------------------------------------------------------------------------------------------
    async def start(self, user: UserRef) -> Reply:
        """Greeting with what the bot knows."""
        return Reply(texts.START)

    async def help(self, user: UserRef) -> Reply:
        """Example questions and the command list."""
        return Reply(texts.HELP)

    async def reset(self, user: UserRef) -> Reply:
        """Clear the conversation history."""
        await self.conversations.clear(user.key)
        return Reply(texts.RESET_DONE)

    async def hapus(self, user: UserRef) -> Reply:
        """Delete everything stored about the user: history, feedback, counters, last answer."""
        await self.conversations.clear(user.key)
        await self.feedback_store.delete_user(user.key)
        await self.state.delete_user(user.key)
        if self.question_log is not None:
            await self.question_log.forget(user.key)
        if self.subscriptions is not None:
            await asyncio.to_thread(self.subscriptions.forget_user, user.key)
        logger.info("deleted all data of a %s user on request", user.channel)
        return Reply(texts.HAPUS_DONE)

    async def sumber(self, user: UserRef) -> Reply:
        """Sources of the last answer."""
        last = await self.state.last_answer(user.key)
        raw = (last or {}).get("sources") or []
        sources = tuple(
            Source(url=str(s.get("url", "")), title=str(s.get("title", "")))
            for s in raw
            if isinstance(s, dict) and s.get("url")
        )
        if not sources:
            return Reply(texts.NO_SOURCES, kind="notice")
        return Reply(format_sources_plain(sources, texts.SOURCES_HEADER), sources=sources)

    async def status(self, user: UserRef) -> Reply:
        """Index version, last crawl time, queue depth."""
        try:
            data = await resolve(self.status_provider()) if self.status_provider else {}
        except Exception:  # boundary: the provider is bot/'s (index, crawl runs, queue); /status still replies
            logger.exception("status provider failed")
            return Reply(texts.STATUS_UNAVAILABLE, kind="error")
        return Reply(self.format_status(data or {}))

    def format_status(self, data: dict[str, Any]) -> str:
        """The ``/status`` text from the status provider's ``data`` (``handlers.status.format_status``)."""
        return format_status(data, self.queue_depth)

    async def reindex(self, user: UserRef) -> Reply:
        """Start a reindex (admins only)."""
        if not self.is_admin(user):
            logger.info("refused /reindex from a non-admin %s user", user.channel)
            return Reply(texts.ADMIN_ONLY, kind="notice")
        if self.reindex_trigger is None:
            return Reply(texts.REINDEX_FAILED.format(detail="fitur pembaruan indeks belum dikonfigurasi."))
        try:
            result = await resolve(self.reindex_trigger(user.key))
        except Exception as error:  # boundary: the trigger is bot/'s; the admin is told what went wrong
            logger.exception("reindex trigger failed")
            return Reply(texts.REINDEX_FAILED.format(detail=str(error) or type(error).__name__), kind="error")
        detail = str(result) if result else "berjalan di latar belakang"
        return Reply(texts.REINDEX_STARTED.format(detail=detail))

    async def jawab(self, user: UserRef, args: str) -> Reply:
        """Write an admin answer: ``/jawab pertanyaan | jawaban`` (admins only); it answers at once."""
        if not self.is_admin(user):
            logger.info("refused /jawab from a non-admin %s user", user.channel)
            return Reply(texts.ADMIN_ONLY, kind="notice")
        question, sep, answer = args.partition("|")
        if not sep or not question.strip() or not answer.strip():
            return Reply(texts.JAWAB_USAGE, kind="notice")
        if self.admin_answer is None:
            return Reply(texts.JAWAB_FAILED.format(detail="fitur jawaban admin belum dikonfigurasi."), kind="notice")
        try:
            answer_id = await resolve(self.admin_answer(question.strip(), answer.strip(), user.key))
        except ValueError as error:
            return Reply(texts.JAWAB_FAILED.format(detail=str(error)), kind="notice")
        except Exception as error:  # boundary: the writer is bot/'s (store, index); the admin gets a reply
            logger.exception("saving an admin answer failed")
            return Reply(texts.JAWAB_FAILED.format(detail=type(error).__name__), kind="error")
        return Reply(texts.JAWAB_SAVED.format(id=answer_id, question=question.strip()))

    async def langganan(self, user: UserRef, args: str = "") -> Reply:
        """Subscribe to announcements: every one (no argument, ``semua``), or those about a topic (normalised like a
        question, so "bsw" is "beasiswa"). Without an argument when already subscribed: the user's topics."""
        return await subscribing.subscribe(self.subscriptions, user, args)

    async def berhenti(self, user: UserRef, args: str = "") -> Reply:
        """Unsubscribe: from everything (no argument), or from one topic."""
        return await subscribing.unsubscribe(self.subscriptions, user, args)

    async def announcement_action(self, user: UserRef, action: str, announcement_id: int, *,
                                  accepted: Callable[[], Any] | None = None) -> Reply:
        """Kirim (``send``) or Buang (``discard``) a pending announcement from a Telegram admin notice, through the
        same desk as /admin: it moves from pending once, so a second press (or another admin's, or /admin's) gets
        "sudah dikirim". ``accepted()`` is awaited once the send is accepted, before the delivery runs. A notice
        (``kind="notice"``) when nothing was done."""
        if not self.is_admin(user):
            logger.info("refused an announcement button from a non-admin %s user", user.channel)
            return Reply(texts.ADMIN_ONLY, kind="notice")
        return await announcing.announcement_action(self.announcements, action, announcement_id, accepted=accepted)

    async def feedback(self, user: UserRef, trace_id: str, value: str) -> Reply:
        """Store 👍/👎 with the answer's trace id."""
        value = {"👍": "up", "👎": "down", "+": "up", "-": "down"}.get(value, value).lower()
        if value not in FEEDBACK_VALUES:
            return Reply(texts.FEEDBACK_NOT_FOUND, kind="notice")
        if not trace_id:
            last = await self.state.last_answer(user.key)
            trace_id = str((last or {}).get("trace_id") or "")
        stored = await self.feedback_store.add(user.key, trace_id, value)
        if not stored:
            return Reply(texts.FEEDBACK_NOT_FOUND, kind="notice")
        if self.question_log is not None:
            await self.question_log.feedback(trace_id, value)
        logger.info("feedback %s stored for trace %s", value, trace_id)
        return Reply(texts.FEEDBACK_THANKS_UP if value == "up" else texts.FEEDBACK_THANKS_DOWN)
