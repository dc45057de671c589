"""An offline python-telegram-bot setup: a request class that fails on any network call, and update factories.

``OfflineRequest`` answers ``getMe`` from a local record (so ``Application.initialize()`` works) and raises
``NetworkCallAttempted`` for every other Bot API method, so a handler that should stay silent is caught the moment
it tries to send something. The factories build raw update dicts like the Bot API sends them.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from telegram.request import BaseRequest, RequestData

from tests.auxil.fake_apis import BOT_USER

__all__ = [
    "NetworkCallAttempted",
    "OfflineRequest",
    "callback_update",
    "channel_post_update",
    "edited_text_update",
    "member_update",
    "photo_update",
    "text_update",
]

_ids = itertools.count(1)


class NetworkCallAttempted(AssertionError):
    """A handler tried to reach the Bot API in an offline test."""


class OfflineRequest(BaseRequest):
    def __init__(self) -> None:
        self.attempts: list[str] = []

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        endpoint = url.rsplit("/", 1)[-1]
        if endpoint == "getMe":
            return 200, json.dumps({"ok": True, "result": BOT_USER}).encode()
        self.attempts.append(endpoint)
        raise NetworkCallAttempted(f"offline bot tried to call {endpoint}")


def _user(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": "Mahasiswa", "language_code": "id"}


def _chat(chat_id: int, chat_type: str) -> dict[str, Any]:
    chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
    if chat_type == "private":
        chat["first_name"] = "Mahasiswa"
    else:
        chat["title"] = "Grup Angkatan"
    return chat


def _message(user_id: int, chat_id: int | None, chat_type: str, **extra: Any) -> dict[str, Any]:
    return {
        "message_id": next(_ids),
        "date": int(time.time()),
        "from": _user(user_id),
        "chat": _chat(chat_id if chat_id is not None else user_id, chat_type),
        **extra,
    }


def text_update(
    text: str, *, user_id: int = 4242, chat_id: int | None = None, chat_type: str = "private", **extra: Any
) -> dict[str, Any]:
    """A message update; commands get their ``bot_command`` entity, @mentions their ``mention`` entity."""
    entities = []
    if text.startswith("/"):
        entities.append({"type": "bot_command", "offset": 0, "length": len(text.split()[0])})
    mention = f"@{BOT_USER['username']}"
    if mention in text:
        entities.append({"type": "mention", "offset": text.index(mention), "length": len(mention)})
    message = _message(user_id, chat_id, chat_type, text=text, **extra)
    if entities:
        message["entities"] = entities
    return {"update_id": next(_ids), "message": message}


def edited_text_update(text: str, *, user_id: int = 4242, chat_type: str = "private") -> dict[str, Any]:
    message = _message(user_id, None, chat_type, text=text, edit_date=int(time.time()))
    return {"update_id": next(_ids), "edited_message": message}


def photo_update(*, user_id: int = 4242, chat_type: str = "private", caption: str | None = None) -> dict[str, Any]:
    photo = [{"file_id": "AgAD-photo", "file_unique_id": "uniq1", "width": 90, "height": 90, "file_size": 1200}]
    extra: dict[str, Any] = {"photo": photo}
    if caption:
        extra["caption"] = caption
    return {"update_id": next(_ids), "message": _message(user_id, None, chat_type, **extra)}


def callback_update(data: str, *, user_id: int = 4242) -> dict[str, Any]:
    message = _message(BOT_USER["id"], user_id, "private", text="jawaban")
    message["from"] = BOT_USER
    return {
        "update_id": next(_ids),
        "callback_query": {
            "id": str(next(_ids)),
            "from": _user(user_id),
            "chat_instance": "ci-1",
            "data": data,
            "message": message,
        },
    }


def channel_post_update(text: str = "Pengumuman kanal") -> dict[str, Any]:
    return {
        "update_id": next(_ids),
        "channel_post": {
            "message_id": next(_ids),
            "date": int(time.time()),
            "chat": {"id": -100123, "type": "channel", "title": "Kanal Prodi"},
            "text": text,
        },
    }


def member_update(*, user_id: int = 4242) -> dict[str, Any]:
    return {
        "update_id": next(_ids),
        "my_chat_member": {
            "chat": _chat(user_id, "private"),
            "from": _user(user_id),
            "date": int(time.time()),
            "old_chat_member": {"status": "member", "user": BOT_USER},
            "new_chat_member": {"status": "kicked", "user": BOT_USER, "until_date": 0},
        },
    }


async def feed(app: Any, data: dict[str, Any]) -> None:
    """Process one update dict through a python-telegram-bot Application, as a webhook delivery would."""
    from telegram import Update

    await app.process_update(Update.de_json(data, app.bot))

