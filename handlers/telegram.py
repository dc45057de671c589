"""Telegram adapter (python-telegram-bot v22): thin handlers that turn updates into ChatService calls.

Policies:
- Private chats: every text is a question; ``/commands`` run the command.
- Groups and supergroups: only commands (``/cmd`` or ``/cmd@thisbot``) and texts that mention the bot or reply to
  one of its messages are answered; everything else is ignored.
- Edited messages are never answered again (the original was already answered and stored in the history); in a
  private chat the user gets a one-line hint to send a new message instead. Edited messages in groups are ignored.
- Non-text messages (photo, sticker, voice, document, location, …) in private chats get a polite "text only" reply.
- Channel posts, member updates, inline queries, polls and every other update type are ignored (no handler).
- Callback queries (👍/👎) are always answered, even when the data is unknown or the store fails.
- Asking back: a reply with ``choices`` carries one inline button per choice (``pick:<text>``, or ``pick:<index>``
  into the user's last ask-back when the text does not fit 64 bytes; ``handlers.choices``). A press answers the
  query, takes the buttons off, and handles the choice's text as that user's message in that chat; a press that no
  longer matches the user's last ask-back gets a polite note.
- Every error reaches one error handler, which logs it with exc_info and tells the user politely.
"""

from __future__ import annotations

import contextlib
import html
import logging
from collections.abc import Sequence
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Message, Update
from telegram.constants import ChatAction, ChatType, MessageEntityType, ParseMode
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from handlers import texts
from handlers.chat import (
    COMMANDS,
    ChatService,
    Reply,
    UserRef,
    feedback_ids,
    parse_announce_callback,
    parse_feedback_id,
)
from handlers.choices import choice_at, parse_pick_id, pick_ids
from handlers.formatting import format_sources_html, mark, split_message
from handlers.progress import answer_with_progress

__all__ = ["TelegramHandlers", "escape_and_split"]

logger = logging.getLogger(__name__)

TELEGRAM_LIMIT = 4096
CALLBACK_DATA_LIMIT = 64  # bytes of a button's callback data
TYPING_INTERVAL = 4.0


def escape_and_split(text: str, limit: int = TELEGRAM_LIMIT, highlights: Sequence[str] = ()) -> list[str]:
    """HTML-escape ``text`` and split it into parts that stay under ``limit`` after escaping; each highlight (the
    reader's answer span) is set in bold (``<b>``) in the part that holds it."""
    marks = [html.escape(h, quote=False) for h in highlights]

    def render(part: str) -> str:
        return mark(html.escape(part, quote=False), marks, "<b>", "</b>")

    budget = limit
    while budget >= 64:
        parts = [render(p) for p in split_message(text, budget)]
        if all(len(p) <= limit for p in parts):
            return parts
        budget = int(budget * 0.8)
    return [html.escape(p, quote=False)[:limit] for p in split_message(text, 64)]


def _user(update: Update) -> UserRef | None:
    if update.effective_user is not None:
        u = update.effective_user
        return UserRef("telegram", str(u.id), display=u.first_name or "")
    if update.effective_chat is not None:  # anonymous admins, sender chats
        return UserRef("telegram", f"chat{update.effective_chat.id}")
    return None


