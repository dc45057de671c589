"""The Kirim / Buang buttons of the Telegram admins' announcement notice, once the admin check has passed
(``ChatService.announcement_action`` calls this with the admins' ``bot.announcements.AnnouncementDesk``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from handlers import texts
from handlers.replies import Reply

__all__ = ["announcement_action"]

# the service's own logger, so that these lines read as they did when this code was part of ChatService
logger = logging.getLogger("handlers.chat")


async def announcement_action(desk: Any, action: str, announcement_id: int, *,
                              accepted: Callable[[], Any] | None = None) -> Reply:
    """Kirim (``send``) or Buang (``discard``) a pending announcement through ``desk``: it moves from pending once,
    so a second press gets "sudah dikirim". ``accepted()`` is awaited once the send is accepted, before the delivery
    runs. A notice (``kind="notice"``) when nothing was done, ``desk`` None included."""
    if desk is None or action not in ("send", "discard"):
        return Reply(texts.ANNOUNCE_FAILED, kind="notice")
    try:
        if action == "send":
            report = await desk.send(announcement_id, accepted=accepted)
            title = getattr(await desk.get(announcement_id), "title", "")
            return Reply(texts.ANNOUNCE_SENT.format(title=title[:80], sent=report.get("sent", 0),
                                                    skipped=report.get("skipped", 0),
                                                    failed=report.get("failed", 0)))
        await desk.discard(announcement_id)
        title = getattr(await desk.get(announcement_id), "title", "")
        return Reply(texts.ANNOUNCE_DISCARDED.format(title=title[:80]))
    except ValueError:  # not pending: say why
        pass
    except Exception:  # boundary: the desk reaches the store and the channels; the admin gets a notice
        logger.exception("announcement %s: %s from Telegram failed", announcement_id, action)
        return Reply(texts.ANNOUNCE_FAILED, kind="notice")
    try:
        current = await desk.get(announcement_id)
    except Exception:  # boundary: the desk reads the store (SQLite or PostgreSQL); the admin gets a notice
        logger.exception("reading announcement %s failed", announcement_id)
        return Reply(texts.ANNOUNCE_FAILED, kind="notice")
    status = getattr(current, "status", None)
    text = {"sent": texts.ANNOUNCE_ALREADY_SENT, "discarded": texts.ANNOUNCE_ALREADY_DISCARDED}.get(
        str(status), texts.ANNOUNCE_NOT_FOUND)
    return Reply(text, kind="notice")
