"""The announcement subscription commands, ``/langganan`` and ``/berhenti`` (``ChatService.langganan`` and
``ChatService.berhenti`` call these with the service's subscription store)."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from handlers import texts
from handlers.replies import Reply, UserRef
from retrieval.topics import ALL_TOPICS, MAX_TOPIC_CHARS, normalize_topic
from storage.announcements import MAX_TOPICS
from storage.privacy import clean_incoming

__all__ = ["PUSH_CHANNELS", "Subscriptions", "subscribe", "unsubscribe"]

# the service's own logger, so that these lines read as they did when this code was part of ChatService
logger = logging.getLogger("handlers.chat")

# the channels an announcement can be pushed to (the web page has the Atom feed instead)
PUSH_CHANNELS = ("telegram", "whatsapp")


class Subscriptions(Protocol):
    """Where announcement subscriptions live (``storage.contracts.AnnouncementStoreAPI``; blocking, so the service
    calls it in an executor)."""

    def subscribe(self, user_key: str, channel: str, topic: str) -> bool: ...

    def unsubscribe(self, user_key: str, topic: str | None = None) -> int: ...

    def topics(self, user_key: str) -> list[str]: ...

    def forget_user(self, user_key: str) -> int: ...


async def subscribe(subscriptions: Subscriptions | None, user: UserRef, args: str = "") -> Reply:
    """Subscribe to announcements: every one (no argument, ``semua``), or those about a topic (normalised like a
    question, so "bsw" is "beasiswa"). Without an argument when already subscribed: the user's topics."""
    if user.channel not in PUSH_CHANNELS:
        return Reply(texts.LANGGANAN_NOT_HERE, kind="notice")
    if subscriptions is None:
        return Reply(texts.LANGGANAN_FAILED, kind="notice")
    topic = ALL_TOPICS
    raw = clean_incoming(args).strip()
    if raw and raw.casefold() not in ("semua", "all"):
        topic = normalize_topic(raw)
        if not topic or len(topic) > MAX_TOPIC_CHARS:
            return Reply(texts.LANGGANAN_BAD_TOPIC, kind="notice")
    try:
        if not raw:
            have = await asyncio.to_thread(subscriptions.topics, user.key)
            if have:
                return Reply(texts.LANGGANAN_LIST.format(topics=texts.topics_list(have)))
        await asyncio.to_thread(subscriptions.subscribe, user.key, user.channel, topic)
    except ValueError:
        return Reply(texts.LANGGANAN_TOO_MANY.format(limit=MAX_TOPICS), kind="notice")
    except Exception:  # boundary: the store is SQLite or PostgreSQL (its errors differ); the user gets a reply
        logger.exception("saving a subscription failed for a %s user", user.channel)
        return Reply(texts.LANGGANAN_FAILED, kind="error")
    logger.info("subscription added channel=%s topic=%s", user.channel, "all" if topic == ALL_TOPICS else "topic")
    if topic == ALL_TOPICS:
        return Reply(texts.LANGGANAN_ALL)
    return Reply(texts.LANGGANAN_TOPIC.format(topic=topic))


async def unsubscribe(subscriptions: Subscriptions | None, user: UserRef, args: str = "") -> Reply:
    """Unsubscribe: from everything (no argument), or from one topic."""
    if subscriptions is None:
        return Reply(texts.LANGGANAN_FAILED, kind="notice")
    raw = clean_incoming(args).strip()
    topic: str | None = None
    if raw and raw.casefold() not in ("semua", "all"):
        topic = normalize_topic(raw)
        if not topic:
            return Reply(texts.LANGGANAN_BAD_TOPIC, kind="notice")
    try:
        removed = await asyncio.to_thread(subscriptions.unsubscribe, user.key, topic)
    except Exception:  # boundary: the store is SQLite or PostgreSQL (its errors differ); the user gets a reply
        logger.exception("removing a subscription failed for a %s user", user.channel)
        return Reply(texts.LANGGANAN_FAILED, kind="error")
    if topic is None:
        return Reply(texts.BERHENTI_ALL if removed else texts.BERHENTI_NONE)
    if not removed:
        return Reply(texts.BERHENTI_TOPIC_MISSING.format(topic=topic), kind="notice")
    return Reply(texts.BERHENTI_TOPIC.format(topic=topic))