class TelegramHandlers:
    """Registers the bot's handlers on a PTB Application and renders Replies as Telegram messages."""

    def __init__(self, service: ChatService, *, metrics: Any = None, typing_interval: float = TYPING_INTERVAL):
        self.service = service
        self.metrics = metrics
        self.typing_interval = typing_interval

    def register(self, application: Application[Any, ContextTypes.DEFAULT_TYPE, Any, Any, Any, Any]) -> None:
        # the callbacks take PTB's default context; the bot, data and job-queue types follow the builder's options
        only_new = filters.UpdateType.MESSAGE
        for name in COMMANDS:
            application.add_handler(CommandHandler(name, self.on_command, filters=only_new))
        application.add_handler(MessageHandler(only_new & filters.COMMAND & filters.ChatType.PRIVATE, self.on_unknown))
        application.add_handler(MessageHandler(only_new & filters.TEXT & ~filters.COMMAND, self.on_text))
        application.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE, self.on_edited))
        application.add_handler(
            MessageHandler(
                only_new & filters.ChatType.PRIVATE & ~filters.TEXT & ~filters.StatusUpdate.ALL, self.on_non_text
            )
        )
        application.add_handler(CallbackQueryHandler(self.on_callback))
        application.add_error_handler(self.on_error)

    # --- handlers --------------------------------------------------------------------------------------------
    async def on_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Run a bot command through the ChatService."""
        message, user = update.message, _user(update)
        if message is None or user is None or not message.text:
            return
        self._count()
        reply = await self.service.handle(user, message.text)
        await self.send_reply(message, reply)

    async def on_unknown(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A command the bot does not know (private chats only)."""
        if update.message is not None:
            await update.message.reply_text(texts.UNKNOWN_COMMAND)

    async def on_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Answer a question (in groups only when the bot is addressed)."""
        message, user = update.message, _user(update)
        if message is None or user is None or not message.text:
            return
        text = message.text
        if message.chat.type != ChatType.PRIVATE:
            addressed, text = self._addressed(message, context)
            if not addressed:
                return
        self._count()
        reply = await self.answer_with_typing(message, user, text, context)
        if reply.answer is not None and self.metrics is not None:
            self.metrics.answer("telegram", reply.answer)
        await self.send_reply(message, reply)

    async def on_edited(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Edited messages are not re-answered; private chats get a hint."""
        message = update.edited_message
        if message is not None and message.chat.type == ChatType.PRIVATE and message.text:
            await message.reply_text(texts.EDITED_IGNORED)

    async def on_non_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Photos, stickers, voice, documents, locations…: ask for text."""
        if update.message is not None:
            self._count()
            await update.message.reply_text(texts.TEXT_ONLY)

    async def on_callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """👍/👎 buttons: store the feedback; the query is always answered. An ask-back's choice: ``on_pick``."""
        query = update.callback_query
        if query is None:
            return
        pick = parse_pick_id(query.data or "")
        if pick is not None:
            await self.on_pick(update, context, pick)
            return
        action = parse_announce_callback(query.data or "")
        if action is not None:
            await self.on_announcement(update, *action)
            return
        notice = ""
        try:
            vote = parse_feedback_id(query.data or "")
            user = _user(update)
            if user is not None and vote is not None:
                reply = await self.service.feedback(user, vote[1], vote[0])
                notice = reply.text
                if reply.kind != "notice" and query.message is not None:
                    with contextlib.suppress(TelegramError):
                        await query.edit_message_reply_markup(reply_markup=None)
        finally:
            await query.answer(notice[:190] or None)

    async def on_announcement(self, update: Update, action: str, announcement_id: int) -> None:
        """Kirim / Buang on an admin's announcement notice (admins only; the same desk as /admin, so it is sent
        once). The query is answered as soon as the send is accepted (a delivery to thousands takes longer than a
        button may wait), the buttons come off, and the outcome follows as a message in that chat."""
        query = update.callback_query
        assert query is not None
        user = _user(update)
        answered = False

        async def accepted() -> None:
            nonlocal answered
            answered = True
            await query.answer(texts.ANNOUNCE_SENDING)
            with contextlib.suppress(TelegramError):
                await query.edit_message_reply_markup(reply_markup=None)

        reply = Reply(texts.ANNOUNCE_FAILED, kind="notice")
        try:
            if user is not None:
                reply = await self.service.announcement_action(user, action, announcement_id, accepted=accepted)
        finally:
            if not answered:
                with contextlib.suppress(TelegramError):
                    await query.answer(reply.text[:190], show_alert=reply.kind == "notice")
        if user is None or not self.service.is_admin(user):
            return
        settled = reply.kind != "notice" or reply.text in (texts.ANNOUNCE_NOT_FOUND, texts.ANNOUNCE_ALREADY_SENT,
                                                            texts.ANNOUNCE_ALREADY_DISCARDED)
        if settled and not answered:
            with contextlib.suppress(TelegramError):  # settled: the buttons have nothing left to do
                await query.edit_message_reply_markup(reply_markup=None)
        message = query.message if isinstance(query.message, Message) else None
        if reply.kind != "notice" and message is not None:
            await message.reply_text(reply.text)

    async def on_pick(self, update: Update, context: ContextTypes.DEFAULT_TYPE, pick: str | int) -> None:
        """A choice under an ask-back: answer the query, take the choices off, then handle the choice's text as
        the user's message in that chat. A stale or unknown pick gets ``texts.CHOICE_STALE`` as the query's answer."""
        query = update.callback_query
        assert query is not None
        user = _user(update)
        message = query.message if isinstance(query.message, Message) else None  # None: older than 48 h
        text = None
        try:
            if user is not None and message is not None:
                text = await self._chosen(user, pick, query.data or "", message)
        finally:
            await query.answer(None if text else texts.CHOICE_STALE)
        if not text or user is None or message is None:
            return
        with contextlib.suppress(TelegramError):
            await query.edit_message_reply_markup(reply_markup=None)
        self._count()
        reply = await self.answer_with_typing(message, user, text, context)
        if reply.answer is not None and self.metrics is not None:
            self.metrics.answer("telegram", reply.answer)
        await self.send_reply(message, reply)

    async def _chosen(self, user: UserRef, pick: str | int, data: str, message: Message) -> str | None:
        """The text a pick stands for: the button's own for ``pick:<text>``; for ``pick:<index>`` the user's last
        ask-back's choice, if the pressed button (when Telegram sent the keyboard along) still shows that choice."""
        if isinstance(pick, str):
            return pick or None
        keyboard = message.reply_markup.inline_keyboard if message.reply_markup is not None else ()
        labels = [b.text for row in keyboard for b in row if b.callback_data == data]
        return choice_at(await self.service.state.last_choices(user.key), pick, labels[0] if labels else None)

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The one error handler: log with the traceback, then apologise to the user if there is one."""
        logger.error("error while handling a Telegram update", exc_info=context.error)
        if isinstance(update, Update) and update.effective_chat is not None:
            try:
                await context.bot.send_message(update.effective_chat.id, texts.ERROR)
            except Exception:  # boundary: the error handler itself must not raise; the notice is best effort
                logger.warning("could not send the error notice to the user", exc_info=True)

    # --- helpers --------------------------------------------------------------------------------------------
    def _count(self) -> None:
        if self.metrics is not None:
            self.metrics.message("telegram")

    @staticmethod
    def _addressed(message: Message, context: ContextTypes.DEFAULT_TYPE) -> tuple[bool, str]:
        """Is a group message meant for the bot? Returns (addressed, text without the mention)."""
        bot = context.bot
        username = (bot.username or "").lower() if bot else ""
        text = message.text or ""
        reply_to = message.reply_to_message
        if reply_to is not None and reply_to.from_user is not None and bot is not None:
            if reply_to.from_user.id == bot.id:
                return True, text
        if username:
            for entity, value in message.parse_entities([MessageEntityType.MENTION]).items():
                if value.lower() == f"@{username}":
                    stripped = (text[: entity.offset] + text[entity.offset + entity.length :]).strip()
                    return True, stripped
        return False, text

    async def answer_with_typing(
        self, message: Message, user: UserRef, text: str, context: ContextTypes.DEFAULT_TYPE
    ) -> Reply:
        """Run the ChatService while re-sending the typing action and showing the queue position."""
        chat_id = message.chat_id
        bot = context.bot

        async def typing() -> None:
            with contextlib.suppress(TelegramError):
                await bot.send_chat_action(chat_id, ChatAction.TYPING)

        async def notice(text: str) -> None:
            with contextlib.suppress(TelegramError):
                await bot.send_message(chat_id, text)

        return await answer_with_progress(self.service, user, text, typing=typing, notice=notice,
                                          interval=self.typing_interval)

    async def send_reply(self, message: Message, reply: Reply) -> None:
        """Send a Reply: escaped parts, sources as links, 👍/👎 buttons on the last part of an answer."""
        if reply.kind != "answer" and reply.sources:  # /sumber: the list itself, as links
            parts, sources = [format_sources_html(reply.sources, texts.SOURCES_HEADER)], ""
        else:
            parts = escape_and_split(reply.text, highlights=reply.answer.highlights if reply.answer else ())
            sources = format_sources_html(reply.sources) if reply.sources else ""
        if sources:
            if parts and len(parts[-1]) + 2 + len(sources) <= TELEGRAM_LIMIT:
                parts[-1] = f"{parts[-1]}\n\n{sources}"
            else:
                parts.append(sources[:TELEGRAM_LIMIT])
        markup = None
        if reply.choices:  # an ask-back: one button per choice, each on its own row
            ids = pick_ids(reply.choices, max_bytes=CALLBACK_DATA_LIMIT)
            rows = zip(reply.choices, ids, strict=True)
            markup = InlineKeyboardMarkup([[InlineKeyboardButton(choice, callback_data=data)] for choice, data in rows])
        elif reply.feedback_id:
            up, down = feedback_ids(reply.feedback_id, max_bytes=CALLBACK_DATA_LIMIT)
            markup = InlineKeyboardMarkup(
                [[InlineKeyboardButton("👍", callback_data=up), InlineKeyboardButton("👎", callback_data=down)]]
            )
        no_preview = LinkPreviewOptions(is_disabled=True)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            await message.reply_text(
                part,
                parse_mode=ParseMode.HTML,
                link_preview_options=no_preview,
                reply_markup=markup if last else None,
            )
